"""Figures a reader can take as they are: titles in words, axis labels, n per group."""

from __future__ import annotations

import torch

import quadriga
from quadriga.registry import Registry


def test_distance_bars_say_what_and_how_many():
    reg = Registry(use_env=False)
    target = quadriga.build("target", "gaussian", dim=2, registry=reg)
    g = torch.Generator().manual_seed(0)
    a = quadriga.Samples(x=target.sample(300, generator=g))
    b = quadriga.Samples(x=target.sample(500, generator=g) + 1.0)
    evaluator = quadriga.build("evaluator", "energy-distance", registry=reg)
    metrics = evaluator.evaluate({"near": a, "shifted": b}, target, generator=g)
    fig = metrics.figures["distances"]
    ax = fig.axes[0]
    assert ax.get_ylabel() == "energy distance (units of x)" and "EnergyDistance" not in fig.get_suptitle()
    assert "reference: 2000 independent exact draws from the target" in fig.get_suptitle()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["near\nn = 300 draws", "shifted\nn = 500 draws"]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [metrics.values["near/energy_distance"], metrics.values["shifted/energy_distance"]]
    assert heights[1] > heights[0]  # the shifted set is farther from the target
