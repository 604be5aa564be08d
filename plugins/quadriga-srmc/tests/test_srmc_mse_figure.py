"""The replicate-MSE box plot names its boxes, gives n per box and defines box, line, whiskers, points."""

from __future__ import annotations

import numpy as np
from quadriga_srmc.evaluators import _box


def test_box_plot_has_a_title_n_per_box_a_definition_and_log_ticks():
    rng = np.random.default_rng(0)
    mses = {"mala-gauss": 10 ** rng.normal(-1, 1, 30), "srmc-gauss[alpha=1.0]": 10 ** rng.normal(-2, 1, 30)}
    fig = _box(mses)
    fig.canvas.draw()
    ax = fig.axes[0]
    title = ax.get_title()
    assert title.startswith("Per-chain MSE of the post-burn-in mean")
    for words in (
        "box: quartiles",
        "red line: median",
        "within 1.5 IQR",
        "points: chains beyond the whiskers",
    ):
        assert words in title
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "mala-gauss\n(n = 30 chains)",
        "srmc-gauss[alpha=1.0]\n(n = 30 chains)",
    ]
    assert "squared units of x, log scale" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels and all(t.startswith("$10^{") for t in labels)
    # box edges at the quartiles and the red line at the median of log10 MSE of the first subject
    logs = np.log10(mses["mala-gauss"])
    box = ax.lines[0].get_ydata()
    assert np.allclose(sorted(set(np.round(box, 12))), np.percentile(logs, [25, 75]))
    medians = [ln for ln in ax.lines if ln.get_color() == "tab:red"]
    assert len(medians) == 2 and np.isclose(medians[0].get_ydata()[0], np.median(logs))


def test_a_narrow_range_gets_distinct_plain_tick_labels():
    rng = np.random.default_rng(1)
    fig = _box({"mala-gmm": 10 ** rng.normal(0.8, 0.2, 30), "srmc": 10 ** rng.normal(0.5, 0.3, 30)})
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(set(labels)) >= 3
    ticks = dict(zip(labels, ax.get_yticks(), strict=True))
    assert np.isclose(ticks["2"], np.log10(2)) and np.isclose(ticks["5"], np.log10(5)) and ticks["10"] == 1


def test_claim_box_plots_name_the_experiment_and_define_the_box(tmp_path):
    from quadriga_srmc.claims import _box as claim_box

    rng = np.random.default_rng(2)
    data = {"MALA": rng.uniform(0.3, 0.75, 8), "SR-MALA alpha=2": rng.uniform(0.2, 0.5, 8)}
    fig = claim_box(data, "TV distance", tmp_path / "coverage.png", "Mode coverage per chain")
    ax = fig.axes[0]
    assert (tmp_path / "coverage.png").stat().st_size > 0
    assert ax.get_title().startswith("Mode coverage per chain\nbox: quartiles; red line: median")
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "MALA\n(n = 8 chains)",
        "SR-MALA alpha=2\n(n = 8 chains)",
    ]
    medians = [ln for ln in ax.lines if ln.get_color() == "tab:red"]
    assert np.isclose(medians[1].get_ydata()[0], np.median(data["SR-MALA alpha=2"]))
