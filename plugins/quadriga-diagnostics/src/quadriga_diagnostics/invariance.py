"""``diag-invariance``: does a learner commute with linear maps of the predictors and the targets?

A learner ``L`` (data -> predictor ``f``) commutes with a pair of maps ``x -> A^T x`` (predictors,
as rows ``X -> X A``) and ``y -> B^T y`` (targets, ``Y -> Y B``) when the predictor fitted on the
mapped data is the mapped predictor: ``f_{XA, YB}(x A) = f_{X, Y}(x) B`` for every test row ``x``.
Least squares and ridge are invariant to permutations of the training examples. Least squares
commutes with every invertible ``A`` and ``B`` (``(XA)^+ Y B = A^{-1} X^+ Y B`` for full-column-rank
``X``); ridge commutes with every invertible ``B`` (it is linear in ``Y``) but with
``A`` only when ``A`` is orthogonal (``|A^{-1} w|`` is not ``|w|`` otherwise), permutations
included. The checker refits any registered learner on mapped data and measures the relative
deviation ``max |f_T(X A) - f(X) B| / max |f(X) B|`` per map family.

Source: the invariance and equivariance properties of linear least squares and ridge regression
(row 003:98 of the catalogue: "learned function under permutations / invertible linear /
orthogonal maps of predictors and targets"; Hoerl & Kennard 1970 for ridge; the algebra is in
the module docstring above).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.components import as_component
from quadriga.interfaces import Evaluator, Learner
from quadriga.validators import int_at_least, one_of, positive

__all__ = [
    "FAMILIES",
    "TOLERANCE",
    "InvarianceCheck",
    "invariance_deviations",
    "predicted_commutes",
    "random_map",
]

#: map families: (side, kind)
FAMILIES = (
    ("examples", "permutation"),
    ("predictors", "permutation"),
    ("predictors", "orthogonal"),
    ("predictors", "invertible"),
    ("targets", "permutation"),
    ("targets", "orthogonal"),
    ("targets", "invertible"),
)
#: relative deviation below which a learner is said to commute with a map (the row's 1e-8)
TOLERANCE = 1e-8


def random_map(kind: str, size: int, rng: np.random.Generator, *, condition: float = 10.0) -> np.ndarray:
    """A random ``size x size`` map of one family.

    - ``permutation``: a uniformly random permutation matrix (not the identity for ``size > 1``);
    - ``orthogonal``: Haar-distributed (QR of a Gaussian matrix with the sign correction of
      Mezzadri 2007);
    - ``invertible``: ``U diag(s) V^T`` with ``U``, ``V`` Haar and ``s`` log-spaced from 1 to
      ``condition`` (so its condition number is exactly ``condition``).

    Shapes: returns ``(size, size)``. Units: dimensionless.
    Raises: ValueError for an unknown kind. Source: Mezzadri 2007 (Notices AMS), sec. 5.
    """

    def haar() -> np.ndarray:
        q, r = np.linalg.qr(rng.standard_normal((size, size)))
        return q * np.sign(np.diag(r))

    if kind == "permutation":
        perm = rng.permutation(size)
        while size > 1 and np.array_equal(perm, np.arange(size)):
            perm = rng.permutation(size)
        return np.eye(size)[perm]
    if kind == "orthogonal":
        return haar()
    if kind == "invertible":
        s = np.geomspace(1.0, condition, size)
        return haar() @ np.diag(s) @ haar().T
    raise ValueError(f"unknown map kind '{kind}'")


def predicted_commutes(learner: Any, side: str, kind: str) -> float:
    """The theory's answer for the learners it covers: 1.0 (commutes), 0.0 (does not) or NaN.

    Least squares (``least-squares``, or ``ridge-regression`` with penalty 0): every family.
    Both learners are invariant to permutations of the examples.
    Ridge with a positive penalty: every target map and the orthogonal predictor maps
    (permutations included), not the general invertible predictor maps. Other learners: NaN.

    Raises: nothing. Source: the identities of the module docstring.
    """
    from quadriga_std.randomdesign.learners import LeastSquares, Ridge

    if isinstance(learner, LeastSquares) or (isinstance(learner, Ridge) and learner.penalty == 0):
        return 1.0
    if isinstance(learner, Ridge):
        return 0.0 if (side, kind) == ("predictors", "invertible") else 1.0
    return float("nan")


def _predict(fitted: Any, X: np.ndarray) -> np.ndarray:
    """Predictions of a ``Fitted`` as a float64 ``(m, k)`` array (``predict`` or a callable model)."""
    fn = fitted.predict if fitted.predict is not None else fitted.model
    try:
        out = fn(X)
    except TypeError:
        import torch

        out = fn(torch.as_tensor(X))
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    out = np.asarray(out, dtype=float)
    return out.reshape(len(X), -1)


def invariance_deviations(
    learner: Any,
    X: np.ndarray,
    Y: np.ndarray,
    X_test: np.ndarray,
    rng: np.random.Generator,
    *,
    condition: float = 10.0,
    generator: Any = None,
) -> dict[str, float]:
    """Relative deviation ``max |f_T(X_test A) - f(X_test) B| / max |f(X_test) B|`` per family.

    For each family of :data:`FAMILIES` one random map (:func:`random_map`) is drawn; the other
    side's map is the identity. The learner is refitted on
    ``quadriga_std.randomdesign.task.ArrayRegression`` data.

    Shapes: ``X`` ``(n, d)``, ``Y`` ``(n, k)``, ``X_test`` ``(m, d)``; returns
    ``{"<side>/<kind>": float}`` (``examples/permutation`` permutes the rows of ``X`` and ``Y``
    together). Units: dimensionless.
    Raises: whatever the learner raises on the data. Source: the module docstring.
    """
    from quadriga_std.randomdesign.task import ArrayRegression

    from quadriga.progress import StageProgress

    def fit(Xa: np.ndarray, Ya: np.ndarray) -> Any:
        return learner.fit(
            ArrayRegression(X_train=Xa, y_train=Ya), generator=generator, progress=StageProgress()
        )

    base = _predict(fit(X, Y), X_test)
    out: dict[str, float] = {}
    for side, kind in FAMILIES:
        if side == "examples":
            perm = rng.permutation(len(X))
            mapped = _predict(fit(X[perm], Y[perm]), X_test)
            out[f"{side}/{kind}"] = float(np.max(np.abs(mapped - base)) / np.max(np.abs(base)))
            continue
        if side == "predictors":
            A, B = random_map(kind, X.shape[1], rng, condition=condition), np.eye(Y.shape[1])
        else:
            A, B = np.eye(X.shape[1]), random_map(kind, Y.shape[1], rng, condition=condition)
        mapped = _predict(fit(X @ A, Y @ B), X_test @ A)
        expected = base @ B
        out[f"{side}/{kind}"] = float(np.max(np.abs(mapped - expected)) / np.max(np.abs(expected)))
    return out


@attrs.define(kw_only=True)
class InvarianceCheck(Evaluator):
    """Relative deviation from commutation of a learner with permutations of the examples and
    permutation, orthogonal and invertible maps of the predictors and the targets, beside the
    theory's prediction.

    Data: ``quadriga_std.randomdesign`` Gaussian designs (``spectrum``), ``num_outputs`` targets
    from a planted signal plus noise 0.5; one map per family and draw.

    Input: none (``subject`` and ``reference`` are ignored); the learner is a parameter, any
    registered learner that fits a dataset's ``"train"`` split and returns a ``Fitted`` with
    ``predict`` (or a callable model).

    Returns (``Metrics``): ``deviation/<side>/<kind>`` (largest over draws), ``commutes/<side>/<kind>``
    (1.0 when the deviation is <= ``tolerance``), ``predicted/<side>/<kind>`` (1, 0 or NaN, from
    :func:`predicted_commutes`), ``agreement`` (share of families where measured and predicted
    agree; NaN when the learner has no prediction); table ``families``.

    Shapes:
        scalars; the table has 7 rows.

    Units:
        deviations relative to the largest absolute prediction (dimensionless).

    Raises:
        ConfigError: a learner that is not a learner, non-positive sizes, ``condition < 1``.

    Source: row 003:98 (learned function under maps of predictors and targets); least squares
    commutes with invertible maps, ridge (Hoerl & Kennard 1970) only with orthogonal predictor maps.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {"num_draws": 1}

    learner: Learner = param(
        "least-squares",
        converter=as_component(Learner),
        doc='the learner under test, e.g. "least-squares" or { use = "ridge-regression", penalty = 0.1 }',
    )
    spectrum: str = param(
        "isotropic",
        doc="design spectrum: isotropic, equicorrelated or power-law",
        validator=one_of(("isotropic", "equicorrelated", "power-law")),
    )
    dim: int = param(8, doc="number of predictors d", validator=int_at_least(2))
    num_outputs: int = param(3, doc="number of targets k", validator=int_at_least(2))
    n_train: int = param(
        50, doc="training rows (n > d for a unique least-squares fit)", validator=int_at_least(2)
    )
    n_test: int = param(20, doc="test rows", validator=int_at_least(1))
    num_draws: int = param(5, doc="independent (data, maps) draws", validator=int_at_least(1))
    condition: float = param(10.0, doc="condition number of the invertible maps (>= 1)", validator=positive)
    tolerance: float = param(TOLERANCE, doc="relative deviation counted as commuting", validator=positive)

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Draw data and maps ``num_draws`` times; see the class docstring."""
        from quadriga_std.randomdesign.task import RandomDesign

        from quadriga.seeding import numpy_rng

        del subject, reference
        rng = numpy_rng(generator)
        worst = {f"{s}/{k}": 0.0 for s, k in FAMILIES}
        for _ in range(self.num_draws):
            ds = RandomDesign(
                spectrum=self.spectrum,
                dim=self.dim,
                n_train=self.n_train,
                n_test=self.n_test,
                num_outputs=self.num_outputs,
            )
            ds.prepare(generator=generator)
            X, Y = ds.split("train")
            X_test, _ = ds.split("test")
            dev = invariance_deviations(
                self.learner, X, Y, X_test, rng, condition=self.condition, generator=generator
            )
            worst = {k: max(worst[k], v) for k, v in dev.items()}
        values: dict[str, float] = {}
        table = []
        agree = []
        for side, kind in FAMILIES:
            key = f"{side}/{kind}"
            commutes = float(worst[key] <= self.tolerance)
            pred = predicted_commutes(self.learner, side, kind)
            values[f"deviation/{key}"] = worst[key]
            values[f"commutes/{key}"] = commutes
            values[f"predicted/{key}"] = pred
            if not np.isnan(pred):
                agree.append(commutes == pred)
            table.append(
                {"side": side, "map": kind, "deviation": worst[key], "commutes": commutes, "predicted": pred}
            )
        values["agreement"] = float(np.mean(agree)) if agree else float("nan")
        return Metrics(values=values, tables={"families": table})
