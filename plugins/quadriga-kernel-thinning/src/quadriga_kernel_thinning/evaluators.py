"""Evaluators against exact Gaussian(-mixture) targets: ``mmd-to-target``, ``integration-error``
and ``mmd-rate``.

The first two compare one or several ``Samples`` subjects with a target whose mixture form is known
(:func:`quadriga_kernel_thinning.embedding.mixture_of`), so the reference is P itself, not a
finite sample from it. ``mmd-rate`` runs the study of MMD against the input size n for every
thinner on exact draws from such a target (one run, every replicate and n inside it). Values are
written ``"<subject>/<metric>"``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, Target, named
from quadriga.params import param
from quadriga.validators import int_at_least, optional, positive, positive_int_list
from quadriga_kernel_thinning.embedding import _np, mixture_of, mmd_between, mmd_to_mixture
from quadriga_kernel_thinning.figures import coreset_figure

__all__ = [
    "METHODS",
    "IntegrationError",
    "MMDRate",
    "MMDToTarget",
    "integrand_expectations",
    "integrand_values",
    "thinners",
]


def _subjects(subject: Any) -> dict[str, Samples]:
    subjects = named(subject)
    for name, s in subjects.items():
        if not isinstance(s, Samples):
            raise ConfigError(
                f"subject '{name}' must be a Samples artifact, got {type(s).__name__}.", key="subject"
            )
    return subjects


def _mixture(reference: Any, who: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mix = mixture_of(reference)
    if mix is None:
        raise ConfigError(
            f"'{who}' needs a Gaussian or Gaussian-mixture target (quadriga-std 'gaussian' or "
            f"'gaussian-mixture') as reference, got {type(reference).__name__}; for other targets "
            "use quadriga-std's 'mmd' against an exact or long-run sample.",
            key="reference",
        )
    return mix


@attrs.define(kw_only=True)
class MMDToTarget(Evaluator):
    """MMD between each subject's (weighted) empirical measure and the target P, exactly.

    Kernel: Gaussian ``exp(-||x - y||^2 / (2 sigma^2))``. With a Gaussian or Gaussian-mixture
    target, MMD(Q_n, P) uses the closed-form ``Pk`` and ``PPk`` (see
    :mod:`quadriga_kernel_thinning.embedding`); with a ``Samples`` reference it is the
    empirical V-statistic MMD to that sample.

    Returns:
        ``Metrics`` with ``"<subject>/mmd"`` and ``"<subject>/num_points"``,
        ``tables["summary"]`` (one row per subject) and, for d = 2 targets and ``plot = true``,
        ``figures["coreset"]``: each subject's points over the target's density contours.

    Shapes:
        each subject ``Samples.x: Tensor[n, d]`` with optional ``log_weights: Tensor[n]``; a target
        reference as mixture weights ``[K]``, means ``[K, d]`` and covariances ``[K, d, d]``; a
        ``Samples`` reference ``x: Tensor[m, d]``; every value is a scalar (float).

    Units:
        ``mmd`` is dimensionless (the kernel is bounded by 1); ``bandwidth`` and ``info["bandwidth"]``
        are in the units of x; ``num_points`` is a count.

    Raises:
        ConfigError: a subject that is not ``Samples``; a target reference that is not quadriga-std's
            ``gaussian`` or a Gaussian mixture (no closed-form embedding); a subject whose dimension
            differs from the reference's; ``bandwidth`` not positive (when built).

    Source: Dwivedi & Mackey, Kernel Thinning (JMLR 2024; arXiv 2105.05842): MMD to P as the
    quality measure; Gaussian kernel mean embeddings in closed form.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Samples,),
        "reference": (Target, Samples),
    }

    bandwidth: float | None = param(
        None,
        doc="Gaussian kernel bandwidth sigma (units of x); None: "
        "sqrt(2 tr Cov_P), i.e. sqrt(2 d) for N(0, I_d)",
        validator=optional(positive),
    )
    plot: bool = param(True, doc="draw the subjects over the density contours when d = 2")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Exact MMD of each subject to ``reference`` (see the class docstring for shapes and errors)."""
        subjects = _subjects(subject)
        if isinstance(reference, Samples):
            ref_x = _np(reference.x)
            sigma = self.bandwidth or math.sqrt(2.0 * float(np.trace(np.atleast_2d(np.cov(ref_x.T)))))
            mix = None
        else:
            mix = _mixture(reference, "mmd-to-target")
            w, mu, cov = mix
            total_cov = (
                np.einsum("k,kij->ij", w, cov)
                + np.einsum("k,ki,kj->ij", w, mu, mu)
                - np.outer(w @ mu, w @ mu)
            )
            sigma = self.bandwidth or math.sqrt(2.0 * float(np.trace(total_cov)))
        dim = mix[1].shape[1] if mix is not None else ref_x.shape[1]
        values: dict[str, float] = {}
        rows = []
        for name, s in subjects.items():
            if s.dim != dim:
                raise ConfigError(
                    f"subject '{name}' has dimension {s.dim} but the reference has {dim}.", key="subject"
                )
            if mix is not None:
                value = mmd_to_mixture(s.x, *mix, sigma, log_weights=s.log_weights)
            else:
                value = mmd_between(s.x, ref_x, sigma, log_wx=s.log_weights, log_wy=reference.log_weights)
            values[f"{name}/mmd"] = value
            values[f"{name}/num_points"] = float(s.num_samples)
            rows.append(
                {
                    "subject": name,
                    "component": s.info.get("component", ""),
                    "mmd": value,
                    "num_points": s.num_samples,
                }
            )
        figures = {}
        if self.plot and dim == 2 and hasattr(reference, "log_prob"):
            figures["coreset"] = coreset_figure(subjects, reference, values)
        return Metrics(
            values=values,
            tables={"summary": rows},
            figures=figures,
            info={"bandwidth": sigma, "exact": mix is not None},
        )


def integrand_values(x: np.ndarray) -> np.ndarray:
    """The three test functions at ``x[n, d]``: ``[n, 3]`` with columns
    ``x_1``, ``||x||^2`` and ``cos(omega^T x)``, ``omega = (1, ..., 1) / sqrt(d)``."""
    omega = np.ones(x.shape[1]) / math.sqrt(x.shape[1])
    return np.stack([x[:, 0], np.einsum("ij,ij->i", x, x), np.cos(x @ omega)], axis=1)


def integrand_expectations(w: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Exact ``E_P`` of :func:`integrand_values` under ``P = sum_k w_k N(mu_k, S_k)``: ``[3]``.

    ``E x_1 = sum w_k mu_k1``; ``E ||x||^2 = sum w_k (||mu_k||^2 + tr S_k)``;
    ``E cos(omega^T x) = sum w_k cos(omega^T mu_k) exp(-omega^T S_k omega / 2)`` (the Gaussian
    characteristic function).
    """
    omega = np.ones(mu.shape[1]) / math.sqrt(mu.shape[1])
    first = float(w @ mu[:, 0])
    second = float(w @ (np.einsum("ki,ki->k", mu, mu) + np.trace(cov, axis1=1, axis2=2)))
    third = float(w @ (np.cos(mu @ omega) * np.exp(-0.5 * np.einsum("i,kij,j->k", omega, cov, omega))))
    return np.array([first, second, third])


