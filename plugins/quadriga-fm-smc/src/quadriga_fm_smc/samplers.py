"""Training-free conditional samplers for a flow-matching prior: ``fm-smc``, ``fm-is`` and ``fm-guidance``.

All three draw ``K`` particles ``x0 ~ N(0, I)`` and move them from ``t = 0`` to ``t = 1`` on the same
uniform grid of ``num_steps`` steps with the same ODE solver, so at equal ``num_particles``,
``num_steps`` and ``solver`` they spend the same number of velocity evaluations
(``info["velocity_evals"]``, per particle and step). The target of every sampler is the
posterior ``p(x | y) ∝ p1(x) p(y | x)`` of a task that offers ``log_likelihood(x)`` (and, when no
learned velocity is given, ``prior.velocity(x, t)``, the exact flow-matching velocity of the prior).

- ``fm-is`` (naive importance sampling): ODE to ``t = 1``, weights ``p(y | x1)``.
- ``fm-smc`` (TFTF-style SMC, Qu & Liu 2026): ODE to ``t_a``; on ``[t_a, t_b]`` the
  marginal-preserving SDE with noise ``g`` (:mod:`quadriga_fm_smc.flows`), lookahead potentials
  ``G_t(x) = p(y | x̂1(x, t))^lambda`` with the denoised lookahead ``x̂1 = x + (1 - t) v(x, t)``,
  incremental weights ``G_{t_k} / G_{t_{k-1}}`` and systematic resampling when the ESS falls
  below ``resample_threshold * K``; ODE to ``t = 1``; terminal correction ``p(y | x1) / G_{t_b}``.
  The potentials telescope to ``p(y | x1)``, so the weighted particles target the posterior of the
  simulated prior process whatever ``G`` is, and the evidence estimate ``Ẑ`` (product of the mean
  incremental weights between resampling times) is unbiased for ``E[p(y | X1)]`` under it
  (Del Moral 2004, Thm. 7.4.2; Chopin & Papaspiliopoulos 2020, Prop. 16.3).
- ``fm-guidance`` (gradient guidance, DPS-style): ODE with the guided velocity
  ``v + scale ((1 - t) / t) grad_x log p(y | x̂1(x, t))`` (the conditional velocity
  ``v(x | y) = v(x) + ((1 - t)/t) grad log p_t(y | x)`` with Chung et al. 2023's approximation
  ``p_t(y | x) ≈ p(y | x̂1)``); unweighted output. Each velocity evaluation also costs one
  backward pass (``info["gradient_evals"]``).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Sampler, Target
from quadriga.validators import finite, in_range, instance_of, int_at_least, non_negative, one_of, probability
from quadriga_fm_smc.flows import SOLVERS, effective_sample_size, ode_step, sde_step, systematic_resample

__all__ = ["FMSMC", "TEMPERINGS", "FMGuidance", "FMImportanceSampling", "velocity_of"]

TEMPERINGS = ("constant", "linear")

_CHECK_INPUTS: dict[str, Any] = {
    "task": {"posterior": {"use": "linear-gaussian-posterior", "dim": 2, "num_components": 2}},
    "inputs": {"target": "posterior"},
}


def velocity_of(target: Any, velocity: Any = None) -> Any:
    """The velocity ``v(x: Tensor[n, d], t: float) -> Tensor[n, d]`` to integrate.

    A ``Fitted`` from the ``prior-flow-matching`` learner (its ``model(x, t)``) when given, else the
    exact velocity ``target.prior.velocity`` of a ``linear-gaussian-posterior`` task.

    Raises:
        ConfigError: the target has no ``log_likelihood``, or no velocity can be found.
    """
    if not callable(getattr(target, "log_likelihood", None)):
        raise ConfigError(
            f"the target {type(target).__name__} has no log_likelihood(x); conditional flow sampling needs a "
            "task such as 'linear-gaussian-posterior'.",
            key="target",
        )
    if velocity is not None:
        model = getattr(velocity, "model", velocity)
        if not callable(model):
            raise ConfigError(
                "the 'velocity' input must be a Fitted whose model is callable as model(x, t).",
                key="velocity",
            )
        return model
    prior = getattr(target, "prior", None)
    if prior is None or not callable(getattr(prior, "velocity", None)):
        raise ConfigError(
            f"the target {type(target).__name__} has no exact prior velocity; give a trained one with "
            "inputs = { velocity = '<prior-flow-matching stage>' }.",
            key="velocity",
        )
    return prior.velocity


@attrs.define(kw_only=True)
class _FlowSampler(Sampler):
    """Shared fields: particles, grid, solver, and the counting of velocity evaluations."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Target,), "velocity": (Fitted,)}
    check_inputs: ClassVar[dict[str, Any]] = _CHECK_INPUTS
    check_params: ClassVar[dict[str, Any]] = {"num_particles": 32, "num_steps": 20}

    num_particles: int = param(256, doc="K, number of particles (count)", validator=int_at_least(2))
    num_steps: int = param(
        100, doc="number of uniform time steps from t = 0 to t = 1 (count)", validator=int_at_least(2)
    )
    solver: str = param(
        "heun",
        doc="'euler' (1 velocity evaluation per step) or 'heun' (2 per step)",
        validator=one_of(SOLVERS),
    )

    def _start(self, target: Any, generator: torch.Generator) -> torch.Tensor:
        d = int(target.dim)
        return torch.randn(
            int(self.num_particles), d, generator=generator, dtype=torch.float64, device=generator.device
        )

    def _grid(self) -> list[float]:
        n = int(self.num_steps)
        return [k / n for k in range(n + 1)]

    @staticmethod
    def _wrap(velocity: Any) -> Any:
        """Evaluate ``velocity`` in its own dtype and return float64 (for a float32 network)."""

        def v(x: torch.Tensor, t: float) -> torch.Tensor:
            out = velocity(x, t)
            return out.to(x.dtype)

        return v


