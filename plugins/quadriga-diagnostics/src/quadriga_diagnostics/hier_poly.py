"""``diag-hier-poly``: samples needed to reach a test error for a layerwise-trained three-layer
network, kernel ridge regression and a two-layer network on hierarchical polynomials ``g(p(x))``,
and the exponents of those sample counts in the dimension ``d``.

Row 003:87 (Wang, Nichani & Lee, "Learning hierarchical polynomials with three-layer neural
networks", ICLR 2024): for ``h = g o p`` with ``p`` of degree ``k`` and ``g`` of degree ``q``, a
three-layer network trained layerwise learns ``h`` from ``O(d^k)`` samples (its main result;
``O(d^2)`` for quadratic ``p``), while kernel methods need ``Theta~(d^{kq})``. Only the abstract was
available to us: theorem, algorithm and equation numbers are not cited. Mechanism (abstract: "during
the initial stage of training the network performs feature learning to recover the feature p"):
the first stage's gradient step
returns the degree-``k`` projection of ``h``, which is ``c p`` when ``E[g'(p)] != 0``; the last
layer then fits the one-dimensional ``g``.

Test bed (``k = 2``): inputs uniform on the sphere of radius ``sqrt(d)`` (``d`` even);
``p(x) = sqrt((d + 2) / (2 d^2)) sum_i s_i x_i^2`` with ``s = (+1, -1, +1, ...)`` (a traceless
quadratic form: a degree-2 spherical harmonic with variance exactly 1); link
``g(z) = (z + He_q(z) / sqrt(q!)) / sqrt(2)`` (``E[g'] != 0``, the paper's condition). Because
``A = diag(s)`` has ``A^m`` equal to ``I`` or ``A``, the degree-``<= 2`` part of ``h`` is exactly
``c p + const``: the first stage has an exact target. On Gaussian inputs (the paper's setting)
``P_2 h`` also carries the radial term ``sum_i (x_i^2 - 1)`` with relative variance ``O(1/d)``,
which at ``d = 8`` is not negligible; the sphere removes it (our choice, noted here).

Arms (the same samples, test set and tuning budget for each; paired by seed):

- ``three-layer``: the paper's layerwise scheme with sample splitting: fixed random
  first layer ``phi_j(x) = (v_j . x)^2 - 1`` (``v_j`` uniform unit vectors, ``width`` units); on
  the first half the second layer's pre-activation ``u = <w, phi(x)>`` is trained on ``y`` (by
  default to its ridge optimum; ``first_stage = "one-step"`` is the paper's single gradient step
  from zero, the kernel smoother ``u(x) = (1 / (n_1 m)) sum_n y_n <phi(x_n), phi(x)>``, whose
  constant is worse at these sizes: in a one-seed pilot at d = 6 ... 12 it needed 700-3400 samples
  for error 0.3, the ridge version 180-1050 for error 0.2); then
  ridge on the other half for the outer layer over ``ReLU(a_i u + b_i)`` (``a_i = +-1``, ``b_i``
  uniform on [-3, 3], ``outer_width`` units). Both versions estimate the degree-2 projection
  ``c p`` in the first stage, the paper's mechanism.
- ``kernel``: ``sklearn.kernel_ridge.KernelRidge`` with the RBF kernel, ``gamma = 1 / (2 d)``.
- ``two-layer``: ``sklearn.neural_network.MLPRegressor`` (one ReLU hidden layer, Adam), trained
  end to end.

Each arm tries ``len(penalties)`` settings of its one penalty (outer ridge, kernel ``alpha``, MLP
``alpha``), picked on a validation set; the relative test error of the pick
(``mean (f - y)^2 / var(y)`` on the test set) is recorded along a geometric grid of ``n``.
"""

from __future__ import annotations

from math import factorial
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import param
from quadriga.artifacts import Metrics
from quadriga.interfaces import Evaluator
from quadriga.validators import int_at_least, positive

__all__ = [
    "ARMS",
    "HierarchicalPolynomial",
    "hier_target",
    "kernel_ridge_errors",
    "quadratic_feature",
    "sample_counts",
    "samples_to_error",
    "sphere_inputs",
    "three_layer_errors",
    "two_layer_errors",
]

