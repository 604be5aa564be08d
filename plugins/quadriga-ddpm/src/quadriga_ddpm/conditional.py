"""``conditional-gaussian-mixture``: a class-conditional Gaussian mixture, its exact scores and guided laws.

A mixture sum_k pi_k N(mu_k, Sigma_k) whose components carry class labels y_k. Conditioning on the
class c keeps the components with y_k = c (weights renormalised): p(x | c). Both p(x) and p(x | c) are
quadriga-std ``GaussianMixture`` targets, so their exact noised scores (``noised_score``) are std's;
this module adds only the labels and the guided law.

The guided law of weight w >= -1 is the geometric mixture

    p_w(x) = p(x | c)^{1 + w} p(x)^{-w} / Z_w,

the law classifier-free guidance aims at (w = 0: p(x | c); w = -1: p(x)). It is not a Gaussian
mixture for w not in {0, -1}; its normaliser Z_w is computed numerically on a grid (d <= 2):
``grid_size`` points per axis over the component means +- ``grid_margin`` standard deviations,
Z_w = sum over the grid of the unnormalised density times the cell area (the midpoint rule; the
density is smooth, so the error is far below the sampling error of any sample set compared with
it). Note that p_w is the *yardstick* of guided sampling, not the t = 0 law of a guided sampler: the
guided score (1 + w) s_t(x | c) - w s_t(x) is the score of the noised densities' geometric mixture,
which is not the noised p_w.

The target itself (``log_prob``, ``score``, ``noised_score``, ``sample``) is p(x | c), so an unguided
sampler on it samples the conditional law; guided samplers read ``conditional_target`` and
``unconditional_target`` (:mod:`quadriga_ddpm.guidance`), and :class:`GuidedDensityDistance`
(:mod:`quadriga_ddpm.guided_distance`) compares their samples with p_w at their w.

Preset ``3-class-2d``: 3 classes x 2 modes in 2-D, standard deviation 0.6, overlapping (the test bed
of the research note on characteristic guidance, section 5(d)).

Source: Ho & Salimans 2022 (arXiv 2207.12598), sec. 3 (the guided law p(x | c) p(c | x)^w ∝
p(x | c)^{1 + w} p(x)^{-w}); Zheng & Lan 2024, "Characteristic guidance" (arXiv 2312.07586), sec. 4.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Target
from quadriga.validators import int_at_least, non_negative_int, positive

__all__ = ["PRESETS_CONDITIONAL", "ConditionalGaussianMixture", "GuidedGrid"]

#: preset name -> (means, labels, scale)
PRESETS_CONDITIONAL: dict[str, tuple[list[list[float]], list[int], float]] = {
    "3-class-2d": (
        [[-1.5, 0.0], [1.0, 1.2], [0.0, 1.0], [1.8, -0.6], [-0.6, -1.2], [-1.6, 1.4]],
        [0, 0, 1, 1, 2, 2],
        0.6,
    ),
}


@attrs.frozen
class GuidedGrid:
    """The guided law p_w on a grid: cell centres, normalised log masses and the grid geometry.

    Attributes:
        w: the guidance weight.
        points: ``Tensor[G, d]`` cell centres (G = grid_size^d), row-major over the axes.
        log_mass: ``Tensor[G]`` log probability of each cell (logsumexp = 0, nats).
        log_norm: log Z_w (nats), Z_w = integral of p(x | c)^{1 + w} p(x)^{-w}.
        lower, upper: ``Tensor[d]`` the grid's extent (cell centres at the ends, units of x).
        width: ``Tensor[d]`` cell width per axis (units of x).
        size: points per axis.
    """

    w: float
    points: torch.Tensor
    log_mass: torch.Tensor
    log_norm: float
    lower: torch.Tensor
    upper: torch.Tensor
    width: torch.Tensor
    size: int

    def log_density(self) -> torch.Tensor:
        """``Tensor[G]`` normalised log density at the cell centres (nats, units of 1 / x^d)."""
        return self.log_mass - self.width.log().sum()

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Draws ``Tensor[n, d]`` float64: a cell ∝ its mass, then uniform inside the cell."""
        n, d = int(num_samples), int(self.points.shape[1])
        idx = torch.multinomial(self.log_mass.exp(), n, replacement=True, generator=generator)
        u = torch.rand(n, d, generator=generator, dtype=torch.float64) - 0.5
        return self.points[idx] + u * self.width


