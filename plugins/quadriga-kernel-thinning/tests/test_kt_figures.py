"""The coreset and rate figures say what is drawn: axis labels, n, the band's definition."""

from __future__ import annotations

import numpy as np
import torch
from quadriga_kernel_thinning.figures import coreset_figure, rate_figure
from quadriga_std.targets.gaussian import Gaussian

from quadriga.artifacts import Samples


def test_coreset_panels_have_axis_labels_n_and_a_title_in_words():
    target = Gaussian(dim=2)
    x = target.sample(64, generator=torch.Generator().manual_seed(0))
    fig = coreset_figure({"kt": Samples(x=x)}, target, {"kt/mmd": 0.0056})
    ax = fig.axes[0]
    assert ax.get_title() == "kt (coreset of n = 64 points)\nMMD to the target P = 0.0056"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x1", "x2")
    assert fig.get_suptitle().startswith("Coreset points (red) over the target density")


def test_rate_figure_defines_the_band_and_counts_replicates():
    ns = [16, 64, 256]
    curves = {"kt": [[0.1, 0.12, 0.11], [0.05, 0.06, 0.04], [0.02, 0.03, 0.025]]}
    ax = rate_figure(ns, curves).axes[0]
    assert "mean over 3 replicates per n; band: min to max over replicates" in ax.get_title()
    assert ax.get_ylabel() == "MMD to the target P (dimensionless)"
    line = ax.lines[0]
    assert np.allclose(line.get_ydata(), [0.11, 0.05, 0.025])
    one = rate_figure(ns, {"kt": [[0.1], [0.05], [0.02]]}).axes[0]
    assert "no band at 1 replicate" in one.get_title()