def _output(x: torch.Tensor, log_w: torch.Tensor | None, info: dict[str, Any]) -> Samples:
    if not torch.isfinite(x).all():
        raise FloatingPointError("the flow produced non-finite particles; lower the noise or use more steps")
    return Samples(x=x.detach(), log_weights=None if log_w is None else log_w.detach(), info=info)


@attrs.define(kw_only=True)
class FMImportanceSampling(_FlowSampler):
    """Naive importance sampling with a flow-matching prior: ODE draws weighted by the likelihood.

    ``x1 = ODE(x0)``, ``log w = log p(y | x1)``; ``info["log_evidence"] = log mean w`` estimates
    ``log p(y)`` (its exponential is unbiased for the ODE's push-forward of N(0, I)).

    Shapes: ``Samples.x: Tensor[K, d]``, ``Samples.log_weights: Tensor[K]``.
    Units: x in the target's units; log weights and ``log_evidence`` in nats; ``velocity_evals``,
    ``ess`` counts; ``ess_fraction`` in [0, 1].

    Raises:
        ConfigError: a target without ``log_likelihood`` or without a velocity.
        FloatingPointError: non-finite particles.

    Source: Qu & Liu 2026 (TFTF), the importance-sampling baseline; Kong, Liu & Wong 1994 (ESS).
    """

    def sample(self, target: Any, velocity: Any = None, *, generator: torch.Generator) -> Samples:
        """Draw K weighted particles (see the class docstring)."""
        v = self._wrap(velocity_of(target, velocity))
        x = self._start(target, generator)
        grid = self._grid()
        evals = 0
        with torch.no_grad():
            for t, t_next in itertools.pairwise(grid):
                vx = v(x, t)
                x, extra = ode_step(v, x, t, t_next - t, vx, self.solver)
                evals += 1 + extra
            log_w = target.log_likelihood(x)
        k = int(self.num_particles)
        ess = effective_sample_size(log_w)
        return _output(
            x,
            log_w,
            {
                "velocity_evals": evals * k,
                "ess": ess,
                "ess_fraction": ess / k,
                "log_evidence": float(torch.logsumexp(log_w, 0) - math.log(k)),
                "unique_fraction": 1.0,
                "resamples": 0,
            },
        )


