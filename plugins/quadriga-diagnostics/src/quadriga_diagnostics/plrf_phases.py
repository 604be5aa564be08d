"""``diag-plrf-phases``: compute-optimal loss exponent of the power-law random features (PLRF)
model trained by one-pass SGD, measured on the exact loss curves, against each phase's formula.

Row 003:23 (Paquette, Paquette, Xiao & Pennington 2024, "4+3 phases of compute-optimal neural
scaling laws", NeurIPS 2024). Model (their sec. 2): data ``x in R^v`` with independent
``x_j ~ N(0, j^{-2 alpha})``, target ``b_j = j^{-beta}``, random features ``W in R^{v x d}`` with
i.i.d. ``N(0, 1/d)`` entries, loss ``P(theta) = E[(<W^T x, theta> - <x, b>)^2]``; one-pass SGD
``theta_{r+1} = theta_r - gamma sum_{i<=B} W^T x_i (<W^T x_i, theta_r> - <x_i, b>)`` from 0.
Compute ``f = r d`` (flops per sample of batch 1 up to a constant); the compute-optimal loss is
``P*(f) = min_d P(theta_{f/d})`` and ``P*(f) ~ f^{-eta}``.

Loss curve (the paper's Volterra equation, ``P(r) = F(r) + sum_{s<r} K(r-1-s) P(s)``, their
sec. 3, eqs. for the forcing ``F`` and kernel ``K``): for Gaussian ``x`` it is the exact expected
loss given ``W``. With ``K_W = W^T D W = U diag(lambda) U^T``, ``theta* = K_W^{-1} W^T D b``,
``P_opt = P(theta*)`` and ``s_i(r) = E<u_i, theta_r - theta*>^2``,
``s(r+1) = diag(a) s(r) + gamma^2 B P(r) lambda``, ``a_i = (1 - gamma B lambda_i)^2 +
gamma^2 B lambda_i^2``, ``P(r) = P_opt + lambda . s(r)`` (Isserlis:
``E[z z^T S z z^T] = 2 K S K + tr(K S) K``); the off-diagonal second moments never enter ``P``.
This is ``s(r+1) = M s(r) + c`` with the symmetric ``M = diag(a) + gamma^2 B lambda lambda^T``,
solved in closed form for every ``r`` from the eigendecomposition of ``M`` (no time stepping).
A direct SGD simulation checks it (:func:`simulate_sgd`).

Predicted exponents (ours, from the paper's four loss terms as we read them in sec. 3-4, for
``2 alpha > 1`` where ``v`` can be taken large: capacity ``F_0 ~ d^{-2 alpha + max(0, 1 - 2 beta)}``,
population forcing ``F_pp ~ r^{-(2 alpha + 2 beta - 1) / (2 alpha)}``, embedding distortion
``F_ac ~ d^{-1} r^{-1 + 1/(2 alpha)}`` (``2 beta > 1``), SGD noise ``K_pp ~ r^{-2 + 1/(2 alpha)}``;
balancing the two dominant terms at ``f = r d``):

- Phase Ia (``2 beta < 1 < 2 alpha``): ``F_pp`` vs ``F_0``: ``eta = (2 alpha + 2 beta - 1) / (2 alpha + 1)``,
  ``d* ~ f^{1 / (2 alpha + 1)}``;
- Phase II (``1/2 < beta < alpha``): ``F_pp`` vs ``F_ac``:
  ``eta = (2 alpha + 2 beta - 1) / (2 (alpha + beta))``, ``d* ~ f^{beta / (alpha + beta)}``;
- Phase III (``1/2 < alpha < beta``): ``K_pp`` vs ``F_ac``: ``eta = 1 - 1 / (4 alpha)``, ``d* ~ f^{1/2}``.

Phases Ib, Ic and IV (``2 alpha < 1``, where ``v / d`` must stay finite) are not built.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = [
    "PLRFPhases",
    "PLRFProblem",
    "compute_optimal",
    "loss_curves",
    "phase_exponents",
    "simulate_sgd",
]


def phase_exponents(alpha: float, beta: float) -> tuple[str, float, float]:
    """``(phase, eta, xi)``: the phase of ``(alpha, beta)`` and its predicted compute-optimal
    exponents, ``P* ~ f^{-eta}``, ``d* ~ f^{xi}`` (formulas of the module docstring).

    Raises:
        ConfigError: ``2 alpha <= 1`` (phases Ib, Ic, IV: not built; key ``alpha``), or a point on
            a phase boundary (``2 beta = 1`` or ``alpha = beta``; key ``beta``).

    Source: Paquette et al. 2024, sec. 4 (phase diagram), exponents re-derived here from the loss terms.
    """
    if 2 * alpha <= 1:
        raise ConfigError(
            f"alpha = {alpha}: only 2 alpha > 1 (phases Ia, II, III) is built; use alpha > 0.5.", key="alpha"
        )
    if beta <= 0 or 2 * beta == 1 or alpha == beta:
        raise ConfigError(f"beta = {beta} is on a phase boundary (2 beta = 1 or beta = alpha).", key="beta")
    if 2 * beta < 1:
        return "Ia", (2 * alpha + 2 * beta - 1) / (2 * alpha + 1), 1 / (2 * alpha + 1)
    if beta < alpha:
        return "II", (2 * alpha + 2 * beta - 1) / (2 * (alpha + beta)), beta / (alpha + beta)
    return "III", 1 - 1 / (4 * alpha), 0.5


@attrs.frozen
class PLRFProblem:
    """One draw of the PLRF model (nested features: ``W_d`` is the first ``d`` columns of one
    ``v x d_max`` Gaussian matrix, scaled by ``1/sqrt(d)``).

    Shapes: ``data_var`` and ``target`` ``(v,)``, ``features`` ``(v, d_max)`` (unscaled, ``N(0, 1)``).
    Source: Paquette et al. 2024, sec. 2.
    """

    data_var: np.ndarray
    target: np.ndarray
    features: np.ndarray

    @classmethod
    def draw(cls, alpha: float, beta: float, v: int, d_max: int, rng: np.random.Generator) -> PLRFProblem:
        """Draw ``W``; ``D = diag(j^{-2 alpha})``, ``b_j = j^{-beta}``, ``j = 1..v``.

        Raises: ConfigError when ``v < d_max`` (key ``dim_ratio``)."""
        if v < d_max:
            raise ConfigError(f"the PLRF model needs v >= d (v = {v}, d = {d_max}).", key="dim_ratio")
        j = np.arange(1, v + 1, dtype=float)
        return cls(j ** (-2 * alpha), j ** (-beta), rng.standard_normal((v, d_max)))

    def spectrum(self, d: int) -> tuple[np.ndarray, np.ndarray, float]:
        """``(lambda, s0, P_opt)``: eigenvalues of ``K_W = W^T D W``, the squared coordinates of
        ``theta*`` in its eigenbasis (``s(0)`` for ``theta_0 = 0``), and ``P(theta*)``.

        Shapes: ``(d,)``, ``(d,)``, scalar. Raises: ``LinAlgError`` for a singular ``K_W``."""
        w = self.features[:, :d] / np.sqrt(d)
        k = w.T @ (self.data_var[:, None] * w)
        lam, u = np.linalg.eigh(k)
        g = w.T @ (self.data_var * self.target)
        theta = np.linalg.solve(k, g)
        p_opt = float(self.target @ (self.data_var * self.target) - g @ theta)
        return lam, (u.T @ theta) ** 2, max(p_opt, 0.0)


def loss_curves(
    problem: PLRFProblem, d: int, steps: Any, *, learning_rate: float, batch: int = 1
) -> np.ndarray:
    """Exact expected loss ``E P(theta_r)`` of one-pass SGD given ``W``, at the steps ``r``.

    Shapes: ``steps`` ``(k,)`` non-negative reals (the closed form extends to real ``r``);
    returns ``(k,)``.

    Raises:
        ConfigError: a learning rate at which the recursion is unstable (largest eigenvalue of
            ``M`` >= 1; key ``learning_rate``).

    Source: the Volterra equation of Paquette et al. 2024, sec. 3 (exact for Gaussian data; the
    recursion of the module docstring), solved through ``M = Q diag(mu) Q^T``:
    ``s(r) = Q [mu^r w + (1 - mu^r) / (1 - mu) c~]``.
    """
    lam, s0, p_opt = problem.spectrum(d)
    g2b = learning_rate**2 * batch
    a = (1 - learning_rate * batch * lam) ** 2 + g2b * lam**2
    mu, q = np.linalg.eigh(np.diag(a) + g2b * np.outer(lam, lam))
    if mu.max() >= 1:
        raise ConfigError(
            f"learning rate {learning_rate} is unstable for d = {d} (recursion radius {mu.max():.4f}).",
            key="learning_rate",
        )
    w, c, ell = q.T @ s0, q.T @ (g2b * p_opt * lam), q.T @ lam
    pw = mu[None, :] ** np.asarray(steps, float)[:, None]
    return p_opt + (pw * w + (1 - pw) / (1 - mu) * c) @ ell


def compute_optimal(dims: Any, flops: Any, losses: Any) -> dict[str, Any]:
    """Compute-optimal frontier from loss curves on a grid of ``d``: for each budget ``f`` a cubic
    spline of ``log P(f/d, d)`` in ``log d`` is minimised; ``eta`` and ``xi`` are minus the slope of
    ``log P*`` and the slope of ``log d*`` against ``log f`` over the budgets whose optimum is
    strictly inside the grid.

    Shapes: ``dims`` ``(m,)`` increasing, ``flops`` ``(k,)``, ``losses`` ``(m, k)``.
    Returns ``eta``, ``xi``, ``interior`` (count), ``interior_decades`` (``log10`` range of ``f``
    with an interior optimum), ``best`` ``(k,)``, ``d_star`` ``(k,)``.

    Raises: ConfigError when fewer than 3 budgets have an interior optimum (key ``flops``).
    Source: Paquette et al. 2024, sec. 4 (the compute-optimal curve, ``d*`` minimising at fixed ``f``).
    """
    from scipy.interpolate import CubicSpline
    from scipy.stats import linregress

    ld = np.log(np.asarray(dims, float))
    lf = np.log(np.asarray(flops, float))
    fine = np.linspace(ld[0], ld[-1], 512)
    spline = CubicSpline(ld, np.log(np.asarray(losses, float)), axis=0)(fine)  # (512, k)
    idx = spline.argmin(0)
    best, d_star = spline[idx, np.arange(len(lf))], fine[idx]
    inside = (idx > 0) & (idx < len(fine) - 1)
    if inside.sum() < 3:
        raise ConfigError(
            "fewer than 3 budgets have their optimal d inside the grid; widen the d grid or move "
            "the flop range.",
            key="flops",
        )
    return {
        "eta": float(-linregress(lf[inside], best[inside]).slope),
        "xi": float(linregress(lf[inside], d_star[inside]).slope),
        "interior": int(inside.sum()),
        "interior_decades": float((lf[inside].max() - lf[inside].min()) / np.log(10)),
        "best": np.exp(best),
        "d_star": np.exp(d_star),
    }


def simulate_sgd(
    problem: PLRFProblem, d: int, steps: int, runs: int, *, learning_rate: float, rng: np.random.Generator
) -> np.ndarray:
    """One-pass SGD (batch 1) on fresh Gaussian samples, ``runs`` independent runs in parallel;
    the exact loss ``P(theta_r) = P_opt + (theta_r - theta*)^T K_W (theta_r - theta*)`` every step.

    Shapes: returns ``(steps + 1, runs)``. Raises: nothing. Source: Paquette et al. 2024, sec. 2.
    """
    w = problem.features[:, :d] / np.sqrt(d)
    k = w.T @ (problem.data_var[:, None] * w)
    theta_star = np.linalg.solve(k, w.T @ (problem.data_var * problem.target))
    res = problem.target - w @ theta_star
    p_opt = float(res @ (problem.data_var * res))
    sd = np.sqrt(problem.data_var)
    theta = np.zeros((runs, d))
    out = np.empty((steps + 1, runs))
    for r in range(steps + 1):
        e = theta - theta_star
        out[r] = p_opt + np.einsum("ij,jk,ik->i", e, k, e)
        if r == steps:
            break
        x = rng.standard_normal((runs, len(sd))) * sd
        z = x @ w
        resid = np.sum(z * theta, 1) - x @ problem.target
        theta = theta - learning_rate * resid[:, None] * z
    return out


def phase_point(
    alpha: float,
    beta: float,
    dims: list[int],
    flops: np.ndarray,
    *,
    dim_ratio: float,
    learning_rate: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Loss curves of one ``W`` draw on the ``d`` grid and its compute-optimal fit, and the same
    fit on the grid without its top octave (``eta_half``, ``nan`` when that grid has fewer than 3
    interior optima): ``eta - eta_half`` is the drift of the fitted exponent with model size.

    Returns :func:`compute_optimal`'s dict plus ``eta_half`` and ``losses`` ``(len(dims), len(flops))``.
    Raises: ConfigError from the helpers. Source: module docstring.
    """
    d_max = max(dims)
    problem = PLRFProblem.draw(alpha, beta, round(dim_ratio * d_max), d_max, rng)
    losses = np.array([loss_curves(problem, d, flops / d, learning_rate=learning_rate) for d in dims])
    half = [i for i, d in enumerate(dims) if d <= d_max / 2]
    try:
        eta_half = compute_optimal([dims[i] for i in half], flops, losses[half])["eta"]
    except ConfigError:
        eta_half = float("nan")
    return {**compute_optimal(dims, flops, losses), "eta_half": eta_half, "losses": losses}


