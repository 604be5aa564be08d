"""The registered components: conformance checks, bad inputs, the evaluator's arithmetic and an FDR
bound for each valid estimator over fresh synthetic replicates."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_optcs.estimators import NaiveSelection, OptCS, SplitSelection
from quadriga_optcs.evaluator import SelectionFDR, fdp_and_power
from quadriga_optcs.synthetic import SyntheticSelection, signal

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.testing import check_component

CHEAP = ["ridge", "knn-50"]


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("estimator", "optcs"),
        ("estimator", "split-selection"),
        ("estimator", "naive-selection"),
        ("evaluator", "selection-fdr"),
        ("dataset", "optcs-synthetic"),
    ],
)
def test_conformance(kind, name):
    check_component(kind, name)


def _data(seed, **kw):
    d = SyntheticSelection(**{"n_train": 200, "n_calibration": 100, "n_test": 50, **kw})
    d.prepare(generator=torch.Generator().manual_seed(seed))
    return d


def test_synthetic_signal_closed_form():
    X = np.array([[1.0, 1.0, 0.5, 1.0], [-1.0, 1.0, 0.0, 0.0]])
    assert signal(X, 2) == pytest.approx([2 * (1 + 0.25 + 1 - 1), 2 * (-1 + 0 + math.exp(-1) - 1)])
    assert signal(X, 1) == pytest.approx([0.5 + 1.0, 0.0 + 1.0])
    d = _data(0, setting=2, dim=4, n_test=20000)
    X, y = d.split("test")
    resid = y - d.mean(X)
    assert abs(resid.mean()) < 4 * 1.5 / math.sqrt(y.size) and resid.std() == pytest.approx(1.5, rel=0.03)
    assert np.mean(y > 0) == pytest.approx(d.prob_above(X, 0.0).mean(), abs=4 * 0.5 / math.sqrt(y.size))
    with pytest.raises(KeyError, match="Did you mean 'test'"):
        d.split("tset")


def test_bad_inputs_are_config_errors():
    with pytest.raises(ConfigError, match="levels"):
        OptCS(levels=[0.0])
    with pytest.raises(ConfigError, match="Did you mean 'ridge'"):
        OptCS(models=["ridg"])
    with pytest.raises(ConfigError, match="twice"):
        SplitSelection(models=["ridge", "ridge"])
    with pytest.raises(ConfigError, match="setting"):
        SyntheticSelection(setting=5)
    with pytest.raises(ConfigError, match="no 'calibration' split"):

        class OnlyTrain:
            def split(self, name):
                if name != "train":
                    raise KeyError(name)
                return np.zeros((3, 2)), np.zeros(3)

        OptCS(models=CHEAP).estimate(OnlyTrain(), generator=torch.Generator())


def test_estimators_output_and_reproducibility():
    d = _data(1)
    for cls in (OptCS, SplitSelection, NaiveSelection):
        a = cls(models=CHEAP, threshold=0.0).estimate(d, generator=torch.Generator().manual_seed(7))
        b = cls(models=CHEAP, threshold=0.0).estimate(d, generator=torch.Generator().manual_seed(7))
        assert a.value.shape == (2, 50) and torch.equal(a.value, b.value)
        assert set(a.value.unique().tolist()) <= {0.0, 1.0}
        assert a.info["selected_q0.2"] == int(a.value[1].sum()) and a.info["threshold"] == 0.0
    est = OptCS(models=CHEAP, threshold_quantile=0.7).estimate(d, generator=torch.Generator())
    assert est.info["threshold"] == pytest.approx(np.quantile(d.split("train")[1], 0.7))
    # q -> 0: nothing is selected
    for cls in (OptCS, SplitSelection, NaiveSelection):
        e = cls(models=CHEAP, threshold=0.0, levels=[1e-6]).estimate(d, generator=torch.Generator())
        assert e.value.sum() == 0


def test_evaluator_arithmetic_and_replicate_matching():
    assert fdp_and_power(np.array([1, 1, 0, 0], bool), np.array([2.0, -1.0, 3.0, -2.0]), 0.0) == (0.5, 0.5)
    assert fdp_and_power(np.zeros(3, bool), np.array([1.0, 2.0, 3.0]), 0.0) == (0.0, 0.0)
    ds = {f"data[{i}]": _data(10 + i, n_test=4) for i in range(2)}
    ys = [ds[f"data[{i}]"].split("test")[1] for i in range(2)]
    sel = [torch.tensor([[1.0, 1.0, 0.0, 0.0]]), torch.tensor([[0.0, 0.0, 0.0, 1.0]])]
    subjects = {f"arm[{i}]": Estimate(value=sel[i], info={"threshold": 0.0}) for i in range(2)}
    m = SelectionFDR(levels=[0.1]).evaluate(subjects, ds, generator=torch.Generator())
    per = [fdp_and_power(sel[i][0].numpy() > 0, ys[i], 0.0) for i in range(2)]
    for i in range(2):
        assert m.values[f"arm[{i}]/fdp_q0.1"] == per[i][0] and m.values[f"arm[{i}]/power_q0.1"] == per[i][1]
    fdps = np.array([per[0][0], per[1][0]])
    assert m.values["arm/fdr_q0.1"] == pytest.approx(fdps.mean())
    assert m.values["arm/fdr_se_q0.1"] == pytest.approx(fdps.std(ddof=1) / math.sqrt(2))
    assert m.values["arm/replicates"] == 2.0 and m.tables["summary"][0]["subject"] == "arm"
    with pytest.raises(ConfigError, match="expected"):
        SelectionFDR(levels=[0.1, 0.2]).evaluate(subjects, ds, generator=torch.Generator())
    with pytest.raises(ConfigError, match="reference"):
        SelectionFDR().evaluate(subjects, None, generator=torch.Generator())


def test_fdr_bound_over_fresh_replicates():
    # 60 fresh datasets with 6 candidates: the valid procedures' mean FDP stays under q + 3 s.e.;
    # the naive one is reported (its inflation is the claim's business, at scale).
    reps, q = 60, 0.2
    fdp = {"optcs": [], "split": []}
    models = ["ridge", "lasso", "knn-50", "random-forest-shallow"]
    for r in range(reps):
        d = _data(100 + r, n_calibration=60, n_test=40)
        _, y = d.split("test")
        for name, cls in (("optcs", OptCS), ("split", SplitSelection)):
            e = cls(models=models, threshold=0.0, levels=[q]).estimate(
                d, generator=torch.Generator().manual_seed(r)
            )
            fdp[name].append(fdp_and_power(e.value[0].numpy() > 0, y, 0.0)[0])
    for name, x in fdp.items():
        x = np.asarray(x)
        assert x.mean() <= q + 3 * max(x.std(ddof=1), 0.05) / math.sqrt(reps), (name, x.mean())


def test_optcs_full_conformance():
    check_component("estimator", "optcs-full")


def test_ridge_loo_predictions_match_sklearn_refits():
    from quadriga_optcs.full import feature_map, ridge_loo_predictions
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 4))
    y = (X[:, 0] + 0.3 * rng.standard_normal(30) > 0).astype(float)
    for kind in ("linear", "quadratic"):
        F = feature_map(X, kind)
        loo = ridge_loo_predictions(F, y, 3.0)
        ref = [
            Ridge(alpha=3.0).fit(np.delete(F, i, 0), np.delete(y, i)).predict(F[i : i + 1])[0]
            for i in range(len(y))
        ]
        np.testing.assert_allclose(loo, ref, rtol=1e-9, atol=1e-12)
    assert feature_map(X, "quadratic").shape == (30, 4 + 10)
    with pytest.raises(ValueError, match="feature map"):
        feature_map(X, "cubic")


def test_optcs_full_bad_parameters_name_the_key():
    from quadriga_optcs.full import OptCSFull

    for kw, key in (({"features": ["cubic"]}, "features"), ({"penalties": [0.0]}, "penalties")):
        with pytest.raises(ConfigError, match=key):
            OptCSFull(**kw)


def test_optcs_full_fdr_bound_over_fresh_replicates():
    # Full-MSel over 4 ridge candidates on 80 fresh datasets: mean FDP <= q + 3 s.e.
    from quadriga_optcs.full import OptCSFull

    reps, q = 80, 0.2
    fdp, power = [], []
    est = OptCSFull(features=["linear", "quadratic"], penalties=[1.0, 30.0], threshold=0.0, levels=[q])
    for r in range(reps):
        d = _data(300 + r, n_train=60, n_calibration=40, n_test=40)
        _, y = d.split("test")
        e = est.estimate(d, generator=torch.Generator().manual_seed(r))
        assert e.info["n_labelled"] == 100 and e.info["num_models"] == 4
        f, p = fdp_and_power(e.value[0].numpy() > 0, y, 0.0)
        fdp.append(f)
        power.append(p)
    x = np.asarray(fdp)
    assert x.mean() <= q + 3 * max(x.std(ddof=1), 0.05) / math.sqrt(reps), x.mean()
    assert np.mean(power) > 0.05  # it selects something: the bound is not met by selecting nothing


def test_candidate_predictions_are_shared_and_equal_fresh_fits():
    from quadriga_optcs.candidates import _make, candidate_predictions

    d = _data(7)
    X, y = d.split("train")
    Xc, _ = d.split("calibration")
    names = ["ridge", "random-forest-shallow"]
    first = candidate_predictions(names, X, y, 3, (Xc,))
    assert candidate_predictions(names, X, y, 3, (Xc,)) is first  # the arms of a replicate share it
    fresh = np.stack([_make(n, 3).fit(X, y).predict(Xc) for n in names])
    np.testing.assert_array_equal(first[0], fresh)
    assert not first[0].flags.writeable
    other = candidate_predictions(names, X, y, 4, (Xc,))  # another seed: another forest
    assert other is not first and not np.array_equal(other[0][1], first[0][1])
