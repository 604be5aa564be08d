"""Step-size tuning by dual averaging, then the tuned sampler run from where the tuning ended.

``dual-averaging`` wraps a sampler (a quadriga-std MCMC kernel, or a sampler with a
``base_kernel`` such as quadriga-srmc's SRMC). It runs a pilot of the kernel's own transitions on
``num_chains`` chains while adapting its ``step_size`` to a target acceptance rate, then runs the
wrapped sampler at the tuned step from the pilot's last points. The tuning budget is a number of
density evaluations per chain, so samplers of different cost per transition get the same budget.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar, NamedTuple

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Samples
from quadriga.components import as_component
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler
from quadriga.validators import in_range, one_of, optional, positive_int

__all__ = ["DualAveraging", "DualAveragingState", "dual_averaging_init", "dual_averaging_step"]


def _default_sampler() -> Sampler:
    from quadriga_std.samplers.mcmc import MALA

    return MALA()


class DualAveragingState(NamedTuple):
    """State of dual averaging after m adaptation steps.

    Attributes:
        m: steps taken (count).
        h_bar: running average of (target - acceptance) (fraction).
        log_step: log of the current step size (the iterate used for the next transition).
        log_step_bar: log of the averaged step size (the tuned step once adaptation stops).
        mu: the shrinkage point log(10 step0).
    """

    m: int
    h_bar: float
    log_step: float
    log_step_bar: float
    mu: float


def dual_averaging_init(step0: float) -> DualAveragingState:
    """The state before the first adaptation step, from the initial step size ``step0`` (> 0)."""
    return DualAveragingState(0, 0.0, math.log(step0), math.log(step0), math.log(10.0 * step0))


def dual_averaging_step(
    state: DualAveragingState,
    acceptance: float,
    *,
    target: float,
    gamma: float = 0.05,
    t0: float = 10.0,
    kappa: float = 0.75,
) -> DualAveragingState:
    """One step of Nesterov dual averaging of the log step size.

    ``H_m = (1 - 1/(m + t0)) H_{m-1} + (delta - alpha_m)/(m + t0)``,
    ``log eps_m = mu - sqrt(m)/gamma H_m``,
    ``log epsbar_m = m^-kappa log eps_m + (1 - m^-kappa) log epsbar_{m-1}``.

    Args:
        state: the state after m - 1 steps.
        acceptance: acceptance rate alpha_m of the m-th transition (fraction).
        target: the target acceptance delta (fraction).
        gamma, t0, kappa: Hoffman & Gelman's constants (0.05, 10, 0.75).

    Returns:
        The state after m steps.

    Source: Hoffman & Gelman 2014, "The No-U-Turn Sampler", JMLR 15, Algorithm 5 (eqs. 5-6);
    Nesterov 2009, "Primal-dual subgradient methods for convex problems", Math. Program. 120.
    """
    m = state.m + 1
    h_bar = (1 - 1 / (m + t0)) * state.h_bar + (target - acceptance) / (m + t0)
    log_step = state.mu - math.sqrt(m) / gamma * h_bar
    eta = m**-kappa
    log_bar = eta * log_step + (1 - eta) * state.log_step_bar
    return DualAveragingState(m, h_bar, log_step, log_bar, state.mu)


@attrs.define
class _StartAt:
    """A target whose exact "draws" are given points (the pilot's last states); all else delegates."""

    target: Any
    x0: torch.Tensor

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        if int(num_samples) != self.x0.shape[0]:
            raise ConfigError(
                f"the tuned sampler asked for {num_samples} starting points, "
                f"the pilot has {self.x0.shape[0]}.",
                key="num_chains",
            )
        return self.x0.clone()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


@attrs.define(kw_only=True)
class DualAveraging(Sampler):
    """A sampler whose kernel step size is tuned by dual averaging on a pilot run first.

    The kernel is ``sampler`` itself when it has ``transition`` (rwm, mala, hmc, ula) or its
    ``base_kernel`` (srmc). The pilot runs ``sampler.num_chains`` chains of the kernel, starting
    from ``target.warm_start`` (ground-truth mean +- sd, when the target has it and
    ``init = "warm"``) or from the kernel's own starting points, for
    ``floor(tuning_budget / cost)`` transitions, cost being the kernel's density evaluations per
    transition and chain (L for HMC, 1 for MALA and RWM); after each one the step follows
    :func:`dual_averaging_step` on the chains' mean acceptance. The wrapped sampler then runs at the
    averaged step from the pilot's last points (its kernel's ``init`` set to them), with its own
    burn-in, so the pilot does not count in its ``score_evals``.

    ``Samples.info`` is the wrapped sampler's, plus ``step_size`` (tuned), ``initial_step_size``,
    ``tuning_transitions``, ``tuning_density_evals`` (rows: chains x evaluations),
    ``tuning_acceptance`` (mean over the second half of the pilot), ``density_evals`` (the sampling
    phase's score evaluations, or log-density evaluations for a kernel without scores) and
    ``target_acceptance``.

    Shapes: ``Samples.x: Tensor[num_chains * m, d]``, ``chains: Tensor[num_chains, m, d]`` as the
    wrapped sampler returns them.
    Units: ``step_size`` in the kernel's units (x for RWM and HMC, x^2 for MALA); budgets in density
    evaluations per chain; acceptance rates are fractions.

    Raises:
        ConfigError: a wrapped sampler without a kernel with ``transition``/``step_size``,
            ``target_acceptance`` outside (0, 1) or not given for a kernel without
            ``optimal_acceptance``, ``tuning_budget`` < 1 or below one transition.

    Source: Hoffman & Gelman 2014, "The No-U-Turn Sampler", JMLR 15, Algorithm 5 and sec. 3.2
    (dual averaging of the step size during warm-up).
    """

    #: a short pilot and run for the conformance checks
    check_params: ClassVar[dict[str, Any]] = {
        "sampler": {"use": "mala", "num_chains": 2, "num_samples": 30, "burn_in": 5},
        "tuning_budget": 20,
    }

    sampler: Sampler = param(
        factory=_default_sampler,
        converter=as_component(Sampler),
        doc='the sampler to tune and run, e.g. { use = "mala", num_samples = 2000 }',
    )
    target_acceptance: float | None = param(
        None,
        doc="acceptance rate the step is tuned to (fraction); default: the kernel's optimal_acceptance "
        "(0.234 RWM, 0.574 MALA and SR-MALA's base MALA, 0.65 HMC)",
        validator=optional(in_range(0, 1, low_open=True, high_open=True)),
    )
    tuning_budget: int = param(
        1000, doc="density evaluations per chain spent on the pilot (count)", validator=positive_int
    )
    init: str = param(
        "warm",
        doc="pilot start: 'warm' (target.warm_start, near the posterior) or 'kernel' (the kernel's own init)",
        validator=one_of(("warm", "kernel")),
    )

    def __attrs_post_init__(self) -> None:
        """Fill ``target_acceptance`` from the kernel's ``optimal_acceptance`` when it is not given."""
        if self.target_acceptance is None:
            kernel, _ = self._kernel()
            optimum = getattr(kernel, "optimal_acceptance", None)
            if optimum is None:
                raise ConfigError(
                    f"{type(kernel).__name__} declares no optimal acceptance rate; set target_acceptance "
                    "(a fraction in (0, 1)).",
                    key="target_acceptance",
                )
            self.target_acceptance = float(optimum)

    def _kernel(self) -> tuple[Any, str]:
        s = self.sampler
        if callable(getattr(s, "transition", None)) and hasattr(s, "step_size"):
            return s, ""
        base = getattr(s, "base_kernel", None)
        if base is not None and callable(getattr(base, "transition", None)) and hasattr(base, "step_size"):
            return base, "base_kernel"
        raise ConfigError(
            f"dual-averaging tunes a kernel's step_size; {type(s).__name__} has neither transition/step_size "
            "nor a base_kernel with them (use rwm, mala, hmc, ula or srmc).",
            key="sampler",
        )

    def sample(self, target: Any, *, generator: torch.Generator) -> Samples:
        """Tune on a pilot, then run the wrapped sampler from its end; see the class docstring."""
        if not hasattr(target, "log_prob") or not hasattr(target, "dim"):
            raise ConfigError("dual-averaging needs a target with dim and log_prob.", key="target")
        from quadriga.threads import single_thread

        with single_thread():
            return self._sample(target, generator)

    def _sample(self, target: Any, generator: torch.Generator) -> Samples:
        t0 = time.perf_counter()
        kernel, where = self._kernel()
        c = int(getattr(self.sampler, "num_chains", getattr(kernel, "num_chains", 1)))
        kernel = attrs.evolve(kernel, num_chains=c)
        if self.init == "warm" and callable(getattr(target, "warm_start", None)):
            x = target.warm_start(c, generator=generator).to(getattr(torch, kernel.dtype))
            state = kernel.init_state(target, x)
        else:
            state = kernel.initial_state(target, generator)
        h0 = float(kernel.step_size)
        state, accepted, counters = kernel.transition(state, target, generator)
        uses_score = bool(getattr(kernel, "uses_score", True))
        cost = (counters["score_evals"] if uses_score else counters["log_prob_evals"]) / c
        steps = int(self.tuning_budget // max(cost, 1))
        if steps < 1:
            raise ConfigError(
                f"tuning_budget = {self.tuning_budget} is below one transition ({cost:g} evaluations).",
                key="tuning_budget",
            )
        acc = [float(accepted.double().mean())]
        da = dual_averaging_step(dual_averaging_init(h0), acc[0], target=self.target_acceptance)
        for _ in range(steps - 1):
            step = attrs.evolve(kernel, step_size=math.exp(da.log_step))
            state, accepted, _ = step.transition(state, target, generator)
            acc.append(float(accepted.double().mean()))
            da = dual_averaging_step(da, acc[-1], target=self.target_acceptance)
        h = math.exp(da.log_step_bar)
        tuned_kernel = attrs.evolve(kernel, step_size=h, init="target")
        run = (
            attrs.evolve(self.sampler, base_kernel=tuned_kernel)
            if where
            else attrs.evolve(self.sampler, step_size=h, init="target")
        )
        out = run.sample(_StartAt(target, state.x.detach()), generator=generator)
        info = dict(out.info)
        density = info.get("score_evals", 0) if uses_score else info.get("log_prob_evals", 0)
        info.update(
            step_size=h,
            initial_step_size=h0,
            target_acceptance=self.target_acceptance,
            tuning_transitions=steps,
            tuning_density_evals=int(steps * cost * c),
            tuning_acceptance=sum(acc[steps // 2 :]) / len(acc[steps // 2 :]),
            density_evals=int(density),
            seconds=time.perf_counter() - t0,
        )
        return Samples(x=out.x, log_weights=out.log_weights, chains=out.chains, info=info)
