"""The discrete schedule object and the ddpm/ddim samplers on it.

Closed forms of :class:`DiscreteSchedule` (Ho et al. 2020, eq. 4 and eq. 7; lambda the half log-SNR of
Kingma et al. 2021), its agreement with the continuous :class:`NoiseSchedule`, and bit-identical sampler
outputs against the code path the samplers ran before they read the schedule object (kept below).
"""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.conditional import ConditionalGaussianMixture
from quadriga_ddpm.gaussian_exact import output_law
from quadriga_ddpm.guidance import guided_score_model
from quadriga_ddpm.noise_schedule import DiscreteSchedule, NoiseSchedule
from quadriga_ddpm.sampler import DDIM, DDPM
from quadriga_ddpm.schedules import SCHEDULES, make_betas

from quadriga.errors import ConfigError
from quadriga.threads import single_thread

# --------------------------------------------------------------------------- the earlier code path, verbatim


def _legacy_sigmas(betas: torch.Tensor, method: str, variance: str, eta: float) -> torch.Tensor:
    ab = torch.cumprod(1 - betas, 0)
    ab_prev = torch.cat([torch.ones(1, dtype=ab.dtype), ab[:-1]])
    post = betas * (1 - ab_prev) / (1 - ab)
    if method == "ddpm":
        return (betas if variance == "beta" else post).sqrt()
    return eta * post.sqrt()


def _legacy_run_chain(score_model, betas, num_samples, *, generator, method, variance, eta, dtype):
    T = int(betas.shape[0])
    d = int(score_model.dim)
    if hasattr(score_model, "num_steps"):
        score_model.num_steps = T
    ab = torch.cumprod(1 - betas, 0).tolist()
    b = betas.tolist()
    sig = _legacy_sigmas(betas, method, variance, eta).tolist()
    x = torch.randn(num_samples, d, generator=generator, dtype=dtype)
    for t in range(T, 0, -1):
        i = t - 1
        s = score_model(x, t, ab[i])
        if method == "ddpm":
            x = (x + b[i] * s) / (1 - b[i]) ** 0.5
        else:
            ab_t, ab_p = ab[i], (ab[i - 1] if i > 0 else 1.0)
            x0 = (x + (1 - ab_t) * s) / ab_t**0.5
            eps = -((1 - ab_t) ** 0.5) * s
            x = ab_p**0.5 * x0 + max(1 - ab_p - sig[i] ** 2, 0.0) ** 0.5 * eps
        if sig[i] > 0:
            x = x + sig[i] * torch.randn(num_samples, d, generator=generator, dtype=dtype)
    return x


@pytest.fixture(scope="module")
def target():
    return ConditionalGaussianMixture(preset="3-class-2d", grid_size=50)


ARMS = [
    (DDPM, {"variance": "beta"}, {"method": "ddpm", "variance": "beta", "eta": 0.0}),
    (DDPM, {"variance": "posterior"}, {"method": "ddpm", "variance": "posterior", "eta": 0.0}),
    (DDIM, {"eta": 0.0}, {"method": "ddim", "variance": "beta", "eta": 0.0}),
    (DDIM, {"eta": 1.0}, {"method": "ddim", "variance": "beta", "eta": 1.0}),
]


@pytest.mark.parametrize("cls, kw, legacy_kw", ARMS, ids=["ddpm-beta", "ddpm-posterior", "ddim-0", "ddim-1"])
def test_samplers_on_the_schedule_object_reproduce_the_earlier_outputs_bit_for_bit(
    cls, kw, legacy_kw, target
):
    cases = [(s, T, g, "float64") for s in SCHEDULES for T in (2, 9, 40) for g in (None, 3.0)]
    cases.append(("theory", 9, 3.0, "float32"))
    for schedule, T, g, dt in cases:
        sampler = cls(num_steps=T, num_samples=32, schedule=schedule, guidance=g, dtype=dt, **kw)
        got = sampler.sample(target, generator=torch.Generator().manual_seed(7))
        betas = make_betas(schedule, T)
        with single_thread():
            ref = _legacy_run_chain(
                guided_score_model(target, g),
                betas,
                32,
                generator=torch.Generator().manual_seed(7),
                dtype=getattr(torch, dt),
                **legacy_kw,
            )
        case = f"{schedule} T={T} w={g} {dt}"
        assert got.x.dtype == ref.dtype and torch.equal(got.x, ref), case
        assert got.info["alpha_bar_T"] == float(torch.cumprod(1 - betas, 0)[-1]), case
        assert got.info["betas"] == betas.tolist(), case
        assert got.info["score_evals"] == (1 if g is None else 2) * 32 * T, case


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_exact_output_law_is_unchanged_on_the_schedule_object(schedule):
    betas = make_betas(schedule, 30)
    for method, kw in [("ddpm", {"variance": "posterior"}), ("ddim", {"eta": 0.7})]:
        law = output_law(betas, 0.5, method=method, **kw)
        assert law == output_law(DiscreteSchedule.from_betas(betas), 0.5, method=method, **kw)
        # the earlier recursion's noise table
        sig = _legacy_sigmas(betas, method, kw.get("variance", "beta"), kw.get("eta", 0.0))
        from quadriga_ddpm.sampler import _sigmas

        assert torch.equal(_sigmas(betas, method, kw.get("variance", "beta"), kw.get("eta", 0.0)), sig)


