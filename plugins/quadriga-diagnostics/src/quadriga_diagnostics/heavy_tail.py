"""``diag-heavy-tail-smd``: time to epsilon of stochastic mirror descent (entropic and Euclidean)
under alpha-stable gradient noise, against the predicted epsilon-exponents.

Prediction (seed abstract of row 000:4, "Lévy mirror flow": SMD under centred heavy-tailed noise
with finite p-th moments, 1 < p <= 2): epsilon-optimality within O(eps^{-p/(p-1)}) time for convex
objectives and O~(eps^{-1/(p-1)}) for (relatively) strongly convex ones. Equivalently the error
after T steps falls like T^{-(p-1)/p} (convex) and T^{-(p-1)} (strongly convex); the evaluator fits
these error-vs-T slopes (``quadriga.stats.loglog_slope``) and reports the time-to-epsilon exponent
``-1 / slope`` beside ``p / (p-1)`` and ``1 / (p-1)``. The noise is symmetric alpha-stable
(``scipy.stats.levy_stable``, beta = 0) with tail index ``alpha = p``: its moments of order < p are
finite, its variance infinite for p < 2.

Test beds (each with a lower-bound mechanism, so the bound can be attained):

* convex: a linear loss, Euclidean on [-1, 1] (``f(x) = x``, projection by clipping, start at 1)
  or entropic on the 3-simplex (``f(x) = x_2 + x_3``, start uniform); constant step
  ``step_scale * T^{-1/p}`` (the step that balances the two terms of the bound); error = expected
  gap of the averaged iterate, a number in [0, 1] (mean over replicates, delta-method interval);
* strongly convex: ``f(x) = |x|^2 / 2`` (Euclidean, d = 1) or ``KL(x || pi)``, 1-strongly convex
  relative to the entropy (entropic, pi = (0.5, 0.3, 0.2)); steps ``1 / (t + 1)``; error = the
  Bregman divergence to the optimum raised to p/2 (``|x - x*|^p``, ``KL(pi || x)^{p/2}``), the
  p-th-moment scale the heavy-tailed analysis works on (the variance is infinite), summarised by its
  median over replicates (the mean does not exist at order p = alpha).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import in_range, int_at_least, one_of, positive, positive_int_list

__all__ = ["HeavyTailSMD", "predicted_rate", "smd_errors", "smd_rate", "stable_noise"]

#: groups of runs whose medians are the replicates of the strongly convex fit
MEDIAN_GROUPS = 8

#: the entropic strongly convex target pi (its length is the simplex's dimension)
_PI = np.array([0.5, 0.3, 0.2])


def stable_noise(tail_index: float, shape: tuple[int, ...], rng: Any, scale: float = 1.0) -> np.ndarray:
    """Symmetric alpha-stable draws (``scipy.stats.levy_stable``, beta = 0, location 0).

    Shapes: returns ``shape``. Units: gradient units (``scale`` is the stable scale parameter;
    at ``tail_index = 2`` the law is normal with variance ``2 scale^2``).
    Raises: ConfigError: ``tail_index`` outside (1, 2] (the mean must exist).
    Source: Nolan 2020, "Univariate stable distributions", ch. 1 (S1 parametrisation, scipy's default).
    """
    from scipy.stats import levy_stable

    if not 1.0 < tail_index <= 2.0:
        raise ConfigError(f"tail_index must lie in (1, 2], got {tail_index}.", key="tail_index")
    return np.asarray(levy_stable.rvs(tail_index, 0.0, scale=scale, size=shape, random_state=rng))


def predicted_rate(objective: str, tail_index: float) -> float:
    """Predicted slope of log(error) against log(T): ``-(p-1)/p`` (convex) or ``-(p-1)`` (strongly convex).

    The time-to-epsilon exponent is ``-1 / rate``: ``p/(p-1)`` and ``1/(p-1)``.
    Shapes: scalars. Units: dimensionless.
    Raises: ConfigError: an unknown ``objective``.
    Source: seed abstract of row 000:4 (Lévy mirror flow), convex and strongly convex guarantees.
    """
    p = float(tail_index)
    if objective == "convex":
        return -(p - 1.0) / p
    if objective == "strongly-convex":
        return -(p - 1.0)
    raise ConfigError(f"objective must be 'convex' or 'strongly-convex', got {objective!r}.", key="objective")


def _softmax_log(y: np.ndarray) -> np.ndarray:
    """``log softmax(y)`` along the last axis (max-shifted log-sum-exp)."""
    m = y.max(axis=-1, keepdims=True)
    return y - m - np.log(np.exp(y - m).sum(axis=-1, keepdims=True))


def smd_errors(
    geometry: str,
    objective: str,
    tail_index: float,
    horizon: int,
    num_replicates: int,
    rng: Any,
    *,
    noise_scale: float = 1.0,
    step_scale: float = 0.5,
) -> np.ndarray:
    """Per-replicate errors of SMD after ``horizon`` steps on the module's test beds.

    Shapes: returns ``(num_replicates,)``; replicates run side by side (vectorised).
    Units: convex: the gap ``f(x_bar_T) - f*`` in loss units (in [0, 1]); strongly convex: the
    Bregman divergence to the optimum to the power ``p/2`` (``|x_T|^p`` or ``KL(pi || x_T)^{p/2}``).

    Raises:
        ConfigError: unknown ``geometry`` or ``objective``; ``tail_index`` outside (1, 2].

    Source: stochastic mirror descent (Nemirovski & Yudin 1983; Beck & Teboulle 2003, eq. 3.3) with
    the entropic mirror map on the simplex or the Euclidean one; step schedules as in the module
    docstring; the guarantees of the seed abstract of row 000:4.
    """
    if geometry not in ("euclidean", "entropic"):
        raise ConfigError(f"geometry must be 'euclidean' or 'entropic', got {geometry!r}.", key="geometry")
    predicted_rate(objective, tail_index)  # validates objective
    p = float(tail_index)
    d = 3 if geometry == "entropic" else 1
    xi = stable_noise(p, (horizon, num_replicates, d), rng, noise_scale)
    r = num_replicates
    if objective == "convex":
        eta = step_scale * horizon ** (-1.0 / p)
        total = np.zeros(r)
        if geometry == "euclidean":  # f(x) = x on [-1, 1]; gap (x + 1) / 2 scaled to [0, 1]
            x = np.ones(r)
            for t in range(horizon):
                x = np.clip(x - eta * (1.0 + xi[t, :, 0]), -1.0, 1.0)
                total += x
            return (total / horizon + 1.0) / 2.0
        c = np.array([0.0, 1.0, 1.0])  # f(x) = x_2 + x_3 on the simplex, optimum e_1
        y = np.zeros((r, 3))
        for t in range(horizon):
            y = y - eta * (c + xi[t])
            total += np.exp(_softmax_log(y)[:, 0])
        return 1.0 - total / horizon
    if geometry == "euclidean":  # f(x) = x^2 / 2, x_0 = 1
        x = np.ones(r)
        for t in range(horizon):
            x = x - (x + xi[t, :, 0]) / (t + 1.0)
        return np.abs(x) ** p
    y = np.zeros((r, 3))  # dual (log) coordinates; f(x) = KL(x || pi), grad = log(x / pi) + 1
    log_pi = np.log(_PI)
    for t in range(horizon):
        grad = _softmax_log(y) - log_pi + 1.0
        y = y - (grad + xi[t]) / (t + 1.0)
    kl = np.sum(_PI * (log_pi - _softmax_log(y)), axis=-1)
    return np.maximum(kl, 0.0) ** (p / 2.0)


def smd_rate(
    geometry: str,
    objective: str,
    tail_index: float,
    horizons: list[int],
    num_replicates: int,
    rng: Any,
    *,
    noise_scale: float = 1.0,
    step_scale: float = 0.5,
) -> tuple[Any, list[float]]:
    """Slope of log(error) against log(T) over ``horizons``, with its 95 % t interval.

    Convex: per-horizon mean of the gaps, ``loglog_slope(T, errors[k, r])`` (delta method,
    Welch-Satterthwaite df). Strongly convex: the mean of order p does not exist, so the runs of
    each horizon are split into ``min(8, r // 2)`` equal groups and the slope is fitted to the
    groups' medians, ``loglog_slope(T, medians[k, groups])`` (same interval; a group median scales
    in T like the median); the summary is the median over all runs.

    Shapes: ``horizons`` ``(k,)`` with k >= 3; returns ``(Interval, [k summaries])``.
    Units: the slope is dimensionless; summaries as in :func:`smd_errors`.
    Raises: ConfigError from :func:`smd_errors` or :func:`quadriga.stats.loglog_slope` (a zero error).
    Source: the module docstring (test design for the seed abstract of row 000:4).
    """
    from quadriga import stats

    errors = [
        smd_errors(
            geometry,
            objective,
            tail_index,
            int(t),
            num_replicates,
            rng,
            noise_scale=noise_scale,
            step_scale=step_scale,
        )
        for t in horizons
    ]
    if objective == "convex":
        return stats.loglog_slope(horizons, np.stack(errors)), [float(np.mean(e)) for e in errors]
    groups = min(MEDIAN_GROUPS, num_replicates // 2)
    size = num_replicates // groups
    medians = np.array([np.median(e[: groups * size].reshape(groups, size), axis=1) for e in errors])
    return stats.loglog_slope(horizons, medians), [float(np.median(e)) for e in errors]


@attrs.define(kw_only=True)
class HeavyTailSMD(Evaluator):
    """Error-vs-T slope of stochastic mirror descent under alpha-stable noise, measured beside the
    predicted rate, and the implied time-to-epsilon exponent beside ``p/(p-1)`` or ``1/(p-1)``.

    For each horizon T in ``horizons`` it runs ``num_replicates`` independent SMD runs (module
    docstring) and summarises their errors (convex: mean; strongly convex: median), then fits the
    slope of log(error) against log(T) with a t interval (:func:`smd_rate`,
    ``quadriga.stats.loglog_slope``: delta method over replicates, or over group medians).

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``slope``, ``slope_low``, ``slope_high`` (95 %), ``slope_se``,
    ``slope_df`` (standard error and degrees of freedom of the t pivot), ``predicted_slope``,
    ``slope_error`` (measured - predicted) with ``slope_error_low`` / ``_high``,
    ``time_exponent`` (``-1 / slope``; left out for a slope >= 0) and ``predicted_time_exponent``,
    ``error/T=<T>`` per
    horizon; table ``horizons`` (T, error, replicates).

    Shapes:
        every value is a scalar float; the table has one row per horizon.

    Units:
        convex errors are gaps in loss units (in [0, 1]); strongly convex errors are Bregman
        divergences to the power p/2; slopes and exponents are dimensionless; T counts SMD steps.

    Raises:
        ConfigError: fewer than 3 horizons; a tail index outside (1, 2] (at build time); an error
            that is 0 at some horizon (no log-log slope).

    Source: the seed abstract of row 000:4 ("Lévy mirror flow": SMD under heavy-tailed noise with
    finite p-th moments; O(eps^{-p/(p-1)}) time in the convex case, O~(eps^{-1/(p-1)}) in the
    relatively strongly convex case), main convex and strongly convex guarantees and their
    discrete-time corollaries; SMD as in Beck & Teboulle 2003, eq. 3.3.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"horizons": [50, 100, 200], "num_replicates": 16}

    geometry: str = param(
        "euclidean", doc="mirror map: 'euclidean' or 'entropic'", validator=one_of(("euclidean", "entropic"))
    )
    objective: str = param(
        "convex",
        doc="test bed: 'convex' (linear loss) or 'strongly-convex'",
        validator=one_of(("convex", "strongly-convex")),
    )
    tail_index: float = param(
        1.5,
        doc="alpha = p of the stable noise, in (1, 2] (dimensionless)",
        validator=in_range(1.0, 2.0, low_open=True),
    )
    horizons: list[int] = param(
        factory=lambda: [125, 250, 500, 1000, 2000, 4000],
        doc="numbers of SMD steps T (at least 3)",
        validator=positive_int_list,
    )
    num_replicates: int = param(64, doc="independent runs per horizon", validator=int_at_least(2))
    noise_scale: float = param(
        1.0, doc="scale parameter of the stable noise (gradient units)", validator=positive
    )
    step_scale: float = param(
        0.5, doc="convex step = step_scale * T^(-1/p) (parameter units per gradient unit)", validator=positive
    )

    def __attrs_post_init__(self) -> None:
        """Refuse fewer than 3 horizons when the component is built (ConfigError)."""
        if len(self.horizons) < 3:
            raise ConfigError(
                f"horizons needs at least 3 values for a slope, got {self.horizons}.", key="horizons"
            )

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run SMD at every horizon, fit the slope; see the class docstring."""
        from quadriga.seeding import numpy_rng

        del subject, reference
        horizons = sorted(int(t) for t in self.horizons)
        fit, summary = smd_rate(
            self.geometry,
            self.objective,
            self.tail_index,
            horizons,
            self.num_replicates,
            numpy_rng(generator),
            noise_scale=self.noise_scale,
            step_scale=self.step_scale,
        )
        predicted = predicted_rate(self.objective, self.tail_index)
        values: dict[str, float] = {
            "slope": float(fit.estimate),
            "slope_low": float(fit.low),
            "slope_high": float(fit.high),
            "slope_se": float(fit.se),
            "slope_df": float(fit.df),
            "predicted_slope": predicted,
            "slope_error": float(fit.estimate - predicted),
            "slope_error_low": float(fit.low - predicted),
            "slope_error_high": float(fit.high - predicted),
            "predicted_time_exponent": -1.0 / predicted,
        }
        if fit.estimate < 0:
            values["time_exponent"] = -1.0 / float(fit.estimate)
        values.update({f"error/T={t}": s for t, s in zip(horizons, summary, strict=True)})
        rows = [
            {"T": t, "error": s, "replicates": self.num_replicates}
            for t, s in zip(horizons, summary, strict=True)
        ]
        return Metrics(values=values, tables={"horizons": rows})
