"""``diag-additive-shift``: risk increase of additive-model ERM under a shift in the simpler
component against a shift in the richer one.

Row 003:24 ("Additive-model ERM under heterogeneous covariate shift"): fit ``y = f(x) + g(z)``
by ERM over ``F + G`` with ``F`` simpler than ``G``; under a covariate shift the excess risk grows
with the complexity of the class whose input moved (a Dudley-integral bound), so a shift in
``x`` costs less than the same shift in ``z``.

Test bed: ``x, z ~ N(0, 1)`` independent in training; ``F`` = polynomials of degree ``deg_f``
in ``x`` (with the intercept), ``G`` = polynomials of degree ``deg_g`` in ``z`` without constant;
truth in ``F + G`` (well specified), noise ``sigma``. ERM = least squares on the ``1 + deg_f +
deg_g`` features. Shifts move one input's mean by ``delta`` (``N(delta, 1)``). Excess risks are
exact: ``E[(theta_hat - theta)^T M (theta_hat - theta)]`` with the shifted second-moment matrix
``M`` computed by Gauss-Hermite quadrature (exact for polynomials) and the expectation over the
noise in closed form, ``sigma^2 tr(M (Phi^T Phi)^{-1})``, given the training design.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = ["AdditiveShift", "additive_features", "expected_excess_risk", "shift_risks", "shifted_moments"]


def additive_features(x: np.ndarray, z: np.ndarray, deg_f: int, deg_g: int) -> np.ndarray:
    """``[1, x, ..., x^deg_f, z, ..., z^deg_g]``.

    Shapes: ``x``, ``z`` ``(n,)``; returns ``(n, 1 + deg_f + deg_g)``. Raises: nothing.
    Source: the additive polynomial model of the module docstring.
    """
    return np.column_stack([x**k for k in range(deg_f + 1)] + [z**k for k in range(1, deg_g + 1)])


def shifted_moments(deg_f: int, deg_g: int, shift_x: float, shift_z: float) -> np.ndarray:
    """``E[phi phi^T]`` for ``x ~ N(shift_x, 1)``, ``z ~ N(shift_z, 1)`` independent, exactly.

    Uses probabilists' Gauss-Hermite quadrature with enough nodes to integrate degree
    ``2 max(deg_f, deg_g)`` polynomials exactly, per coordinate (independence factorises the
    cross terms).

    Shapes: returns ``(p, p)`` with ``p = 1 + deg_f + deg_g``. Raises: nothing.
    Source: Gauss-Hermite quadrature (Abramowitz & Stegun 25.4.46, probabilists' weight).
    """
    nodes, weights = np.polynomial.hermite_e.hermegauss(max(deg_f, deg_g) + 2)
    weights = weights / weights.sum()
    ex = np.array([np.sum(weights * (nodes + shift_x) ** k) for k in range(2 * deg_f + 1)])
    ez = np.array([np.sum(weights * (nodes + shift_z) ** k) for k in range(2 * deg_g + 1)])
    pf = [("x", k) for k in range(deg_f + 1)] + [("z", k) for k in range(1, deg_g + 1)]
    M = np.empty((len(pf), len(pf)))
    for i, (a, ka) in enumerate(pf):
        for j, (b, kb) in enumerate(pf):
            if a == b:
                M[i, j] = (ex if a == "x" else ez)[ka + kb]
            else:
                M[i, j] = (ex if a == "x" else ez)[ka] * (ex if b == "x" else ez)[kb]
    return M


def expected_excess_risk(design: np.ndarray, moments: np.ndarray, sigma: float) -> float:
    """``sigma^2 tr(M (Phi^T Phi)^{-1})``: least squares' excess risk under test moments ``M``,
    averaged over the noise, given the training design ``Phi`` (well-specified model).

    Shapes: ``design`` ``(n, p)``, ``moments`` ``(p, p)``. Units: squared target units.
    Raises: numpy's LinAlgError for a rank-deficient design. Source: standard OLS algebra
    (``theta_hat - theta = (Phi^T Phi)^{-1} Phi^T e``).
    """
    return float(sigma**2 * np.trace(np.linalg.solve(design.T @ design, moments)))


def shift_risks(
    n: int, deg_f: int, deg_g: int, sigma: float, shifts: list[float], rng: np.random.Generator
) -> dict[str, Any]:
    """One training design; the exact expected excess risk without shift and with each shift in
    ``x`` and in ``z``.

    Returns ``{"base": float, "x": [float], "z": [float]}`` (risks at each shift). Units:
    squared target units. Raises: LinAlgError for a degenerate design. Source: module docstring.
    """
    design = additive_features(rng.standard_normal(n), rng.standard_normal(n), deg_f, deg_g)
    base = expected_excess_risk(design, shifted_moments(deg_f, deg_g, 0.0, 0.0), sigma)
    return {
        "base": base,
        "x": [expected_excess_risk(design, shifted_moments(deg_f, deg_g, s, 0.0), sigma) for s in shifts],
        "z": [expected_excess_risk(design, shifted_moments(deg_f, deg_g, 0.0, s), sigma) for s in shifts],
    }


@attrs.define(kw_only=True)
class AdditiveShift(Evaluator):
    """Exact excess-risk increase of additive least squares under a mean shift of the simpler
    input ``x`` (degree ``deg_f``) against the same shift of the richer input ``z`` (``deg_g``).

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): per shift ``delta``: ``increase_x/<delta>``, ``increase_z/<delta>`` (means
    over ``num_designs`` training designs), ``gap/<delta>`` (z minus x, predicted > 0) with
    ``gap_low/<delta>``, ``gap_high/<delta>`` (95 % paired t interval over designs); ``base_risk``.
    ``tables["per_design"]``: one row per (shift, design, moved input) with columns ``shift``
    (``delta``), ``design`` (0 .. ``num_designs - 1``, the same designs at every shift), ``moved``
    (``"x"`` or ``"z"``: the input whose mean moved) and ``increase`` (that design's exact risk
    increase, shifted minus unshifted); the mean of ``increase`` over the designs of one
    (shift, moved) is ``increase_<moved>/<delta>``.

    Shapes:
        scalars.

    Units:
        squared target units (noise ``sigma`` in target units).

    Raises:
        ConfigError: ``deg_g <= deg_f`` or ``n_train`` too small for the features (at build time).

    Source: row 003:24, additive-model ERM under heterogeneous covariate shift (the shift in the
    simpler component costs less, by a Dudley-integral bound); exact OLS risks as in the module
    docstring.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"num_designs": 3}

    deg_f: int = param(1, doc="degree of the simpler class F (polynomials in x)", validator=int_at_least(1))
    deg_g: int = param(
        5, doc="degree of the richer class G (polynomials in z), > deg_f", validator=int_at_least(2)
    )
    n_train: int = param(100, doc="training points", validator=int_at_least(4))
    sigma: float = param(0.5, doc="noise standard deviation (target units)", validator=positive)
    shifts: list[float] = param(
        factory=lambda: [0.5, 1.0], doc="mean shifts delta of the moved input (units of x)"
    )
    num_designs: int = param(
        20, doc="independent training designs (paired across shifts)", validator=int_at_least(2)
    )

    def __attrs_post_init__(self) -> None:
        """Refuse a richer class that is not richer, or too few points (ConfigError)."""
        from quadriga.errors import ConfigError

        if self.deg_g <= self.deg_f:
            raise ConfigError(f"deg_g ({self.deg_g}) must exceed deg_f ({self.deg_f}).", key="deg_g")
        if self.n_train <= 2 * (1 + self.deg_f + self.deg_g):
            raise ConfigError("n_train must exceed twice the number of features.", key="n_train")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Draw the designs and compute the exact risks; see the class docstring."""
        from quadriga import stats
        from quadriga.seeding import numpy_rng

        del subject, reference
        rng = numpy_rng(generator)
        shifts = [float(s) for s in self.shifts]
        runs = [
            shift_risks(self.n_train, self.deg_f, self.deg_g, self.sigma, shifts, rng)
            for _ in range(self.num_designs)
        ]
        values: dict[str, float] = {"base_risk": float(np.mean([r["base"] for r in runs]))}
        per_design: list[dict[str, Any]] = []
        for i, s in enumerate(shifts):
            inc_x = np.array([r["x"][i] - r["base"] for r in runs])
            inc_z = np.array([r["z"][i] - r["base"] for r in runs])
            for moved, inc in (("z", inc_z), ("x", inc_x)):
                per_design += [
                    {"shift": s, "design": j, "moved": moved, "increase": float(v)} for j, v in enumerate(inc)
                ]
            ci = stats.interval(inc_z, "difference", inc_x, paired=True)
            values.update(
                {
                    f"increase_x/{s:g}": float(inc_x.mean()),
                    f"increase_z/{s:g}": float(inc_z.mean()),
                    f"gap/{s:g}": ci.estimate,
                    f"gap_low/{s:g}": ci.low,
                    f"gap_high/{s:g}": ci.high,
                }
            )
        return Metrics(values=values, tables={"per_design": per_design})
