"""The MCMC kernels' chains, pinned: exact draws on fixed seeds, and the eager loop against the general one.

Other plugins' recorded results depend on these chains being reproduced bit for bit; a change to
the kernels' arithmetic or the order of their random draws shows here. The pinned chains are drawn
on the eigenbasis evaluation of a dense Gaussian (conftest.EigenbasisGaussian), the one std's
Gaussian used before it evaluated dense covariances through the precision; the precision path is
checked against it to rounding (test_precision_gaussian_chains_follow_the_eigenbasis_chains).
"""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_std.samplers.mcmc import HMC, MALA, RWM, ULA
from quadriga_std.targets.gaussian import Gaussian

KERNELS = {
    "MALA": (MALA, {"step_size": 0.3}),
    "HMC": (HMC, {"step_size": 0.3, "num_leapfrog_steps": 4}),
    "RWM": (RWM, {"step_size": 0.8}),
    "ULA": (ULA, {"step_size": 0.05}),
}

#: (last draw of both chains as float.hex, sum of all kept draws as float.hex, acceptance rate)
PINNED = {
    ("MALA", "float64"): (
        [
            "-0x1.3d667d165a6d6p-1",
            "-0x1.4611ada8d1c70p+1",
            "0x1.435191a99938dp-1",
            "-0x1.56146286fc4dep-1",
            "-0x1.abc7670259c12p-3",
            "-0x1.b7384735e4ef4p-2",
        ],
        "-0x1.4115486fe5c25p+4",
        0.8,
    ),
    ("MALA", "float32"): (
        [
            "0x1.d3cf900000000p-3",
            "-0x1.038cc20000000p+0",
            "0x1.cd49600000000p-1",
            "0x1.aae0420000000p-1",
            "-0x1.2e48f80000000p+0",
            "-0x1.42203c0000000p-1",
        ],
        "0x1.b6e910a000000p+0",
        0.9333333333333333,
    ),
    ("HMC", "float64"): (
        [
            "0x1.5b419537dc312p-1",
            "-0x1.4e270f75257c4p+1",
            "0x1.f1fc4d08f0292p-3",
            "-0x1.4b032b79ff0dep-1",
            "-0x1.60efea6e28ffap+0",
            "0x1.7bc14539a6a18p-3",
        ],
        "-0x1.11fd3d4890f35p+4",
        0.9333333333333333,
    ),
    ("HMC", "float32"): (
        [
            "0x1.a4d3700000000p-3",
            "-0x1.5830a80000000p+0",
            "0x1.73a4ac0000000p-2",
            "0x1.53a0b80000000p-3",
            "-0x1.251c4a0000000p+1",
            "-0x1.2ae2040000000p-1",
        ],
        "-0x1.3d1335b800000p+2",
        0.9666666666666667,
    ),
    ("RWM", "float64"): (
        [
            "-0x1.544cbb32120dcp+0",
            "-0x1.b5dd2ec657e9ep+0",
            "0x1.2228c6b0b405ep+0",
            "-0x1.9e6f80e770d4bp-1",
            "0x1.2f4c32007243cp+0",
            "-0x1.8196165b377f4p-3",
        ],
        "-0x1.0c0925bba0a3ap+4",
        0.36666666666666664,
    ),
    ("RWM", "float32"): (
        [
            "0x1.28f5180000000p-1",
            "-0x1.5740420000000p-1",
            "-0x1.1c3a580000000p-5",
            "-0x1.3319f40000000p+0",
            "0x1.50dfaa0000000p+1",
            "-0x1.1fcec00000000p+0",
        ],
        "0x1.4ab3298000000p+3",
        0.5333333333333333,
    ),
    ("ULA", "float64"): (
        [
            "0x1.6af39dde30ec4p-1",
            "0x1.2b2e86d2f97c5p-2",
            "0x1.a303dc4e3fb2fp-3",
            "0x1.10ac3fb58e4d6p-2",
            "0x1.7a716b8cf5f7ap-1",
            "-0x1.887b9580d3f5ap-1",
        ],
        "0x1.643b3ff6c2587p+3",
        1.0,
    ),
    ("ULA", "float32"): (
        [
            "0x1.6af3a40000000p-1",
            "0x1.2b2e900000000p-2",
            "0x1.a303da0000000p-3",
            "0x1.10ac4a0000000p-2",
            "0x1.7a716a0000000p-1",
            "-0x1.887b940000000p-1",
        ],
        "0x1.643b443000000p+3",
        1.0,
    ),
}


def _target():
    return Gaussian(mean=[0.5, -1.0, 0.0], covariance=[[1.0, 0.3, 0.1], [0.3, 2.0, -0.4], [0.1, -0.4, 0.5]])


