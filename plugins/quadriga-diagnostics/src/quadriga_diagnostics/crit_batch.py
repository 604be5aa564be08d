"""``diag-crit-batch``: steps to a target loss against the batch size at several data budgets; the
critical batch size and its growth with the budget.

Prediction (Filatov, Ebert, Wang & Kesselheim 2024, "Time transfer: on optimal learning rate and
batch size in the infinite data limit", row 003:94): the critical batch size grows with the
token budget T, measured as ``B_crit ∝ T`` (log-log slope 1). The measured quantity is the
log-log slope of ``B_crit(T)`` against T, with its direction as the verdict (notes, Appendix C).

Test bed: the noisy quadratic of linear regression with Gaussian inputs. Features
``x ~ N(0, H)``, ``H = diag(h)``, ``h_i = i^{-spectrum_decay}`` (d = ``dim``), labels
``y = w*' x + N(0, noise_var)``, mini-batch SGD from w = 0 with a constant learning rate eta and
batch size B. For Gaussian inputs the diagonal ``c_i = E[(w - w*)_i^2]`` of the error covariance
follows an exact recursion (fourth moments of a Gaussian, ``E[x x' A x x'] = 2 H A H + tr(HA) H``):

    c <- (1 - eta h)^2 c + (eta^2 / B) (h^2 c + (h . c) h + noise_var h),

and the expected excess loss is ``(h . c) / 2``. So every (B, eta) trajectory is exact, without
Monte Carlo (a test checks the recursion against simulated SGD).

For a budget of T examples the target loss is the best expected excess loss that B = 1 reaches
with T examples (over the eta grid). For every B the steps to that target are minimised over the
eta grid; ``S_min = min_B S(B)``, ``E_min = min_B B S(B)`` and ``B_crit = E_min / S_min``
(McCandlish, Kaplan, Amodei et al. 2018, "An empirical model of large-batch training", eq. 2.12).
Replicates are independent teachers ``w* ~ N(0, diag(h^{teacher_decay}))``; the slope's interval is
the t interval of the mean of the per-teacher slopes (paired across budgets).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive, positive_int_list

__all__ = [
    "PREDICTED_SLOPE",
    "SUBJECT",
    "CriticalBatch",
    "critical_batch_sizes",
    "excess_loss_trajectory",
    "steps_to_targets",
    "teacher_slopes",
]

#: Filatov et al. 2024: B_crit ∝ T
PREDICTED_SLOPE = 1.0

#: the ``subject`` column of the per-teacher table: the evaluator has no subject input and names
#: itself (its registered name), so a claim's ``Rows`` reads the rows as arm "diag-crit-batch"
SUBJECT = "diag-crit-batch"


def excess_loss_trajectory(
    h: np.ndarray, c0: np.ndarray, etas: np.ndarray, batch: int, num_steps: int, noise_var: float
) -> np.ndarray:
    """Exact expected excess loss of mini-batch SGD on Gaussian linear regression, every step.

    Shapes: ``h``, ``c0`` ``(d,)``; ``etas`` ``(G,)``; returns ``(num_steps + 1, G)`` (step 0 first;
    a diverged learning rate gives ``inf`` from then on). Units: loss units.
    Raises: ConfigError: a non-positive batch or a negative ``noise_var``.
    Source: the recursion of the module docstring (the noisy quadratic model of Zhang, Li, Nado et
    al. 2019, "Which algorithmic choices matter at which batch sizes?", sec. 3, with the Gaussian
    fourth moment instead of their diagonal approximation).
    """
    if batch < 1 or noise_var < 0:
        raise ConfigError(f"need batch >= 1 and noise_var >= 0, got {batch}, {noise_var}.", key="batch_sizes")
    c = np.tile(np.asarray(c0, dtype=float), (len(etas), 1))
    eta = np.asarray(etas, dtype=float)[:, None]
    shrink = (1.0 - eta * h) ** 2
    noise = eta**2 / batch
    out = np.empty((num_steps + 1, len(etas)))
    out[0] = 0.5 * c @ h
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(num_steps):
            hc = c @ h
            c = shrink * c + noise * (h * h * c + hc[:, None] * h + noise_var * h)
            out[t + 1] = 0.5 * c @ h
    return np.where(np.isfinite(out), out, np.inf)


def steps_to_targets(trajectory: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Fewest steps (over the learning-rate grid) at which the excess loss is at or below each target.

    Shapes: ``trajectory`` ``(S + 1, G)``; ``targets`` ``(k,)``; returns ``(k,)`` floats (``inf``
    when no learning rate reaches the target within S steps). Units: SGD steps.
    Raises: nothing. Source: the module docstring.
    """
    best = np.minimum.accumulate(trajectory.min(axis=1))  # best loss reached by step t, any eta
    out = np.full(len(targets), np.inf)
    for i, target in enumerate(targets):
        hit = np.nonzero(best <= target)[0]
        if len(hit):
            out[i] = float(hit[0])
    return out