def dim_grid(d_min: int, d_max: int, per_octave: int) -> list[int]:
    """Geometric grid of feature counts, ``per_octave`` points per doubling (rounded, unique).

    Raises: ConfigError when ``d_max <= d_min`` (key ``d_max``)."""
    if d_max <= d_min:
        raise ConfigError(f"d_max ({d_max}) must exceed d_min ({d_min}).", key="d_max")
    k = int(np.floor(np.log2(d_max / d_min) * per_octave + 1e-9))
    return sorted({round(d_min * 2 ** (i / per_octave)) for i in range(k + 1)} | {int(d_max)})


@attrs.define(kw_only=True)
class PLRFPhases(Evaluator):
    """Compute-optimal exponent ``eta`` (``P* ~ f^{-eta}``) of the PLRF model under one-pass SGD
    at one phase point ``(alpha, beta)`` (or at each of ``points``, in one run), measured on exact
    loss curves over ``W`` draws, beside the phase's formula; plus a direct SGD simulation against
    the loss-curve formula.

    Input: none (``subject`` and ``reference`` are ignored).

    The points are ``points`` when given, else ``[(alpha, beta)]``; each is evaluated in turn on
    the one generator (its ``draws`` fits, then its simulation check).

    Returns (``Metrics``): of the first point: ``eta`` (mean over draws), ``eta_low``,
    ``eta_high`` (95 % t interval), ``eta_predicted``, ``eta_drift`` (``eta`` minus the same fit
    without the top octave of ``d``; omitted when that fit has no interior optimum), ``xi`` (mean
    slope of ``log d*``), ``xi_predicted``, ``phase_index`` (1 = Ia, 2 = II, 3 = III),
    ``interior_decades`` (smallest over draws), ``simulation_gap`` (largest over the checked
    steps of ``|mean simulated loss - formula| / formula``, ``d = d_min``), ``simulation_se``
    (its standard error in the same units). Tables, every point: ``frontier`` (``phase``,
    ``alpha``, ``beta``, ``f``, mean ``P*``, mean ``d*``); ``per_draw`` (``subject`` =
    ``"plrf"``, ``phase``, ``alpha``, ``beta``, ``draw`` 0 ... draws - 1, ``eta``,
    ``eta_predicted``, ``eta_error`` = ``eta - eta_predicted``, ``eta_half`` (NaN without an
    interior optimum), ``xi``, ``interior_decades``); ``per_point`` (``phase``, ``alpha``,
    ``beta``, the scalars above for that point with ``eta_drift`` NaN where undefined, and
    ``d_max``).

    Shapes:
        scalars; ``frontier`` has one row per (point, flop budget), ``per_draw`` one per (point,
        draw), ``per_point`` one per point.

    Units:
        exponents dimensionless; ``f`` in samples x features (``r d``); losses in squared target units.

    Raises:
        ConfigError: a phase point with ``2 alpha <= 1`` or on a boundary, an unstable learning
            rate, a grid whose optimum never lies inside it.

    Source: Paquette, Paquette, Xiao & Pennington 2024 (NeurIPS), "4+3 phases of compute-optimal
    neural scaling laws", secs. 2-4.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"d_min": 16, "d_max": 64, "flops_max": 1e5, "draws": 2, "sim_steps": 50}

    alpha: float = param(1.0, doc="data complexity alpha (2 alpha > 1)", validator=positive)
    beta: float = param(0.7, doc="target complexity beta", validator=positive)
    d_min: int = param(32, doc="smallest number of features", validator=int_at_least(2))
    d_max: int = param(512, doc="largest number of features", validator=int_at_least(4))
    per_octave: int = param(2, doc="d grid points per doubling", validator=int_at_least(1))
    dim_ratio: float = param(4.0, doc="v / d_max (data dimension over the largest d)", validator=positive)
    learning_rate: float = param(0.2, doc="SGD step gamma (batch 1)", validator=positive)
    flops_min: float = param(1e3, doc="smallest compute budget f = r d", validator=positive)
    flops_max: float = param(1e8, doc="largest compute budget", validator=positive)
    flop_points: int = param(31, doc="log-spaced budgets", validator=int_at_least(5))
    draws: int = param(3, doc="independent W draws", validator=int_at_least(1))
    sim_runs: int = param(64, doc="SGD runs of the simulation check", validator=int_at_least(2))
    sim_steps: int = param(2000, doc="SGD steps of the simulation check", validator=int_at_least(10))
    points: list[list[float]] = param(
        factory=list,
        doc="phase points [[alpha, beta], ...] evaluated in one run (empty: the one point alpha, beta)",
    )

    def __attrs_post_init__(self) -> None:
        """Check the phase points and the grid at build time (ConfigError)."""
        for point in self.points:
            if not isinstance(point, (list, tuple)) or len(point) != 2:
                raise ConfigError(f"each of points must be [alpha, beta], got {point!r}.", key="points")
        for alpha, beta in self.phase_points():
            phase_exponents(alpha, beta)
        dim_grid(self.d_min, self.d_max, self.per_octave)
        if self.flops_max <= self.flops_min:
            raise ConfigError("flops_max must exceed flops_min.", key="flops_max")

    def phase_points(self) -> list[tuple[float, float]]:
        """The ``(alpha, beta)`` points evaluated: ``points``, else ``[(alpha, beta)]``."""
        if self.points:
            return [(float(a), float(b)) for a, b in self.points]
        return [(float(self.alpha), float(self.beta))]

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any = None) -> Metrics:
        """Fit every draw, then the simulation check, at each point; see the class docstring."""
        from quadriga.seeding import numpy_rng

        del subject, reference
        rng = numpy_rng(generator) if generator is not None else np.random.default_rng(0)
        dims = dim_grid(self.d_min, self.d_max, self.per_octave)
        flops = np.logspace(np.log10(self.flops_min), np.log10(self.flops_max), self.flop_points)
        tables: dict[str, list[dict[str, Any]]] = {"frontier": [], "per_draw": [], "per_point": []}
        first: dict[str, float] = {}
        for alpha, beta in self.phase_points():
            values = self._point(alpha, beta, dims, flops, rng, tables)
            first = first or values
        return Metrics(values=first, tables=tables)

    def _point(
        self,
        alpha: float,
        beta: float,
        dims: list[int],
        flops: np.ndarray,
        rng: np.random.Generator,
        tables: dict[str, list[dict[str, Any]]],
    ) -> dict[str, float]:
        """One point's draws and simulation check: its scalar values; its rows appended to ``tables``."""
        from quadriga import stats

        phase, eta_pred, xi_pred = phase_exponents(alpha, beta)
        fits = [
            phase_point(
                alpha, beta, dims, flops, dim_ratio=self.dim_ratio, learning_rate=self.learning_rate, rng=rng
            )
            for _ in range(self.draws)
        ]
        eta = stats.interval([f["eta"] for f in fits], "mean")
        gap, se = simulation_check(
            alpha, beta, self.d_min, self.sim_steps, self.sim_runs, self.learning_rate, rng
        )
        values = {
            "eta": eta.estimate,
            "eta_low": eta.low,
            "eta_high": eta.high,
            "eta_predicted": eta_pred,
            "xi": float(np.mean([f["xi"] for f in fits])),
            "xi_predicted": xi_pred,
            "phase_index": float({"Ia": 1, "II": 2, "III": 3}[phase]),
            "interior_decades": min(f["interior_decades"] for f in fits),
            "simulation_gap": gap,
            "simulation_se": se,
        }
        drift = float(eta.estimate - np.mean([f["eta_half"] for f in fits]))
        if np.isfinite(drift):
            values["eta_drift"] = drift
        where = {"phase": phase, "alpha": alpha, "beta": beta}
        tables["frontier"] += [
            {
                **where,
                "flops": float(f),
                "loss": float(np.mean([x["best"][i] for x in fits])),
                "d_star": float(np.mean([x["d_star"][i] for x in fits])),
            }
            for i, f in enumerate(flops)
        ]
        tables["per_draw"] += [
            {
                "subject": "plrf",
                **where,
                "draw": k,
                "eta": f["eta"],
                "eta_predicted": eta_pred,
                "eta_error": f["eta"] - eta_pred,
                "eta_half": float(f["eta_half"]),
                "xi": f["xi"],
                "interior_decades": f["interior_decades"],
            }
            for k, f in enumerate(fits)
        ]
        tables["per_point"].append({**where, **values, "eta_drift": drift, "d_max": float(self.d_max)})
        return values


def simulation_check(
    alpha: float, beta: float, d: int, steps: int, runs: int, learning_rate: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Largest relative gap between the mean simulated SGD loss and :func:`loss_curves` at 8
    log-spaced steps, and the standard error of that gap (relative, at the same step); a fresh
    PLRF draw with ``v = 4 d``, batch 1.

    Shapes: scalars. Units: relative to the formula. Raises: ConfigError from :func:`loss_curves`.
    Source: Paquette et al. 2024, the Volterra equation checked against simulation (their figures).
    """
    problem = PLRFProblem.draw(alpha, beta, 4 * d, d, rng)
    checks = np.unique(np.round(np.logspace(0, np.log10(steps), 8)).astype(int))
    formula = loss_curves(problem, d, checks, learning_rate=learning_rate)
    sim = simulate_sgd(problem, d, steps, runs, learning_rate=learning_rate, rng=rng)[checks]
    gaps = np.abs(sim.mean(1) - formula) / formula
    i = int(gaps.argmax())
    return float(gaps[i]), float(sim[i].std(ddof=1) / np.sqrt(runs) / formula[i])