@pytest.mark.parametrize(("name", "dtype"), sorted(PINNED))
def test_chains_are_pinned_bit_for_bit(name, dtype, eigenbasis):
    cls, params = KERNELS[name]
    sampler = cls(num_chains=2, num_samples=6, burn_in=3, thin=2, dtype=dtype, **params)
    out = sampler.sample(eigenbasis(_target()), generator=torch.Generator().manual_seed(7))
    last, total, rate = PINNED[(name, dtype)]
    assert [float(v).hex() for v in out.chains[:, -1].reshape(-1)] == last
    assert float(out.x.double().sum()).hex() == total
    assert out.info["acceptance_rate"] == rate


class _Truncated:
    """N(0, I + 0.5 (11^T - I)) cut at x_0 < 0.4: log pi = -inf and score NaN beyond the wall."""

    def __init__(self, d):
        self.inner, self.dim = Gaussian(dim=d, equicorrelation=0.5), d

    def log_prob(self, x):
        return torch.where(x[:, 0] < 0.4, self.inner.log_prob(x), -torch.inf)

    def score(self, x):
        return torch.where((x[:, 0] < 0.4)[:, None], self.inner.score(x), torch.nan)


def _general(cls):
    """``cls`` run through the base loop of ``transition`` calls (its eager loop switched off)."""

    class General(cls):
        def transition(self, state, target, generator):
            return super().transition(state, target, generator)

    return General