def critical_batch_sizes(
    h: np.ndarray,
    c0: np.ndarray,
    budgets: list[int],
    batch_sizes: list[int],
    etas: np.ndarray,
    noise_var: float,
) -> dict[str, np.ndarray]:
    """Targets, steps-to-target table and ``B_crit = E_min / S_min`` for every budget.

    Shapes: returns ``target (k,)``, ``steps (len(batch_sizes), k)``, ``b_crit (k,)``, ``s_min (k,)``,
    ``e_min (k,)``. Units: targets in loss units, steps in SGD steps, E in examples, B in examples.
    Raises: ConfigError: a budget not reached by some batch size within ``max(budgets)`` steps.
    Source: McCandlish et al. 2018, eq. 2.11-2.12; budgets as in Filatov et al. 2024.
    """
    t_max = int(max(budgets))
    base = excess_loss_trajectory(h, c0, etas, 1, t_max, noise_var)
    targets = np.array([base[int(t)].min() for t in budgets])
    rows = []
    for b in batch_sizes:
        traj = base if int(b) == 1 else excess_loss_trajectory(h, c0, etas, int(b), t_max, noise_var)
        rows.append(steps_to_targets(traj, targets))
    steps = np.array(rows)
    if not np.all(np.isfinite(steps)):
        raise ConfigError(
            "some batch size did not reach a target within max(budgets) steps: widen 'learning_rates'.",
            key="learning_rates",
        )
    examples = steps * np.asarray(batch_sizes, dtype=float)[:, None]
    s_min, e_min = steps.min(axis=0), examples.min(axis=0)
    return {"target": targets, "steps": steps, "b_crit": e_min / s_min, "s_min": s_min, "e_min": e_min}


def _teacher_c0(h: np.ndarray, teacher_decay: float, rng: Any) -> np.ndarray:
    w_star = rng.normal(size=len(h)) * h ** (teacher_decay / 2.0)
    return w_star**2  # (w_0 - w*)^2 with w_0 = 0


def crit_batch_runs(
    *,
    dim: int,
    spectrum_decay: float,
    teacher_decay: float,
    noise_var: float,
    budgets: list[int],
    batch_sizes: list[int],
    learning_rates: list[float],
    num_teachers: int,
    rng: Any,
) -> list[dict[str, np.ndarray]]:
    """:func:`critical_batch_sizes` for ``num_teachers`` random teachers (shared spectrum and grid).

    Shapes: one dict per teacher (see :func:`critical_batch_sizes`). Units: as there.
    Raises: ConfigError from :func:`critical_batch_sizes`. Source: the module docstring.
    """
    h = np.arange(1, dim + 1, dtype=float) ** (-spectrum_decay)
    etas = np.asarray(learning_rates, dtype=float)
    return [
        critical_batch_sizes(h, _teacher_c0(h, teacher_decay, rng), budgets, batch_sizes, etas, noise_var)
        for _ in range(num_teachers)
    ]


