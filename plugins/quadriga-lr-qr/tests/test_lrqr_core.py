"""LR-QR: the solver against closed forms, bad inputs, and the registered components."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_lr_qr.estimator import LRQR
from quadriga_lr_qr.lrqr import fit_lrqr
from quadriga_lr_qr.synthetic import SyntheticShift

from quadriga.errors import ConfigError


def test_intercept_only_fit_is_the_score_quantile_for_any_lambda():
    # With h constant the regulariser -lam/2 (E2 h)^2 / E1 h^2 is constant, so the pinball minimiser
    # (the 1 - alpha quantile of the scores) is the solution whatever lambda is.
    g = torch.Generator().manual_seed(0)
    s = torch.distributions.Exponential(1.0).sample((2, 400)).double()
    phi1, phi2 = torch.ones(2, 400, 1, dtype=torch.float64), torch.ones(2, 300, 1, dtype=torch.float64)
    theta, beta = fit_lrqr(phi1, s, phi2, 0.1, torch.tensor([0.0, 5.0]), steps=300, lr=0.1)
    del g
    for b in range(2):
        lo, hi = np.quantile(s[b].numpy(), [0.895, 0.905])
        assert lo - 0.02 <= float(theta[b, 0]) <= hi + 0.02
        assert float(beta[b]) == pytest.approx(1.0 / float(theta[b, 0]), rel=1e-9)  # E2[h]/E1[h^2]


def test_regulariser_tilts_threshold_towards_the_likelihood_ratio():
    # Scores independent of x: pinball alone gives a flat h. Target mass at large x1 makes the
    # regularised solution increase along x1 (beta h follows r), so target coverage can be restored.
    rng = np.random.default_rng(1)
    x1, x2 = rng.normal(size=(600, 1)), rng.normal(1.0, 1.0, size=(600, 1))
    s = torch.as_tensor(rng.exponential(size=600))[None]
    phi = lambda x: torch.as_tensor(np.c_[np.ones(len(x)), x])[None]  # noqa: E731
    flat, _ = fit_lrqr(phi(x1), s, phi(x2), 0.1, torch.tensor([0.0]), steps=400, lr=0.05)
    tilt, _ = fit_lrqr(phi(x1), s, phi(x2), 0.1, torch.tensor([20.0]), steps=400, lr=0.05)
    assert abs(float(flat[0, 1])) < 0.15
    assert float(tilt[0, 1]) > float(flat[0, 1]) + 0.2


def test_bad_inputs_fail_before_fitting():
    with pytest.raises(ConfigError, match=r"alpha must be in \(0, 1\)"):
        LRQR(alpha=0.0)
    with pytest.raises(ConfigError, match="lambdas"):
        LRQR(lambdas=[-1.0])

    class Mismatch(SyntheticShift):
        def split(self, name):
            X, y = super().split(name)
            return (X[:, :3], y) if name == "target_calibration" else (X, y)

    d = Mismatch(dim=5, n_train=50, n_calibration=50, n_test=10, n_target_calibration=40, n_target_test=10)
    d.prepare(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="5 features but target covariates have 3"):
        LRQR().estimate(d, generator=torch.Generator())
    small = SyntheticShift(
        dim=5, n_train=50, n_calibration=8, n_test=10, n_target_calibration=40, n_target_test=10
    )
    small.prepare(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match=r"too few for alpha = 0\.1"):
        LRQR(alpha=0.1).estimate(small, generator=torch.Generator())


def test_synthetic_shift_ratio_is_exact():
    d = SyntheticShift(dim=3, delta=1.5, n_target_test=20000, n_test=20000)
    d.prepare(generator=torch.Generator().manual_seed(2))
    Xs, _ = d.split("test")
    Xt, _ = d.split("target_test")
    r = d.likelihood_ratio(Xs)
    assert r.mean() == pytest.approx(1.0, abs=4 * r.std() / math.sqrt(r.size))  # E_P[r] = 1
    f = Xs[:, 0]
    ref = Xt[:, 0].mean()  # E_Q[f] = E_P[r f]
    assert (r * f).mean() == pytest.approx(ref, abs=4 * (r * f).std() / math.sqrt(f.size) + 0.02)
    with pytest.raises(KeyError, match="Did you mean 'target_test'"):
        d.split("target_tset")


def test_estimator_runs_and_is_reproducible():
    d = SyntheticShift(
        dim=5,
        delta=1.0,
        n_train=200,
        n_calibration=300,
        n_test=50,
        n_target_calibration=300,
        n_target_test=400,
    )
    d.prepare(generator=torch.Generator().manual_seed(3))
    est = LRQR(steps=150, lambdas=[0.0, 5.0])
    a = est.estimate(d, generator=torch.Generator().manual_seed(4))
    b = est.estimate(d, generator=torch.Generator().manual_seed(4))
    assert a.value == b.value and a.info["lambda"] in (0.0, 5.0)
    X, y = d.split("target_test")
    low, high = a.predict(X)
    assert low.shape == (400,) and 0.75 <= float(((low <= y) & (y <= high)).mean()) <= 1.0


def test_no_shift_gives_nominal_coverage():
    # delta = 0: target = source, r = 1 is in the linear class, so LR-QR is a (regularised) linear
    # quantile regression whose target coverage must be 1 - alpha up to its O(p/n) optimism.
    from quadriga_lr_qr.estimator import interval_predictor, prepare_problem
    from quadriga_lr_qr.lrqr import select_and_fit

    probs, models, tests = [], [], []
    for r in range(4):
        d = SyntheticShift(
            dim=5,
            delta=0.0,
            n_train=300,
            n_calibration=600,
            n_test=10,
            n_target_calibration=600,
            n_target_test=3000,
        )
        d.prepare(generator=torch.Generator().manual_seed(100 + r))
        p, m = prepare_problem(d, "ridge", 0.1, torch.Generator().manual_seed(r))
        probs.append(p), models.append(m), tests.append(d.split("target_test"))
    fits = select_and_fit(probs, 0.1, (0.1, 0.3, 1.0, 3.0), steps=300, lr=0.1)
    cov = []
    for fit, m, (X, y) in zip(fits, models, tests, strict=False):
        low, high = interval_predictor(m, fit["theta"])(X)
        cov.append(float(((low <= y) & (y <= high)).mean()))
    # 4 x 3000 test points: sampling s.e. ~0.003; fit-to-fit spread ~0.01 -> +-0.025 is ~4 s.e.
    assert abs(np.mean(cov) - 0.9) <= 0.025, cov
