"""``diag-gfs-sharpness``: sharpness of the gradient-flow solution along gradient descent at the
edge of stability, on the scalar network of Kreisler et al. 2023.

The model is the depth-D scalar network ``f(w) = w_1 w_2 ... w_D`` with the squared loss
``L(w) = (prod(w) - 1)^2 / 2`` (one training example x = 1, y = 1). Gradient flow conserves the
differences ``w_i^2 - w_j^2`` (``d w_i^2 / dt = -2 (P - 1) P`` for every i), so its limit from
``w`` is ``w_i^2 + u`` with the unique ``u`` solving ``prod(w_i^2 + u) = 1``, and the Hessian
there, ``grad f grad f^T``, has top eigenvalue ``sum_i 1 / (w_i^2 + u)``: the predicted GFS
sharpness. The measured one integrates the flow numerically (``scipy.integrate.solve_ivp``) and
runs power iteration with Hessian-vector products at its end point.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator
from quadriga.validators import in_range, instance_of, int_at_least, positive_int

__all__ = [
    "GFSSharpness",
    "draw_initial_weights",
    "gfs_sharpness_closed_form",
    "gradient_descent",
    "gradient_flow_limit",
    "scalar_net_gradient",
    "scalar_net_loss",
]

#: relative change of the GFS sharpness below which a step counts as "not increasing" (numerical
#: error of the flow integration, rtol 1e-11, is far below it)
MONOTONE_TOLERANCE = 1e-7


def scalar_net_loss(w: Any) -> float:
    """``(prod(w) - 1)^2 / 2``, the squared loss of the scalar network on (x, y) = (1, 1).

    Shapes: ``w`` ``(D,)``; returns a float. Units: squared output units.
    Raises: nothing (any finite ``w``). Source: Kreisler et al. 2023 (ICML), sec. 3, eq. (3) with x = y = 1.
    """
    return 0.5 * (float(np.prod(w)) - 1.0) ** 2


def scalar_net_gradient(w: Any) -> np.ndarray:
    """Gradient ``(prod(w) - 1) * prod_{j != i} w_j`` of :func:`scalar_net_loss`.

    Shapes: ``w`` ``(D,)`` -> ``(D,)``. Units: loss per parameter unit.
    Raises: nothing. Source: Kreisler et al. 2023 (ICML), sec. 3.
    """
    w = np.asarray(w, dtype=float)
    others = np.array([np.prod(np.delete(w, i)) for i in range(len(w))])
    return (float(np.prod(w)) - 1.0) * others


def _check_weights(w: Any) -> np.ndarray:
    w = np.asarray(w, dtype=float).reshape(-1)
    if len(w) < 2 or not np.all(np.isfinite(w)):
        raise ConfigError(
            f"weights must be at least 2 finite numbers, got {w.tolist()}.", key="initial_weights"
        )
    if not np.prod(w) > 0:
        raise ConfigError(
            f"the product of the weights must be positive (gradient flow then reaches prod = 1), got "
            f"{float(np.prod(w)):.4g}.",
            key="initial_weights",
        )
    return w


def gfs_sharpness_closed_form(w: Any) -> float:
    """Predicted sharpness of the gradient-flow solution from ``w``: ``sum_i 1 / (w_i^2 + u)``.

    ``u`` is the root of ``sum_i log(w_i^2 + u) = 0`` (``scipy.optimize.brentq``; the left side
    increases in ``u`` on ``(-min w_i^2, inf)``), from the conserved ``w_i^2 - w_j^2`` of the flow.

    Shapes: ``w`` ``(D,)``; returns a float. Units: curvature (loss per squared parameter unit).

    Raises:
        ConfigError: fewer than 2 weights, a non-finite weight or ``prod(w) <= 0``.

    Source: Kreisler et al. 2023, "Gradient descent monotonically decreases the sharpness of
    gradient flow solutions in scalar networks and beyond" (ICML), sec. 3: the GFS is fixed by the
    balancedness invariants; its sharpness is ``|grad f|^2`` at ``prod = 1``.
    """
    from scipy.optimize import brentq

    s = _check_weights(w) ** 2
    low = -float(s.min())
    high = 1.0 + float(abs(low))
    while np.sum(np.log(s + high)) < 0:
        high *= 2.0
    eps = 1e-15 * max(1.0, abs(low))
    u = brentq(lambda x: float(np.sum(np.log(s + x))), low + eps, high, xtol=1e-15, rtol=1e-15)
    return float(np.sum(1.0 / (s + u)))


def gradient_flow_limit(w: Any, *, loss_tolerance: float = 1e-24) -> np.ndarray:
    """End point of gradient flow ``dw/dt = -grad L(w)`` from ``w`` (numerical, no invariants used).

    Integrates with ``scipy.integrate.solve_ivp`` (LSODA, rtol 1e-11, atol 1e-13) until the loss
    falls below ``loss_tolerance`` (a terminal event), extending the horizon until it does.

    Shapes: ``w`` ``(D,)`` -> ``(D,)``. Units: parameter units.

    Raises:
        ConfigError: invalid weights (see :func:`gfs_sharpness_closed_form`); RuntimeError if the
            flow has not reached ``loss_tolerance`` by time 1e6.

    Source: the gradient-flow solution (GFS) of Kreisler et al. 2023 (ICML), Definition in sec. 2.
    """
    from scipy.integrate import solve_ivp

    y = _check_weights(w)
    if scalar_net_loss(y) <= loss_tolerance:
        return y

    def event(_t: float, z: np.ndarray) -> float:
        return scalar_net_loss(z) - loss_tolerance

    event.terminal = True  # type: ignore[attr-defined]
    horizon = 100.0
    while horizon <= 1e6:
        sol = solve_ivp(
            lambda _t, z: -scalar_net_gradient(z),
            (0.0, horizon),
            y,
            method="LSODA",
            rtol=1e-11,
            atol=1e-13,
            events=event,
        )
        y = sol.y[:, -1]
        if sol.status == 1 or scalar_net_loss(y) <= loss_tolerance:
            return y
        horizon *= 10.0
    raise RuntimeError(f"gradient flow did not reach loss {loss_tolerance:g} by time 1e6 (at {y.tolist()}).")


def gradient_descent(w: Any, learning_rate: float, num_steps: int) -> np.ndarray:
    """GD iterates ``w_{t+1} = w_t - learning_rate * grad L(w_t)`` of the scalar network.

    Shapes: ``w`` ``(D,)``; returns ``(num_steps + 1, D)`` (``w_0`` first). Units: parameter units.
    Raises: ConfigError for invalid initial weights, or when GD diverges (``|prod(w)| > 1e6``).
    Source: Kreisler et al. 2023 (ICML), sec. 3.
    """
    out = [_check_weights(w)]
    for t in range(num_steps):
        out.append(out[-1] - learning_rate * scalar_net_gradient(out[-1]))
        if not np.all(np.isfinite(out[-1])) or abs(float(np.prod(out[-1]))) > 1e6:
            raise ConfigError(
                f"GD diverged at step {t + 1} (learning_rate {learning_rate:.4g}): choose a smaller "
                "learning rate (stability_ratio) or weights closer to a minimum.",
                key="stability_ratio",
            )
    return np.stack(out)


def draw_initial_weights(rng: Any, depth: int = 4) -> list[float]:
    """One random unbalanced initialisation of the depth-``depth`` scalar network.

    ``exp(z - mean(z)) * c^(1/depth)`` with ``z ~ N(0, 0.4^2 I_depth)`` and ``c ~ U[0.8, 1.25]``
    (product ``c``, near the minimum's 1; unequal magnitudes, so the flow's invariants
    ``w_i^2 - w_j^2`` are not zero), rounded to 6 decimals.

    Shapes: returns ``depth`` floats. Units: parameter units.
    Raises: nothing (``rng`` is a ``numpy.random.Generator``).
    Source: test design for Kreisler et al. 2023 (ICML), sec. 3 and 5 (random initialisations near
    the manifold of minima, beyond the edge of stability once the learning rate is set).
    """
    z = rng.normal(0.0, 0.4, size=depth)
    return [float(x) for x in (np.exp(z - z.mean()) * rng.uniform(0.8, 1.25) ** (1.0 / depth)).round(6)]


def _torch_loss(w: Any) -> Any:
    return 0.5 * (w.prod() - 1.0) ** 2


@attrs.define(kw_only=True)
class GFSSharpness(Evaluator):
    """GFS sharpness along GD at the edge of stability: measured (numerical flow + power iteration)
    beside predicted (the closed form of the flow's invariants), with the loss oscillating.

    GD on the scalar network (module docstring) runs with ``learning_rate = 2 * stability_ratio /
    S_GFS(w_0)``, so ``stability_ratio > 1`` starts beyond the edge of stability (sharpness of the
    solution GD would reach by gradient flow above ``2 / learning_rate``). At every
    ``evaluate_every``-th iterate it integrates the flow to its limit and takes the top Hessian
    eigenvalue there by power iteration (measured), and compares with the closed form (predicted).
    The theorem predicts that the GFS sharpness never increases along GD while the loss oscillates,
    and that GD converges to a minimum of sharpness at most ``2 / learning_rate``.

    Input: none (the evaluator runs its own simulation; ``subject`` and ``reference`` are ignored
    and may be left out).

    Returns (``Metrics``): ``monotone_fraction`` (share of evaluated steps with the measured GFS
    sharpness not increasing, relative slack 1e-7; predicted 1), ``loss_increase_fraction`` (share
    of GD steps where the loss went up: the oscillation), ``loss_increases`` (their number),
    ``max_relative_gap`` (largest
    ``|measured - predicted| / predicted`` over the evaluated iterates), ``gfs_sharpness_initial``,
    ``gfs_sharpness_final`` (measured), ``predicted_gfs_sharpness_final``,
    ``edge_ratio_initial`` / ``edge_ratio_final`` (``learning_rate * S_GFS / 2``; theorem: the
    final one tends to a value <= 1), ``final_loss``, ``learning_rate``; table ``trajectory``
    (step, loss, sharpness at the iterate, measured and predicted GFS sharpness). With
    ``num_draws = n > 0``, also table ``draws``: n further runs at the same stability ratio, each
    from its own random initialisation (:func:`draw_initial_weights`, depth
    ``len(initial_weights)``, drawn from the stream ``"initialisations"`` of the stage's generator;
    power iteration of draw ``i`` on the stream ``"draw/<i>"``, so the run from
    ``initial_weights`` is the same with or without them), one row per draw: ``subject``
    (``"diag-gfs-sharpness"``), ``draw`` (0 ... n-1), ``stability_ratio``, ``weights`` and the values
    above of that run.

    Shapes:
        ``initial_weights``: D >= 2 floats with a positive product; every value is a scalar float;
        table ``trajectory`` has one row per evaluated iterate, ``draws`` one per draw.

    Units:
        sharpness in loss per squared parameter unit; ``learning_rate`` in parameter units squared
        per loss unit; fractions and ratios are dimensionless; steps count GD iterations.

    Raises:
        ConfigError: ``initial_weights`` with fewer than 2 entries, a non-finite one or a
            non-positive product, a negative ``num_draws`` (raised when the component is built); GD
            diverging (``|prod(w)| > 1e6``, from ``initial_weights`` or a draw, raised by ``evaluate``).

    Source: Kreisler, Nacson, Soudry & Srebro 2023, "Gradient descent monotonically decreases the
    sharpness of gradient flow solutions in scalar networks and beyond", ICML: the monotone
    decrease of the GFS sharpness for scalar networks (sec. 3, main theorem) and GD's convergence
    to the edge of stability (sec. 4); power iteration on Hessian-vector products as in sec. 5.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"num_steps": 6, "num_power_iterations": 30}

    initial_weights: list[float] = param(
        factory=lambda: [1.5, 1.5, 0.5, 0.9],
        doc="the scalar network's weights at step 0 (D >= 2 numbers, positive product)",
        validator=instance_of(list, tuple),
    )
    stability_ratio: float = param(
        1.3,
        doc="learning_rate * S_GFS(w_0) / 2: above 1 starts beyond the edge of stability (dimensionless)",
        validator=in_range(0.0, 4.0, low_open=True),
    )
    num_steps: int = param(200, doc="GD iterations", validator=positive_int)
    evaluate_every: int = param(1, doc="GD iterations between GFS evaluations", validator=positive_int)
    num_power_iterations: int = param(100, doc="most power iterations per eigenvalue", validator=positive_int)
    num_draws: int = param(
        0,
        doc="further runs from random initialisations (draw_initial_weights), one row each in table "
        "'draws' (0: none)",
        validator=int_at_least(0),
    )

    def __attrs_post_init__(self) -> None:
        """Refuse invalid ``initial_weights`` when the component is built (ConfigError)."""
        _check_weights(self.initial_weights)

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run GD, measure the GFS sharpness along it; see the class docstring."""
        from quadriga.seeding import child_generator, child_numpy_rng

        del subject, reference
        values, rows = self._run(np.asarray(self.initial_weights, dtype=float), generator)
        tables: dict[str, list[dict[str, Any]]] = {"trajectory": rows}
        if self.num_draws:
            rng = child_numpy_rng(generator, "initialisations")
            draws = []
            for i in range(self.num_draws):
                weights = draw_initial_weights(rng, depth=len(self.initial_weights))
                draw_values, _ = self._run(np.asarray(weights), child_generator(generator, f"draw/{i}"))
                draws.append(
                    {
                        "subject": "diag-gfs-sharpness",
                        "draw": i,
                        "stability_ratio": float(self.stability_ratio),
                        "weights": weights,
                        **draw_values,
                    }
                )
            tables["draws"] = draws
        return Metrics(values=values, tables=tables)

    def _run(self, w0: np.ndarray, generator: Any) -> tuple[dict[str, float], list[dict[str, Any]]]:
        """One GD run from ``w0``: the values and the ``trajectory`` rows of the class docstring."""
        import torch

        learning_rate = 2.0 * self.stability_ratio / gfs_sharpness_closed_form(w0)
        path = gradient_descent(w0, learning_rate, self.num_steps)
        losses = [scalar_net_loss(w) for w in path]
        rows: list[dict[str, Any]] = []
        for t in range(0, len(path), self.evaluate_every):
            limit = gradient_flow_limit(path[t])
            measured, _ = top_hessian(limit, generator, self.num_power_iterations, torch)
            current, _ = top_hessian(path[t], generator, self.num_power_iterations, torch)
            rows.append(
                {
                    "step": t,
                    "loss": losses[t],
                    "sharpness": current,
                    "gfs_sharpness": measured,
                    "predicted_gfs_sharpness": gfs_sharpness_closed_form(path[t]),
                }
            )
        gfs = np.array([r["gfs_sharpness"] for r in rows])
        pred = np.array([r["predicted_gfs_sharpness"] for r in rows])
        steps = np.diff(gfs) / gfs[:-1]
        loss_steps = np.diff(np.asarray(losses))
        values = {
            "monotone_fraction": float(np.mean(steps <= MONOTONE_TOLERANCE)) if len(steps) else math.nan,
            "loss_increase_fraction": float(np.mean(loss_steps > 0)),
            "loss_increases": float(np.sum(loss_steps > 0)),
            "max_relative_gap": float(np.max(np.abs(gfs - pred) / pred)),
            "gfs_sharpness_initial": float(gfs[0]),
            "gfs_sharpness_final": float(gfs[-1]),
            "predicted_gfs_sharpness_final": float(pred[-1]),
            "edge_ratio_initial": float(learning_rate * gfs[0] / 2.0),
            "edge_ratio_final": float(learning_rate * gfs[-1] / 2.0),
            "final_loss": float(losses[-1]),
            "learning_rate": float(learning_rate),
        }
        return values, rows


def top_hessian(w: Any, generator: Any, num_iterations: int, torch: Any) -> tuple[float, Any]:
    """Top Hessian eigenvalue of the scalar network's loss at ``w`` (float64 power iteration).

    Shapes: ``w`` ``(D,)``; returns ``(float, Tensor[D])``. Units: curvature.
    Raises: ConfigError from :func:`quadriga_diagnostics.hessian.top_hessian_eigenvalue`.
    Source: Kreisler et al. 2023 (ICML), sec. 5 (sharpness by power iteration).
    """
    from quadriga_diagnostics.hessian import top_hessian_eigenvalue

    x = torch.as_tensor(np.asarray(w, dtype=float), dtype=torch.float64)
    return top_hessian_eigenvalue(_torch_loss, x, generator=generator, num_iterations=num_iterations)
