"""The ``mmd-rate`` evaluator: its per-replicate table against its summaries and a direct recomputation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_kernel_thinning.embedding import mixture_of, mmd_to_mixture
from quadriga_kernel_thinning.evaluators import METHODS, MMDRate
from quadriga_std.samplers.simple import StandardThinning
from quadriga_std.targets.analytic import Banana
from quadriga_std.targets.gaussian import Gaussian

from quadriga import stats
from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.seeding import derive_seed, make_generator

NS = [16, 64, 256]


@pytest.fixture(scope="module")
def study():
    """The default study (n = 16, 64, 256; 3 replicates) on N(0, I_2), stage seed 11."""
    target = Gaussian(dim=2)
    return target, MMDRate().evaluate(reference=target, generator=make_generator(11))


def test_per_replicate_rows_are_each_replicates_slope_and_agree_with_the_summaries(study):
    _, m = study
    rows = m.tables["per_replicate"]
    assert [r["subject"] for r in rows] == [meth for meth in METHODS for _ in range(3)]
    lx = np.log(NS)
    for meth in METHODS:
        mine = [r for r in rows if r["subject"] == meth]
        assert [r["replicate"] for r in mine] == [0, 1, 2]
        mmd = np.array([[r[f"mmd_n{n}"] for n in NS] for r in mine])  # [replicate, n]
        assert np.all((mmd > 0) & (mmd < 1))
        for r, y in zip(mine, mmd, strict=True):  # each row's slope: least squares of log MMD on log n
            slope = np.sum((lx - lx.mean()) * (np.log(y) - np.log(y).mean())) / np.sum((lx - lx.mean()) ** 2)
            assert r["slope"] == pytest.approx(slope, rel=1e-10)
        assert np.mean([r["slope"] for r in mine]) == pytest.approx(
            m.values[f"{meth}/replicate_slope"], rel=1e-12
        )
        for i, n in enumerate(NS):
            assert mmd[:, i].mean() == pytest.approx(m.values[f"{meth}/mmd_at_n{n}"], rel=1e-12)
        pooled = stats.loglog_slope(NS, mmd.T)
        assert m.values[f"{meth}/slope"] == pytest.approx(pooled.estimate, rel=1e-12)
        assert m.intervals[f"{meth}/slope"]["low"] == pytest.approx(pooled.low, rel=1e-12)
    assert m.info["bandwidth"] == pytest.approx(2.0) and m.info["dim"] == 2 and "mmd_vs_n" in m.figures
    # seeded: KT's per-replicate slopes are steeper than i.i.d. sqrt(n) points'
    assert m.values["root KT/replicate_slope"] < m.values["iid sqrt(n)/replicate_slope"] - 0.15


def test_a_row_is_the_mmd_of_the_method_on_the_replicates_own_draws(study):
    """Replicate 1 at n = 64, standard thinning, recomputed from the documented seeds."""
    target, m = study
    root = derive_seed(11, "replicate1/n64")
    draws = Samples(x=target.sample(64, generator=make_generator(root)))
    coreset = StandardThinning().sample(
        draws, generator=make_generator(derive_seed(root, "standard thinning"))
    )
    want = mmd_to_mixture(coreset.x, *mixture_of(target), math.sqrt(2.0 * 2))
    row = next(
        r for r in m.tables["per_replicate"] if r["subject"] == "standard thinning" and r["replicate"] == 1
    )
    assert row["mmd_n64"] == pytest.approx(want, rel=1e-12)


def test_mmd_rate_refuses_bad_settings():
    with pytest.raises(ConfigError, match="three sizes"):
        MMDRate(num_samples=[16, 64])
    with pytest.raises(ConfigError, match="unknown methods"):
        MMDRate(methods=["herding"])
    with pytest.raises(ConfigError, match="Gaussian or Gaussian-mixture"):
        MMDRate(methods=["root KT"]).evaluate(reference=Banana(), generator=make_generator(0))
    m = MMDRate(methods=["root KT"], replicates=2).evaluate(
        reference=Gaussian(dim=3), generator=torch.Generator()
    )
    assert {r["subject"] for r in m.tables["per_replicate"]} == {"root KT"} and m.info["dim"] == 3
