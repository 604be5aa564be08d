"""The learner and the evaluator through the registry: conformance, a short training run, NERO values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from quadriga_nero.evaluator import NERO, PER_SUBJECT
from quadriga_nero.learner import OrbitClassifier

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress
from quadriga.testing import check_component


class _Digits:
    """load_digits with a fixed 60/40 split (pixels 0-16)."""

    def __init__(self, seed=0):
        from sklearn.datasets import load_digits

        d = load_digits()
        perm = np.random.default_rng(seed).permutation(len(d.target))
        self._idx = {"train": perm[:1078], "test": perm[1078:]}
        self._X, self._y = d.data, d.target

    def split(self, name):
        i = self._idx[name]
        return self._X[i], self._y[i]


@pytest.fixture(scope="module")
def digits():
    return _Digits()


@pytest.fixture(scope="module")
def fitted(digits):
    gen = torch.Generator().manual_seed(0)
    return {
        "mlp": OrbitClassifier(architecture="mlp", num_epochs=8).fit(
            digits, generator=gen, progress=StageProgress()
        ),
        "c4": OrbitClassifier(architecture="mlp", num_epochs=8, average="c4", augment="rotation").fit(
            digits, generator=torch.Generator().manual_seed(0), progress=StageProgress()
        ),
    }


@pytest.mark.parametrize(("kind", "name"), [("learner", "orbit-classifier"), ("evaluator", "nero")])
def test_check_component(kind, name):
    report = check_component(kind, name)
    assert report is not None


def test_mlp_learns_upright_digits_and_fails_on_quarter_turns(digits, fitted):
    ev = NERO(angle_step=90.0, figures=False)
    m = ev.evaluate({"mlp": fitted["mlp"]}, digits, generator=torch.Generator().manual_seed(0))
    v = m.values
    assert v["mlp/accuracy"] > 0.9  # upright digits are easy
    assert v["mlp/orbit_min_accuracy"] < 0.5  # a quarter turn breaks the MLP
    assert v["mlp/curve_range"] == pytest.approx(v["mlp/accuracy"] - v["mlp/orbit_min_accuracy"], abs=1e-12)
    row0 = next(r for r in m.tables["curves"] if r["element"] == "0")
    assert row0["accuracy"] == pytest.approx(v["mlp/accuracy"])  # identity element = plain metric
    assert set(PER_SUBJECT) - {k.split("/", 1)[1] for k in v} <= {"model_consensus_correlation"}


def test_c4_averaged_model_is_flat_on_quarter_turns(digits, fitted):
    ev = NERO(angle_step=90.0, figures=False)
    v = ev.evaluate({"c4": fitted["c4"]}, digits, generator=torch.Generator().manual_seed(0)).values
    assert v["c4/curve_range"] == 0.0
    assert v["c4/orbit_variance"] < 1e-10
    assert v["c4/orbit_accuracy"] == pytest.approx(v["c4/accuracy"])


def test_replicates_pool_and_figures(digits, fitted):
    subjects = {"mlp[0]": fitted["mlp"], "c4[0]": fitted["c4"]}
    m = NERO(angle_step=45.0).evaluate(
        subjects, {"data[0]": digits}, generator=torch.Generator().manual_seed(0)
    )
    assert m.values["mlp/replicates"] == 1.0 and m.values["mlp/accuracy"] == m.values["mlp[0]/accuracy"]
    assert set(m.figures) == {"nero", "consensus"}
    assert math.isfinite(m.values["mlp[0]/model_consensus_correlation"])
    assert not m.problems()
    with pytest.raises(ConfigError, match="reference"):
        NERO().evaluate(subjects, None, generator=torch.Generator())


def test_shift_orbit_of_the_identity_is_the_plain_metric(digits, fitted):
    m = NERO(group="shift", max_shift=1, figures=False).evaluate(
        {"mlp": fitted["mlp"]}, digits, generator=torch.Generator().manual_seed(0)
    )
    row0 = next(r for r in m.tables["curves"] if r["element"] == "+0,+0")
    assert row0["accuracy"] == pytest.approx(m.values["mlp/accuracy"])
    assert len(m.tables["curves"]) == 9


def test_bad_parameters_are_config_errors(digits):
    with pytest.raises(ConfigError, match="group"):
        NERO(group="flip")
    with pytest.raises(ConfigError, match="architecture"):
        OrbitClassifier(architecture="resnet")

    class Standardized(_Digits):
        def split(self, name):
            X, y = super().split(name)
            return X - 8.0, y

    with pytest.raises(ConfigError, match="standardize"):
        OrbitClassifier(num_epochs=1).fit(
            Standardized(), generator=torch.Generator(), progress=StageProgress()
        )


def test_global_pooling_cnn_is_shift_invariant_and_lenet_is_not():
    """cnn-pool: zero padding and the zero canvas look alike, so logits are unchanged by integer shifts
    that keep the digit (and its 5x5 receptive field) on the canvas; the LeNet head reads positions."""
    from quadriga_nero.learner import build_network
    from quadriga_nero.orbits import shift, to_canvas
    from sklearn.datasets import load_digits

    x = to_canvas(load_digits().data[:20], 8, 20)  # 6 zero pixels around every digit
    moved = shift(x, (2, -3))
    torch.manual_seed(0)
    pool, lenet = build_network("cnn-pool", 20, 10), build_network("cnn", 20, 10)
    with torch.no_grad():
        a, b = pool(x[:, None] / 16), pool(moved[:, None] / 16)
        c, d = lenet(x[:, None] / 16), lenet(moved[:, None] / 16)
    assert torch.allclose(a, b, atol=1e-6)
    assert (c - d).abs().max() > 1e-3
    assert pool[-1].in_features == 128  # dense head on 2 * channels pooled features
