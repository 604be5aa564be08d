"""Closed forms of the group actions and of the NERO quantities."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_nero.evaluator import _subject_values
from quadriga_nero.orbits import (
    _grid_rotate,
    group_elements,
    nero_curves,
    orbit_predictions,
    orbit_predictions_loop,
    rotate,
    scale,
    shift,
    to_canvas,
)

from quadriga.errors import ConfigError


@pytest.fixture
def images():
    return torch.rand(6, 12, 12, generator=torch.Generator().manual_seed(0))


def test_rotation_by_zero_is_the_identity(images):
    assert torch.equal(rotate(images, 0.0), images)
    assert torch.equal(rotate(images, 360.0), images)
    assert torch.equal(scale(images, 1.0), images)
    assert torch.equal(shift(images, (0, 0)), images)


def test_quarter_turns_are_exact_permutations(images):
    for k in range(4):
        out = rotate(images, 90.0 * k)
        assert torch.equal(out, torch.rot90(images, k, dims=(-2, -1)))
        # a permutation of the pixels: same multiset of values per image
        assert torch.equal(out.reshape(6, -1).sort(-1).values, images.reshape(6, -1).sort(-1).values)
    four = images
    for _ in range(4):
        four = rotate(four, 90.0)
    assert torch.equal(four, images)
    # counter-clockwise as displayed: the top-right corner goes to the top-left
    e = torch.zeros(1, 3, 3)
    e[0, 0, 2] = 1.0
    assert rotate(e, 90.0)[0, 0, 0] == 1.0


def test_bilinear_path_turns_the_same_way_as_rot90(images):
    # the interpolated rotation at exactly 90 degrees lands on pixel centres: rot90 up to rounding
    assert torch.allclose(
        _grid_rotate(images, torch.full((6,), 90.0)), torch.rot90(images, 1, (-2, -1)), atol=1e-5
    )
    assert torch.allclose(
        _grid_rotate(images, torch.full((6,), -90.0)), torch.rot90(images, -1, (-2, -1)), atol=1e-5
    )


def test_shift_moves_pixels_and_fills_zeros(images):
    out = shift(images, (2, -1))  # two columns right, one row up
    assert torch.equal(out[:, :-1, 2:], images[:, 1:, :-2])
    assert torch.all(out[:, :, :2] == 0) and torch.all(out[:, -1, :] == 0)
    with pytest.raises(ConfigError, match="whole pixels"):
        shift(images, (0.5, 0))


def test_canvas_centres_the_image():
    X = np.arange(64, dtype=float)[None] + 1
    c = to_canvas(X, 8, 12)
    assert c.shape == (1, 12, 12) and c[0, 2:10, 2:10].flatten().tolist() == list(range(1, 65))
    assert float(c.sum()) == float(X.sum())
    with pytest.raises(ConfigError, match="canvas"):
        to_canvas(X, 8, 6)


def test_group_elements_identity_first():
    assert group_elements("rotation", angle_step=90.0) == [0.0, 90.0, 180.0, 270.0]
    sh = group_elements("shift", max_shift=2)
    assert sh[0] == (0, 0) and len(sh) == 25 and len(set(sh)) == 25
    assert group_elements("scale", scales=[0.5, 2.0])[0] == 1.0
    with pytest.raises(ConfigError, match="group"):
        group_elements("reflection")


def _c4_invariant(x: torch.Tensor) -> torch.Tensor:
    """An exactly C4-invariant 'model': softmax of the four quarter-turn-averaged pixel sums."""
    avg = sum(torch.rot90(x, k, (-2, -1)) for k in range(4)) / 4
    feats = torch.stack([avg[:, :6, :6].sum((-1, -2)), avg[:, 3:9, 3:9].sum((-1, -2)), avg.sum((-1, -2))], -1)
    return feats.softmax(-1)


def test_invariant_model_has_a_flat_nero_curve(images):
    elements = group_elements("rotation", angle_step=90.0)
    probs = orbit_predictions(_c4_invariant, "rotation", images, elements)
    assert torch.allclose(probs, probs[:1].expand_as(probs), atol=1e-6)
    y = probs[0].argmax(-1).numpy()
    curves = nero_curves(probs, y)
    v = _subject_values(curves, 1.0)
    assert v["curve_range"] == 0.0 and v["orbit_accuracy"] == 1.0
    assert v["orbit_variance"] < 1e-12
    # the consensus of an invariant model is its prediction: the consensus curve is the true one here
    assert v["orbit_consensus_label_accuracy"] == 1.0 and v["orbit_consensus_mae"] == 0.0


def test_identity_element_reproduces_the_plain_metric(images):
    w = torch.randn(144, 3, generator=torch.Generator().manual_seed(1))

    def model(x):
        return (x.reshape(x.shape[0], -1) @ w).softmax(-1)

    y = np.array([0, 1, 2, 0, 1, 2])
    probs = orbit_predictions(model, "rotation", images, group_elements("rotation", angle_step=30.0))
    curves = nero_curves(probs, y)
    plain = (model(images).argmax(-1).numpy() == y).astype(float)
    assert np.array_equal(curves.accuracy[0], plain)
    assert curves.curve("accuracy")[0] == plain.mean()
    conf = model(images)[torch.arange(6), torch.as_tensor(y)].numpy()
    assert np.allclose(curves.confidence[0], conf)
    # the batched orbit equals the plain loop over elements and samples
    loop = orbit_predictions_loop(model, "rotation", images, group_elements("rotation", angle_step=30.0))
    assert torch.allclose(loop, probs, atol=1e-6)


def test_model_consensus_of_one_model_is_itself(images):
    probs = torch.rand(4, 6, 3, generator=torch.Generator().manual_seed(2))
    y = np.zeros(6, dtype=int)
    curves = nero_curves(probs, y, model_consensus=probs)
    assert np.all(curves.model_agreement == 1.0)
    # the consensus of two models that disagree picks the more confident class
    a = torch.tensor([[[0.9, 0.1]]])
    b = torch.tensor([[[0.4, 0.6]]])
    c = nero_curves(b, np.array([1]), model_consensus=(a + b) / 2)
    assert c.model_consensus.tolist() == [[0]] and c.model_agreement.tolist() == [[0.0]]
