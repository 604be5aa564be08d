"""An evaluator's interval is one value with its method and level: saved, printed and tabled as such."""

from __future__ import annotations

import pytest
import torch
from rich.console import Console

from quadriga.artifacts import Metrics, Samples
from quadriga.cli.output import print_results
from quadriga.rundir.tidy import tidy_rows

quadriga_srmc = pytest.importorskip("quadriga_srmc.evaluators")
gaussian = pytest.importorskip("quadriga_std.targets.gaussian")

METHOD = "percentile bootstrap of the median over 5 chains (500 resamples)"


def _metrics() -> Metrics:
    """replicate-mean-mse on chains whose per-chain MSEs are exactly 1, 4, 9, 16, 25."""
    target = gaussian.Gaussian(mean=[1.0, 2.0], covariance=[[1.0, 0.0], [0.0, 1.0]])
    offsets = torch.arange(1, 6, dtype=torch.float64)
    chains = target.mean + offsets[:, None, None] * torch.ones(5, 10, 2, dtype=torch.float64)
    samples = Samples(x=chains.reshape(-1, 2), chains=chains)
    return quadriga_srmc.ReplicateMeanMSE(num_bootstrap=500).evaluate(
        {"mala": samples}, target, generator=torch.Generator().manual_seed(0)
    )


def test_metrics_intervals_round_trip_and_are_checked(tmp_path):
    m = _metrics()
    assert m.values["mala/mse_median"] == 9.0
    assert m.intervals == {"mala/mse_median": {"low": 1.0, "high": 25.0, "level": 0.95, "method": METHOD}}
    assert m.save(tmp_path) and Metrics.load(tmp_path).intervals == m.intervals
    assert m.summary()["intervals"] == m.intervals
    bad = Metrics(values={"a": 1.0}, intervals={"b": {"low": 0, "high": 1, "level": 0.95, "method": "t"}})
    assert bad.problems() == ["intervals['b'] has no value of that name in values"]
    flipped = Metrics(values={"a": 1.0}, intervals={"a": {"low": 2, "high": 1, "level": 0.95, "method": "t"}})
    assert flipped.problems() == ["intervals['a'] has low > high"]


def test_terminal_report_and_tidy_rows_show_one_value_with_its_interval():
    summary = {**_metrics().summary(), "component": "replicate-mean-mse", "figures": []}
    results = {"stages": {"mse": summary}}
    console = Console(record=True, width=80, color_system=None)
    print_results(console, results)
    text = console.export_text()
    assert "9 [1, 25]" in text
    assert text.count(f"intervals: {METHOD}, 95%") == 1
    assert "_low" not in text and "_high" not in text
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines())

    from quadriga.report import _metrics_table

    table = _metrics_table("mse", "replicate-mean-mse", Metrics.scalars(summary), summary["intervals"])
    assert table["title"] == f"mse (replicate-mean-mse); intervals: {METHOD}, 95%"
    row = table["rows"][0]
    assert row[table["columns"].index("mse_median")] == "9 [1, 25]"

    rows = tidy_rows(results, {"run_id": "r"})
    assert {r["metric"] for r in rows} == {"mse_median", "mse_mean", "asymptotic_variance", "chains"}