_NAMES = ("x1", "sqnorm", "cos")


@attrs.define(kw_only=True)
class IntegrationError(Evaluator):
    """Absolute errors of the (weighted) sample means of three test functions against their exact
    expectations under a Gaussian or Gaussian-mixture target.

    Test functions: ``x_1``, ``||x||^2`` (units of x squared) and ``cos(omega^T x)`` with
    ``omega = 1 / sqrt(d)`` (see :func:`integrand_values`).

    Returns:
        ``Metrics`` with ``"<subject>/error_x1"``, ``"<subject>/error_sqnorm"``, ``"<subject>/error_cos"``
        and their sum ``"<subject>/error_total"``; ``info["exact"]`` holds the three expectations.

    Shapes:
        each subject ``Samples.x: Tensor[n, d]`` with optional ``log_weights: Tensor[n]``; the test
        functions give ``[n, 3]``; the target as weights ``[K]``, means ``[K, d]``, covariances
        ``[K, d, d]``; every value is a scalar (float).

    Units:
        ``error_x1`` in units of x, ``error_sqnorm`` in units of x squared, ``error_cos``
        dimensionless; ``error_total`` is their plain sum (mixed units, for ranking only).

    Raises:
        ConfigError: a subject that is not ``Samples``, a reference that is not quadriga-std's
            ``gaussian`` or a Gaussian mixture, or a subject whose dimension differs from the target's.

    Source: Dwivedi & Mackey, Kernel Thinning (JMLR 2024; arXiv 2105.05842): integration error
    |Q_n f - P f| of test functions, which MMD bounds for f in the kernel's RKHS.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Integration errors of each subject (see the class docstring)."""
        subjects = _subjects(subject)
        w, mu, cov = _mixture(reference, "integration-error")
        exact = integrand_expectations(w, mu, cov)
        values: dict[str, float] = {}
        rows = []
        for name, s in subjects.items():
            if s.dim != mu.shape[1]:
                raise ConfigError(
                    f"subject '{name}' has dimension {s.dim} but the target has {mu.shape[1]}.", key="subject"
                )
            x = _np(s.x)
            if s.log_weights is None:
                q = np.full(len(x), 1.0 / len(x))
            else:
                lw = _np(s.log_weights)
                q = np.exp(lw - lw.max())
                q /= q.sum()
            errors = np.abs(q @ integrand_values(x) - exact)
            row = {"subject": name}
            for key, err in zip(_NAMES, errors, strict=False):
                values[f"{name}/error_{key}"] = float(err)
                row[f"error_{key}"] = float(err)
            values[f"{name}/error_total"] = float(errors.sum())
            rows.append(row)
        return Metrics(
            values=values,
            tables={"summary": rows},
            info={"exact": dict(zip(_NAMES, exact.tolist(), strict=False))},
        )


