"""``diag-sea-omd``: regret of optimistic online mirror descent in the stochastically extended
adversarial (SEA) model against the predicted dependence on the cumulative variances.

SEA model (Sachs et al. 2022): at round t the loss ``f_t`` is drawn from a distribution with
expected loss ``F_t``; ``sigma^2_{1:T} = sum_t max_x E|grad f_t(x) - grad F_t(x)|^2`` (stochastic
variance) and ``Sigma^2_{1:T} = sum_t max_x |grad F_t(x) - grad F_{t-1}(x)|^2`` (adversarial
variation). For convex smooth losses optimistic OMD has expected regret
``O(sqrt(sigma^2_{1:T}) + sqrt(Sigma^2_{1:T}))`` (the seed abstract's plain text drops the square
roots), i.e. a log-log slope of 1/2 of the regret against ``V = sigma^2_{1:T} + Sigma^2_{1:T}``.

Test bed: linear losses ``f_t(x) = <c_t, x>`` on the Euclidean ball of radius D in R^d (convex and
smooth), ``c_t = m_t + sigma xi_t`` with ``xi_t ~ N(0, I_d)``. Two sweeps, each attaining the
bound's order: a stochastic one (``m_t = (0.5, 0, ...)`` fixed, ``sigma`` varies; ``V = sigma^2 d T``;
the comparator gains ``D |sum_t sigma xi_t|`` ~ ``D sqrt(V)``) and an adversarial one
(``m_t = (-1)^t a e_1``, no noise, ``a`` varies; ``V = 4 a^2 (T - 1)``; the optimistic hint, the
last gradient, is always wrong).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive, positive_int

__all__ = [
    "PREDICTED_SLOPE",
    "OptimisticOMDRegret",
    "ball_projection",
    "fit_regret_slope",
    "optimistic_omd_regret",
    "replicate_rows",
    "sea_sweep",
    "sweep_from_tables",
]

#: the predicted log-log slope of the convex regret against sigma^2_{1:T} + Sigma^2_{1:T}
PREDICTED_SLOPE = 0.5


def ball_projection(x: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of each row of ``x`` onto the ball of ``radius``.

    Shapes: ``x`` ``(..., d)`` -> same. Units: parameter units.
    Raises: nothing. Source: the Euclidean mirror map's Bregman projection (Beck & Teboulle 2003).
    """
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x * np.minimum(1.0, radius / np.maximum(norm, 1e-300))


def optimistic_omd_regret(
    gradients: np.ndarray, *, radius: float = 1.0, initial_variation: float = 1.0
) -> np.ndarray:
    """Static regret of Euclidean optimistic OMD on linear losses ``<c_t, x>`` over the ball.

    ``x_t = Pi(xh_t - eta_t M_t)``, ``xh_{t+1} = Pi(xh_t - eta_t c_t)``, hint ``M_t = c_{t-1}``
    (``M_1 = 0``), ``xh_1 = 0``, adaptive step ``eta_t = D / sqrt(delta + sum_{s<t} |c_s - M_s|^2)``;
    regret ``sum_t <c_t, x_t> + D |sum_t c_t|`` (the best fixed point in hindsight is
    ``-D sum c / |sum c|``).

    Shapes: ``gradients`` ``(r, T, d)`` (r sequences side by side); returns ``(r,)``.
    Units: loss units.

    Raises:
        ConfigError: ``gradients`` not three-dimensional, ``radius <= 0`` or ``initial_variation <= 0``.

    Source: Chen, Zhang & Zhao 2023, "Optimistic online mirror descent for bridging stochastic and
    adversarial online convex optimization" (ICML; JMLR 2024), optimistic OMD with the last gradient
    as hint and the self-confident step of the convex case; Rakhlin & Sridharan 2013 (optimistic MD).
    """
    c = np.asarray(gradients, dtype=float)
    if c.ndim != 3:
        raise ConfigError(f"gradients must have shape (r, T, d), got {c.shape}.", key="gradients")
    if not radius > 0 or not initial_variation > 0:
        raise ConfigError("radius and initial_variation must be positive.", key="radius")
    r, horizon, d = c.shape
    xh = np.zeros((r, d))
    hint = np.zeros((r, d))
    acc = np.zeros(r)
    loss = np.zeros(r)
    for t in range(horizon):
        eta = (radius / np.sqrt(initial_variation + acc))[:, None]
        x = ball_projection(xh - eta * hint, radius)
        g = c[:, t]
        loss += np.sum(g * x, axis=1)
        xh = ball_projection(xh - eta * g, radius)
        acc += np.sum((g - hint) ** 2, axis=1)
        hint = g
    return loss + radius * np.linalg.norm(c.sum(axis=1), axis=1)