def slope_interval(budgets: list[int], runs: list[dict[str, np.ndarray]]) -> Any:
    """t interval of the mean, over teachers, of the least-squares slope of log B_crit on log T.

    Shapes: returns a ``quadriga.stats.Interval`` (n = number of teachers). Units: dimensionless.
    Raises: ConfigError from ``quadriga.stats.interval`` (fewer than 2 teachers give a point).
    Source: Student t over independent replicates (``quadriga.stats.interval``).
    """
    from quadriga import stats

    return stats.interval(np.asarray(teacher_slopes(budgets, runs)), "mean")


def teacher_slopes(budgets: list[int], runs: list[dict[str, np.ndarray]]) -> list[float]:
    """Least-squares slope of log B_crit on log T for every teacher (one per run, in order).

    Shapes: ``budgets`` ``(k,)``, one run per teacher; returns one float per teacher.
    Units: dimensionless. Raises: nothing. Source: the module docstring.
    """
    lx = np.log(np.asarray(budgets, dtype=float))
    return [float(np.polyfit(lx, np.log(r["b_crit"]), 1)[0]) for r in runs]


@attrs.define(kw_only=True)
class CriticalBatch(Evaluator):
    """Steps to target against batch size at several budgets; ``B_crit(T)`` and its log-log slope in T
    beside the predicted 1 (direction: positive).

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``slope`` (mean over teachers of the slope of log B_crit on log T),
    ``slope_low`` / ``slope_high`` (95 % t interval), ``slope_se``, ``predicted_slope`` (1),
    ``b_crit/T=<T>`` (geometric mean over teachers), ``min_saturation`` (smallest, over budgets,
    of ``S_min / S(B_max / 4)``: 1 means the batch grid reaches the step floor),
    ``min_perfect_scaling`` (smallest ``E_min / (2 S(2))``, near 1 when B = 1, 2 scale perfectly);
    table ``steps`` (T, B, mean steps to target over teachers); table ``teachers`` (one row per
    teacher: ``subject`` = :data:`SUBJECT`, ``teacher`` its index, ``slope`` its least-squares
    slope of log B_crit on log T, whose mean over the rows is ``slope``); table ``budgets`` (one
    row per T: ``b_crit`` the geometric mean over teachers, as ``b_crit/T=<T>``, ``s_min`` and
    ``e_min`` the arithmetic means over teachers).

    Shapes:
        ``budgets`` (>= 3 values) and ``batch_sizes`` (>= 3 values, increasing) are lists of
        positive integers; every value is a scalar float.

    Units:
        budgets, E and B in examples; steps in SGD steps; targets in loss units; slopes are
        dimensionless.

    Raises:
        ConfigError: fewer than 3 budgets or batch sizes, unsorted batch sizes (at build time); a
            target that some batch size misses within ``max(budgets)`` steps (widen the grid).

    Source: Filatov, Ebert, Wang & Kesselheim 2024 (arXiv 2410.05838), B_crit ∝ T; the critical
    batch of McCandlish et al. 2018, eq. 2.12; the noisy quadratic of Zhang et al. 2019, sec. 3.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {
        "budgets": [64, 128, 256],
        "batch_sizes": [1, 4, 16, 64],
        "num_teachers": 2,
    }

    dim: int = param(64, doc="number of features d", validator=int_at_least(1))
    spectrum_decay: float = param(1.5, doc="h_i = i^(-spectrum_decay) (dimensionless)", validator=positive)
    teacher_decay: float = param(
        0.5, doc="w*_i ~ N(0, h_i^teacher_decay) (dimensionless; larger = easier target)", validator=positive
    )
    noise_var: float = param(0.1, doc="label noise variance (loss units x 2)", validator=positive)
    budgets: list[int] = param(
        factory=lambda: [256, 512, 1024, 2048, 4096, 8192],
        doc="data budgets T in examples (at least 3)",
        validator=positive_int_list,
    )
    batch_sizes: list[int] = param(
        factory=lambda: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
        doc="batch sizes B, increasing, starting at 1 (at least 3)",
        validator=positive_int_list,
    )
    learning_rates: list[float] = param(
        factory=lambda: np.geomspace(1e-3, 1.9, 28).round(8).tolist(),
        doc="constant learning rates tried for every (B, target); the best one counts",
        validator=attrs.validators.instance_of((list, tuple)),
    )
    num_teachers: int = param(8, doc="independent teachers w* (the replicates)", validator=int_at_least(2))

    def __attrs_post_init__(self) -> None:
        """Refuse short or unsorted grids when the component is built (ConfigError)."""
        if len(self.budgets) < 3:
            raise ConfigError(f"budgets needs at least 3 values, got {self.budgets}.", key="budgets")
        if len(self.batch_sizes) < 3 or list(self.batch_sizes) != sorted(set(self.batch_sizes)):
            raise ConfigError(
                f"batch_sizes needs at least 3 increasing values, got {self.batch_sizes}.", key="batch_sizes"
            )
        if self.batch_sizes[0] != 1:
            raise ConfigError(
                f"batch_sizes must start at 1 (the budget's target is B = 1's loss), got {self.batch_sizes}.",
                key="batch_sizes",
            )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run the sweep for every teacher, fit the slope; see the class docstring."""
        from quadriga.seeding import numpy_rng

        del subject, reference
        budgets = sorted(int(t) for t in self.budgets)
        runs = crit_batch_runs(
            dim=self.dim,
            spectrum_decay=self.spectrum_decay,
            teacher_decay=self.teacher_decay,
            noise_var=self.noise_var,
            budgets=budgets,
            batch_sizes=list(self.batch_sizes),
            learning_rates=list(self.learning_rates),
            num_teachers=self.num_teachers,
            rng=numpy_rng(generator),
        )
        slopes = teacher_slopes(budgets, runs)
        fit = slope_interval(budgets, runs)
        summary = crit_batch_summary(budgets, list(self.batch_sizes), runs)
        teachers = [{"subject": SUBJECT, "teacher": k, "slope": s} for k, s in enumerate(slopes)]
        values: dict[str, float] = {
            "slope": float(fit.estimate),
            "slope_low": float(fit.low),
            "slope_high": float(fit.high),
            "slope_se": float(fit.se),
            "predicted_slope": PREDICTED_SLOPE,
            **summary["values"],
        }
        tables = {"steps": summary["rows"], "teachers": teachers, "budgets": summary["budget_rows"]}
        return Metrics(values=values, tables=tables)