#: the thinners of ``mmd-rate``, in report order (``subject`` of its rows)
METHODS = ("iid sqrt(n)", "standard thinning", "root KT", "target KT", "KT+", "KT-Compress++")


def thinners(bandwidth: float | None, g: int = 4) -> dict[str, Any]:
    """``{method: sampler}`` for :data:`METHODS`, each thinning n points to about sqrt(n).

    i.i.d. sqrt(n) (uniform subsample) and standard thinning (quadriga-std), root KT, target KT,
    KT+ and target KT with Compress++ (oversampling ``g``), all with the Gaussian kernel of
    bandwidth ``bandwidth`` (units of x; None: the sampler's default).
    """
    from quadriga_std.samplers.simple import RandomSubsample, StandardThinning

    from quadriga_kernel_thinning.thinning import KernelThinning

    return {
        "iid sqrt(n)": RandomSubsample(),
        "standard thinning": StandardThinning(),
        "root KT": KernelThinning(variant="root", bandwidth=bandwidth),
        "target KT": KernelThinning(variant="target", bandwidth=bandwidth),
        "KT+": KernelThinning(variant="kt+", bandwidth=bandwidth),
        "KT-Compress++": KernelThinning(variant="target", compress=True, g=g, bandwidth=bandwidth),
    }


