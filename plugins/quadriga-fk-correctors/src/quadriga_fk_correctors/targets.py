"""Composed targets of Gaussian-mixture score models and their exact laws: ``fkc-target``.

A composed target is ``p(x) ∝ prod_i p_i(x)^{e_i}`` over experts ``p_i`` (quadriga-std
``gaussian-mixture`` targets, whose exact noised scores play the pretrained score models):

- ``composition = "product"``: ``e_i = 1`` for every expert (product of experts);
- ``composition = "anneal"``: one expert, ``e_1 = beta`` (annealed / tempered target ``p^beta``);
- ``composition = "geometric"``: ``e_i = weights[i]`` (geometric average; ``(1 - b, b)`` is the CFG form).

When every exponent is a positive integer the target is itself a Gaussian mixture (the product of
two Gaussians is a scaled Gaussian, :func:`product_of_gaussians`), built exactly here
(:func:`product_of_mixtures`); otherwise (``beta = 0.5``, fractional weights) it is sampled exactly
up to the resolution of a fine grid (dimension 1 or 2 only).

Source: Skreta et al. 2025, "Feynman-Kac Correctors in Diffusion" (arXiv 2503.02819), sec. 3
(targets (annealed, product, CFG)); Gaussian product identity: Petersen & Pedersen, "The Matrix
Cookbook" (2012), eqs. 371-372; Bishop 2006, sec. 2.3.9 (mixtures).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import param
from quadriga.errors import ConfigError
from quadriga.interfaces import Target
from quadriga.validators import int_at_least, one_of

__all__ = ["KINDS", "ComposedTarget", "one_of", "product_of_gaussians", "product_of_mixtures"]

KINDS = ("product", "anneal", "geometric")
_LOG_2PI = math.log(2 * math.pi)


def product_of_gaussians(
    m1: torch.Tensor, s1: torch.Tensor, m2: torch.Tensor, s2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``N(x; m1, S1) N(x; m2, S2) = c N(x; m, S)`` (batched over leading dimensions).

    Shapes: ``m*: Tensor[..., d]``, ``s*: Tensor[..., d, d]``; returns ``(log c: Tensor[...],
    m: Tensor[..., d], S: Tensor[..., d, d])`` with ``S = (S1^-1 + S2^-1)^-1``,
    ``m = S (S1^-1 m1 + S2^-1 m2)`` and ``c = N(m1; m2, S1 + S2)`` (nats for ``log c``).

    Source: Petersen & Pedersen, "The Matrix Cookbook" (2012), eqs. 371-372.
    """
    p1, p2 = torch.linalg.inv(s1), torch.linalg.inv(s2)
    s = torch.linalg.inv(p1 + p2)
    s = 0.5 * (s + s.transpose(-1, -2))
    m = (s @ ((p1 @ m1.unsqueeze(-1)) + (p2 @ m2.unsqueeze(-1)))).squeeze(-1)
    cov = s1 + s2
    diff = (m1 - m2).unsqueeze(-1)
    maha = (diff.transpose(-1, -2) @ torch.linalg.solve(cov, diff)).squeeze(-1).squeeze(-1)
    d = m1.shape[-1]
    log_c = -0.5 * (maha + torch.logdet(cov) + d * _LOG_2PI)
    return log_c, m, s


