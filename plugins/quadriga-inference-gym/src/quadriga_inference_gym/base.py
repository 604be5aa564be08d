"""The common part of every inference-gym target: unconstrained space, autograd score, ground truth.

A subclass names its inference-gym model (``model``, the class name in
``inference_gym.targets``), writes the log density of the constrained parameters in torch
(``_log_density_constrained``) and, when some parameter is constrained, the bijector from the
unconstrained vector (``_bijector``, a ``torch.distributions`` transform whose log-Jacobian is
added). The flat coordinate order is inference-gym's ``VectorModel`` order.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch

from quadriga.interfaces import Target

from ._gym import GroundTruth, ground_truth

__all__ = ["InferenceGymTarget"]


@attrs.define(kw_only=True)
class InferenceGymTarget(Target):
    """Posterior (or density) of an inference-gym model in its unconstrained space, in torch.

    ``log_prob(z) = log p(b(z)) + log |det J_b(z)|`` with ``b`` the model's default event-space
    bijector (identity for unconstrained models), written in torch so that ``score`` is the
    autograd gradient; it equals inference-gym's own NumPy log density up to an additive
    constant (tested per model). ``transform(z)`` is inference-gym's ``identity`` sample
    transformation (the constrained parameters in its coordinate order), whose posterior mean and
    standard deviation, with the mean's Monte Carlo standard error, inference-gym ships
    (``ground_truth_mean``, ``ground_truth_std``, ``ground_truth_mean_stderr``).

    Shapes: ``log_prob: Tensor[n, d] -> Tensor[n]``, ``score: Tensor[n, d] -> Tensor[n, d]``,
    ``transform: Tensor[n, d] -> Tensor[n, k]`` (here ``k = d``), ground-truth vectors ``Tensor[k]``
    float64, ``warm_start(n) -> Tensor[n, d]``.
    Units: ``log_prob`` in nats (unnormalised: the model's log joint density); coordinates in the
    model's own units (log scales are dimensionless).

    Raises:
        ValueError: ``z`` not of shape ``[n, d]``.
        ConfigError: inference-gym (NumPy backend) is missing, or ships no ground truth (when built).

    Source: Sountsov, Radul & contributors, "Inference Gym", 2020 (github.com/tensorflow/probability,
    ``spinoffs/inference_gym``); each subclass names its model's paper.
    """

    #: class name of the model in ``inference_gym.targets``
    model: ClassVar[str] = ""
    #: the ground truth of the mean is analytic (no Monte Carlo standard error)
    exact_ground_truth: ClassVar[bool] = False

    _gt: GroundTruth | None = attrs.field(init=False, default=None, repr=False)
    _dim: int = attrs.field(init=False, default=0, repr=False)
    _last: Any = attrs.field(init=False, default=None, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        """Read the ground truth and coordinate order from inference-gym, then the model's data."""
        self._gt = ground_truth(self.model)
        self._dim = int(self._gt.permutation.shape[0])
        self._setup()

    def _setup(self) -> None:
        """Load the model's data (subclasses); runs once when the target is built."""

    # ------------------------------------------------------------------ the density
    @property
    def dim(self) -> int:
        """Dimension ``d`` of the unconstrained space."""
        return self._dim

    def _bijector(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(b(z): Tensor[n, d], log |det J_b(z)|: Tensor[n])``; identity unless overridden."""
        return z, torch.zeros(z.shape[0], dtype=z.dtype)

    def _inverse_bijector(self, x: torch.Tensor) -> torch.Tensor:
        """``b^{-1}(x)``: constrained ``Tensor[n, d]`` to unconstrained; identity unless overridden."""
        return x

    def _log_density_constrained(self, x: torch.Tensor) -> torch.Tensor:
        """Log joint density of the constrained parameters ``Tensor[n, d] -> Tensor[n]`` (nats)."""
        raise NotImplementedError

    def _check(self, z: Any) -> torch.Tensor:
        z = torch.as_tensor(z)
        if z.ndim != 2 or z.shape[1] != self.dim:
            raise ValueError(
                f"{type(self).__name__}: z must have shape [n, {self.dim}], got {tuple(z.shape)}"
            )
        return z

    def _forward(self, z: torch.Tensor) -> torch.Tensor:
        y, log_det = self._bijector(z)
        return self._log_density_constrained(y) + log_det

    def _cached(self, x: Any) -> Any:
        """The cache entry of ``x`` when it is the very tensor last evaluated and unchanged since."""
        last = self._last
        if last is not None and last[0] is x and last[1] == x._version:
            return last
        return None

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """Unconstrained log density ``log p(b(z)) + log |det J_b(z)|``: ``Tensor[n, d] -> Tensor[n]`` (nats).

        Evaluated with its autograd graph kept, so that ``score`` of the same tensor right after
        (as MALA does) costs one backward pass; ``log_prob`` right after ``score`` of the same tensor
        (as HMC does) costs nothing. A tensor changed in place is evaluated again.
        """
        if isinstance(x, torch.Tensor) and not x.requires_grad:
            hit = self._cached(x)
            if hit is not None:
                return hit[2].detach()
            z = self._check(x).detach().requires_grad_(True)
            with torch.enable_grad():
                lp = self._forward(z)
            self._last = (x, x._version, lp, z)
            return lp.detach()
        z = self._check(x)
        return self._forward(z)

    def score(self, x: torch.Tensor) -> torch.Tensor:
        """Gradient of :meth:`log_prob` by autograd: ``Tensor[n, d] -> Tensor[n, d]``."""
        hit = self._cached(x) if isinstance(x, torch.Tensor) else None
        if hit is None or hit[3] is None:
            z = self._check(x).detach().requires_grad_(True)
            with torch.enable_grad():
                lp = self._forward(z)
        else:
            lp, z = hit[2], hit[3]
        (g,) = torch.autograd.grad(lp.sum(), z)
        if isinstance(x, torch.Tensor):
            self._last = (x, x._version, lp.detach(), None)
        return g.detach()

    # ------------------------------------------------------------------ ground truth
    def transform(self, x: torch.Tensor) -> torch.Tensor:
        """inference-gym's ``identity`` sample transformation: ``Tensor[n, d] -> Tensor[n, k]``."""
        y, _ = self._bijector(self._check(x))
        return y[:, torch.as_tensor(self._gt.permutation)]

    @property
    def ground_truth_mean(self) -> torch.Tensor:
        """Posterior mean of each coordinate of :meth:`transform`, ``Tensor[k]`` float64."""
        return torch.as_tensor(self._gt.mean, dtype=torch.float64)

    @property
    def ground_truth_std(self) -> torch.Tensor:
        """Posterior standard deviation of each coordinate of :meth:`transform`, ``Tensor[k]`` float64."""
        return torch.as_tensor(self._gt.std, dtype=torch.float64)

    @property
    def ground_truth_mean_stderr(self) -> torch.Tensor | None:
        """Monte Carlo standard error of :attr:`ground_truth_mean`, ``Tensor[k]``; ``None`` when analytic."""
        se = self._gt.mean_stderr
        return None if se is None else torch.as_tensor(se, dtype=torch.float64)

    def warm_start(self, num: int, *, generator: torch.Generator) -> torch.Tensor:
        """Starting points near the posterior: ``Tensor[num, d]`` float64 in the unconstrained space.

        Each coordinate of the transformation is drawn as mean + std * N(0, 1) from the ground
        truth (independently: not a posterior draw), put back into the event order and mapped
        through the inverse bijector (constrained values are first clipped into the support).
        """
        k = self._gt.permutation
        m, s = self.ground_truth_mean, self.ground_truth_std
        t = m + s * torch.randn(int(num), k.shape[0], generator=generator, dtype=torch.float64)
        y = torch.empty_like(t)
        y[:, torch.as_tensor(k)] = t
        return self._inverse_bijector(y)
