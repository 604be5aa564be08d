"""Dual averaging and the tuned sampler: the step reaches its target acceptance, budgets are counted."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_inference_gym.targets import Banana, EightSchools
from quadriga_inference_gym.tuning import DualAveraging, dual_averaging_init, dual_averaging_step
from quadriga_std.samplers.mcmc import HMC, MALA, RWM

from quadriga.errors import ConfigError


def test_dual_averaging_finds_the_step_of_a_known_acceptance_curve():
    """With acceptance a(h) = exp(-h) the fixed point for delta = 0.6 is h* = -log 0.6 = 0.511."""
    st = dual_averaging_init(0.01)
    for _ in range(2000):
        st = dual_averaging_step(st, math.exp(-math.exp(st.log_step)), target=0.6)
    assert math.exp(st.log_step_bar) == pytest.approx(-math.log(0.6), rel=0.02)


@pytest.mark.parametrize(
    ("sampler", "delta"),
    [
        (MALA(num_chains=8, num_samples=200, burn_in=20, step_size=1e-4), 0.574),
        (RWM(num_chains=8, num_samples=200, burn_in=20, step_size=10.0), 0.234),
    ],
    ids=["mala", "rwm"],
)
def test_the_tuned_run_accepts_near_its_target(sampler, delta):
    """From a step 100x off, 400 pilot evaluations bring the acceptance of the run within 0.15 of delta."""
    t = EightSchools()
    out = DualAveraging(sampler=sampler, target_acceptance=delta, tuning_budget=400).sample(
        t, generator=torch.Generator().manual_seed(0)
    )
    assert abs(out.info["acceptance_rate"] - delta) < 0.15, out.info
    assert out.info["tuning_transitions"] == 400 and out.info["tuning_density_evals"] == 400 * 8
    assert out.info["density_evals"] == (
        out.info["score_evals"] if sampler.uses_score else out.info["log_prob_evals"]
    )
    assert out.chains.shape == (8, 200, t.dim)


def test_hmc_pilot_spends_the_budget_in_gradients():
    """HMC with L = 5 costs 5 gradients per transition: a 100-gradient budget is 20 pilot transitions."""
    out = DualAveraging(
        sampler=HMC(num_chains=2, num_samples=20, burn_in=0, num_leapfrog_steps=5),
        target_acceptance=0.7,
        tuning_budget=100,
    ).sample(Banana(), generator=torch.Generator().manual_seed(0))
    assert out.info["tuning_transitions"] == 20 and out.info["tuning_density_evals"] == 200
    assert out.info["score_evals"] == 2 * 5 * 20 + 2  # the run's own count starts at its first state
    assert out.info["step_size"] != out.info["initial_step_size"]


def test_srmc_is_tuned_through_its_base_kernel():
    pytest.importorskip("quadriga_srmc", reason="quadriga-srmc is an optional companion plugin")
    from quadriga_srmc.sampler import SRMC

    srmc = SRMC(base_kernel=MALA(step_size=1e-4), num_chains=4, num_steps=50, burn_in=10)
    out = DualAveraging(sampler=srmc, tuning_budget=200).sample(
        EightSchools(), generator=torch.Generator().manual_seed(0)
    )
    assert out.info["step_size"] > 1e-3 and out.chains.shape == (4, 50, 10)


def test_a_sampler_without_a_step_is_refused():
    from quadriga_std.samplers.simple import IID

    with pytest.raises(ConfigError, match="step_size"):
        DualAveraging(sampler=IID()).sample(Banana(), generator=torch.Generator().manual_seed(0))
