"""quadriga-datamodels: the regression's exact answers, the conformance checks, the smoke-scale claims."""

from __future__ import annotations

import numpy as np
import pytest
from quadriga_datamodels import claims
from quadriga_datamodels.datamodels import fit_datamodel
from quadriga_std.attribution import lds_scores, predicted_margins, random_masks

from quadriga.testing import parametrize_with_checks, plugin_cases
from quadriga.threads import single_thread


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensor work: one intra-op thread."""
    with single_thread():
        yield


@parametrize_with_checks(plugin_cases("quadriga-datamodels"))
def test_conformance(case, check):
    check(case)


def test_an_exactly_linear_sparse_target_is_recovered():
    """Margins exactly linear and sparse in the mask: held-out LDS 1, support and signs found."""
    rng = np.random.default_rng(0)
    n = 40
    theta = np.zeros(n)
    theta[[3, 11, 25]] = [2.0, -1.5, 1.0]
    masks, val = random_masks(n, 300, 0.5, rng), random_masks(n, 40, 0.5, rng)
    fit, bias, lam, mse = fit_datamodel(masks, masks @ theta + 0.7, val, val @ theta + 0.7)
    fresh = random_masks(n, 100, 0.5, rng)
    score = lds_scores(predicted_margins(fit[:, None], fresh), (fresh @ theta)[:, None])
    assert score[0] > 0.999
    assert set(np.flatnonzero(np.abs(fit) > 0.1)) == {3, 11, 25}
    np.testing.assert_allclose(fit[[3, 11, 25]], theta[[3, 11, 25]], atol=0.05)
    np.testing.assert_allclose(np.mean(masks @ fit + bias), np.mean(masks @ theta + 0.7), atol=1e-8)
    assert mse < 1e-2 and lam > 0


def test_the_path_starts_at_the_lambda_that_zeroes_every_weight():
    """The path of the official config: lambda_max = max |X_c^T y_c| / m gives theta = 0 (KKT)."""
    from sklearn.linear_model import Lasso

    rng = np.random.default_rng(1)
    masks = random_masks(30, 200, 0.5, rng).astype(float)
    y = masks @ rng.normal(size=30) + rng.normal(size=200)
    Xc, yc = masks - masks.mean(0), y - y.mean()
    lam_max = np.abs(Xc.T @ yc).max() / 200
    assert np.all(Lasso(alpha=lam_max * 1.0001).fit(Xc, yc).coef_ == 0)
    assert np.any(Lasso(alpha=lam_max * 0.5).fit(Xc, yc).coef_ != 0)


def test_smoke_claims_give_numbers(tmp_path):
    """Smoke scale (60 training points, 80 models): numbers, not verdicts."""
    obs = claims.run_observations(claims._SMOKE, tmp_path)
    lds = obs.values["lds"]
    assert all(len(v) == 5 for v in lds.values())
    assert np.mean(lds["datamodels"]) > 0.3, lds
    drops = obs.values["removal"]
    assert np.mean(drops["datamodels"]) > np.mean(drops["random"]) + 0.3, drops
    assert obs.numbers["targets_with_varying_ground_truth"] == 1.0