# --------------------------------------------------------------------------- the schedule's closed forms


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_alpha_bar_sigma_lambda_and_posterior_variance_closed_forms(schedule):
    T = 25
    sched = DiscreteSchedule.named(schedule, T)
    b = sched.betas.tolist()
    t = torch.arange(T + 1)
    ab = [math.prod(1 - bs for bs in b[:k]) for k in range(T + 1)]  # Ho et al. 2020, eq. 4
    torch.testing.assert_close(sched.alpha_bar(t), torch.tensor(ab, dtype=torch.float64), rtol=1e-13, atol=0)
    assert float(sched.alpha_bar(0)) == 1.0 and float(sched.sigma(0)) == 0.0 and sched.lam(0) == math.inf
    assert sched.alpha_bar_T == ab[-1] or math.isclose(sched.alpha_bar_T, ab[-1], rel_tol=1e-13)
    torch.testing.assert_close(
        sched.alpha(t) ** 2 + sched.sigma(t) ** 2, torch.ones(T + 1, dtype=torch.float64)
    )
    s = t[1:]
    torch.testing.assert_close(sched.lam(s), (sched.alpha(s) / sched.sigma(s)).log(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(sched.log_alpha(s), sched.alpha(s).log(), rtol=1e-13, atol=1e-15)
    assert bool((sched.lam(s).diff() < 0).all())
    # Ho et al. 2020, eq. 7: beta~_t = beta_t (1 - ab_{t-1}) / (1 - ab_t); zero at t = 1
    post = [b[k] * (1 - ab[k]) / (1 - ab[k + 1]) for k in range(T)]
    torch.testing.assert_close(
        sched.posterior_variances, torch.tensor(post, dtype=torch.float64), rtol=1e-12, atol=0
    )
    assert float(sched.posterior_variances[0]) == 0.0
    assert (
        torch.equal(sched.alpha_bars_prev[1:], sched.alpha_bars[:-1]) and float(sched.alpha_bars_prev[0]) == 1
    )
    assert torch.equal(sched.step_alphas, 1 - sched.betas)


def test_lambda_maps_and_the_piecewise_linear_inverse():
    sched = DiscreteSchedule.named("cosine", 40)
    t = torch.arange(1, 41)
    lam = sched.lam(t)
    a, s = sched.alpha_sigma_of_lambda(lam)
    torch.testing.assert_close(a, sched.alpha(t), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(s, sched.sigma(t), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(sched.dlog_alpha_dlambda(lam), sched.sigma(t) ** 2, rtol=1e-12, atol=1e-15)
    # the same VP family as the continuous schedule
    for x, y in zip(
        sched.alpha_sigma_of_lambda(lam), NoiseSchedule().alpha_sigma_of_lambda(lam), strict=True
    ):
        assert torch.equal(x, y)
    torch.testing.assert_close(sched.t_of_lambda(lam), t.to(torch.float64), rtol=0, atol=1e-12)
    mid = 0.25 * lam[9] + 0.75 * lam[10]  # a quarter of the way from step 11 back to step 10
    assert float(sched.t_of_lambda(mid)) == pytest.approx(10.75, abs=1e-12)
    with pytest.raises(ValueError, match="lambda_T"):
        sched.t_of_lambda(lam[0] + 1.0)


def test_discrete_linear_converges_to_vp_linear_and_discrete_cosine_is_vp_cosine_at_the_steps():
    # Ho's linear table (1e-4 .. 0.02 at T = 1000, rescaled) is beta_i = beta(i / T) / T of the VP-SDE with
    # beta_0 = 0.1, beta_1 = 20 (Song et al. 2021, eq. 33), so alpha_t -> alpha(t / T) at rate 1 / T.
    errs = []
    for T in (1000, 4000):
        d, c = DiscreteSchedule.named("linear", T), NoiseSchedule(kind="vp-linear")
        t = torch.arange(1, T + 1)
        errs.append(float((d.alpha(t) - c.alpha(t.to(torch.float64) / T)).abs().max()))
    assert errs[0] < 1.5 / 1000 and 3.5 < errs[0] / errs[1] < 4.5
    # the cosine table is built from f(t) / f(0) itself: equal up to rounding before the 0.999 clip
    T = 1000
    d, c = DiscreteSchedule.named("cosine", T), NoiseSchedule(kind="vp-cosine", t_max=1.0)
    t = torch.arange(1, T)
    torch.testing.assert_close(d.alpha(t), c.alpha(t.to(torch.float64) / T), rtol=0, atol=1e-14)
    torch.testing.assert_close(d.lam(t), c.lam(t.to(torch.float64) / T), rtol=0, atol=1e-11)


def test_constructors_and_bad_input():
    betas = make_betas("theory", 12)
    sched = NoiseSchedule.discrete(betas)
    assert isinstance(sched, DiscreteSchedule) and torch.equal(sched.betas, betas) and sched.num_steps == 12
    assert DiscreteSchedule.from_betas(sched) is sched
    assert torch.equal(DDPM(num_steps=12).noise_schedule().betas, betas)
    assert torch.equal(DDIM(num_steps=12, schedule="linear").betas(), make_betas("linear", 12))
    assert DiscreteSchedule.from_betas([0.1, 0.2]).betas.dtype == torch.float64
    for bad in ([0.1, 0.0], [0.5, 1.0], [[0.1, 0.2]], []):
        with pytest.raises(ConfigError, match="beta"):
            DiscreteSchedule.from_betas(bad)
    with pytest.raises(ValueError, match="integer step"):
        sched.alpha_bar(13)
    with pytest.raises(ValueError, match="integer step"):
        sched.lam(0.5)
    with pytest.raises(ConfigError, match="unknown schedule"):
        DiscreteSchedule.named("quadratic", 10)