#: the arms, in report order
ARMS = ("three-layer", "kernel", "two-layer")


def sphere_inputs(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """``n`` points uniform on the sphere of radius ``sqrt(dim)`` (so ``E[x_i^2] = 1``).

    Shapes: returns ``(n, dim)``. Raises: nothing. Source: normalised Gaussians (Muller 1959).
    """
    z = rng.standard_normal((n, dim))
    return np.sqrt(dim) * z / np.linalg.norm(z, axis=1, keepdims=True)


def quadratic_feature(x: np.ndarray) -> np.ndarray:
    """``p(x) = sqrt((d + 2) / (2 d^2)) sum_i s_i x_i^2``, ``s_i = (-1)^i`` (``i`` from 0).

    On the sphere of radius ``sqrt(d)`` with ``d`` even: mean 0 and variance 1 exactly
    (``E x_i^4 = 3d / (d + 2)``, ``E x_i^2 x_j^2 = d / (d + 2)``); a degree-2 spherical harmonic.

    Shapes: ``x`` ``(n, d)``; returns ``(n,)``. Raises: nothing. Source: module docstring.
    """
    d = x.shape[1]
    signs = np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    return np.sqrt((d + 2) / (2 * d**2)) * (x**2 @ signs)


def hier_target(x: np.ndarray, link_degree: int) -> np.ndarray:
    """``h = g(p(x))``, ``g(z) = (z + He_q(z) / sqrt(q!)) / sqrt(2)``, ``q = link_degree``.

    Shapes: ``x`` ``(n, d)``; returns ``(n,)``. Units: target units (variance
    ``1/2 + Var(p^2) / 4``, below 1 on the sphere: 0.75 at d = 6).
    Raises: nothing. Source: Wang, Nichani & Lee 2024, abstract (``h = g o p``); probabilists'
    Hermite polynomials (Abramowitz & Stegun 22).
    """
    from numpy.polynomial.hermite_e import hermeval

    z = quadratic_feature(x)
    coef = np.zeros(link_degree + 1)
    coef[link_degree] = 1.0 / np.sqrt(factorial(link_degree))
    return (z + hermeval(z, coef)) / np.sqrt(2.0)


def _relative_error(pred: np.ndarray, y: np.ndarray) -> float:
    """``mean (pred - y)^2 / var(y)``."""
    return float(np.mean((pred - y) ** 2) / np.var(y))


def three_layer_errors(
    x: np.ndarray,
    y: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    *,
    width: int,
    outer_width: int,
    penalties: list[float],
    rng: np.random.Generator,
    first_stage: str = "ridge",
) -> tuple[float, float]:
    """Layerwise three-layer network (Wang, Nichani & Lee 2024, layerwise training): relative test error
    of the penalty picked on the validation set, and the squared correlation of the learnt
    feature ``u`` with ``p`` on the test set (at that penalty).

    Stage 1 (first half of the samples, ``n_1`` points) on the random first layer
    ``phi_j(x) = (v_j . x)^2 - 1``: ``first_stage = "one-step"`` is the paper's single gradient
    step on the second layer from zero, ``u(x) = (1 / (n_1 m)) sum_n (y_n - ybar) <phi(x_n),
    phi(x)>`` (a kernel smoother; no penalty); ``"ridge"`` trains the same linear pre-activation
    to its ridge optimum ``w = (Phi^T Phi + lam n_1 I)^{-1} Phi^T (y - ybar)`` (the same estimand,
    the degree-2 projection ``c p``, with less variance at finite ``n``). Stage 2 (second half):
    ridge on ``[1, ReLU(a_i u~ + b_i)]`` (``u~`` standardised on the stage-2 half), penalty
    ``lam n_2``. Each penalty ``lam`` is used in both stages (``len(penalties)`` settings).

    Shapes: ``x`` ``(n, d)``, ``y`` ``(n,)``; validation and test likewise.
    Units: relative mean squared error; squared correlation in [0, 1].
    Raises: ValueError for an unknown ``first_stage``. Source: the paper's layerwise
    training and first-stage feature learning (abstract).
    """
    if first_stage not in ("ridge", "one-step"):
        raise ValueError(f"first_stage must be 'ridge' or 'one-step', got {first_stage!r}.")
    n1 = len(y) // 2
    v = rng.standard_normal((width, x.shape[1]))
    v /= np.linalg.norm(v, axis=1, keepdims=True)

    def phi(a: np.ndarray) -> np.ndarray:
        return (a @ v.T) ** 2 - 1.0

    f1, f2_in, f_val_in, f_test_in = phi(x[:n1]), phi(x[n1:]), phi(x_val), phi(x_test)
    yc = y[:n1] - y[:n1].mean()
    a = rng.choice([-1.0, 1.0], outer_width)
    b = rng.uniform(-3.0, 3.0, outer_width)
    gram1, rhs1 = f1.T @ f1, f1.T @ yc
    p_test = quadratic_feature(x_test)
    best = (np.inf, np.inf, np.nan)
    for lam in penalties:
        if first_stage == "ridge":
            w = np.linalg.solve(gram1 + lam * n1 * np.eye(width), rhs1)
        else:
            w = rhs1 / (n1 * width)
        u2, u_val, u_test = f2_in @ w, f_val_in @ w, f_test_in @ w
        mu, sd = u2.mean(), u2.std() + 1e-12

        def outer(u: np.ndarray) -> np.ndarray:
            z = (u - mu) / sd  # noqa: B023 (used inside this iteration only)
            return np.column_stack([np.ones(len(u)), np.maximum(a * z[:, None] + b, 0.0)])

        f2, f_val, f_test = outer(u2), outer(u_val), outer(u_test)
        coef = np.linalg.solve(f2.T @ f2 + lam * len(f2) * np.eye(f2.shape[1]), f2.T @ y[n1:])
        val = _relative_error(f_val @ coef, y_val)
        if val < best[0]:
            r = np.corrcoef(u_test, p_test)[0, 1]
            best = (val, _relative_error(f_test @ coef, y_test), float(r**2))
    return best[1], best[2]


def kernel_ridge_errors(
    x: np.ndarray,
    y: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    *,
    penalties: list[float],
) -> float:
    """Kernel ridge regression (``sklearn.kernel_ridge.KernelRidge`` on the RBF kernel
    ``exp(-|x - x'|^2 / (2d))``, computed once by ``sklearn.metrics.pairwise.rbf_kernel`` and
    passed precomputed): relative test error of the ``alpha`` picked on the validation set.

    Shapes: as :func:`three_layer_errors`. Units: relative mean squared error.
    Raises: nothing. Source: the kernel baseline of Wang, Nichani & Lee 2024 (abstract, the
    ``Theta(d^{kq})`` lower bound for rotation-invariant kernels).
    """
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import rbf_kernel

    gamma = 1.0 / (2 * x.shape[1])
    k_train, k_val, k_test = (rbf_kernel(a, x, gamma=gamma) for a in (x, x_val, x_test))
    best = (np.inf, np.inf)
    mean = y.mean()
    for alpha in penalties:
        model = KernelRidge(alpha=alpha, kernel="precomputed").fit(k_train, y - mean)
        val = _relative_error(model.predict(k_val) + mean, y_val)
        if val < best[0]:
            best = (val, _relative_error(model.predict(k_test) + mean, y_test))
    return best[1]


def two_layer_errors(
    x: np.ndarray,
    y: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    *,
    width: int,
    penalties: list[float],
    epochs: int,
    seed: int,
) -> float:
    """Two-layer ReLU network trained end to end (``sklearn.neural_network.MLPRegressor``, Adam,
    batch 64, ``epochs`` passes): relative test error of the L2 ``alpha`` picked on validation.

    Shapes: as :func:`three_layer_errors`. Units: relative mean squared error.
    Raises: nothing (convergence warnings are silenced: the epoch budget is the design).
    Source: the two-layer baseline of Wang, Nichani & Lee 2024 (abstract:
    guarantees for two-layer networks need a low-rank target).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    best = (np.inf, np.inf)
    for alpha in penalties:
        model = MLPRegressor(
            hidden_layer_sizes=(width,),
            alpha=alpha,
            batch_size=64,
            learning_rate_init=1e-3,
            max_iter=epochs,
            n_iter_no_change=epochs,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, y)
        val = _relative_error(model.predict(x_val), y_val)
        if val < best[0]:
            best = (val, _relative_error(model.predict(x_test), y_test))
    return best[1]


def samples_to_error(ns: np.ndarray, errors: np.ndarray, eps: float) -> float:
    """Samples at which the error first reaches ``eps``, interpolated linearly in ``log n``
    between the last grid point above ``eps`` and the first at or below (``nan``: never).

    Shapes: ``ns``, ``errors`` ``(k,)``, ``ns`` increasing. Units: samples.
    Raises: nothing. Source: the usual "samples to target" read-out (log-linear interpolation).
    """
    hit = np.nonzero(np.asarray(errors) <= eps)[0]
    if not len(hit):
        return float("nan")
    j = int(hit[0])
    if j == 0:
        return float(ns[0])
    e0, e1 = errors[j - 1], errors[j]
    t = (e0 - eps) / (e0 - e1)
    return float(np.exp(np.log(ns[j - 1]) + t * (np.log(ns[j]) - np.log(ns[j - 1]))))


def sample_counts(
    dim: int,
    *,
    link_degree: int,
    eps: float,
    n_grid: list[int],
    penalties: list[float],
    width_factor: float,
    outer_width: int,
    mlp_width: int,
    mlp_epochs: int,
    n_eval: int,
    seed: int,
    arms: tuple[str, ...] = ARMS,
    first_stage: str = "ridge",
) -> dict[str, Any]:
    """One paired replicate at one dimension: each arm's error along ``n_grid`` (stopping at the
    first grid point at or below ``eps``) and its samples-to-``eps``.

    The training sets are nested prefixes of one stream (paired across arms and ``n``); the
    validation and test sets have ``n_eval`` points each. The three-layer width is
    ``ceil(width_factor * d^2)``.

    Returns ``{"n_eps": {arm: float}, "errors": {arm: [float]}, "feature_r2": float}``
    (``feature_r2``: the three-layer feature's squared correlation with ``p`` at the largest ``n``
    it trained on). Units: samples; relative MSE. Raises: nothing. Source: module docstring.
    """
    rng = np.random.default_rng(seed)
    n_max = max(n_grid)
    x_all = sphere_inputs(rng, n_max + 2 * n_eval, dim)
    y_all = hier_target(x_all, link_degree)
    x, y = x_all[:n_max], y_all[:n_max]
    x_val, y_val = x_all[n_max : n_max + n_eval], y_all[n_max : n_max + n_eval]
    x_test, y_test = x_all[n_max + n_eval :], y_all[n_max + n_eval :]
    ns = np.array(sorted(n_grid))
    out: dict[str, Any] = {"n_eps": {}, "errors": {}, "feature_r2": float("nan")}
    width = int(np.ceil(width_factor * dim**2))
    for arm in arms:
        errs: list[float] = []
        for n in ns:
            xs, ys = x[:n], y[:n]
            if arm == "three-layer":
                err, r2 = three_layer_errors(
                    xs,
                    ys,
                    x_val,
                    y_val,
                    x_test,
                    y_test,
                    width=width,
                    outer_width=outer_width,
                    penalties=penalties,
                    rng=np.random.default_rng([seed, int(n)]),
                    first_stage=first_stage,
                )
                out["feature_r2"] = r2
            elif arm == "kernel":
                err = kernel_ridge_errors(xs, ys, x_val, y_val, x_test, y_test, penalties=penalties)
            else:
                err = two_layer_errors(
                    xs,
                    ys,
                    x_val,
                    y_val,
                    x_test,
                    y_test,
                    width=mlp_width,
                    penalties=penalties,
                    epochs=mlp_epochs,
                    seed=seed,
                )
            errs.append(err)
            if err <= eps:
                break
        out["errors"][arm] = errs
        out["n_eps"][arm] = samples_to_error(ns[: len(errs)], np.array(errs), eps)
    return out


@attrs.define(kw_only=True)
class HierarchicalPolynomial(Evaluator):
    """Samples to relative test error ``eps`` on ``h = g o p`` (``p`` quadratic, ``g`` of degree
    ``link_degree``) for the layerwise three-layer network, kernel ridge and a two-layer network,
    across dimensions, with the fitted exponents of ``n_eps`` in ``d``.

    Input: none (``subject`` and ``reference`` are ignored; the test bed of the module docstring).

    Returns (``Metrics``): ``n_eps/<arm>/<d>`` (geometric mean over replicates; samples; a
    replicate that misses ``eps`` on the whole grid counts the largest size, a lower bound),
    ``reached/<arm>/<d>`` (share of replicates reaching ``eps`` within the grid),
    ``exponent/<arm>`` (log-log slope of the mean ``n_eps`` against ``d``, with
    ``exponent_low/<arm>``, ``exponent_high/<arm>``: 95 % delta-method t interval,
    :func:`quadriga.stats.loglog_slope`; with one replicate the least-squares slope's t interval;
    read it with ``reached``: censored counts flatten it),
    ``predicted_exponent/three-layer`` (``k = 2``) and ``predicted_exponent/kernel`` (``2 q``),
    ``feature_r2/<d>`` (squared correlation of the learnt feature with ``p``, mean over
    replicates), ``min_feature_r2`` (its smallest value over every (d, replicate)),
    ``reached/<arm>`` (share of all (d, replicate) reaching ``eps``); table ``per_seed``, one row
    per (arm, replicate): ``subject`` (the arm), ``seed`` (the replicate, 0 ... replicates - 1, the
    same seeds for every arm) and ``exponent`` (that replicate's least-squares slope of log
    ``n_eps`` against log ``d``, censored counts as above; the mean over replicates of the slopes
    is the slope of the mean log ``n_eps``, i.e. of log of the geometric means ``n_eps/<arm>/<d>``).

    Shapes:
        scalars; ``per_seed`` has ``len(arms) * replicates`` rows.

    Units:
        samples; exponents dimensionless; errors relative to the target's variance.

    Raises:
        ConfigError: an odd dimension, fewer than three dimensions, or ``eps`` outside (0, 1)
            (at build time).

    Source: Wang, Nichani & Lee 2024 (ICLR), "Learning hierarchical polynomials with three-layer
    neural networks", main result (``O(d^k)`` for the layerwise three-layer net) against the kernel
    lower bound ``Theta~(d^{kq})`` (abstract; numbered results not available to us).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {}
    check_params: ClassVar[dict] = {
        "dims": [4, 6, 8],
        "n_grid": [32, 64, 128],
        "replicates": 2,
        "arms": ["three-layer", "kernel"],
    }

    dims: list[int] = param(factory=lambda: [6, 8, 10, 12], doc="even input dimensions d")
    link_degree: int = param(2, doc="degree q of the link g", validator=int_at_least(2))
    eps: float = param(0.2, doc="target relative test error", validator=positive)
    n_grid: list[int] = param(
        factory=lambda: [round(64 * 2 ** (j / 2)) for j in range(14)],
        doc="training sizes tried (a geometric grid; the first reaching eps is refined by interpolation)",
    )
    penalties: list[float] = param(
        factory=lambda: [1e-4, 1e-2, 1.0], doc="penalties tried by every arm (the tuning budget)"
    )
    width_factor: float = param(4.0, doc="three-layer first-layer width / d^2", validator=positive)
    outer_width: int = param(64, doc="three-layer outer ReLU units", validator=int_at_least(2))
    mlp_width: int = param(256, doc="two-layer hidden units", validator=int_at_least(2))
    mlp_epochs: int = param(60, doc="two-layer Adam epochs", validator=int_at_least(1))
    n_eval: int = param(1000, doc="validation and test points, each", validator=int_at_least(10))
    replicates: int = param(3, doc="paired replicates (seeds) per d", validator=int_at_least(1))
    arms: list[str] = param(factory=lambda: list(ARMS), doc="arms to run (subset of ARMS)")
    first_stage: str = param(
        "ridge",
        doc="three-layer stage 1: 'ridge' (second layer trained to its ridge optimum) or 'one-step' "
        "(the paper's single gradient step)",
    )

    def __attrs_post_init__(self) -> None:
        """Refuse odd dimensions, too few dimensions, eps outside (0, 1), unknown arms."""
        from quadriga.errors import ConfigError

        if any(int(d) % 2 or int(d) < 2 for d in self.dims):
            raise ConfigError("dims must be even and >= 2 (p is traceless).", key="dims")
        if len(self.dims) < 3:
            raise ConfigError("give at least three dims for an exponent fit.", key="dims")
        if not 0 < self.eps < 1:
            raise ConfigError(f"eps must be in (0, 1), got {self.eps}.", key="eps")
        if self.first_stage not in ("ridge", "one-step"):
            raise ConfigError(
                f"first_stage must be 'ridge' or 'one-step', got {self.first_stage!r}.", key="first_stage"
            )
        bad = [a for a in self.arms if a not in ARMS]
        if bad:
            raise ConfigError(f"unknown arms {bad}; use some of {list(ARMS)}.", key="arms")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run every dimension on paired seeds; see the class docstring."""
        from quadriga import stats
        from quadriga.seeding import derive_seed, numpy_rng

        del subject, reference
        base = int(numpy_rng(generator).integers(2**31))
        dims = [int(d) for d in self.dims]
        arms = tuple(self.arms)
        table: dict[str, list[list[float]]] = {a: [] for a in arms}
        values: dict[str, float] = {
            "predicted_exponent/three-layer": 2.0,
            "predicted_exponent/kernel": 2.0 * self.link_degree,
        }
        r2: list[float] = []
        for d in dims:
            runs = [
                sample_counts(
                    d,
                    link_degree=self.link_degree,
                    eps=self.eps,
                    n_grid=[int(n) for n in self.n_grid],
                    penalties=[float(p) for p in self.penalties],
                    width_factor=self.width_factor,
                    outer_width=self.outer_width,
                    mlp_width=self.mlp_width,
                    mlp_epochs=self.mlp_epochs,
                    n_eval=self.n_eval,
                    seed=derive_seed(base, f"hier-poly/{d}/{r}"),
                    arms=arms,
                    first_stage=self.first_stage,
                )
                for r in range(self.replicates)
            ]
            if "three-layer" in arms:
                values[f"feature_r2/{d}"] = float(np.mean([r["feature_r2"] for r in runs]))
                r2.extend(float(r["feature_r2"]) for r in runs)
            for a in arms:
                n_eps = np.array([r["n_eps"][a] for r in runs])
                values[f"reached/{a}/{d}"] = float(np.mean(np.isfinite(n_eps)))
                n_eps = np.where(np.isfinite(n_eps), n_eps, max(self.n_grid))  # censored
                table[a].append(list(n_eps))
                values[f"n_eps/{a}/{d}"] = float(np.exp(np.mean(np.log(n_eps))))
        if r2:
            values["min_feature_r2"] = float(np.min(r2))
        per_seed: list[dict[str, Any]] = []
        for a in arms:
            ys = np.array(table[a])
            ci = stats.loglog_slope(dims, ys if self.replicates > 1 else ys[:, 0])
            values[f"exponent/{a}"], values[f"exponent_low/{a}"] = ci.estimate, ci.low
            values[f"exponent_high/{a}"] = ci.high
            values[f"reached/{a}"] = float(np.mean([values[f"reached/{a}/{d}"] for d in dims]))
            per_seed.extend(
                {"subject": a, "seed": r, "exponent": float(stats.loglog_slope(dims, ys[:, r]).estimate)}
                for r in range(self.replicates)
            )
        return Metrics(values=values, tables={"per_seed": per_seed})