@attrs.define(kw_only=True)
class FMSMC(_FlowSampler):
    """Sequential Monte Carlo with a stochastic flow window and lookahead potentials (TFTF).

    Algorithm (module docstring; Qu & Liu 2026, reconstructed): ODE on ``[0, t_a)``; on the grid
    times ``t_k in [t_a, t_b]`` the potential ``log G_k = lookahead_power * log p(y | x + (1 - t_k) v)``
    and the incremental log weight ``log G_k - log G_{k-1}``; systematic resampling when
    ``ESS < resample_threshold * K``; stochastic steps (SDE noise ``noise``) from the times in
    ``[t_a, t_b)`` whose step ends by ``t_b`` (on a coarse grid the window closes at the last grid
    time not after ``t_b``, so no stochastic step reaches the singular score at ``t = 1``); ODE to
    ``t = 1``; terminal log weight ``log p(y | x1) - log G_b``.
    ``info["log_evidence"]`` is ``log Ẑ`` with ``Ẑ`` unbiased (see the module docstring).

    Shapes: ``Samples.x: Tensor[K, d]``, ``Samples.log_weights: Tensor[K]`` (the weights after the last
    resampling; all zero when ``final_resample``).
    Units: x in the target's units; ``noise`` in units of x per sqrt(time); log weights and
    ``log_evidence`` in nats; ``velocity_evals``, ``ess``, ``resamples`` counts; ``ess_fraction``,
    ``min_ess_fraction``, ``unique_fraction`` (distinct t = 0 ancestors / K) in [0, 1].

    Raises:
        ConfigError: ``window_start >= window_end``, a target without ``log_likelihood`` or a velocity.
        FloatingPointError: non-finite particles.

    Source: Qu & Liu 2026, "TFTF: Training-free targeted flow for conditional sampling" (arXiv 2602.12932);
    Del Moral 2004, "Feynman-Kac formulae", Thm. 7.4.2 (unbiased Ẑ); Song et al. 2021, eq. 6
    (marginal-preserving SDE).
    """

    noise: float = param(
        1.0,
        doc="g, diffusion coefficient of the stochastic window (units of x / sqrt(time))",
        validator=non_negative,
    )
    window_start: float = param(
        0.05,
        doc="t_a, where the stochastic window with potentials starts (time in [0, 1))",
        validator=in_range(0.0, 1.0, high_open=True),
    )
    window_end: float = param(
        0.9,
        doc="t_b, where it ends and the ODE takes over (time, t_a < t_b <= 0.99)",
        validator=in_range(0.0, 0.99, low_open=True),
    )
    resample_threshold: float = param(
        0.5,
        doc="resample when ESS < threshold * K (fraction in [0, 1]; 0 never, 1 always)",
        validator=probability,
    )
    lookahead_power: float = param(
        1.0,
        doc="lambda, exponent of the lookahead likelihood at t_b (dimensionless, >= 0)",
        validator=[finite, in_range(0.0)],
    )
    tempering: str = param(
        "linear",
        doc="exponent schedule over the window: 'constant' (lambda) or 'linear' "
        "(lambda (t - t_a) / (t_b - t_a), flat at t_a)",
        validator=one_of(TEMPERINGS),
    )
    final_resample: bool = param(
        False,
        doc="resample once at t = 1 and return equally weighted particles",
        validator=instance_of(bool),
    )

    def __attrs_post_init__(self) -> None:
        if not self.window_start < self.window_end:
            raise ConfigError(
                f"window_start = {self.window_start} must be below window_end = {self.window_end}.",
                key="window_start",
            )

    def sample(self, target: Any, velocity: Any = None, *, generator: torch.Generator) -> Samples:
        """Run the SMC sampler (see the class docstring) and return weighted particles."""
        v = self._wrap(velocity_of(target, velocity))
        k = int(self.num_particles)
        x = self._start(target, generator)
        grid = self._grid()
        ta, tb, lam = float(self.window_start), float(self.window_end), float(self.lookahead_power)
        log_w = torch.zeros(k, dtype=torch.float64, device=x.device)
        log_g_prev = torch.zeros(k, dtype=torch.float64, device=x.device)
        ancestors = torch.arange(k, device=x.device)
        log_z, evals, resamples, min_ess, window_open = 0.0, 0, 0, float(k), True
        with torch.no_grad():
            for t, t_next in itertools.pairwise(grid):
                vx = v(x, t)
                evals += 1
                if window_open and t >= ta - 1e-12:
                    power = lam if self.tempering == "constant" else lam * min((t - ta) / (tb - ta), 1.0)
                    log_g = power * target.log_likelihood(x + (1.0 - t) * vx)
                    log_w = log_w + log_g - log_g_prev
                    log_g_prev = log_g
                    ess = effective_sample_size(log_w)
                    min_ess = min(min_ess, ess)
                    if ess < float(self.resample_threshold) * k:
                        log_z += float(torch.logsumexp(log_w, 0)) - math.log(k)
                        idx = systematic_resample(log_w, generator)
                        x, vx, log_g_prev, ancestors = x[idx], vx[idx], log_g_prev[idx], ancestors[idx]
                        log_w = torch.zeros_like(log_w)
                        resamples += 1
                    if t >= tb - 1e-12 or t_next > tb + 1e-12:
                        window_open = False  # the last grid time <= t_b closes the window
                if window_open and t >= ta - 1e-12:
                    x, extra = sde_step(v, x, t, t_next - t, vx, float(self.noise), self.solver, generator)
                else:
                    x, extra = ode_step(v, x, t, t_next - t, vx, self.solver)
                evals += extra
            log_w = log_w + target.log_likelihood(x) - log_g_prev
        ess = effective_sample_size(log_w)
        log_z += float(torch.logsumexp(log_w, 0)) - math.log(k)
        if self.final_resample:
            idx = systematic_resample(log_w, generator)
            x, ancestors, log_w = x[idx], ancestors[idx], torch.zeros_like(log_w)
        return _output(
            x,
            log_w,
            {
                "velocity_evals": evals * k,
                "ess": ess,
                "ess_fraction": ess / k,
                "min_ess_fraction": min(min_ess, ess) / k,
                "log_evidence": log_z,
                "resamples": resamples,
                "unique_fraction": int(torch.unique(ancestors).numel()) / k,
            },
        )