@attrs.define(kw_only=True)
class MMDRate(Evaluator):
    """MMD to P of every thinner's coreset against the input size n, on exact draws from P.

    For each replicate ``r`` and each n in ``num_samples``, n exact draws from the reference P
    (seed ``derive_seed(base, f"replicate{r}/n{n}")``, ``base`` the stage generator's initial
    seed) are thinned to about sqrt(n) points by every method of :data:`METHODS` (each method's
    seed derived from that seed and its name, so every method of one replicate thins the same
    points), and the coreset's MMD to P is computed exactly (Gaussian kernel, bandwidth sigma, for
    both thinning and the MMD).

    Returns:
        ``Metrics`` with, per method, ``"<method>/slope"``: the slope of log mean-over-replicates
        MMD against log n with its t interval (:func:`quadriga.stats.loglog_slope`, delta method,
        Welch df) in ``intervals``; ``"<method>/replicate_slope"``: the mean of the per-replicate
        slopes; ``"<method>/mmd_at_n<n>"``: the mean MMD at each n. ``tables["per_replicate"]``:
        one row per (method, replicate) with ``subject`` (the method), ``replicate``, ``slope``
        (that replicate's least-squares slope of log MMD on log n) and ``mmd_n<n>`` for each n;
        ``tables["summary"]``: one row per method. ``figures["mmd_vs_n"]``: MMD against n, log-log.
        ``info``: ``bandwidth``, ``num_samples``, ``dim``.

    Shapes:
        the reference's draws ``Tensor[n, d]``; coresets ``Tensor[~sqrt(n), d]``; every value a
        scalar (float).

    Units:
        MMD and slopes are dimensionless; ``bandwidth`` in units of x.

    Raises:
        ConfigError: a reference that is not quadriga-std's ``gaussian`` or a Gaussian mixture;
            fewer than 3 sizes or a non-positive size, ``replicates`` below 2, an unknown method
            (when built).

    Source: Dwivedi & Mackey, Kernel Thinning (JMLR 2024; arXiv 2105.05842), Thm. 1 and Fig. 2:
    KT's MMD to P decays like n^(-1/2) up to log factors, i.i.d. sqrt(n) points' like n^(-1/4).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"reference": (Target,)}

    num_samples: list[int] = param(
        factory=lambda: [16, 64, 256],
        doc="input sizes n (4^m for Compress++), at least three",
        validator=positive_int_list,
    )
    replicates: int = param(3, doc="independent input sets per n", validator=int_at_least(2))
    methods: list[str] = param(factory=lambda: list(METHODS), doc="thinners to run (some of METHODS)")
    bandwidth: float | None = param(
        None,
        doc="Gaussian kernel bandwidth sigma (units of x) for thinning and MMD; None: sqrt(2 tr Cov_P), "
        "i.e. sqrt(2 d) for N(0, I_d)",
        validator=optional(positive),
    )
    g: int = param(4, doc="Compress++ oversampling parameter", validator=int_at_least(0))

    def __attrs_post_init__(self) -> None:
        """Check the sizes and methods; raises ConfigError naming the bad one."""
        if len(self.num_samples) < 3:
            raise ConfigError("give at least three sizes num_samples for a slope.", key="num_samples")
        bad = [m for m in self.methods if m not in METHODS]
        if bad or not self.methods:
            raise ConfigError(f"unknown methods {bad}; use some of {list(METHODS)}.", key="methods")

    def evaluate(self, subject: Any = None, reference: Any = None, *, generator: Any) -> Metrics:
        """Run the study on ``reference`` (see the class docstring)."""
        from quadriga import stats
        from quadriga.seeding import derive_seed, make_generator
        from quadriga_kernel_thinning.figures import rate_figure

        del subject
        w, mu, cov = _mixture(reference, "mmd-rate")
        total_cov = (
            np.einsum("k,kij->ij", w, cov) + np.einsum("k,ki,kj->ij", w, mu, mu) - np.outer(w @ mu, w @ mu)
        )
        sigma = self.bandwidth or math.sqrt(2.0 * float(np.trace(total_cov)))
        ns = [int(n) for n in self.num_samples]
        methods = [m for m in METHODS if m in self.methods]
        samplers = {m: s for m, s in thinners(sigma, self.g).items() if m in methods}
        base = int(generator.initial_seed())
        curves = {m: [[] for _ in ns] for m in methods}  # [method][n index][replicate]
        for r in range(self.replicates):
            for i, n in enumerate(ns):
                root = derive_seed(base, f"replicate{r}/n{n}")
                draws = Samples(x=reference.sample(n, generator=make_generator(root)))
                for m, sampler in samplers.items():
                    coreset = sampler.sample(draws, generator=make_generator(derive_seed(root, m)))
                    curves[m][i].append(mmd_to_mixture(coreset.x, w, mu, cov, sigma))
        lx = np.log(np.asarray(ns, float))
        values: dict[str, float] = {}
        intervals: dict[str, dict[str, Any]] = {}
        per_replicate: list[dict[str, Any]] = []
        summary: list[dict[str, Any]] = []
        for m in methods:
            arr = np.asarray(curves[m], float)  # [n, replicate]
            ci = stats.loglog_slope(ns, arr)
            values[f"{m}/slope"] = ci.estimate
            intervals[f"{m}/slope"] = {"low": ci.low, "high": ci.high, "level": ci.level, "method": ci.method}
            slopes = [float(np.polyfit(lx, np.log(arr[:, r]), 1)[0]) for r in range(self.replicates)]
            values[f"{m}/replicate_slope"] = float(np.mean(slopes))
            for i, n in enumerate(ns):
                values[f"{m}/mmd_at_n{n}"] = float(arr[i].mean())
            for r, s in enumerate(slopes):
                per_replicate.append(
                    {
                        "subject": m,
                        "replicate": r,
                        "slope": s,
                        **{f"mmd_n{n}": float(arr[i, r]) for i, n in enumerate(ns)},
                    }
                )
            summary.append(
                {
                    "subject": m,
                    "slope": ci.estimate,
                    "slope_low": ci.low,
                    "slope_high": ci.high,
                    "replicate_slope": values[f"{m}/replicate_slope"],
                    **{f"mmd_n{n}": values[f"{m}/mmd_at_n{n}"] for n in ns},
                }
            )
        dim = int(mu.shape[1])
        fig = rate_figure(
            ns,
            curves,
            title=f"P in d = {dim}, Gaussian kernel sigma = {sigma:.3g}, {self.replicates} replicates",
        )
        return Metrics(
            values=values,
            tables={"per_replicate": per_replicate, "summary": summary},
            figures={"mmd_vs_n": fig},
            info={"bandwidth": sigma, "num_samples": ns, "dim": dim},
            intervals=intervals,
        )