@pytest.mark.parametrize("name", ["MALA", "HMC"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("truncated", [False, True])
def test_eager_loop_equals_the_transition_loop(name, dtype, truncated):
    cls = KERNELS[name][0]
    kw = dict(num_chains=5, num_samples=150, burn_in=7, thin=3, dtype=dtype, init_scale=0.3)
    kw.update(step_size=0.9 if truncated else 0.2)
    target = _Truncated(4) if truncated else Gaussian(dim=9, equicorrelation=0.3)
    fast = cls(**kw)
    slow = _general(cls)(**kw)
    assert fast.eager_advance(target, torch.zeros(5, target.dim)) is not None
    assert slow.eager_advance(target, torch.zeros(5, target.dim)) is None
    a = fast.sample(target, generator=torch.Generator().manual_seed(3))
    b = slow.sample(target, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a.chains, b.chains)
    keys = ("acceptance_rate", "score_evals", "log_prob_evals", "rejected_nonfinite", "transitions")
    assert {k: a.info[k] for k in keys} == {k: b.info[k] for k in keys}
    assert isinstance(a.info["rejected_nonfinite"], int)
    if truncated:  # proposals beyond the wall have a non-finite ratio, rejected and counted
        assert a.info["rejected_nonfinite"] > 0
        assert bool((a.x[:, 0] < 0.4).all())
    else:
        assert a.info["rejected_nonfinite"] == 0


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("mean", [None, [0.5, -1.0, 2.0, 0.0]])
def test_gaussian_evaluators_equal_its_methods(dtype, mean):
    cov = (0.6 * torch.eye(4) + 0.4 * torch.ones(4, 4)).tolist()
    g = Gaussian(covariance=cov) if mean is None else Gaussian(mean=mean, covariance=cov)
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(2), dtype=dtype)
    x[0, 1] = -0.0
    both, score = g.evaluators(x)
    lp, s = both(x)
    assert torch.equal(lp, g.log_prob(x)) and torch.equal(s, g.score(x))
    assert torch.equal(score(x), g.score(x)) and lp.dtype == dtype
    assert torch.allclose(
        s.double(),
        -torch.linalg.solve(torch.tensor(cov, dtype=torch.float64), (x.double() - g.mean).T).T,
        atol=1e-5,
    )
    with pytest.raises(ValueError, match="shape"):
        g.evaluators(x[:, :3])
    assert math.isfinite(float(lp.sum()))


class _BoxFused(Gaussian):
    """N(0, I + 0.5 (11^T - I)) cut to |x_i| < 1.5, overriding ``log_prob`` and the fused call."""

    def log_prob(self, x):
        lp = super().log_prob(x)
        return torch.where((x.abs() < 1.5).all(-1), lp, -torch.inf)

    def log_prob_and_score(self, x):
        return self.log_prob(x), self.score(x)


class _BoxLogProb(Gaussian):
    """The same cut overriding ``log_prob`` only (HMC's last leapfrog position must use it)."""

    def log_prob(self, x):
        lp = super().log_prob(x)
        return torch.where((x.abs() < 1.5).all(-1), lp, -torch.inf)


@pytest.mark.parametrize(("name", "box"), [("MALA", _BoxFused), ("HMC", _BoxFused), ("HMC", _BoxLogProb)])
def test_a_gaussian_subclass_overriding_its_density_is_sampled_through_its_override(name, box):
    # the Gaussian's evaluators() and fused_is_exact speak for Gaussian's own methods: inherited by
    # a subclass that overrides them, they would skip the override (draws outside the cut)
    target = box(dim=3, equicorrelation=0.5)
    cls = KERNELS[name][0]
    kw = dict(num_chains=3, num_samples=50, burn_in=7, step_size=0.45, init_scale=0.3)
    a = cls(**kw).sample(target, generator=torch.Generator().manual_seed(0))
    b = _general(cls)(**kw).sample(target, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a.chains, b.chains)
    assert bool((a.x.abs() < 1.5).all())
    assert a.info["rejected_nonfinite"] > 0


class _FusedOnly:
    """log_prob and log_prob_and_score, no score: all MALA calls."""

    dim = 3

    def log_prob(self, x):
        return -0.5 * (x * x).sum(-1)

    def log_prob_and_score(self, x):
        return -0.5 * (x * x).sum(-1), -x


def test_mala_runs_on_a_target_without_score():
    kw = dict(num_chains=2, num_samples=20, burn_in=3, step_size=0.3)
    a = MALA(**kw).sample(_FusedOnly(), generator=torch.Generator().manual_seed(1))
    b = _general(MALA)(**kw).sample(_FusedOnly(), generator=torch.Generator().manual_seed(1))
    assert torch.equal(a.chains, b.chains)
    assert a.info["acceptance_rate"] == b.info["acceptance_rate"] > 0.5


@pytest.mark.parametrize("name", ["MALA", "HMC"])
@pytest.mark.parametrize("mean", [None, [0.3] * 9])
def test_precision_gaussian_chains_follow_the_eigenbasis_chains(name, mean, eigenbasis):
    # a dense Gaussian is evaluated through its precision (one d x d product per call); the chains
    # are those of the eigenbasis evaluation up to rounding: the same accept decisions, and draws
    # within 1e-12 after 200 transitions (5 chains, d = 9, float64)
    g = (
        Gaussian(dim=9, equicorrelation=0.3)
        if mean is None
        else Gaussian(mean=mean, covariance=(0.7 * torch.eye(9) + 0.3 * torch.ones(9, 9)).tolist())
    )
    assert g._axes is None
    cls = KERNELS[name][0]
    kw = dict(num_chains=5, num_samples=200, burn_in=0, step_size=0.3, init_scale=0.5)
    a = cls(**kw).sample(g, generator=torch.Generator().manual_seed(4))
    b = cls(**kw).sample(eigenbasis(g), generator=torch.Generator().manual_seed(4))
    assert not torch.equal(a.chains, b.chains)  # the rounding differs ...
    assert float((a.chains - b.chains).abs().max()) < 1e-12  # ... and nothing else
    assert a.info["acceptance_rate"] == b.info["acceptance_rate"]


@pytest.mark.parametrize("name", ["MALA", "HMC", "RWM"])
def test_a_gaussian_subclass_overriding_log_prob_only_is_sampled_through_it(name):
    # the inherited log_prob_and_score (and evaluators) speak for Gaussian's own log_prob: a
    # subclass that cuts the density through log_prob alone must be sampled through its cut
    target = _BoxLogProb(dim=3, equicorrelation=0.5)
    cls = KERNELS[name][0]
    kw = dict(num_chains=4, num_samples=300, burn_in=20, step_size=0.45, init_scale=0.3)
    a = cls(**kw).sample(target, generator=torch.Generator().manual_seed(0))
    b = _general(cls)(**kw).sample(target, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a.chains, b.chains)
    assert bool((a.x.abs() < 1.5).all())
    assert a.info["rejected_nonfinite"] > 0


class _Tilted(Gaussian):
    """N(0, Sigma) tilted by exp(3 x_0), overriding log_prob and score only: N(3 Sigma e_0, Sigma)."""

    def log_prob(self, x):
        return super().log_prob(x) + 3.0 * x[:, 0]

    def score(self, x):
        s = super().score(x).clone()
        s[:, 0] += 3.0
        return s


def test_a_gaussian_subclass_overriding_log_prob_and_score_gets_its_own_law():
    from quadriga_std.samplers.mcmc import fused_evaluator

    target = _Tilted(dim=3, equicorrelation=0.5)
    assert fused_evaluator(target) is None
    assert fused_evaluator(Gaussian(dim=3)) is not None
    out = MALA(num_chains=16, num_samples=1500, burn_in=300, step_size=0.3).sample(
        target, generator=torch.Generator().manual_seed(1)
    )
    # mean Sigma (3, 0, 0) = (3, 1.5, 1.5); 16 x 1500 draws: the chain mean's error is far below 0.3
    torch.testing.assert_close(
        out.x.mean(0), torch.tensor([3.0, 1.5, 1.5], dtype=out.x.dtype), atol=0.3, rtol=0
    )