def product_of_mixtures(
    a: tuple[torch.Tensor, torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The normalised product of two Gaussian mixtures, itself a mixture of ``Ka * Kb`` components.

    Args:
        a, b: ``(weights: Tensor[K], means: Tensor[K, d], covariances: Tensor[K, d, d])``.

    Returns:
        ``(weights: Tensor[Ka*Kb], means, covariances)``; the weight of pair ``(j, k)`` is
        ``∝ wa_j wb_k N(mu_j; mu_k, Sa_j + Sb_k)``, normalised (row-major in ``(j, k)``).

    Source: :func:`product_of_gaussians` applied term by term.
    """
    wa, ma, sa = a
    wb, mb, sb = b
    ka, kb = wa.shape[0], wb.shape[0]
    log_c, m, s = product_of_gaussians(
        ma[:, None].expand(ka, kb, -1),
        sa[:, None].expand(ka, kb, -1, -1),
        mb[None].expand(ka, kb, -1),
        sb[None].expand(ka, kb, -1, -1),
    )
    logw = wa.log()[:, None] + wb.log()[None] + log_c
    w = torch.softmax(logw.reshape(-1), 0)
    d = ma.shape[-1]
    return w, m.reshape(-1, d), s.reshape(-1, d, d)


def _expert(spec: Any, i: int) -> Any:
    from quadriga_std.targets.gaussian import GaussianMixture

    if not isinstance(spec, dict):
        raise ConfigError(
            f"experts[{i}] must be a table of gaussian-mixture parameters "
            "(e.g. {{ means = [[-1.0], [1.0]], scale = 0.5 }}), got {spec!r}.",
            key="experts",
        )
    if spec.get("preset") == "random":
        raise ConfigError(f"experts[{i}]: the 'random' preset is not supported; give means.", key="experts")
    try:
        return GaussianMixture(**spec)
    except TypeError as exc:
        raise ConfigError(f"experts[{i}]: {exc}", key="experts") from exc


@attrs.define(kw_only=True)
class ComposedTarget(Target):
    """``p(x) ∝ prod_i p_i(x)^{e_i}`` of Gaussian-mixture experts, with exact samples.

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``sample(n) -> Tensor[n, d]`` float64, ``assign: Tensor[n, d] -> Tensor[n]`` (long; the Bayes
    component of expert 0, used for mode weights); ``experts``: the gaussian-mixture targets;
    ``exponents``: ``tuple[float]`` (``e_i``); ``exact_mixture``: ``(weights, means, covariances)``
    of the target when it is a Gaussian mixture, else ``None``.
    Units: ``log_prob`` in nats (normalised when ``exact_mixture`` is set, else up to a constant);
    x in the experts' units.

    Raises:
        ConfigError: unknown ``composition``; no experts; ``anneal`` with more than one expert;
            ``beta <= 0``; ``weights`` of the wrong length or not positive; a non-integer exponent
            in dimension > 2 (no exact sampler).

    Source: Skreta et al. 2025 (arXiv 2503.02819), sec. 3; exact products: :func:`product_of_mixtures`.
    """

    fk_composable: ClassVar[bool] = True
    check_params: ClassVar[dict[str, Any]] = {
        "composition": "product",
        "experts": [{"means": [[-1.0], [1.0]], "scale": 0.5}, {"means": [[0.5]], "scale": 1.0}],
    }

    experts: Any = param(
        None, toml_type="list[table] | None", doc="list of gaussian-mixture parameter tables, one per expert"
    )
    composition: str = param("product", doc="'product', 'anneal' or 'geometric'", validator=one_of(KINDS))
    beta: Any = param(
        None,
        toml_type="float | None",
        doc="exponent of the annealed target p^beta (composition 'anneal'), > 0",
    )
    weights: Any = param(
        None,
        toml_type="list[float] | None",
        doc="exponents w_i of the geometric average (composition 'geometric'), > 0",
    )
    grid_size: int = param(
        4001,
        doc="grid points per axis for non-mixture targets (1-D; 2-D uses sqrt)",
        validator=int_at_least(101),
    )
    _experts: list = attrs.field(init=False, factory=list, repr=False)
    _exp: tuple = attrs.field(init=False, default=())
    _mix: Any = attrs.field(init=False, default=None, repr=False)
    _grid: Any = attrs.field(init=False, default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.experts, (list, tuple)) or not self.experts:
            raise ConfigError("give 'experts': a non-empty list of gaussian-mixture tables.", key="experts")
        self._experts = [_expert(s, i) for i, s in enumerate(self.experts)]
        dims = {e.dim for e in self._experts}
        if len(dims) != 1:
            raise ConfigError(f"experts have different dimensions {sorted(dims)}.", key="experts")
        m = len(self._experts)
        if self.composition == "product":
            self._exp = (1.0,) * m
        elif self.composition == "anneal":
            if m != 1:
                raise ConfigError(f"composition 'anneal' takes one expert, got {m}.", key="experts")
            b = self.beta
            if isinstance(b, bool) or not isinstance(b, (int, float)) or not (math.isfinite(b) and b > 0):
                raise ConfigError(f"'beta' must be a finite number > 0 (e.g. 2.0), got {b!r}.", key="beta")
            self._exp = (float(b),)
        else:
            w = self.weights
            if not isinstance(w, (list, tuple)) or len(w) != m:
                raise ConfigError(
                    f"'weights' must be a list of {m} positive numbers (one per expert), got {w!r}.",
                    key="weights",
                )
            if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 for v in w):
                raise ConfigError(f"'weights' must all be > 0, got {list(w)}.", key="weights")
            self._exp = tuple(float(v) for v in w)
        if all(float(e).is_integer() for e in self._exp):
            mix = None
            for expert, e in zip(self._experts, self._exp, strict=True):
                comp = (expert.mixture_weights, expert.component_means, expert.component_covariances)
                for _ in range(int(e)):
                    mix = comp if mix is None else product_of_mixtures(mix, comp)
            self._mix = mix
        elif self.dim > 2:
            raise ConfigError(
                f"exponents {self._exp} are not all integers, so the target is not a Gaussian mixture, "
                f"and dimension {self.dim} > 2 has no grid sampler; use integer exponents.",
                key="beta" if self.composition == "anneal" else "weights",
            )

    # ------------------------------------------------------------------ structure
    @property
    def dim(self) -> int:
        """Dimension ``d``."""
        return int(self._experts[0].dim)

    @property
    def expert_models(self) -> list:
        """The gaussian-mixture experts (their ``noised_score``/``noised_log_prob`` are the score models)."""
        return list(self._experts)

    @property
    def exponents(self) -> tuple[float, ...]:
        """The exponents ``e_i`` of the composed target."""
        return self._exp

    @property
    def exact_mixture(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """``(weights[K], means[K, d], covariances[K, d, d])`` when the target is a Gaussian mixture."""
        return None if self._mix is None else tuple(t.clone() for t in self._mix)

    def _mixture(self) -> Any:
        from quadriga_std.targets.gaussian import GaussianMixture

        w, m, s = self._mix
        return GaussianMixture(weights=w.tolist(), means=m.tolist(), covariances=s.tolist())

    # ------------------------------------------------------------------ densities
    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """``sum_i e_i log p_i(x)`` (+ the log normaliser when a mixture): ``Tensor[n, d] -> Tensor[n]``."""
        if self._mix is not None:
            return self._mixture().log_prob(x)
        return sum(e * p.log_prob(x) for p, e in zip(self._experts, self._exp, strict=True))

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """``sum_i e_i grad log p_i(x)``: ``Tensor[n, d] -> Tensor[n, d]``."""
        return sum(e * p.score(x) for p, e in zip(self._experts, self._exp, strict=True))

    def assign(self, x: torch.Tensor) -> torch.Tensor:
        """Bayes component of expert 0: ``Tensor[n, d] -> Tensor[n]`` long (mode labels)."""
        return self._experts[0].assign(x)

    def _grid_points(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self._grid is None:
            means = torch.cat([p.component_means for p in self._experts])
            sd = max(
                float(p.component_covariances.diagonal(dim1=-2, dim2=-1).max().sqrt()) for p in self._experts
            )
            lo, hi = means.min(0).values - 8 * sd, means.max(0).values + 8 * sd
            n = self.grid_size if self.dim == 1 else int(math.sqrt(self.grid_size * 100))
            axes = [
                torch.linspace(float(lo[j]), float(hi[j]), n, dtype=torch.float64) for j in range(self.dim)
            ]
            pts = torch.cartesian_prod(*axes).reshape(-1, self.dim)
            width = (hi - lo) / (n - 1)
            self._grid = (pts, self.log_prob(pts), width)
        return self._grid

    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Exact draws ``Tensor[num_samples, d]`` float64.

        A Gaussian mixture target is sampled exactly; otherwise cells of the grid (``grid_size``
        points per axis in 1-D, ``sqrt(100 grid_size)`` in 2-D, over the experts' means +- 8 sd) are
        drawn with probability ∝ the density at their centre and jittered uniformly inside the cell.
        """
        if self._mix is not None:
            return self._mixture().sample(num_samples, generator=generator)
        pts, logp, width = self._grid_points()
        idx = torch.multinomial(
            torch.softmax(logp, 0), int(num_samples), replacement=True, generator=generator
        )
        u = torch.rand(int(num_samples), self.dim, generator=generator, dtype=torch.float64) - 0.5
        return pts[idx] + u * width
