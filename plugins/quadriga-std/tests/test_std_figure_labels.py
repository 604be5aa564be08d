"""Figures a reviewer accepts: what n means, the reference size, readable symlog ticks, defined bands."""

from __future__ import annotations

import torch
from quadriga_std.evaluators.conformal import _figure as coverage_figure
from quadriga_std.evaluators.distances import EnergyDistance, draws_label
from quadriga_std.evaluators.rl import _bar_figure

from quadriga.artifacts import Samples


def _texts(fig) -> list[str]:
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


def test_draw_counts_say_chains_and_correlation():
    x = torch.zeros(8000, 2, dtype=torch.float64)
    assert (
        draws_label(Samples(x=x, info={"num_chains": 4})) == "8000 draws (4 chains \u00d7 2000, correlated)"
    )
    assert (
        draws_label(Samples(x=x, chains=x.reshape(4, 2000, 2)))
        == "8000 draws (4 chains \u00d7 2000, correlated)"
    )
    assert draws_label(Samples(x=x, info={"num_chains": 1})) == "8000 draws (1 chain, correlated)"
    assert draws_label(Samples(x=x)) == "n = 8000 draws"


def test_energy_distance_figure_states_draws_and_reference_size():
    from quadriga_std.targets.gaussian import Gaussian

    target = Gaussian(dim=2)
    g = torch.Generator().manual_seed(0)
    s = Samples(
        x=torch.randn(400, 2, generator=g, dtype=torch.float64), info={"num_chains": 4, "stage": "mala"}
    )
    m = EnergyDistance(num_reference_samples=300).evaluate(s, reference=target, generator=g)
    texts = " | ".join(_texts(m.figures["distances"]))
    assert "400 draws" in texts and "4 chains" in texts and "100, correlated" in texts
    assert "reference: 300 independent exact draws from the target" in texts
    assert "energy distance (units of x)" in texts


def test_symlog_bars_have_plain_labelled_ticks_and_no_minor_ticks():
    groups = {"dqn": [-2.1, -3.5, -1.0], "dqn-online": [3.4e4, 5.1e3, 9e3], "minto": [-12.0, -1.5, -0.8]}
    fig = _bar_figure("Q overestimation on greedy episodes", "mean Q(s, a) - G(s) (reward units)", groups)
    ax = fig.axes[0]
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert ax.get_yscale() == "symlog"
    shown = dict(zip(ax.get_yticks(), labels, strict=True))
    assert shown == {
        -10: "-10",
        -1: "-1",
        0: "0",
        1: "1",
        10: "10",
        100: "100",
        1e3: "1,000",
        1e4: "10,000",
        1e5: "100,000",
    }
    assert all(labels) and not any("^" in t or "10^" in t for t in labels)
    assert len(ax.yaxis.get_minorticklocs()) == 0
    assert [t.get_text() for t in ax.get_xticklabels()][1] == "dqn-online\n(n = 3 seeds)"


def test_coverage_figure_defines_whiskers_line_and_n():
    rows = [
        {"subject": "split", "coverage": 0.81, "coverage_se": 0.01, "width": 6.0, "n": 400.0},
        {"subject": "lrqr", "coverage": 0.89, "coverage_se": 0.01, "width": 8.1, "n": 400.0},
    ]
    fig = coverage_figure(rows, {"split": 0.9, "lrqr": 0.9}, "target_test")
    texts = " | ".join(_texts(fig))
    assert "split\n(n = 400 points)" in texts and "nominal 0.9" in texts
    assert "whisker \u00b12 binomial s.e." in texts and "mean interval width (units of y)" in texts