@attrs.define(kw_only=True)
class FMGuidance(_FlowSampler):
    """Gradient guidance on the likelihood through the denoised lookahead (DPS-style), unweighted.

    Guided velocity
    ``v_y(x, t) = v(x, t) + scale * ((1 - t) / max(t, t_min)) * grad_x log p(y | x + (1 - t) v(x, t))``
    integrated with the same ODE solver and grid as ``fm-is``; ``t_min = 1 / num_steps`` keeps the
    factor finite at ``t = 0`` (where the gradient vanishes exactly for the exact velocity).

    Shapes: ``Samples.x: Tensor[K, d]``; ``log_weights`` is ``None`` (equal weights).
    Units: x in the target's units; ``guidance_scale`` dimensionless; ``velocity_evals`` and
    ``gradient_evals`` counts (each gradient is one extra backward pass through v).

    Raises:
        ConfigError: a target without ``log_likelihood`` or without a velocity.
        FloatingPointError: non-finite particles (lower ``guidance_scale``).

    Source: Chung, Kim, Mccann, Klasky & Ye 2023, "Diffusion posterior sampling", Algorithm 1 (the
    approximation p_t(y | x) ≈ p(y | x̂1)); Lipman et al. 2023, flow matching (the velocity-score relation).
    """

    guidance_scale: float = param(
        0.3,
        doc="multiplier of the likelihood gradient (dimensionless; 1 is the plain DPS approximation)",
        validator=[finite, in_range(0.0)],
    )

    def sample(self, target: Any, velocity: Any = None, *, generator: torch.Generator) -> Samples:
        """Integrate the guided ODE from K Gaussian draws (see the class docstring)."""
        base = self._wrap(velocity_of(target, velocity))
        t_min = 1.0 / int(self.num_steps)
        scale = float(self.guidance_scale)

        def guided(x: torch.Tensor, t: float) -> torch.Tensor:
            with torch.enable_grad():
                xg = x.detach().requires_grad_(True)
                vx = base(xg, t)
                ll = target.log_likelihood(xg + (1.0 - t) * vx).sum()
                (grad,) = torch.autograd.grad(ll, xg)
            return (vx + scale * (1.0 - t) / max(t, t_min) * grad).detach()

        x = self._start(target, generator)
        grid = self._grid()
        evals = 0
        for t, t_next in itertools.pairwise(grid):
            vx = guided(x, t)
            x, extra = ode_step(guided, x, t, t_next - t, vx, self.solver)
            evals += 1 + extra
        k = int(self.num_particles)
        return _output(
            x,
            None,
            {
                "velocity_evals": evals * k,
                "gradient_evals": evals * k,
                "ess": float(k),
                "ess_fraction": 1.0,
                "unique_fraction": 1.0,
                "resamples": 0,
            },
        )