def sea_sweep(
    levels: list[float], horizon: int, dim: int, num_replicates: int, rng: Any, *, radius: float = 1.0
) -> list[dict[str, Any]]:
    """Regret of optimistic OMD over the stochastic and the adversarial sweep (module docstring).

    Shapes: returns one row per (sweep, level): ``sweep``, ``level`` (sigma or a),
    ``variance`` (sigma^2_{1:T} + Sigma^2_{1:T}), ``regrets`` (``num_replicates`` floats), ``regret`` (mean).
    Units: regret in loss units; variances in squared gradient units.
    Raises: ConfigError from :func:`optimistic_omd_regret`.
    Source: SEA quantities of Sachs et al. 2022, sec. 2; the test design of the module docstring.
    """
    rows: list[dict[str, Any]] = []
    mean = np.zeros(dim)
    mean[0] = 0.5
    for s in levels:
        c = mean + s * rng.normal(size=(num_replicates, horizon, dim))
        reg = optimistic_omd_regret(c, radius=radius)
        rows.append(
            {"sweep": "stochastic", "level": float(s), "variance": s * s * dim * horizon, "regrets": reg}
        )
    sign = (-1.0) ** np.arange(horizon)
    for a in levels:
        c = np.zeros((num_replicates, horizon, dim))
        c[:, :, 0] = a * sign
        reg = optimistic_omd_regret(c, radius=radius)
        rows.append(
            {"sweep": "adversarial", "level": float(a), "variance": 4 * a * a * (horizon - 1), "regrets": reg}
        )
    for row in rows:
        row["regret"] = float(np.mean(row["regrets"]))
    return rows


def fit_regret_slope(rows: list[dict[str, Any]]) -> tuple[Any, float]:
    """Slope of log(mean regret) against log(V) over all rows, with its t interval, and the R^2
    of the least-squares fit of the log means.

    The adversarial rows are deterministic (equal replicates); the interval's variance comes from the
    stochastic rows (``quadriga.stats.loglog_slope`` with replicates: delta method, Welch df).

    Shapes: rows as from :func:`sea_sweep` (at least 3); returns ``(Interval, float)``.
    Units: dimensionless.
    Raises: ConfigError: a non-positive mean regret, fewer than 3 rows.
    Source: the verdict rule of the research notes (Appendix C, row 003:47).
    """
    from scipy.stats import linregress

    from quadriga import stats

    v = [r["variance"] for r in rows]
    fit = stats.loglog_slope(v, np.stack([r["regrets"] for r in rows]))
    r2 = float(linregress(np.log(v), np.log([r["regret"] for r in rows])).rvalue ** 2)
    return fit, r2


