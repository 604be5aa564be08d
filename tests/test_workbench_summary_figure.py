"""The sweep's summary.png: headline metrics titled in words, reference lines, legend outside."""

from __future__ import annotations

import itertools
import json

import pytest

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


LONG = [
    "mala[kernel.step_size=0.1,schedule=theory]",
    "mala[kernel.step_size=0.3,schedule=theory]",
    "mala[kernel.step_size=0.1,schedule=adaptive]",
    "rwm[kernel.step_size=0.5,schedule=theory]",
]


def _bar_rows(subjects, metric="energy_distance", base=0.01, step=0.01):
    return [
        {"run_id": f"r{seed}", "seed": seed, "stage": "energy", "subject": s, "metric": metric,
         "value": base + step * i + 0.001 * seed}
        for seed in range(3)
        for i, s in enumerate(subjects)
    ]  # fmt: skip


def _overlaps(labels) -> bool:
    boxes = sorted((t.get_window_extent() for t in labels if t.get_text()), key=lambda b: b.x0)
    return any(a.x1 > b.x0 for a, b in itertools.pairwise(boxes))


def test_long_configuration_names_are_numbered_under_the_bars_and_named_in_the_legend():
    fig = summary_figure(aggregate(_bar_rows(LONG), []), [])
    fig.draw_without_rendering()
    (ax,) = fig.axes
    ticks = ax.get_xticklabels()
    assert [t.get_text() for t in ticks] == ["1", "2", "3", "4"] and not _overlaps(ticks)
    assert ax.get_xlabel() == "configuration (numbered in the legend)"
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [f"{i}  {s}" for i, s in enumerate(LONG, 1)]
    # each bar has its configuration's colour, the one its legend entry shows
    bars = ax.patches
    assert [b.get_facecolor() for b in bars] == [h.get_facecolor() for h in legend.legend_handles]
    assert len({b.get_facecolor() for b in bars}) == 4
    # short names stay under their bars, with no legend of bars
    fig = summary_figure(aggregate(_bar_rows(["mala", "rwm"]), []), [])
    fig.draw_without_rendering()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["mala", "rwm"]
    assert fig.legends == []


def test_the_y_label_says_when_the_ticks_are_shifted_or_scaled():
    """Means 0.996400 to 0.996406: matplotlib shows the ticks relative to an offset; the label
    says by how much, and tick x factor + offset gives back each tick's value."""
    rows = [
        {"stage": "div", "subject": s, "metric": "mean_reward", KEY: step,
         "value": 0.9964 + 2e-6 * step + 4e-7 * seed + (1e-6 if s == "rwm" else 0.0)}
        for seed in range(3)
        for step in (0.1, 0.3, 1.0)
        for s in ("mala", "rwm")
    ]  # fmt: skip
    rows += [
        {
            "stage": "div",
            "subject": "mala",
            "metric": "tiny",
            KEY: step,
            "value": 1e-7 * (1 + step + 0.1 * seed),
        }
        for seed in range(3)
        for step in (0.1, 0.3, 1.0)
    ]
    fig = summary_figure(aggregate(rows, [KEY]), [KEY])
    fig.draw_without_rendering()
    shifted, scaled = fig.axes
    assert shifted.get_ylabel() == "mean mean_reward (ticks x 1e-06 + 0.9964)"
    assert not shifted.yaxis.get_offset_text().get_visible()
    for tick, value in zip(shifted.get_yticklabels(), shifted.get_yticks(), strict=True):
        if tick.get_text():
            shown = float(tick.get_text().replace("\N{MINUS SIGN}", "-"))
            assert shown * 1e-6 + 0.9964 == pytest.approx(value, abs=1e-12)
    assert scaled.get_ylabel() == "mean tiny (ticks x 1e-07)"
    plain = summary_figure(aggregate(_bar_rows(["mala", "rwm"]), []), [])
    plain.draw_without_rendering()
    assert plain.axes[0].get_ylabel() == "mean energy_distance"  # nothing shifted: nothing said


def test_a_metric_name_holding_a_slash_is_not_read_as_a_subject():
    """A learner's own metric "flowrl/mean_reward" (subject: the stage) and an evaluator's metric of
    that name for subject "fit" keep the whole name, in the summary and in the figure."""
    rows = [
        {"stage": "fit", "subject": "fit", "metric": "flowrl/mean_reward", "value": 0.5 + 0.1 * seed}
        for seed in range(3)
    ] + [
        {"stage": "check", "subject": "fit", "metric": "flowrl/mean_reward", "value": 0.4 + 0.1 * seed}
        for seed in range(3)
    ]
    summary = aggregate(rows, [])
    own, evaluated = summary
    assert (own["metric"], own["subject"], own["metric_name"]) == (
        "flowrl/mean_reward",
        "",
        "flowrl/mean_reward",
    )
    assert (evaluated["metric"], evaluated["subject"]) == ("fit/flowrl/mean_reward", "fit")
    assert evaluated["metric_name"] == "flowrl/mean_reward"
    assert own["mean"] == pytest.approx(0.6) and evaluated["mean"] == pytest.approx(0.5)
    assert headline_metrics(summary) == ["flowrl/mean_reward"]
    fig = summary_figure(summary, [])
    fig.draw_without_rendering()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["fit", "fit (check)"]
    assert [b.get_height() for b in fig.axes[0].patches] == pytest.approx([0.6, 0.5])
