"""Artifacts read their own summaries: ``scalars`` and ``headline``, and every reader uses them.

``tests/fixtures/run_v1`` is a run directory written before this reader existed: it must still
load, and give the same numbers in the notebook's table, the sweep's table and the report.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from quadriga.artifacts import Artifact, Estimate, Fitted, Metrics, Samples, artifact_class

FIXTURE = Path(__file__).parent / "fixtures" / "run_v1"
ESTIMATE, STDERR = 0.2242357789899144, 0.22262423849294466


def test_each_class_reads_the_numbers_of_its_own_summary():
    s = Samples.scalars({"type": "Samples", "num_samples": 8000, "dim": 2, "info": {"acceptance_rate": 0.26}})
    assert s == {"num_samples": 8000.0, "dim": 2.0, "acceptance_rate": 0.26}
    assert Estimate.scalars({"value": 1.5, "stderr": 0.25}) == {"estimate": 1.5, "estimate_stderr": 0.25}
    assert Estimate.scalars({"value": [1.0, 2.0], "stderr": None}) == {}  # a tensor value is no scalar
    assert Fitted.scalars({"final": {"loss": 0.5, "note": "x", "done": True}}) == {"loss": 0.5}
    assert Metrics.scalars({"values": {"a/tv": 0.1, "b/tv": 2}}) == {"a/tv": 0.1, "b/tv": 2.0}
    assert Metrics.keyed_by_subject and not Samples.keyed_by_subject
    assert artifact_class({"type": "Unknown", "info": {"n": 3}}).scalars({"info": {"n": 3}}) == {"n": 3.0}


def test_scalars_leave_out_the_name_parts_the_runner_adds_to_info():
    info = {"acceptance_rate": 0.5, "source": "mala", "point": {"step_size": 0.1}, "replicate": 3}
    assert Samples.scalars({"num_samples": 10, "dim": 1, "info": info}) == {
        "num_samples": 10.0,
        "dim": 1.0,
        "acceptance_rate": 0.5,
    }
    assert Artifact.scalars({"info": {"n": 2, "replicate": 0, "point": {}}}) == {"n": 2.0}


def test_headlines_are_one_line_each():
    assert Samples.headline({"num_samples": 8000, "dim": 2, "info": {"acceptance_rate": 0.26491}}) == (
        "8000 x 2 samples, acceptance 0.2649"
    )
    assert Samples.headline({"num_samples": 5, "dim": 1, "info": {}}) == "5 x 1 samples"
    assert Estimate.headline({"value": 0.12345, "stderr": 0.01}) == "estimate 0.1235 ± 0.01"
    assert Estimate.headline({"value": 3.0, "stderr": None}) == "estimate 3"
    assert Fitted.headline({"final": {"loss": 1 / 3}}) == "fitted loss=0.3333"
    assert Fitted.headline({"final": {}}) == "fitted"
    assert Metrics.headline({"values": {"a": 1.0}}) == "1 metric"
    assert artifact_class({"type": "Other"}) is Artifact and Artifact.headline({"type": "Other"}) == "Other"


def test_a_summary_written_by_the_class_reads_back():
    x = pytest.importorskip("torch").zeros(4, 3)
    summary = Samples(x=x, info={"acceptance_rate": 0.5, "score_evals": 7}).summary()
    assert artifact_class(summary) is Samples
    assert Samples.scalars(summary) == {
        "num_samples": 4.0,
        "dim": 3.0,
        "acceptance_rate": 0.5,
        "score_evals": 7.0,
    }


def test_an_old_run_directory_loads_with_the_same_numbers(tmp_path):
    from quadriga.notebook import load_run, to_pandas

    run_dir = shutil.copytree(FIXTURE, tmp_path / "run_v1")
    run = load_run(run_dir)
    assert run.status == "finished" and run.pipeline["pipeline"]["name"] == "legacy-run"
    assert repr(run).splitlines()[1:5] == [
        "  draw: Samples from toy-iid (20 x 2 samples)",
        "  est: Estimate from toy-mean (estimate 0.2242 ± 0.2226)",
        "  check: Metrics from toy-mean (1 metric)",
        "  fit: Fitted from toy-counter (fitted loss=0.3333)",
    ]
    rows = [
        (r["stage"], r["type"], r["subject"], r["metric"], r["value"])
        for r in to_pandas(run_dir).to_dict(orient="records")
    ]
    assert rows == [
        ("draw", "Samples", "draw", "num_samples", 20.0),
        ("draw", "Samples", "draw", "dim", 2.0),
        ("draw", "Samples", "draw", "score_evals", 0.0),
        ("est", "Estimate", "est", "estimate", ESTIMATE),
        ("est", "Estimate", "est", "estimate_stderr", STDERR),
        ("check", "Metrics", "draw", "mean_error", ESTIMATE),
        ("fit", "Fitted", "fit", "loss", 1 / 3),
    ]


def test_the_sweep_table_shares_the_notebook_schema(tmp_path):
    from quadriga.rundir.tidy import STAGE_COLUMNS
    from quadriga.summary import aggregate, metric_label, rows_from_run

    run_dir = shutil.copytree(FIXTURE, tmp_path / "run_v1")
    rows = rows_from_run(run_dir, {"run_id": "r0", "seed": 0})
    assert all(tuple(r)[-len(STAGE_COLUMNS) :] == STAGE_COLUMNS for r in rows)
    # the sweep keeps evaluator values, estimates and sampler diagnostics (no sizes, no learner)
    assert [(r["subject"], r["metric"], r["value"]) for r in rows] == [
        ("est", "estimate", ESTIMATE),
        ("est", "estimate_stderr", STDERR),
        ("draw", "mean_error", ESTIMATE),
    ]
    assert [metric_label(r) for r in rows] == ["estimate", "estimate_stderr", "draw/mean_error"]
    summary = aggregate(rows, [])
    assert [(e["stage"], e["metric"], e["n"]) for e in summary][-1] == ("check", "draw/mean_error", 1)


def test_the_report_and_the_run_table_print_the_headlines(tmp_path):
    import json

    from rich.console import Console

    from quadriga.cli.output import print_results
    from quadriga.report import collect_run

    run_dir = shutil.copytree(FIXTURE, tmp_path / "run_v1")
    section = collect_run(run_dir)
    stages = next(t for t in section["tables"] if t["title"] == "stages")
    assert "estimate 0.2242 ± 0.2226" in json.dumps(stages, ensure_ascii=False)
    assert section["pipeline"].startswith("[pipeline]")
    con = Console(file=io.StringIO(), width=100)
    print_results(con, json.loads((run_dir / "results.json").read_text()))
    text = con.file.getvalue()
    for line in ("20 x 2 samples", "estimate 0.2242 ± 0.2226", "fitted loss=0.3333", "0.2242"):
        assert line in text
