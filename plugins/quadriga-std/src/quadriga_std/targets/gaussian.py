"""Gaussian and Gaussian-mixture targets with exact densities, scores, samples and moments.

Parameters are stored in float64; every method works in the dtype of its input ``x``
(float32 or float64). The mixture also gives the exact score of its law after the
forward (variance-preserving) diffusion x_t = sqrt(ab) x_0 + sqrt(1 - ab) eps, used by
diffusion samplers as an analytic score.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Target
from quadriga.validators import one_of, optional, positive_int

__all__ = ["PRECISION_ROUNDING", "PRESETS", "Gaussian", "GaussianMixture"]

_LOG_2PI = math.log(2.0 * math.pi)
#: a dense Gaussian is evaluated through its precision in a dtype whose machine epsilon times the
#: covariance's condition number is at most this (the quadratic form's relative rounding), else
#: through its eigenbasis
PRECISION_ROUNDING = 1e-4
PRESETS = ("4-mode-2d", "8-ring", "25-grid", "random")


def _matrix(value: Any, name: str, shape: tuple[int, ...] | None = None) -> torch.Tensor:
    try:
        t = torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"'{name}' must be a (nested) list of numbers: {exc}", key=name) from None
    if shape is not None and tuple(t.shape) != shape:
        raise ConfigError(f"'{name}' has shape {tuple(t.shape)}, expected {shape}.", key=name)
    if not torch.isfinite(t).all():
        raise ConfigError(f"'{name}' contains NaN or inf.", key=name)
    return t


def _eigh_pd(cov: torch.Tensor, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigen-decomposition of a symmetric positive-definite matrix, or a ConfigError."""
    if not torch.allclose(cov, cov.transpose(-1, -2), atol=1e-10, rtol=1e-8):
        raise ConfigError(f"'{name}' must be symmetric.", key=name)
    evals, evecs = torch.linalg.eigh(cov)
    if (evals <= 1e-12 * evals.abs().amax(-1, keepdim=True).clamp_min(1.0)).any():
        raise ConfigError(
            f"'{name}' is not positive definite (smallest eigenvalue "
            f"{float(evals.min()):.3g}); give a covariance with positive eigenvalues "
            "(for equicorrelation rho in dim d, -1/(d-1) < rho < 1).",
            key=name,
        )
    return evals, evecs


