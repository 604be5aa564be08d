"""Split and weighted conformal: finite-sample coverage bounds at fixed seeds, and the evaluator."""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest
import torch
from quadriga_std.estimators.conformal import (
    SplitConformal,
    WeightedConformal,
    conformal_rank,
    weighted_conformal_quantile,
)
from quadriga_std.evaluators.conformal import IntervalCoverage

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset


@attrs.define(kw_only=True)
class _Shift1D(Dataset):
    """x ~ N(0, 1) (source), N(mu_t, 1) (target); y = 2x + (0.5 + |x|) eps; ratio exp(mu_t x - mu_t^2/2)."""

    n_train: int = 200
    n_cal: int = 50
    n_test: int = 200
    mu_t: float = 0.0
    _s: dict = attrs.field(factory=dict, init=False)

    def prepare(self, *, generator):
        rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, (1,), generator=generator)))

        def draw(n, mu):
            x = rng.normal(mu, 1.0, size=(n, 1))
            return x, 2 * x[:, 0] + (0.5 + np.abs(x[:, 0])) * rng.normal(size=n)

        self._s = {
            "train": draw(self.n_train, 0),
            "calibration": draw(self.n_cal, 0),
            "test": draw(self.n_test, 0),
            "target_calibration": draw(self.n_cal, self.mu_t),
            "target_test": draw(self.n_test, self.mu_t),
        }

    def split(self, name):
        return self._s[name]

    def likelihood_ratio(self, X):
        return np.exp(self.mu_t * X[:, 0] - self.mu_t**2 / 2)


def _coverage(est, data, split):
    X, y = data.split(split)
    lo, hi = est.predict(X)
    return float(((lo <= y) & (y <= hi)).mean())


def test_split_conformal_coverage_over_200_repetitions():
    alpha, n_cal = 0.1, 50
    cov = []
    for rep in range(200):
        data = _Shift1D(n_cal=n_cal)
        data.prepare(generator=torch.Generator().manual_seed(rep))
        est = SplitConformal(alpha=alpha, regressor="linear").estimate(
            data, generator=torch.Generator().manual_seed(rep)
        )
        cov.append(_coverage(est, data, "test"))
    cov = np.array(cov)
    se = cov.std(ddof=1) / math.sqrt(cov.size)
    assert cov.mean() >= 1 - alpha - 3 * se, cov.mean()
    assert cov.mean() <= 1 - alpha + 1 / (n_cal + 1) + 3 * se, cov.mean()


def test_weighted_conformal_exact_ratio_covers_under_shift():
    alpha = 0.1
    cw, cs, cc = [], [], []
    for rep in range(40):
        data = _Shift1D(n_cal=300, n_test=300, mu_t=1.5)
        data.prepare(generator=torch.Generator().manual_seed(1000 + rep))

        def g(rep: int = rep) -> torch.Generator:
            return torch.Generator().manual_seed(rep)

        cw.append(
            _coverage(
                WeightedConformal(alpha=alpha, regressor="linear").estimate(data, generator=g()),
                data,
                "target_test",
            )
        )
        cc.append(
            _coverage(
                WeightedConformal(alpha=alpha, regressor="linear", likelihood_ratio="classifier").estimate(
                    data, generator=g()
                ),
                data,
                "target_test",
            )
        )
        cs.append(
            _coverage(
                SplitConformal(alpha=alpha, regressor="linear").estimate(data, generator=g()),
                data,
                "target_test",
            )
        )
    for c in (cw, cc):
        c = np.array(c)
        assert c.mean() >= 1 - alpha - 3 * c.std(ddof=1) / math.sqrt(c.size), c.mean()
    cs = np.array(cs)
    assert cs.mean() < 1 - alpha - 3 * cs.std(ddof=1) / math.sqrt(
        cs.size
    )  # split conformal under-covers here


def test_weighted_quantile_with_equal_weights_is_split_quantile():
    rng = np.random.default_rng(0)
    s = rng.exponential(size=99)
    for alpha in (0.05, 0.1, 0.3):
        k = conformal_rank(99, alpha)
        q = weighted_conformal_quantile(s, np.ones(99), np.ones(5), alpha)
        np.testing.assert_allclose(q, np.sort(s)[k - 1])
    # a test point carrying all the mass gets an infinite threshold
    assert np.isinf(weighted_conformal_quantile(s, np.ones(99), np.array([1e6]), 0.1))[0]


def test_bad_inputs_fail_before_fitting():
    with pytest.raises(ConfigError, match=r"alpha must be in \(0, 1\)"):
        SplitConformal(alpha=1.5)
    with pytest.raises(ConfigError, match="Did you mean 'ridge'"):
        SplitConformal(regressor="ridg")
    data = _Shift1D(n_cal=5)
    data.prepare(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="at least 9"):
        SplitConformal(alpha=0.1).estimate(data, generator=torch.Generator())
    assert conformal_rank(9, 0.1) == 9


def test_interval_coverage_evaluator_by_hand():
    X = np.arange(4.0)[:, None]
    y = np.array([0.0, 1.0, 5.0, 3.0])

    class _D(Dataset):
        def split(self, name):
            if name != "test":
                raise KeyError(name)
            return X, y

    est = Estimate(value=2.0, info={"alpha": 0.1}, predict=lambda Z: (Z[:, 0] - 1, Z[:, 0] + 1))
    inf = Estimate(value=0.0, predict=lambda Z: (np.full(len(Z), -np.inf), np.full(len(Z), np.inf)))
    m = IntervalCoverage(domain="source").evaluate(
        {"a": est, "b": inf}, _D(), generator=torch.Generator().manual_seed(0)
    )
    assert m.values["a/coverage"] == 0.75 and m.values["a/width"] == 2.0
    assert m.values["a/coverage_se"] == pytest.approx(math.sqrt(0.75 * 0.25 / 4))
    assert m.values["b/coverage"] == 1.0 and m.values["b/fraction_infinite"] == 1.0
    assert len(m.tables["summary"]) == 2 and "coverage" in m.figures
    with pytest.raises(ConfigError, match="target_test"):
        IntervalCoverage(domain="target").evaluate(
            {"a": est}, _D(), generator=torch.Generator().manual_seed(0)
        )
