"""``diag-det-sampler``: the probability-flow ODE step as restoration + degradation, and the
deterministic sampler's error against the number of steps, with exact Gaussian-mixture scores.

Chen, Daras & Dimakis 2023 ("Restoration-degradation beyond linear diffusions: a non-asymptotic
analysis for DDIM-type samplers", ICML) read one deterministic (DDIM-type) step of the
probability-flow ODE from time t to an earlier time s as two steps. With the forward law
``x_t = alpha_t x_0 + sigma_t eps`` (variance preserving) and the exact score ``grad log p_t``:

* restoration: gradient ascent on ``log p_t`` with step ``sigma_t^2``, scaled back to the data,
  ``r = (x_t + sigma_t^2 grad log p_t(x_t)) / alpha_t`` (Tweedie's posterior mean of x_0);
* degradation: the forward process from r to time s with the noise that points back to the
  current iterate, ``eps_hat = (x_t - alpha_t r) / sigma_t``: ``x_s = alpha_s r + sigma_s eps_hat``.

Their composition is the DDIM step, i.e. the first-order exponential-integrator step of the ODE
in the half log-SNR (DPM-Solver-1; Lu et al. 2022, sec. 4.1). The evaluator checks this identity
numerically against the diffusion kit's solver (:func:`quadriga_ddpm.solvers.dpm_solver_pp`,
order 1) at random (t, s) pairs: predicted gap 0, measured to rounding (< 1e-8).

The paper's guarantee is polynomial convergence in the number of steps N. For a consistent
order-p one-step scheme the global (pathwise) error against the exact flow from the same x_T is
O(N^{-p}); the evaluator measures the root-mean-square distance between the N-step sampler's
output and a DOP853 solve of the same ODE (rtol 1e-10, :func:`quadriga_ddpm.probability_flow.
reference_solve`) over a sweep of N, and fits the log-log slope with a t interval over
independent batches of x_T (``quadriga.stats.loglog_slope``). The RMS pathwise error bounds the
2-Wasserstein distance between the sampler's law and the exact ``p_{t_min}`` (same coupling).
Predicted slope: ``-order`` (order 1 for DDIM, the paper's sampler).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, one_of, positive_int_list

__all__ = [
    "SAMPLER_NAMES",
    "DeterministicSampler",
    "batch_slopes",
    "mixture_target",
    "restoration_degradation_step",
    "sampler_error_rate",
]

#: the notes' identity tolerance (Appendix C, row 003:92)
IDENTITY_TOLERANCE = 1e-8

#: the sampler of each solver order, as the ``per_batch`` table names it (DPM-Solver++ multistep)
SAMPLER_NAMES = {1: "DDIM", 2: "2M", 3: "3M"}


def mixture_target(preset: str) -> Any:
    """A built std ``gaussian-mixture`` preset (exact ``noised_score``) for the diffusion kit.

    Shapes: the target's ``dim`` is 2 for the 2-D presets. Units: units of x.
    Raises: ConfigError: an unknown preset (from the target).
    Source: quadriga-std's ``GaussianMixture`` (exact noised scores).
    """
    from quadriga_std.targets.gaussian import GaussianMixture

    return GaussianMixture(preset=preset)


def restoration_degradation_step(
    score: Any, x: Any, alpha_t: float, sigma_t: float, alpha_s: float, sigma_s: float
) -> tuple[Any, Any]:
    """One restoration + degradation step from time t to s (module docstring).

    Args:
        score: ``score(x, alpha, sigma) -> Tensor[n, d]``, the exact ``grad log p_t`` at that point
            of the schedule.
        x: ``Tensor[n, d]``, the iterate at time t.
        alpha_t, sigma_t, alpha_s, sigma_s: schedule coefficients (sigma_t > 0, alpha > 0).

    Returns:
        ``(x_s, r)``: the degraded iterate at s and the restoration ``r`` (Tweedie's x_0 estimate),
        both ``Tensor[n, d]`` in units of x.

    Raises:
        ConfigError: ``sigma_t <= 0`` or a non-positive alpha.

    Source: Chen, Daras & Dimakis 2023 (ICML), sec. 3 (restoration = gradient ascent on the
    log-likelihood, degradation = forward process with noise pointing back at x_t); DDIM
    (Song, Meng & Ermon 2021, eq. 12 with sigma = 0).
    """
    if not (sigma_t > 0 and alpha_t > 0 and alpha_s > 0):
        raise ConfigError(
            f"need sigma_t, alpha_t, alpha_s > 0, got {sigma_t}, {alpha_t}, {alpha_s}.", key="step"
        )
    r = (x + sigma_t**2 * score(x, alpha_t, sigma_t)) / alpha_t  # restoration
    eps_hat = (x - alpha_t * r) / sigma_t  # the noise pointing back towards x_t
    return alpha_s * r + sigma_s * eps_hat, r  # degradation


def identity_gap(model: Any, schedule: Any, x_T: Any, num_pairs: int, generator: Any) -> float:
    """Largest relative gap between restoration+degradation and the kit's DDIM step.

    Draws ``num_pairs`` pairs lambda_t < lambda_s uniformly in the sampling range, moves ``x_T``
    there by the exact-free kit step itself (any state will do: the identity is pointwise), and
    compares both maps elementwise: ``max |a - b| / max(1, max |b|)``.

    Shapes: ``x_T`` ``Tensor[n, d]``. Units: dimensionless. Raises: nothing beyond the kit's errors.
    Source: the module docstring.
    """
    import torch
    from quadriga_ddpm.probability_flow import score_at
    from quadriga_ddpm.solvers import dpm_solver_pp

    lam_T, lam_0 = schedule.lambda_range()
    u = torch.rand(num_pairs, 2, generator=generator, dtype=torch.float64)
    lo = lam_T + (lam_0 - lam_T) * u.min(dim=1).values
    hi = lam_T + (lam_0 - lam_T) * u.max(dim=1).values
    worst = 0.0
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        at, st = (float(v) for v in schedule.alpha_sigma_of_lambda(a))
        as_, ss = (float(v) for v in schedule.alpha_sigma_of_lambda(b))
        x = at * x_T / float(schedule.sigma(schedule.t_max))  # a state of the right scale at lambda_t
        kit = dpm_solver_pp(model, schedule, x, torch.tensor([a, b], dtype=torch.float64), order=1)
        ours, _ = restoration_degradation_step(
            lambda y, al, si: score_at(model, y, al, si), x, at, st, as_, ss
        )
        gap = float((ours - kit).abs().max()) / max(1.0, float(kit.abs().max()))
        worst = max(worst, gap)
    return worst


def sampler_error_rate(
    model: Any,
    schedule: Any,
    steps: list[int],
    num_batches: int,
    batch_size: int,
    generator: Any,
    *,
    order: int = 1,
) -> tuple[Any, np.ndarray]:
    """RMS pathwise error of the N-step sampler against the exact flow, per batch, and its slope.

    Each batch draws ``x_T = sigma_T z`` (``batch_size`` points), solves the ODE to ``t_min`` with
    DOP853 (rtol 1e-10) and with the kit's multistep solver of ``order`` at every N in ``steps``
    (uniform in lambda); the error is ``sqrt(mean_i |x_i - x_i^ref|^2)``.

    Shapes: returns ``(Interval, errors[k, num_batches])``. Units: units of x; slope dimensionless.
    Raises: ConfigError from ``loglog_slope`` (a zero error) or the solver (an order outside 1-3).
    Source: the module docstring; the reference solve of :mod:`quadriga_ddpm.probability_flow`.
    """

    from quadriga_ddpm.probability_flow import draw_x_T, reference_solve
    from quadriga_ddpm.solvers import dpm_solver_pp

    from quadriga import stats

    lam_T, lam_0 = schedule.lambda_range()
    errors = np.zeros((len(steps), num_batches))
    for j in range(num_batches):
        x_T = draw_x_T(schedule, batch_size, int(model.dim), generator)
        ref, _ = reference_solve(model, schedule, x_T, [lam_T, lam_0])
        for k, n in enumerate(steps):
            out = dpm_solver_pp(model, schedule, x_T, schedule.lambda_steps(int(n)), order=order)
            errors[k, j] = float(((out - ref[-1]) ** 2).sum(-1).mean().sqrt())
    return stats.loglog_slope(steps, errors), errors


def batch_slopes(steps: list[int], errors: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``log errors[:, j]`` against ``log steps``, one per batch ``j``.

    The mean of these slopes is the slope of the per-setting means of ``log error`` (least
    squares is linear in the responses); the evaluator's ``slope`` fits ``log`` of the per-setting
    mean errors instead, and the two differ by a Jensen term of the order of the squared relative
    spread of the batches' errors.

    Shapes: ``steps`` ``(k,)``, ``errors`` ``(k, num_batches)``; returns ``(num_batches,)``.
    Units: dimensionless. Raises: ConfigError from ``loglog_slope`` (fewer than 3 steps, a zero
    error). Source: :func:`quadriga.stats.loglog_slope` on one batch (``scipy.stats.linregress``).
    """
    from quadriga import stats

    return np.array([stats.loglog_slope(steps, errors[:, j]).estimate for j in range(errors.shape[1])])


@attrs.define(kw_only=True)
class DeterministicSampler(Evaluator):
    """Restoration + degradation identity of the PF-ODE step, and the sampler's error-vs-steps slope
    beside the predicted ``-order``, on a Gaussian mixture with exact scores.

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``identity_gap`` (largest relative gap between restoration+degradation
    and the kit's DDIM step over ``identity_pairs`` random (t, s) pairs; predicted 0),
    ``identity_holds`` (1 if below 1e-8), ``slope`` / ``slope_low`` / ``slope_high`` / ``slope_se``
    / ``slope_df`` (log RMS error against log N), ``predicted_slope`` (``-order``),
    ``slope_error`` (measured - predicted) with its ends, ``error/N=<N>`` (mean over batches);
    table ``steps`` (N, mean error, batches); table ``per_batch``, one row per batch of x_T:
    ``sampler`` (``"DDIM"`` for order 1, ``"2M"``, ``"3M"``: :data:`SAMPLER_NAMES`), ``batch``
    (0 ... num_batches - 1), ``slope`` (that batch's least-squares slope of log RMS error against
    log N, :func:`batch_slopes`) and ``slope_error`` (``slope`` minus the predicted ``-order``).

    Shapes:
        every value is a scalar float; ``steps`` has one row per N, ``per_batch`` one per batch.

    Units:
        errors in units of x (RMS distance to the exact flow's end point, an upper bound on W2);
        slopes dimensionless; N counts solver steps (= score evaluations).

    Raises:
        ConfigError: fewer than 3 step counts (at build time); an unknown preset; a zero error.

    Source: Chen, Daras & Dimakis 2023, ICML, sec. 3 (restoration-degradation reading of the
    DDIM / probability-flow step) and sec. 4 (polynomial convergence of DDIM-type samplers);
    the solver and reference solve of quadriga-ddpm (Lu et al. 2022, DPM-Solver, sec. 4.1).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"steps": [8, 16, 32], "num_batches": 2, "batch_size": 16}

    preset: str = param(
        "4-mode-2d",
        doc="std gaussian-mixture preset whose exact scores drive the ODE",
        validator=one_of(("4-mode-2d", "8-ring", "25-grid")),
    )
    order: int = param(
        1, doc="solver order: 1 (DDIM, the paper's sampler), 2 or 3", validator=one_of((1, 2, 3))
    )
    steps: list[int] = param(
        factory=lambda: [8, 16, 32, 64, 128],
        doc="numbers of solver steps N, uniform in lambda (at least 3)",
        validator=positive_int_list,
    )
    num_batches: int = param(8, doc="independent batches of x_T (the replicates)", validator=int_at_least(2))
    batch_size: int = param(128, doc="points per batch", validator=int_at_least(1))
    identity_pairs: int = param(
        20, doc="random (t, s) pairs for the identity check", validator=int_at_least(1)
    )

    def __attrs_post_init__(self) -> None:
        """Refuse fewer than 3 step counts when the component is built (ConfigError)."""
        if len(self.steps) < 3:
            raise ConfigError(f"steps needs at least 3 values for a slope, got {self.steps}.", key="steps")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Check the identity, sweep N, fit the slope; see the class docstring."""
        from quadriga_ddpm.noise_schedule import NoiseSchedule
        from quadriga_ddpm.probability_flow import draw_x_T
        from quadriga_ddpm.score_models import AnalyticScore

        from quadriga.seeding import child_generator

        del subject, reference
        model = AnalyticScore(mixture_target(self.preset))
        schedule = NoiseSchedule(kind="vp-linear")
        g_id = child_generator(generator, "identity")
        gap = identity_gap(
            model, schedule, draw_x_T(schedule, 64, model.dim, g_id), self.identity_pairs, g_id
        )
        steps = sorted(int(n) for n in self.steps)
        fit, errors = sampler_error_rate(
            model,
            schedule,
            steps,
            self.num_batches,
            self.batch_size,
            child_generator(generator, "x_T"),
            order=self.order,
        )
        predicted = -float(self.order)
        values: dict[str, float] = {
            "identity_gap": gap,
            "identity_holds": float(gap < IDENTITY_TOLERANCE),
            "slope": float(fit.estimate),
            "slope_low": float(fit.low),
            "slope_high": float(fit.high),
            "slope_se": float(fit.se),
            "slope_df": float(fit.df),
            "predicted_slope": predicted,
            "slope_error": float(fit.estimate - predicted),
            "slope_error_low": float(fit.low - predicted),
            "slope_error_high": float(fit.high - predicted),
        }
        means = errors.mean(axis=1)
        values.update({f"error/N={n}": float(m) for n, m in zip(steps, means, strict=True)})
        rows = [
            {"N": n, "error": float(m), "batches": self.num_batches}
            for n, m in zip(steps, means, strict=True)
        ]
        batch_rows = [
            {
                "sampler": SAMPLER_NAMES[self.order],
                "batch": j,
                "slope": float(b),
                "slope_error": float(b - predicted),
            }
            for j, b in enumerate(batch_slopes(steps, errors))
        ]
        return Metrics(values=values, tables={"steps": rows, "per_batch": batch_rows})