def _signed_permutation(evecs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """``(index, inverse, sign)`` when ``evecs`` is exactly a signed permutation matrix, else None.

    Column j of such a matrix has one non-zero entry, ``sign[j]`` (+1 or -1) in row ``index[j]``,
    so ``y @ evecs == y[:, index] * sign`` and ``w @ evecs.T == (w * sign)[:, inverse]`` exactly
    (each product of the matrix form is one entry times +-1 plus zeros). ``torch.linalg.eigh``
    returns such a matrix for a diagonal covariance (isotropic ones included): the eigenbasis is
    the coordinate axes, sorted by eigenvalue.
    """
    a = evecs.abs()
    if not bool(((a == 0) | (a == 1)).all()) or not bool((a.sum(0) == 1).all() and (a.sum(1) == 1).all()):
        return None
    index = a.argmax(0)
    sign = evecs[index, torch.arange(evecs.shape[1])]
    return index, torch.argsort(index), sign


def _check_equicorrelation(value: Any, d: int) -> float:
    """rho as a float, or a ConfigError unless I + rho (11^T - I) in dimension d is positive definite.

    Raises:
        ConfigError: rho not a finite number, or outside (-1/(d-1), 1) (eigenvalues 1 - rho and
            1 + (d-1) rho must be positive); for d = 1 the matrix is [1] and any finite rho is accepted.
    """
    try:
        rho = float(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"'equicorrelation' must be a number, got {value!r}.", key="equicorrelation"
        ) from None
    if not math.isfinite(rho):
        raise ConfigError(
            f"'equicorrelation' must be finite, got {rho!r}; give a correlation rho with "
            f"-1/(d-1) < rho < 1 (here d = {d}).",
            key="equicorrelation",
        )
    if d > 1 and not -1.0 / (d - 1) < rho < 1.0:
        raise ConfigError(
            f"'equicorrelation' = {rho} makes I + rho (11^T - I) not positive definite in "
            f"dimension {d}; choose {-1.0 / (d - 1):.4g} < rho < 1.",
            key="equicorrelation",
        )
    return rho


def _check_x(x: torch.Tensor, dim: int) -> None:
    if x.ndim != 2 or x.shape[1] != dim:
        raise ValueError(f"x must have shape [n, {dim}], got {tuple(x.shape)}")


@attrs.define(kw_only=True)
class Gaussian(Target):
    """Multivariate normal N(mean, covariance), normalised.

    Give ``mean`` and ``covariance`` as lists, or ``dim`` (mean 0) with ``equicorrelation``
    rho, giving covariance I + rho (1 1^T - I). Once built, ``dim`` is an int and ``mean``
    (``Tensor[d]``) and ``covariance`` (``Tensor[d, d]``) hold the exact float64 moments.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``sample(n) -> Tensor[n, d]`` (float64).
    Units: ``log_prob`` in nats; ``mean`` in units of x, ``covariance`` in units of x squared;
    ``equicorrelation`` is a correlation (dimensionless).

    Raises:
        ConfigError: missing/inconsistent ``mean``/``covariance``/``dim``, a covariance that is not
            symmetric positive definite, or an ``equicorrelation`` that is not finite or lies outside
            (-1/(d-1), 1) (the range in which I + rho (11^T - I) is positive definite).
        ValueError: ``x`` not of shape ``[n, d]`` (in ``log_prob``/``score``).

    A diagonal covariance (isotropic included; ``equicorrelation = 0`` gives I) is evaluated in
    O(d) per point: its eigenbasis is the coordinate axes, so the rotation is a reordering of the
    coordinates instead of a d x d product, with bit for bit the values of the product (each
    entry of it is one coordinate times 1 plus zeros). Other covariances are evaluated with the
    precision Sigma^{-1}, formed once: one d x d product gives both the score and the log density,
    where the dtype's machine epsilon times the condition number is at most
    :data:`PRECISION_ROUNDING` (float32: condition numbers up to about 840), else through the
    eigenbasis (two d x d products, the quadratic form a sum of positive terms).

    Source: the multivariate normal density (e.g. Bishop 2006, "Pattern Recognition and Machine
    Learning", sec. 2.3); the equicorrelated covariance has eigenvalues 1 + (d-1) rho and 1 - rho.
    """

    mean: Any = param(
        None,
        toml_type="list[float] | None",
        doc="mean vector (list of d numbers; default zeros); a Tensor[d] once built",
    )
    covariance: Any = param(
        None,
        toml_type="list[list[float]] | None",
        doc="covariance (d x d nested list; default from dim/equicorrelation); a Tensor[d, d] once built",
    )
    dim: Any = param(None, toml_type="int | None", doc="dimension d when mean/covariance are not given")
    equicorrelation: float = param(0.0, doc="rho: covariance I + rho (11^T - I) when only dim is given")
    #: ``log_prob_and_score(x)`` equals ``(log_prob(x), score(x))`` bit for bit (a kernel may call
    #: either); a subclass that changes one of the three sets it to False
    fused_is_exact: ClassVar[bool] = True
    _evals: Any = attrs.field(init=False, default=None)
    _evecs: Any = attrs.field(init=False, default=None)
    #: ``(index, inverse, sign)`` of an eigenvector matrix that is a signed permutation (diagonal
    #: covariance), or None; all three are None when it is the identity (no reordering needed)
    _axes: Any = attrs.field(init=False, default=None, repr=False, eq=False)
    #: ``-Sigma^{-1}`` in float64 (``Tensor[d, d]``, symmetric) when the covariance is dense, else None
    _neg_precision: Any = attrs.field(init=False, default=None, repr=False, eq=False)
    #: condition number kappa = largest / smallest eigenvalue of the covariance
    _condition: float = attrs.field(init=False, default=1.0, repr=False, eq=False)
    #: ``{(dtype, device): (mean, evecs, evals, (half log det, half d log 2 pi))}``: cast once per dtype
    _cast: dict[Any, Any] = attrs.field(init=False, factory=dict, repr=False)

    def __attrs_post_init__(self) -> None:
        d, mu, cov = self.dim, None, None
        if self.mean is not None:
            mu = _matrix(self.mean, "mean")
            if mu.ndim != 1:
                raise ConfigError("'mean' must be a flat list of d numbers.", key="mean")
            if d is not None and mu.shape[0] != int(d):
                raise ConfigError(f"'mean' has {mu.shape[0]} entries but dim is {d}.", key="mean")
            d = mu.shape[0]
        if self.covariance is not None:
            cov = _matrix(self.covariance, "covariance")
            if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
                raise ConfigError("'covariance' must be a square d x d nested list.", key="covariance")
            if d is not None and cov.shape[0] != int(d):
                raise ConfigError(
                    f"'covariance' is {cov.shape[0]}x{cov.shape[0]} but the dimension is {d}.",
                    key="covariance",
                )
            d = cov.shape[0]
        if d is None or int(d) < 1:
            raise ConfigError("give 'mean' and 'covariance', or a positive 'dim'.", key="dim")
        d = int(d)
        # a number always; the positive-definite range only when it builds the covariance
        rho = _check_equicorrelation(self.equicorrelation, d if cov is None else 1)
        if cov is None:
            cov = (1.0 - rho) * torch.eye(d, dtype=torch.float64) + rho * torch.ones(
                d, d, dtype=torch.float64
            )
        self._evals, self._evecs = _eigh_pd(cov, "covariance")
        axes: Any = _signed_permutation(self._evecs)
        if axes is not None and bool((axes[0] == torch.arange(d)).all()) and bool((axes[2] == 1).all()):
            axes = (None, None, None)  # the identity: y = x - mean
        self._axes = axes
        if axes is None:
            p = (self._evecs / self._evals) @ self._evecs.T
            self._neg_precision = -0.5 * (p + p.T)
        self._condition = float(self._evals.max() / self._evals.min())
        self.mean = torch.zeros(d, dtype=torch.float64) if mu is None else mu
        self.covariance, self.dim = cov, d

    @classmethod
    def from_moments(cls, mean: Any, covariance: Any) -> Gaussian:
        """Build from a mean ``Tensor[d]`` and covariance ``Tensor[d, d]``."""
        return cls(mean=torch.as_tensor(mean).tolist(), covariance=torch.as_tensor(covariance).tolist())

    def _factors(self, x: torch.Tensor) -> tuple[Any, ...]:
        """``(mean, neg_precision, rotation, evals, neg_evals, (half log det, half d log 2 pi))`` for ``x``.

        In ``x``'s dtype and device. ``mean`` is None when it is all +0.0 (``x - mean`` would be
        ``x`` bit for bit, signed zeros included). Exactly one of ``neg_precision`` and
        ``rotation`` is set:

        - ``neg_precision``, ``-Sigma^{-1}`` (``Tensor[d, d]``, symmetric, formed in float64 when
          the target is built), for a dense covariance whose condition number ``kappa`` keeps the
          precision's rounding small in this dtype: ``eps(dtype) * kappa <=``
          :data:`PRECISION_ROUNDING` (float64: kappa up to about 4.5e11; float32: up to about 840);
        - else ``rotation``: the d x d eigenvector matrix V (a dense covariance beyond that
          condition number: the quadratic form as a sum of positive terms in the eigenbasis), or,
          for a diagonal covariance, the tuple ``(index, inverse, sign)`` of V as a signed
          permutation (each None where it does nothing; O(d), bit for bit the product).

        ``neg_evals = -evals``: ``y / neg_evals`` is ``-(y / evals)`` bit for bit (division rounds
        the magnitude alone). Cast once and kept: a float32 chain would otherwise copy a d x d
        matrix on every call.
        """
        key = (x.dtype, x.device)
        found = self._cast.get(key)
        if found is None:
            like = {"dtype": x.dtype, "device": x.device}
            evals = self._evals.to(**like)
            consts = (0.5 * evals.log().sum(), 0.5 * self.dim * _LOG_2PI)
            neg_precision = rotation = None
            if self._axes is not None:
                index, inverse, sign = self._axes
                rotation = (
                    None if index is None else index.to(x.device),
                    None if inverse is None else inverse.to(x.device),
                    None if sign is None or bool((sign == 1).all()) else sign.to(**like),
                )
            elif torch.finfo(x.dtype).eps * self._condition <= PRECISION_ROUNDING:
                neg_precision = self._neg_precision.to(**like)
            else:
                rotation = self._evecs.to(**like)
            mean = self.mean.to(**like)
            plus_zero = bool((mean == 0).all()) and not bool(torch.signbit(mean).any())
            found = (None if plus_zero else mean, neg_precision, rotation, evals, -evals, consts)
            self._cast[key] = found
        return found

    @staticmethod
    def _rotate(z: torch.Tensor, rotation: Any) -> torch.Tensor:
        """``z @ V`` (into the eigenbasis); a reordering and signs when the covariance is diagonal."""
        if isinstance(rotation, torch.Tensor):
            return z @ rotation
        index, _, sign = rotation
        if index is not None:
            z = z.index_select(-1, index)
        return z if sign is None else z * sign

    @staticmethod
    def _unrotate(w: torch.Tensor, rotation: Any) -> torch.Tensor:
        """``w @ V^T`` (back from the eigenbasis); a reordering when the covariance is diagonal."""
        if isinstance(rotation, torch.Tensor):
            return w @ rotation.T
        _, inverse, sign = rotation
        if sign is not None:
            w = w * sign
        return w if inverse is None else w.index_select(-1, inverse)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density: ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        _check_x(x, self.dim)
        mean, neg_precision, rotation, evals, _, (half_logdet, half_const) = self._factors(x)
        z = x if mean is None else x - mean
        if neg_precision is not None:
            return 0.5 * (z * (z @ neg_precision)).sum(-1) - half_logdet - half_const
        y = self._rotate(z, rotation)
        return -0.5 * ((y * y) / evals).sum(-1) - half_logdet - half_const

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Score -Sigma^{-1}(x - mean): ``Tensor[n, d] -> Tensor[n, d]``."""
        _check_x(x, self.dim)
        mean, neg_precision, rotation, _, neg_evals, _ = self._factors(x)
        z = x if mean is None else x - mean
        if neg_precision is not None:
            return z @ neg_precision
        return self._unrotate(self._rotate(z, rotation) / neg_evals, rotation)

    def log_prob_and_score(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log_prob(x) Tensor[n], score(x) Tensor[n, d])`` from one product with the precision.

        Dense covariance (see :meth:`_factors` for the condition-number rule): ``r = (x - mean)
        (-Sigma^{-1})`` is the score and ``log p(x) = (x - mean) . r / 2 - log det(Sigma) / 2 -
        d log(2 pi) / 2``, one d x d product per call; the quadratic form, a dot product of two
        vectors, then rounds by about ``eps(dtype) * kappa`` relative to its terms. Beyond that
        condition number, and in float32 for kappa above about 840, two products through the
        eigenbasis (positive terms). Diagonal covariance: O(d), a reordering of the coordinates.
        :meth:`log_prob` and :meth:`score` are bit for bit these values (the same operations in
        the same order).

        Raises:
            ValueError: ``x`` not of shape ``[n, d]``.
        """
        _check_x(x, self.dim)
        mean, neg_precision, rotation, evals, neg_evals, (half_logdet, half_const) = self._factors(x)
        z = x if mean is None else x - mean
        if neg_precision is not None:
            r = z @ neg_precision
            return 0.5 * (z * r).sum(-1) - half_logdet - half_const, r
        y = self._rotate(z, rotation)
        return (
            -0.5 * ((y * y) / evals).sum(-1) - half_logdet - half_const,
            self._unrotate(y / neg_evals, rotation),
        )

    def evaluators(self, like: torch.Tensor) -> tuple[Any, Any]:
        """``(log_prob_and_score, score)`` as callables for inputs of ``like``'s dtype and device.

        Bit for bit :meth:`log_prob_and_score` and :meth:`score` (the same operations in the same
        order), with the cast factors looked up once and no shape check per call: for a sampler
        that evaluates many ``Tensor[n, d]`` batches of one dtype. The methods themselves where
        the covariance is diagonal (their reordering path).

        Raises:
            ValueError: ``like`` not of shape ``[n, d]`` (the callables do not check again).
        """
        _check_x(like, self.dim)
        mean, neg_precision, rotation, evals, neg_evals, (half_logdet, half_const) = self._factors(like)
        if neg_precision is not None:
            return self._precision_evaluators(mean, neg_precision, half_logdet, half_const)
        if not isinstance(rotation, torch.Tensor):
            return self.log_prob_and_score, self.score
        back = rotation.T

        def both(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            y = (x if mean is None else x - mean) @ rotation
            return -0.5 * ((y * y) / evals).sum(-1) - half_logdet - half_const, (y / neg_evals) @ back

        def score(x: torch.Tensor) -> torch.Tensor:
            return (((x if mean is None else x - mean) @ rotation) / neg_evals) @ back

        return both, score

    @staticmethod
    def _precision_evaluators(
        mean: Any, neg_precision: Any, half_logdet: Any, half_const: Any
    ) -> tuple[Any, Any]:
        """:meth:`evaluators` through ``-Sigma^{-1}`` (no centring when ``mean`` is None)."""
        if mean is None:

            def both(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                r = x @ neg_precision
                return 0.5 * (x * r).sum(-1) - half_logdet - half_const, r

            def score(x: torch.Tensor) -> torch.Tensor:
                return x @ neg_precision

            return both, score

        def both_centred(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            z = x - mean
            r = z @ neg_precision
            return 0.5 * (z * r).sum(-1) - half_logdet - half_const, r

        def score_centred(x: torch.Tensor) -> torch.Tensor:
            return (x - mean) @ neg_precision

        return both_centred, score_centred

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact samples ``Tensor[num_samples, d]`` float64, on ``generator``'s device."""
        z = torch.randn(
            int(num_samples), self.dim, generator=generator, dtype=torch.float64, device=generator.device
        )
        on = z.device
        return self.mean.to(on) + (z * self._evals.to(on).sqrt()) @ self._evecs.to(on).T


@attrs.define(kw_only=True)
class GaussianMixture(Target):
    """Gaussian mixture sum_k w_k N(mu_k, Sigma_k), normalised, with exact noised scores.

    Give ``weights``, ``means`` and ``covariances`` (or ``scale``: a number sigma for
    sigma^2 I, or a list of d standard deviations), or a ``preset``:
    ``4-mode-2d`` (means (+-radius, +-radius), radius 2, scale 0.6), ``8-ring`` (8 means on
    a circle of radius 4, scale 0.5), ``25-grid`` (means {-r,-r/2,0,r/2,r}^2, r=4, scale 0.3),
    ``random`` (``num_components`` means drawn uniformly on the sphere of ``radius`` (default 6)
    in ``dim`` dimensions by ``prepare(generator=...)``, scale 1). Presets have equal weights
    unless ``weights`` is given.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score``/``noised_score: Tensor[n, d] ->
    Tensor[n, d]``, ``component_log_probs: Tensor[n, d] -> Tensor[n, K]``, ``assign: Tensor[n, d] ->
    Tensor[n]`` (long), ``sample(n) -> Tensor[n, d]`` float64; ``mixture_weights: Tensor[K]``,
    ``component_means: Tensor[K, d]``, ``component_covariances: Tensor[K, d, d]``.
    Units: ``log_prob`` in nats; means, ``scale`` and ``radius`` in units of x, covariances in
    units of x squared; weights are fractions summing to one.

    Raises:
        ConfigError: inconsistent shapes, negative weights, unknown preset, a covariance
            that is not positive definite, ``random`` without a positive ``dim`` (when built).
        RuntimeError: densities or moments of the ``random`` preset before ``prepare``.
        ValueError: ``x`` not of shape ``[n, d]``; ``alpha_bar`` outside (0, 1] or of the wrong shape.

    Source: the Gaussian mixture density (e.g. Bishop 2006, "Pattern Recognition and Machine
    Learning", sec. 2.3.9); the noised score is that of the forward process of Ho et al. 2020 (eq. 4)
    applied to a mixture, see Li, Cai & Wei 2025 (arXiv 2504.05300).
    """

    weights: Any = param(
        None,
        toml_type="list[float] | None",
        doc="mixture weights (list of K non-negative numbers, normalised here)",
    )
    means: Any = param(None, toml_type="list[list[float]] | None", doc="component means (K x d nested list)")
    covariances: Any = param(
        None, toml_type="list[list[list[float]]] | None", doc="component covariances (K x d x d nested list)"
    )
    scale: Any = param(
        None,
        toml_type="float | list[float] | None",
        doc="component standard deviation: a number, or a list of d numbers (diagonal)",
    )
    preset: str | None = param(
        None,
        doc="one of '4-mode-2d', '8-ring', '25-grid', 'random'",
        validator=optional(one_of(PRESETS)),
    )
    dim: int | None = param(None, doc="dimension d of the 'random' preset (set from the means otherwise)")
    num_components: int | None = param(
        None,
        doc="number of components K of the 'random' preset (default 8; only that preset takes it)",
        validator=optional(positive_int),
    )
    radius: float | None = param(
        None, doc="preset size: half-distance of 4-mode-2d means, ring or sphere radius"
    )
    _w: Any = attrs.field(init=False, default=None)
    _mu: Any = attrs.field(init=False, default=None)
    _evals: Any = attrs.field(init=False, default=None)
    _evecs: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        if self.preset is None and self.means is None:
            raise ConfigError(
                f"give 'means' (with 'covariances' or 'scale') or a 'preset' (one of {', '.join(PRESETS)}).",
                key="means",
            )
        if self.num_components is not None and self.preset != "random":
            raise ConfigError(
                "'num_components' applies to preset 'random' only (the other presets and explicit "
                "'means' fix K); remove it.",
                key="num_components",
            )
        if self.preset == "random":
            if self.dim is None or int(self.dim) < 1:
                raise ConfigError("preset 'random' needs a positive 'dim'.", key="dim")
            self.dim = int(self.dim)
            return  # drawn in prepare()
        if self.preset is not None:
            means, sigma = self._preset_means()
            self._set(self.weights, means, None, sigma if self.scale is None else self.scale)
        else:
            self._set(self.weights, _matrix(self.means, "means"), self.covariances, self.scale)

    def _preset_means(self) -> tuple[torch.Tensor, float]:
        if self.preset == "4-mode-2d":
            r = 2.0 if self.radius is None else float(self.radius)
            return r * torch.tensor(
                [[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]], dtype=torch.float64
            ), 0.6
        if self.preset == "8-ring":
            r = 4.0 if self.radius is None else float(self.radius)
            ang = torch.arange(8, dtype=torch.float64) * (2 * math.pi / 8)
            return r * torch.stack([ang.cos(), ang.sin()], -1), 0.5
        r = 4.0 if self.radius is None else float(self.radius)
        g = torch.arange(-2, 3, dtype=torch.float64) * (r / 2)
        return torch.cartesian_prod(g, g), 0.3

    def _set(self, weights: Any, means: torch.Tensor, covariances: Any, scale: Any) -> None:
        if means.ndim != 2:
            raise ConfigError("'means' must be a K x d nested list.", key="means")
        k, d = means.shape
        if weights is None:
            w = torch.full((k,), 1.0 / k, dtype=torch.float64)
        else:
            w = _matrix(weights, "weights", (k,))
            if (w < 0).any() or w.sum() <= 0:
                raise ConfigError("'weights' must be non-negative with a positive sum.", key="weights")
            w = w / w.sum()
        if covariances is not None:
            cov = _matrix(covariances, "covariances", (k, d, d))
        else:
            if scale is None:
                raise ConfigError("give 'covariances' or 'scale'.", key="scale")
            s = _matrix(scale, "scale")
            if s.ndim == 0:
                s = s.expand(d)
            if s.shape != (d,) or (s <= 0).any():
                raise ConfigError(
                    f"'scale' must be a positive number or a list of {d} positive numbers.", key="scale"
                )
            cov = torch.diag_embed(s * s).expand(k, d, d).clone()
        if self.dim is not None and int(self.dim) != d:
            raise ConfigError(f"'dim' is {self.dim} but the means have {d} columns.", key="dim")
        self._w, self._mu, self.dim = w, means, d
        self._evals, self._evecs = _eigh_pd(cov, "covariances")

    def prepare(self, *, generator: torch.Generator) -> None:
        """Draw the means of the ``random`` preset (uniform on a sphere); other presets do nothing."""
        if self.preset != "random":
            return
        d, k = int(self.dim), 8 if self.num_components is None else int(self.num_components)
        r = 6.0 if self.radius is None else float(self.radius)
        # drawn on the generator's device, kept on the CPU like the other presets' parameters
        z = torch.randn(k, d, generator=generator, dtype=torch.float64, device=generator.device).cpu()
        means = r * z / z.norm(dim=-1, keepdim=True)
        self._set(None, means, None, 1.0 if self.scale is None else self.scale)

    def _ready(self) -> None:
        if self._mu is None:
            raise RuntimeError("the 'random' mixture is drawn by prepare(generator=...); call it first")

    # ----------------------------------------------------------------- properties
    @property
    def mixture_weights(self) -> torch.Tensor:
        """Weights ``Tensor[K]`` float64, summing to one."""
        self._ready()
        return self._w.clone()

    @property
    def component_means(self) -> torch.Tensor:
        """Means ``Tensor[K, d]`` float64."""
        self._ready()
        return self._mu.clone()

    @property
    def component_covariances(self) -> torch.Tensor:
        """Covariances ``Tensor[K, d, d]`` float64."""
        self._ready()
        return (self._evecs * self._evals.unsqueeze(-2)) @ self._evecs.transpose(-1, -2)

    @property
    def mean(self) -> torch.Tensor:
        """Exact mean sum_k w_k mu_k, ``Tensor[d]`` float64."""
        self._ready()
        return self._w @ self._mu

    @property
    def covariance(self) -> torch.Tensor:
        """Exact covariance sum_k w_k (Sigma_k + mu_k mu_k^T) - m m^T, ``Tensor[d, d]`` float64."""
        m = self.mean
        second = torch.einsum("k,kij->ij", self._w, self.component_covariances)
        second = second + torch.einsum("k,ki,kj->ij", self._w, self._mu, self._mu)
        return second - torch.outer(m, m)

    # ----------------------------------------------------------------- densities
    def _terms(self, x: torch.Tensor, alpha_bar: Any, need_grad: bool) -> tuple[torch.Tensor, Any]:
        """Per-component log w_k + log N_k(x) ``[n, K]`` and gradients ``[n, K, d]`` of log N_k."""
        self._ready()
        _check_x(x, self.dim)
        like = {"dtype": x.dtype, "device": x.device}
        evecs, evals, mu = self._evecs.to(**like), self._evals.to(**like), self._mu.to(**like)
        if alpha_bar is None:
            a = torch.ones((), **like)
        else:
            a = torch.as_tensor(alpha_bar, **like)
            if a.ndim == 1:
                if a.shape[0] != x.shape[0]:
                    raise ValueError(f"alpha_bar has {a.shape[0]} entries for {x.shape[0]} rows")
                a = a[:, None, None]
            elif a.ndim != 0:
                raise ValueError("alpha_bar must be a float or a Tensor[n]")
            if ((a <= 0) | (a > 1)).any():
                raise ValueError("alpha_bar must lie in (0, 1]")
        diff = x[:, None, :] - a.sqrt() * mu  # [n, K, d]
        y = torch.einsum("nkd,kde->nke", diff, evecs)  # eigen-coordinates
        c = a * evals + (1 - a)  # [n|1, K, d]
        c = c.expand(x.shape[0], *evals.shape)
        log_n = -0.5 * (y * y / c).sum(-1) - 0.5 * c.log().sum(-1) - 0.5 * self.dim * _LOG_2PI
        joint = self._w.to(**like).log() + log_n
        grad = -torch.einsum("nke,kde->nkd", y / c, evecs) if need_grad else None
        return joint, grad

    def component_log_probs(self, x: torch.Tensor) -> torch.Tensor:
        """log w_k + log N(x; mu_k, Sigma_k): ``Tensor[n, d] -> Tensor[n, K]``."""
        return self._terms(x, None, False)[0]

    def assign(self, x: torch.Tensor) -> torch.Tensor:
        """Bayes assignment argmax_k of the posterior component: ``Tensor[n, d] -> Tensor[n]`` long."""
        return self.component_log_probs(x).argmax(-1)

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised log density: ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        return torch.logsumexp(self.component_log_probs(x), -1)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Exact score: ``Tensor[n, d] -> Tensor[n, d]``."""
        return self.noised_score(x, None)

    def noised_log_prob(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """log density of x_t = sqrt(ab) x_0 + sqrt(1-ab) eps, x_0 ~ mixture, eps ~ N(0, I).

        Args:
            x: ``Tensor[n, d]``.
            alpha_bar: float in (0, 1] or ``Tensor[n]`` (one per row); 1 gives ``log_prob``.

        Returns:
            ``Tensor[n]``: log sum_k w_k N(x; sqrt(ab) mu_k, ab Sigma_k + (1-ab) I) (nats).

        Raises:
            ValueError: alpha_bar outside (0, 1] or of the wrong shape.
        """
        return torch.logsumexp(self._terms(x, alpha_bar, False)[0], -1)

    def noised_score(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """Exact score of the noised law: sum_k r_k(x) C_k^{-1} (sqrt(ab) mu_k - x).

        Args:
            x: ``Tensor[n, d]``.
            alpha_bar: float in (0, 1] or ``Tensor[n]``; ``None`` or 1 gives ``score``.

        Returns:
            ``Tensor[n, d]`` with C_k = ab Sigma_k + (1-ab) I and r_k the posterior
            responsibilities (softmax of log w_k + log N_k). Source: research note section c.

        Raises:
            ValueError: alpha_bar outside (0, 1] or of the wrong shape.
        """
        joint, grad = self._terms(x, alpha_bar, True)
        resp = (
            joint - torch.logsumexp(joint, -1, keepdim=True)
        ).exp()  # torch.softmax is slow for float64 on CPU
        return (resp.unsqueeze(-1) * grad).sum(1)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact samples ``Tensor[num_samples, d]`` float64 on ``generator``'s device (component by
        multinomial, then Gaussian)."""
        self._ready()
        n, on = int(num_samples), generator.device
        comp = torch.multinomial(self._w.to(on), n, replacement=True, generator=generator)
        z = torch.randn(n, self.dim, generator=generator, dtype=torch.float64, device=on)
        z = z * self._evals.to(on)[comp].sqrt()
        return self._mu.to(on)[comp] + torch.einsum("nde,ne->nd", self._evecs.to(on)[comp], z)
