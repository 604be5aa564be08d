"""conditional-conformal (MAPIE): the augmented quantile-regression fixed point; an error without MAPIE."""

from __future__ import annotations

import builtins

import numpy as np
import pytest
import torch
from quadriga_lr_qr.synthetic import SyntheticShift

from quadriga.errors import ConfigError

pytest.importorskip("mapie")
pytest.importorskip("cvxpy")


def test_cutoff_is_the_augmented_quantile_regression_fixed_point():
    # Gibbs et al. (2023), eq. (3.2): the cutoff S* at x is the value for which the linear
    # 0.9-quantile regression fitted on the calibration scores plus (x, S*) passes through S* at x.
    from quadriga_lr_qr.conditional import ConditionalConformal
    from sklearn.linear_model import QuantileRegressor

    d = SyntheticShift(
        dim=2, delta=1.0, n_train=200, n_calibration=150, n_test=10, n_target_calibration=10, n_target_test=3
    )
    d.prepare(generator=torch.Generator().manual_seed(0))
    est = ConditionalConformal(alpha=0.1, num_evaluation_points=3).estimate(
        d, generator=torch.Generator().manual_seed(1)
    )
    X, _ = d.split("target_test")
    low, high = est.predict(X)
    s_star = (high - low) / 2
    X1, y1 = d.split("calibration")
    model_res = np.abs(y1 - _refit_mu(d, X1))
    for i in range(3):
        qr = QuantileRegressor(quantile=0.9, alpha=0.0, solver="highs")
        qr.fit(np.vstack([X1, X[i : i + 1]]), np.r_[model_res, s_star[i]])
        assert float(qr.predict(X[i : i + 1])[0]) == pytest.approx(s_star[i], abs=1e-3 * (1 + s_star[i]))
    assert est.info["features"] == 3 and np.all(s_star > 0)


def _refit_mu(d, X):
    # the estimator's default point predictor: scikit-learn ridge (alpha = 1), deterministic
    from sklearn.linear_model import Ridge

    X_tr, y_tr = d.split("train")
    return Ridge().fit(X_tr, y_tr).predict(X)


def test_missing_mapie_is_a_config_error(monkeypatch):
    from quadriga_lr_qr.conditional import ConditionalConformal

    real = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("mapie"):
            raise ImportError("No module named 'mapie'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    d = SyntheticShift(dim=2, n_train=20, n_calibration=20, n_test=5, n_target_calibration=5, n_target_test=5)
    d.prepare(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match=r"quadriga-lr-qr\[mapie\]"):
        ConditionalConformal().estimate(d, generator=torch.Generator())