def replicate_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per replicate index ``r`` of a :func:`sea_sweep`: its regret in every setting.

    Row ``r`` holds ``subject`` (``"diag-sea-omd"``), ``replicate`` (r), ``regret/<sweep>/<level>``
    (the r-th sequence's regret there; the level as ``%g``) and ``slope``: the least-squares slope of
    ``log(regret)`` against ``log(V)`` over the settings of that row (NaN when a regret is not
    positive). The sequences of one row are independent draws (each setting draws its own noise),
    so ``slope`` describes one replicate; the tested slope is that of the log *mean* regrets
    (:func:`fit_regret_slope`, which these rows reproduce exactly: ``regrets[r]`` of each setting).

    Shapes: ``rows`` as from :func:`sea_sweep`; returns ``num_replicates`` rows.
    Units: regret in loss units; ``slope`` dimensionless.
    Raises: nothing.
    Source: the test design of the module docstring.
    """
    log_v = np.log([r["variance"] for r in rows])
    regrets = np.stack([np.asarray(r["regrets"], dtype=float) for r in rows])  # (settings, replicates)
    out = []
    for i in range(regrets.shape[1]):
        col = regrets[:, i]
        slope = float(np.polyfit(log_v, np.log(col), 1)[0]) if np.all(col > 0) else float("nan")
        row: dict[str, Any] = {"subject": "diag-sea-omd", "replicate": i, "slope": slope}
        row.update({f"regret/{r['sweep']}/{r['level']:g}": float(c) for r, c in zip(rows, col, strict=True)})
        out.append(row)
    return out


def sweep_from_tables(sweep: list[dict[str, Any]], replicates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`sea_sweep` again from the evaluator's tables ``sweep`` and ``replicates``.

    Setting ``(sweep, level)`` gets ``variance`` (its ``V``), ``regrets`` (column
    ``regret/<sweep>/<level>`` of the replicate rows, ordered by ``replicate``) and ``regret``
    (their mean), so :func:`fit_regret_slope` of the result is the evaluator's fit.

    Shapes: ``sweep`` ``2 * len(levels)`` rows, ``replicates`` ``num_replicates`` rows; returns one
    row per setting. Units: as :func:`sea_sweep`.
    Raises: KeyError: a setting without its column in the replicate rows.
    Source: the evaluator's tables (:class:`OptimisticOMDRegret`).
    """
    ordered = sorted(replicates, key=lambda r: r["replicate"])
    out = []
    for row in sweep:
        regrets = np.array([float(r[f"regret/{row['sweep']}/{row['level']:g}"]) for r in ordered])
        out.append(
            {
                "sweep": row["sweep"],
                "level": float(row["level"]),
                "variance": float(row["V"]),
                "regrets": regrets,
                "regret": float(np.mean(regrets)),
            }
        )
    return out


@attrs.define(kw_only=True)
class OptimisticOMDRegret(Evaluator):
    """Regret of optimistic OMD against ``V = sigma^2_{1:T} + Sigma^2_{1:T}`` (convex SEA model):
    measured log-log slope beside the predicted 1/2, with the fit's R^2.

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored).

    Returns (``Metrics``): ``slope``, ``slope_low``, ``slope_high`` (95 %), ``predicted_slope``
    (0.5), ``slope_error`` (measured - predicted), ``r_squared``, ``slope_stochastic`` and
    ``slope_adversarial`` (least squares within each sweep), ``regret/<sweep>/<level>`` (mean over
    replicates); table ``sweep`` (sweep, level, V, mean regret, predicted ``sqrt(V)``); table
    ``replicates`` (:func:`replicate_rows`: one row per replicate index, its regret in every
    setting and its own log-log slope), from which :func:`fit_regret_slope` gives ``slope`` again.

    Shapes:
        every value is a scalar float; table ``sweep`` has ``2 * len(levels)`` rows,
        ``replicates`` ``num_replicates``.

    Units:
        regret in loss units, V in squared gradient units, slopes dimensionless.

    Raises:
        ConfigError: fewer than 2 levels or a non-positive level (at build time); a mean regret
            that is not positive (no log-log slope).

    Source: Chen, Zhang & Zhao 2023, "Optimistic online mirror descent for bridging stochastic and
    adversarial online convex optimization" (ICML; JMLR 2024), convex and smooth case:
    ``E[Regret_T] = O(sqrt(sigma^2_{1:T}) + sqrt(Sigma^2_{1:T}))``, the bound of Sachs et al. 2022
    (NeurIPS) for optimistic FTRL, obtained without convexity of the individual losses.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"horizon": 100, "num_replicates": 4}

    levels: list[float] = param(
        factory=lambda: [0.05, 0.1, 0.2, 0.4, 0.8, 1.6],
        doc="noise scales sigma (stochastic sweep) and amplitudes a (adversarial sweep), gradient units",
        validator=attrs.validators.deep_iterable(positive, attrs.validators.instance_of((list, tuple))),
    )
    horizon: int = param(1000, doc="rounds T", validator=positive_int)
    dim: int = param(2, doc="dimension d of the decision set", validator=positive_int)
    num_replicates: int = param(16, doc="independent sequences per level", validator=int_at_least(2))
    radius: float = param(1.0, doc="radius D of the decision ball (parameter units)", validator=positive)

    def __attrs_post_init__(self) -> None:
        """Refuse fewer than 2 levels when the component is built (ConfigError)."""
        if len(self.levels) < 2:
            raise ConfigError(f"levels needs at least 2 values, got {self.levels}.", key="levels")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run both sweeps and fit the slope; see the class docstring."""
        from scipy.stats import linregress

        from quadriga.seeding import numpy_rng

        del subject, reference
        rows = sea_sweep(
            [float(x) for x in self.levels],
            self.horizon,
            self.dim,
            self.num_replicates,
            numpy_rng(generator),
            radius=self.radius,
        )
        fit, r2 = fit_regret_slope(rows)
        values: dict[str, float] = {
            "slope": float(fit.estimate),
            "slope_low": float(fit.low),
            "slope_high": float(fit.high),
            "predicted_slope": PREDICTED_SLOPE,
            "slope_error": float(fit.estimate - PREDICTED_SLOPE),
            "r_squared": r2,
        }
        for sweep in ("stochastic", "adversarial"):
            sel = [r for r in rows if r["sweep"] == sweep]
            values[f"slope_{sweep}"] = float(
                linregress(np.log([r["variance"] for r in sel]), np.log([r["regret"] for r in sel])).slope
            )
            values.update({f"regret/{sweep}/{r['level']:g}": r["regret"] for r in sel})
        table = [
            {
                "sweep": r["sweep"],
                "level": r["level"],
                "V": r["variance"],
                "regret": r["regret"],
                "sqrt_V": float(np.sqrt(r["variance"])),
            }
            for r in rows
        ]
        return Metrics(values=values, tables={"sweep": table, "replicates": replicate_rows(rows)})