def _labels(value: Any, k: int) -> list[int]:
    if not isinstance(value, (list, tuple)) or len(value) != k:
        raise ConfigError(f"'labels' must be a list of {k} integers (one class per component).", key="labels")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value):
        raise ConfigError(f"'labels' must be non-negative integers, got {list(value)}.", key="labels")
    return [int(v) for v in value]


@attrs.define(kw_only=True)
class ConditionalGaussianMixture(Target):
    """Class-conditional Gaussian mixture p(x | c) with p(x), exact noised scores and the guided law.

    Give ``preset`` (``3-class-2d``) or ``means`` with ``labels`` (and ``scale`` or
    ``covariances``, optional ``weights``), and the class ``label`` c conditioned on.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]`` (of p(x | c), nats); ``score``/``noised_score``:
    ``Tensor[n, d] -> Tensor[n, d]``; ``sample(n) -> Tensor[n, d]`` (exact draws of p(x | c));
    ``guided_log_prob(x, w) -> Tensor[n]`` (normalised p_w, nats); ``guided_grid(w)``: :class:`GuidedGrid`.

    Raises:
        ConfigError: no means and no preset, labels of the wrong length, a label c that no
            component carries (when built); a guided grid in d > 2 (when asked).

    Source: see the module docstring (Ho & Salimans 2022, sec. 3; std's ``GaussianMixture``).
    """

    check_params: ClassVar[dict[str, Any]] = {"preset": "3-class-2d", "grid_size": 100}

    preset: str | None = param(
        None, doc="'3-class-2d' (3 classes x 2 modes, overlapping) or None (give means and labels)"
    )
    means: Any = param(None, toml_type="list[list[float]] | None", doc="component means (K x d nested list)")
    labels: Any = param(None, toml_type="list[int] | None", doc="class of each component (K integers >= 0)")
    scale: Any = param(None, toml_type="float | list[float] | None", doc="component standard deviation")
    covariances: Any = param(
        None, toml_type="list[list[list[float]]] | None", doc="component covariances (K x d x d)"
    )
    weights: Any = param(None, toml_type="list[float] | None", doc="mixture weights pi_k (normalised here)")
    label: int = param(0, doc="the class c conditioned on", validator=non_negative_int)
    grid_size: int = param(
        400, doc="grid points per axis for the guided law's normaliser (count)", validator=int_at_least(50)
    )
    grid_margin: float = param(
        7.0,
        doc="the grid spans the means +- grid_margin component standard deviations",
        validator=positive,
    )
    _cond: Any = attrs.field(init=False, default=None, repr=False)
    _uncond: Any = attrs.field(init=False, default=None, repr=False)
    _grids: dict = attrs.field(init=False, factory=dict, repr=False)

    def __attrs_post_init__(self) -> None:
        from quadriga_std.targets.gaussian import GaussianMixture

        if self.preset is not None:
            if self.preset not in PRESETS_CONDITIONAL:
                raise ConfigError(
                    f"unknown preset '{self.preset}'; use one of {', '.join(PRESETS_CONDITIONAL)}.",
                    key="preset",
                )
            means, labels, sd = PRESETS_CONDITIONAL[self.preset]
            means = means if self.means is None else self.means
            labels = labels if self.labels is None else self.labels
            scale = sd if self.scale is None and self.covariances is None else self.scale
        elif self.means is None:
            raise ConfigError("give 'means' with 'labels', or a 'preset' ('3-class-2d').", key="means")
        else:
            means, labels, scale = self.means, self.labels, self.scale
        try:
            self._uncond = GaussianMixture(
                means=means, scale=scale, covariances=self.covariances, weights=self.weights
            )
        except TypeError as exc:
            raise ConfigError(f"bad mixture parameters: {exc}", key="means") from exc
        k = int(self._uncond.mixture_weights.shape[0])
        labs = _labels(labels, k)
        keep = [i for i, y in enumerate(labs) if y == int(self.label)]
        if not keep:
            raise ConfigError(
                f"no component has label {self.label}; the labels are {sorted(set(labs))}.", key="label"
            )
        w = self._uncond.mixture_weights
        self._cond = GaussianMixture(
            means=self._uncond.component_means[keep].tolist(),
            covariances=self._uncond.component_covariances[keep].tolist(),
            weights=w[keep].tolist(),
        )
        self.labels = labs

    # ------------------------------------------------------------------ the pair
    @property
    def dim(self) -> int:
        """Dimension d."""
        return int(self._uncond.dim)

    @property
    def conditional_target(self) -> Any:
        """p(x | c): a std ``GaussianMixture`` (its ``noised_score`` is the conditional score model)."""
        return self._cond

    @property
    def unconditional_target(self) -> Any:
        """p(x): a std ``GaussianMixture`` over every component."""
        return self._uncond

    @property
    def class_probability(self) -> float:
        """p(c) = sum of the weights of class c (a fraction)."""
        w = self._uncond.mixture_weights
        return float(sum(w[i] for i, y in enumerate(self.labels) if y == int(self.label)))

    # ------------------------------------------------------------------ p(x | c)
    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """log p(x | c): ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        return self._cond.log_prob(x)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """grad log p(x | c): ``Tensor[n, d] -> Tensor[n, d]``."""
        return self._cond.score(x)

    def noised_score(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """Exact score of the noised p(x | c) (std's ``noised_score``)."""
        return self._cond.noised_score(x, alpha_bar)

    def noised_log_prob(self, x: torch.Tensor, alpha_bar: Any) -> torch.Tensor:
        """log density of the noised p(x | c) (std's ``noised_log_prob``)."""
        return self._cond.noised_log_prob(x, alpha_bar)

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws of p(x | c), ``Tensor[n, d]`` float64."""
        return self._cond.sample(num_samples, generator=generator)

    # ------------------------------------------------------------------ the guided law p_w
    def guided_unnormalised_log_prob(self, x: torch.Tensor, w: float) -> torch.Tensor:
        """(1 + w) log p(x | c) - w log p(x): ``Tensor[n, d] -> Tensor[n]`` (nats, up to log Z_w)."""
        w = float(w)
        return (1.0 + w) * self._cond.log_prob(x) - w * self._uncond.log_prob(x)

    def guided_grid(self, w: float) -> GuidedGrid:
        """The guided law p_w normalised on the grid (cached per w).

        Raises:
            ConfigError: d > 2 (no grid) or w < -1.
        """
        w = float(w)
        if not w >= -1.0:
            raise ConfigError(f"the guidance weight must be >= -1, got {w}.", key="guidance")
        if self.dim > 2:
            raise ConfigError(
                f"the guided law is normalised on a grid, which needs d <= 2 (d = {self.dim}).", key="means"
            )
        if w not in self._grids:
            mu = self._uncond.component_means
            sd = float(self._uncond.component_covariances.diagonal(dim1=-2, dim2=-1).max().sqrt())
            lower = mu.min(0).values - float(self.grid_margin) * sd
            upper = mu.max(0).values + float(self.grid_margin) * sd
            g = int(self.grid_size)
            axes = [
                torch.linspace(float(lower[j]), float(upper[j]), g, dtype=torch.float64)
                for j in range(self.dim)
            ]
            pts = torch.cartesian_prod(*axes).reshape(-1, self.dim)
            width = (upper - lower) / (g - 1)
            logp = self.guided_unnormalised_log_prob(pts, w)
            log_cell = logp + width.log().sum()
            log_norm = float(torch.logsumexp(log_cell, 0))
            self._grids[w] = GuidedGrid(
                w=w,
                points=pts,
                log_mass=log_cell - log_norm,
                log_norm=log_norm,
                lower=lower,
                upper=upper,
                width=width,
                size=g,
            )
        return self._grids[w]

    def guided_log_prob(self, x: torch.Tensor, w: float) -> torch.Tensor:
        """Normalised log p_w(x): ``Tensor[n, d] -> Tensor[n]`` (nats; Z_w from :meth:`guided_grid`)."""
        return self.guided_unnormalised_log_prob(x, w) - self.guided_grid(w).log_norm

    def guided_sample(self, num_samples: int, w: float, *, generator: torch.Generator) -> torch.Tensor:
        """Draws of p_w up to the grid resolution, ``Tensor[n, d]`` float64 (:meth:`GuidedGrid.sample`)."""
        return self.guided_grid(w).sample(num_samples, generator=generator)
