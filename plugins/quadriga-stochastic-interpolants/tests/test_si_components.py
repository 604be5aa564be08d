"""Components: conformance, datasets, the learner on a Gaussian pair, flow matching as a special case."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_stochastic_interpolants.datasets import Checkerboard, GaussianMixturePoints, SwissRoll, TwoMoons
from quadriga_stochastic_interpolants.gaussian_exact import GaussianFields
from quadriga_stochastic_interpolants.learner import FlowMatching, StochasticInterpolant
from quadriga_stochastic_interpolants.sampler import DatasetPoints, InterpolantSampler

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress
from quadriga.testing import check_component


@pytest.mark.parametrize(
    "kind,name",
    [
        ("learner", "stochastic-interpolant"),
        ("learner", "flow-matching"),
        ("sampler", "interpolant-sampler"),
        ("sampler", "dataset-points"),
        ("dataset", "two-moons"),
        ("dataset", "checkerboard"),
        ("dataset", "swiss-roll"),
        ("dataset", "gaussian-mixture-points"),
    ],
)
def test_conformance(kind, name):
    check_component(kind, name)


def _prepared(ds, seed=0):
    ds.prepare(generator=torch.Generator().manual_seed(seed))
    return ds


def test_checkerboard_points_lie_on_dark_cells_with_equal_mass():
    x, y = _prepared(Checkerboard(num_train=40000)).split("train")
    assert y is None and x.shape == (40000, 2)
    cells = np.floor((x + 2.0) / 1.0).astype(int)
    assert np.all((cells.sum(1) % 2) == 0)
    counts = np.unique(cells[:, 0] * 4 + cells[:, 1], return_counts=True)[1]
    # 8 dark cells, multinomial(40000, 1/8): sd of a count = sqrt(40000 * 1/8 * 7/8) = 66
    assert len(counts) == 8 and np.all(np.abs(counts - 5000) < 5 * 66)


def test_splits_are_disjoint_reproducible_and_centred():
    for ds in (TwoMoons(), SwissRoll(), GaussianMixturePoints(), Checkerboard()):
        a, b = _prepared(type(ds)(), 1), _prepared(type(ds)(), 1)
        np.testing.assert_array_equal(a.split("test")[0], b.split("test")[0])
        assert not np.allclose(a.split("test")[0], a.split("reference")[0])
        assert np.all(np.abs(a.split("train")[0].mean(0)) < 0.6)
        with pytest.raises(KeyError, match="valid: train, test, reference"):
            a.split("tset")
    means = GaussianMixturePoints(num_components=4, radius=2.0).means
    np.testing.assert_allclose(means, [[2, 0], [0, 2], [-2, 0], [0, -2]], atol=1e-12)


class _GaussianPoints:
    """A dataset of N(m, diag v) points (the learner's input) with the same split interface."""

    def __init__(self, m, v, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = (
            torch.tensor(m) + torch.tensor(v).sqrt() * torch.randn(n, 2, generator=g, dtype=torch.float64)
        ).numpy()

    def split(self, name):
        return self.x, None


def test_learned_velocity_approaches_the_closed_form_for_gaussian_endpoints():
    m0, v0, m1, v1 = [-1.0, 1.0], [0.5, 1.0], [2.0, 0.0], [1.0, 0.3]
    fit = StochasticInterpolant(num_steps=800, batch_size=512, hidden_sizes=[64, 64], gamma_scale=0.5).fit(
        _GaussianPoints(m1, v1, 20000, 1),
        _GaussianPoints(m0, v0, 20000, 2),
        generator=torch.Generator().manual_seed(3),
        progress=StageProgress(),
    )
    exact = GaussianFields(
        interpolant=fit.model.interpolant,
        **{k: torch.tensor(v, dtype=torch.float64) for k, v in dict(m0=m0, v0=v0, m1=m1, v1=v1).items()},
    )
    g = torch.Generator().manual_seed(4)
    t = 0.1 + 0.8 * torch.rand(4000, 1, generator=g, dtype=torch.float64)
    mu, cov, _, _ = exact.moments(t)
    x = mu + cov.sqrt() * torch.randn(4000, 2, generator=g, dtype=torch.float64)
    want = exact.velocity(t, x)
    got = fit.model.velocity(t.float(), x.float()).double()
    rel = float((got - want).square().sum(1).mean() / want.square().sum(1).mean())
    assert rel < 0.05, rel  # relative L2 error of b^ under rho_t
    want_s = exact.score(t, x)
    rel_s = float(
        (fit.model.score(t.float(), x.float()).double() - want_s).square().sum(1).mean()
        / want_s.square().sum(1).mean()
    )
    assert rel_s < 0.2, rel_s


def test_flow_matching_is_the_one_sided_linear_interpolant():
    # Same seed: the velocity networks get the same initialisation and the same batches, t and (no) z,
    # and the velocity objective is the same, so the two velocity fields are identical.
    data = _prepared(SwissRoll(num_train=2000, num_test=100))
    kw = dict(num_steps=30, batch_size=64, hidden_sizes=[16])
    fm = FlowMatching(**kw).fit(data, generator=torch.Generator().manual_seed(5), progress=StageProgress())
    si = StochasticInterpolant(gamma_scale=0.0, **kw).fit(
        data, generator=torch.Generator().manual_seed(5), progress=StageProgress()
    )
    for p, q in zip(fm.model.velocity_net.parameters(), si.model.velocity_net.parameters(), strict=True):
        torch.testing.assert_close(p, q, atol=0, rtol=0)
    assert fm.history["loss_b"] == si.history["loss_b"]
    with pytest.raises(ConfigError, match="epsilon > 0 needs a score"):
        InterpolantSampler(epsilon=0.5, num_samples=10).sample(fm, generator=torch.Generator())
    assert si.model.has_score and not fm.model.has_score


def test_bad_configurations_name_the_parameter():
    with pytest.raises(ConfigError, match="path"):
        StochasticInterpolant(path="cubic")
    with pytest.raises(ConfigError, match="ode_method"):
        InterpolantSampler(ode_method="rk45")
    moons, board = (
        _prepared(TwoMoons(num_train=100, num_test=10)),
        _prepared(Checkerboard(num_train=100, num_test=10)),
    )
    with pytest.raises(ConfigError, match="gamma_scale"):
        StochasticInterpolant(gamma_scale=0.0, num_steps=1).fit(
            board, moons, generator=torch.Generator(), progress=StageProgress()
        )
    fit = StochasticInterpolant(num_steps=2, batch_size=8, hidden_sizes=[4]).fit(
        board, moons, generator=torch.Generator(), progress=StageProgress()
    )
    with pytest.raises(ConfigError, match="source"):
        InterpolantSampler(num_samples=5).sample(fit, generator=torch.Generator())
    with pytest.raises(ConfigError, match="num_samples"):
        InterpolantSampler(num_samples=50).sample(fit, moons, generator=torch.Generator())
    with pytest.raises(ConfigError, match="fresh"):
        DatasetPoints(fresh=True).sample(board, generator=torch.Generator())
