"""The sweep's summary.png: headline metrics titled in words, reference lines, legend outside."""

from __future__ import annotations

import json

from quadriga.summary import (
    aggregate,
    headline_metrics,
    metric_doc,
    metric_title,
    summary_figure,
    true_values,
    write_outputs,
)

KEY = "stage.rwm.step_size"


def _rows():
    """3 seeds x 3 step sizes of a mode-coverage (tv, fraction_0..3), an energy distance, a sampler."""
    rows = []
    for seed in range(3):
        for step in (0.1, 1.0, 10.0):

            def add(stage, subject, metric, value, step=step):
                rows.append({"stage": stage, "subject": subject, "metric": metric, "value": value, KEY: step})

            add("coverage", "rwm", "tv", 0.1 * step + 0.01 * seed)
            for k in range(4):
                add("coverage", "rwm", f"fraction_{k}", 0.25 + 0.01 * (seed - 1) * (k - 1.5))
            add("coverage", "rwm", "modes_visited", 4.0)
            add("energy", "rwm", "energy_distance", 0.001 * step**3 + 0.0001 * (seed + 1))
            add("rwm", "rwm", "acceptance_rate", 0.9 / (1 + step) + 0.01 * seed)
    return rows


def test_headline_metrics_put_each_evaluators_first_metric_then_diagnostics():
    summary = aggregate(_rows(), [KEY])
    assert headline_metrics(summary, 6) == [
        "tv",
        "energy_distance",
        "acceptance_rate",
        "fraction_0",
        "fraction_1",
        "fraction_2",
    ]
    assert headline_metrics(summary, 2) == ["tv", "energy_distance"]


def test_metric_names_in_words_and_documented_by_pattern():
    assert metric_title("tv") == "Total variation"
    assert metric_title("acceptance_rate") == "Acceptance rate"
    assert metric_title("mean_mse") == "Mean mean squared error"
    docs = {"fraction_<k>": "share in mode k", "tv": "total variation"}
    assert metric_doc("fraction_3", docs) == "share in mode k" and metric_doc("tv", docs) == "total variation"
    assert metric_doc("fraction_", docs) is None and metric_doc("ess", docs) is None


def test_the_figure_draws_headlines_with_reference_lines_and_one_outside_legend():
    summary = aggregate(_rows(), [KEY])
    truth = {("coverage", f"fraction_{k}"): 0.25 for k in range(4)} | {("coverage", "tv"): 0.0}
    fig = summary_figure(summary, [KEY], 6, true_values=truth)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == [
        "Total variation",
        "Energy distance",
        "Acceptance rate",
        "Fraction 0",
        "Fraction 1",
        "Fraction 2",
    ]
    assert "6 of 8 metrics shown, all in summary.csv" in fig._suptitle.get_text()
    # a dashed line at the true value: 0 for tv, 0.25 for each mode's share; none elsewhere
    flat = {
        ax.get_title(): [tuple(line.get_ydata()) for line in ax.lines if line.get_linestyle() == "--"]
        for ax in fig.axes
    }
    assert flat["Total variation"] == [(0.0, 0.0)] and flat["Fraction 0"] == [(0.25, 0.25)]
    assert flat["Energy distance"] == [] and flat["Acceptance rate"] == []
    # one legend, for the figure, outside the panels; none on a panel
    assert [ax.get_legend() for ax in fig.axes] == [None] * 6
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["rwm", "true value"]
    # energy distance spans 1e-4 .. 1: a log y axis with ticks at 1, 2 and 5 times powers of ten
    energy = fig.axes[1]
    assert energy.get_yscale() == "log" and energy.get_xscale() == "log"
    lo, hi = energy.get_ylim()
    shown = [t for t in energy.get_yticks() if lo <= t <= hi]
    assert len(shown) >= 6, shown
    assert [t.get_text() for t in energy.get_xticklabels()] == ["0.1", "1", "10"]


def test_true_values_are_kept_only_where_every_run_agrees(tmp_path):
    for name, weight in (("a", 0.25), ("b", 0.25), ("c", 0.3)):
        run = tmp_path / name
        run.mkdir()
        info = {"true_values": {"fraction_0": weight, "tv": 0.0}}
        stages = {"coverage": {"type": "Metrics", "values": {}, "info": info}}
        (run / "results.json").write_text(json.dumps({"stages": stages}))
    assert true_values([tmp_path / "a", tmp_path / "b"]) == {
        ("coverage", "fraction_0"): 0.25,
        ("coverage", "tv"): 0.0,
    }
    assert true_values([tmp_path / n for n in "abc"]) == {("coverage", "tv"): 0.0}


def test_write_outputs_draws_the_png(tmp_path):
    rows = _rows()
    summary = aggregate(rows, [KEY])
    _, figure = write_outputs(tmp_path, rows, summary, [KEY], true_values={("coverage", "tv"): 0.0})
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
