"""compare/sweep summaries: runs that differ only in the seed are pooled, intervals say how."""

from __future__ import annotations

import csv

import pytest

from quadriga.summary import aggregate, config_digest, load_rows


def test_compare_groups_runs_that_differ_only_in_the_seed(registry, tmp_path):
    from quadriga.api import run
    from quadriga.cli import main

    dirs = []
    for seed in (0, 1, 2):
        dirs.append(run("toy-pipeline", seed=seed, out=tmp_path / f"a{seed}", registry=registry).dir)
    other = run(
        "toy-pipeline",
        seed=0,
        overrides=["stage.draw.num_samples=50"],
        out=tmp_path / "b0",
        registry=registry,
    ).dir
    assert len({config_digest(d) for d in dirs}) == 1 and config_digest(other) != config_digest(dirs[0])
    rows = []
    for d in [*dirs, other]:
        got, _ = load_rows(d)
        for r in got:
            r["source"] = d.name  # as `quadriga compare` tags rows from several directories
        rows += got
    summary = [e for e in aggregate(rows, ["source"]) if e["metric"] == "draw/mean_error"]
    assert sorted(e["n"] for e in summary) == [1, 3]
    three = next(e for e in summary if e["n"] == 3)
    # the tidy rows share the notebook's schema: subject ``draw``, metric ``mean_error``
    assert all(r["type"] == "Metrics" for r in rows if r["metric"] == "mean_error")
    values = [
        r["value"]
        for r in rows
        if (r["subject"], r["metric"]) == ("draw", "mean_error") and r["source"] != "b0"
    ]
    assert three["mean"] == pytest.approx(sum(values) / 3) and three["runs"] == 3
    assert three["ci_low"] <= three["mean"] <= three["ci_high"]
    assert three["ci_method"].startswith("Student t (one sample, df 2")
    assert three["source"].startswith("toy-pipeline ")
    out = tmp_path / "cmp"
    assert main(["compare", *map(str, dirs), str(other), "--out", str(out)]) == 0
    with open(out / "summary.csv") as fh:
        table = [r for r in csv.DictReader(fh) if r["metric"] == "draw/mean_error"]
    assert sorted(int(r["n"]) for r in table) == [1, 3] and all(r["ci_method"] for r in table)


def test_compare_counts_a_seed_run_twice_once_and_labels_groups_by_pipeline_name(registry, tmp_path, capsys):
    """A standalone run and a repeat of the same seed and settings are one replicate, not two."""
    from quadriga.api import run
    from quadriga.cli import main
    from quadriga.summary import drop_repeated_seeds

    a0 = run("toy-pipeline", seed=0, out=tmp_path / "a0", registry=registry).dir
    again = run("toy-pipeline", seed=0, out=tmp_path / "again", registry=registry).dir
    a1 = run("toy-pipeline", seed=1, out=tmp_path / "a1", registry=registry).dir
    rows = []
    for d in (a0, again, a1):
        got, _ = load_rows(d)
        for r in got:
            r["source"] = d.name
        rows += got
    kept, dropped = drop_repeated_seeds(rows)
    assert dropped == [("again", "a0")]
    assert {r["source"] for r in kept} == {"a0", "a1"}
    summary = [e for e in aggregate(kept, ["source"]) if e["metric"] == "draw/mean_error"]
    assert [(e["source"], e["n"], e["runs"]) for e in summary] == [("toy-pipeline", 2, 2)]
    out = tmp_path / "cmp"
    assert main(["compare", str(a0), str(again), str(a1), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "again repeats the seed and settings of a0; counted once" in printed
    with open(out / "summary.csv") as fh:
        table = [r for r in csv.DictReader(fh) if r["metric"] == "draw/mean_error"]
    assert [int(r["n"]) for r in table] == [2]


def test_one_pipeline_with_two_configurations_names_the_settings_that_differ(registry, tmp_path):
    from quadriga.api import run

    plain = run("toy-pipeline", seed=0, out=tmp_path / "p", registry=registry).dir
    changed = run(
        "toy-pipeline", seed=0, overrides=["stage.draw.num_samples=50"], out=tmp_path / "c", registry=registry
    ).dir
    rows = []
    for d in (plain, changed):
        got, _ = load_rows(d)
        for r in got:
            r["source"] = d.name
        rows += got
    labels = {e["source"] for e in aggregate(rows, ["source"])}
    default = config_digest(plain) and _default_samples(plain)
    assert labels == {f"toy-pipeline (draw.num_samples={default})", "toy-pipeline (draw.num_samples=50)"}


def _default_samples(run_dir):
    """num_samples of the run's draw stage, as its saved pipeline.toml gives it."""
    import tomllib

    with open(run_dir / "pipeline.toml", "rb") as fh:
        return tomllib.load(fh)["stage"]["draw"]["num_samples"]


def test_configurations_whose_settings_are_unknown_are_named_by_digest(registry, tmp_path):
    from quadriga import summary

    rows = [
        {"pipeline": "p", "config": digest, "stage": "s", "metric": "m", "value": 1.0, "source": digest}
        for digest in ("aaaaaaaaaa", "bbbbbbbbbb")
    ]
    assert "aaaaaaaaaa" not in summary._SETTINGS
    labels = {e["source"] for e in aggregate(rows, ["source"])}
    assert labels == {"p (config aaaaaaaaaa)", "p (config bbbbbbbbbb)"}


def test_compare_names_the_metrics_when_metric_matches_none(registry, tmp_path, capsys):
    from quadriga.api import run
    from quadriga.cli import main

    d = run("toy-pipeline", seed=0, out=tmp_path / "a0", registry=registry).dir
    rc = main(["compare", str(d), "--metric", "mean_eror", "--out", str(tmp_path / "cmp")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--metric" in err and "mean_eror" in err
    assert "Did you mean 'draw/mean_error'" in " ".join(err.split())
    assert not (tmp_path / "cmp").exists()
