"""A deterministic, smooth, weighted training map ``w -> theta_T(w)`` and the margins it yields.

Every data-attribution method measures or predicts how a model's output on a target example
changes with the training data. Here the training run is one pure function of per-example
weights ``w in R^n`` (``w = 1_S`` trains on the subset S, ``w = 1 - 1_R`` removes R):

    L(theta; w) = sum_i w_i l_i(theta) / sum_i w_i + (lambda / 2) ||theta||^2,
    theta_{t+1} = theta_t - lr * grad_theta L(theta_t; w),   t = 0 .. T-1,

full-batch gradient descent from a fixed initialisation, in float64 (no minibatch order, no
data-dependent randomness), so retraining is exact and the map is differentiable in ``w``
(MAGIC's metagradient; Ilyas & Engstrom 2025, arXiv 2504.16430, sec. 2). ``l_i`` is the
cross-entropy of a linear softmax model (``hidden = ()``: multinomial logistic regression) or an
MLP with a smooth activation. The attributed output is the **correct-class margin**
``f_x(theta) = z_y(x) - max_{k != y} z_k(x)`` (Ilyas et al. 2022, arXiv 2202.00622, sec. 2:
margins, not probabilities, which saturate).

Parameters are one flat ``Tensor[p]`` so that Hessians and Jacobians are plain matrices.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import torch

__all__ = ["ACTIVATIONS", "TrainingMap"]

#: smooth activations (metagradients need them: ReLU gives uninformative ones, arXiv 2503.13751 sec. 3)
ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": torch.nn.functional.gelu,
    "tanh": torch.tanh,
    "softplus": torch.nn.functional.softplus,
    "relu": torch.relu,
}


@attrs.define(eq=False)
class TrainingMap:
    """Full-batch weighted gradient descent on fixed data: ``weights[n] -> theta_T[p]``.

    Attributes:
        X: ``Tensor[n, d]`` float64 training inputs.
        y: ``Tensor[n]`` int64 class labels in ``0 .. num_classes - 1``.
        num_classes: ``C``.
        hidden: hidden-layer widths (``()``: linear softmax model).
        activation: a key of :data:`ACTIVATIONS`.
        steps: ``T``, gradient steps.
        lr: step size.
        weight_decay: ``lambda`` of the L2 penalty on every parameter.
        init_seed: seed of the fixed initialisation (zeros for the linear model).

    Source: the training map of Ilyas & Engstrom 2025 (arXiv 2504.16430), sec. 2, eq. (1), with the
    data weights entering the loss as in Engstrom et al. 2025 (arXiv 2503.13751), sec. 2.
    """

    X: torch.Tensor
    y: torch.Tensor
    num_classes: int
    hidden: tuple[int, ...] = ()
    activation: str = "gelu"
    steps: int = 200
    lr: float = 0.5
    weight_decay: float = 1e-2
    init_seed: int = 0
    _shapes: list[tuple[int, int]] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        """Record the layer shapes; raises ValueError for an unknown activation."""
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation '{self.activation}'; use one of {', '.join(ACTIVATIONS)}")
        widths = [self.X.shape[1], *self.hidden, self.num_classes]
        self._shapes = [(a, b) for a, b in itertools.pairwise(widths)]

    # ------------------------------------------------------------------ the model
    @property
    def num_params(self) -> int:
        """``p``: weights and biases of every layer."""
        return sum(a * b + b for a, b in self._shapes)

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.X.shape[0])

    def init(self) -> torch.Tensor:
        """The fixed initialisation ``theta_0: Tensor[p]`` (zeros for the linear model; else
        N(0, 1/fan_in) weights and zero biases from ``init_seed``)."""
        if not self.hidden:
            return torch.zeros(self.num_params, dtype=torch.float64)
        g = torch.Generator().manual_seed(self.init_seed)
        parts = []
        for a, b in self._shapes:
            parts.append(torch.randn(a * b, generator=g, dtype=torch.float64) / math.sqrt(a))
            parts.append(torch.zeros(b, dtype=torch.float64))
        return torch.cat(parts)

    def logits(self, theta: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """Logits ``z = model(theta, X)``: ``theta[..., p]``, ``X[m, d]`` ``-> Tensor[..., m, C]``."""
        act = ACTIVATIONS[self.activation]
        h, i = X, 0
        lead = theta.shape[:-1]
        for k, (a, b) in enumerate(self._shapes):
            W = theta[..., i : i + a * b].reshape(*lead, a, b)
            bias = theta[..., i + a * b : i + a * b + b].unsqueeze(-2)
            i += a * b + b
            h = h @ W + bias
            if k < len(self._shapes) - 1:
                h = act(h)
        return h

    def losses(
        self, theta: torch.Tensor, X: torch.Tensor | None = None, y: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Per-example cross-entropy ``l_i(theta): Tensor[..., m]`` (nats); the training set by default."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        z = self.logits(theta, X)
        return -torch.log_softmax(z, dim=-1).gather(-1, y.expand(*z.shape[:-1])[..., None])[..., 0]

    def objective(self, theta: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``L(theta; w) = sum_i w_i l_i / sum_i w_i + (lambda/2) ||theta||^2`` (nats; ``Tensor[...]``
        for a batch ``theta: [..., p]``, ``weights: [..., n]``)."""
        loss = (weights * self.losses(theta)).sum(-1) / weights.sum(-1)
        return loss + 0.5 * self.weight_decay * (theta * theta).sum(-1)

    def margins(self, theta: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Correct-class margins ``z_y - max_{k != y} z_k: Tensor[..., m]`` of the points ``(X, y)``."""
        z = self.logits(theta, X)
        yy = y.expand(*z.shape[:-1])
        correct = z.gather(-1, yy[..., None])[..., 0]
        other = z.masked_fill(torch.nn.functional.one_hot(yy, self.num_classes).bool(), -math.inf)
        return correct - other.max(dim=-1).values

    # ------------------------------------------------------------------ training
    def gradient(
        self, theta: torch.Tensor, weights: torch.Tensor, *, create_graph: bool = False
    ) -> torch.Tensor:
        """``grad_theta L(theta; w): Tensor[p]`` by autograd (``create_graph`` keeps it differentiable)."""
        with torch.enable_grad():
            if not theta.requires_grad:
                theta = theta.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(self.objective(theta, weights), theta, create_graph=create_graph)
        return g

    def train(self, weights: torch.Tensor, *, path: bool = False) -> Any:
        """``theta_T(w)``; differentiable in ``weights: Tensor[n]`` when it requires grad (then every
        step keeps its graph, so ``torch.autograd.grad`` of a function of the result reaches ``w``
        through all ``T`` updates).

        Args:
            weights: per-example loss weights (``1_S`` for a subset S); ``sum > 0``.
            path: also return every iterate ``[theta_0, ..., theta_T]`` (TracIn's checkpoints).

        Returns:
            ``Tensor[p]``, or ``(Tensor[p], list of T + 1 Tensor[p])`` with ``path``.
        """
        differentiable = bool(weights.requires_grad)
        theta = self.init().requires_grad_(differentiable)
        states = [theta]
        for _ in range(self.steps):
            theta = theta - self.lr * self.gradient(theta, weights, create_graph=differentiable)
            if not differentiable:
                theta = theta.detach()
            if path:
                states.append(theta)
        return (theta, states) if path else theta

    def train_many(self, weights: torch.Tensor | np.ndarray, *, batch: int = 256) -> torch.Tensor:
        """``theta_T`` of every row of ``weights: [m, n]`` (``batch`` models at a time, one batched
        autograd call per step: the models are independent) ``-> Tensor[m, p]``."""
        W = torch.as_tensor(np.asarray(weights), dtype=torch.float64)
        out = []
        for lo in range(0, W.shape[0], batch):
            w = W[lo : lo + batch]
            theta = self.init().expand(w.shape[0], -1).clone()
            for _ in range(self.steps):
                with torch.enable_grad():
                    th = theta.requires_grad_(True)
                    (g,) = torch.autograd.grad(self.objective(th, w).sum(), th)
                theta = (theta - self.lr * g).detach()
            out.append(theta)
        return torch.cat(out) if out else torch.zeros(0, self.num_params, dtype=torch.float64)

    def margins_many(self, thetas: torch.Tensor, X: torch.Tensor, y: torch.Tensor) -> np.ndarray:
        """Margins of ``(X[k, d], y[k])`` under every row of ``thetas: [m, p]`` ``-> ndarray[m, k]``."""
        with torch.no_grad():
            return self.margins(thetas, X, y).numpy()

    def retrain_margins(
        self, weights: torch.Tensor | np.ndarray, X: torch.Tensor, y: torch.Tensor, *, batch: int = 256
    ) -> np.ndarray:
        """Train on every row of ``weights: [m, n]``; the margins on ``(X, y)``: ``ndarray[m, k]``."""
        W = np.asarray(weights, dtype=np.float64)
        chunks = [
            self.margins_many(self.train_many(W[lo : lo + batch], batch=batch), X, y)
            for lo in range(0, W.shape[0], batch)
        ]
        return np.concatenate(chunks) if chunks else np.zeros((0, int(X.shape[0])))
