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