def crit_batch_summary(
    budgets: list[int], batch_sizes: list[int], runs: list[dict[str, np.ndarray]]
) -> dict[str, Any]:
    """Per-budget geometric-mean B_crit, the saturation checks and the steps and budgets tables.

    Shapes: ``values`` a dict of floats, ``rows`` one dict per (T, B), ``budget_rows`` one dict per
    T (``T``, ``b_crit``, ``s_min``, ``e_min``; see the class). Units: as in the class.
    Raises: nothing. Source: the module docstring.
    """
    b_crit = np.exp(np.mean([np.log(r["b_crit"]) for r in runs], axis=0))
    steps = np.mean([r["steps"] for r in runs], axis=0)
    values: dict[str, float] = {f"b_crit/T={t}": float(b) for t, b in zip(budgets, b_crit, strict=True)}
    quarter = batch_sizes.index(batch_sizes[-1]) - 2
    values["min_saturation"] = float(min(np.min(r["s_min"] / r["steps"][quarter]) for r in runs))
    values["min_perfect_scaling"] = float(min(np.min(r["e_min"] / (2 * r["steps"][1])) for r in runs))
    rows = [
        {"T": t, "B": b, "steps": float(steps[i, k])}
        for k, t in enumerate(budgets)
        for i, b in enumerate(batch_sizes)
    ]
    s_min = np.mean([r["s_min"] for r in runs], axis=0)
    e_min = np.mean([r["e_min"] for r in runs], axis=0)
    budget_rows = [
        {"T": t, "b_crit": float(b_crit[k]), "s_min": float(s_min[k]), "e_min": float(e_min[k])}
        for k, t in enumerate(budgets)
    ]
    return {"values": values, "rows": rows, "budget_rows": budget_rows}
