"""Permutation alignment of MLPs: weight matching and activation matching (Git Re-Basin).

Both find hidden-unit permutations ``pi = (P_1, ..., P_{L-1})`` of network B that bring it close to
network A, so that the linear path from A to ``pi(B)`` stays in one low-loss basin. Weight matching
(Algorithm 1) maximises ``sum_l <W_l^A, P_l W_l^B P_{l-1}^T>`` (biases with their layer's outputs)
by coordinate descent: with the other permutations fixed, the best ``P_l`` solves the linear
assignment problem ``max_P tr(P^T C_l)`` with

    C_l = W_l^A (W_l^B P_{l-1}^T)^T + b_l^A (b_l^B)^T + (W_{l+1}^A)^T (P_{l+1} W_{l+1}^B),

solved by ``scipy.optimize.linear_sum_assignment``; the layers are visited in a random order per
sweep until a sweep changes no permutation. Activation matching (sec. 3.1) solves one assignment
per hidden layer on the cross products ``Z_A^T Z_B`` of the post-ReLU activations on training
inputs (the least-squares objective ``min_P ||Z_A - Z_B P^T||_F^2``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import torch
from quadriga_std.weightspace.mlp import Params, hidden_activations, permute, widths
from quadriga_std.weightspace.zoo import CHECK_ZOO, MLPZoo
from scipy.optimize import linear_sum_assignment

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.seeding import int_seed
from quadriga.validators import optional, positive_int

__all__ = ["ActivationMatching", "WeightMatching", "activation_matching", "weight_matching"]


def _cost(a: Params, b: Params, perms: list[torch.Tensor], p: int) -> torch.Tensor:
    """``C_l`` of hidden layer ``l = p + 1`` (float64 ``[h_l, h_l]``): row i of A against unit j of B."""
    wa, wb, ba, bb = a["weights"], b["weights"], a["biases"], b["biases"]
    w_in = wb[p] if p == 0 else wb[p][:, perms[p - 1]]
    w_out = wb[p + 1] if p + 1 == len(perms) else wb[p + 1][perms[p + 1], :]
    c = wa[p].double() @ w_in.double().T + torch.outer(ba[p].double(), bb[p].double())
    return c + wa[p + 1].double().T @ w_out.double()


def weight_matching(
    a: Params, b: Params, *, generator: torch.Generator, max_sweeps: int = 100
) -> tuple[list[torch.Tensor], int]:
    """Permutations of B's hidden units maximising the inner product of weights with A (Algorithm 1).

    Args:
        a, b: networks of one architecture (``L`` layers).
        generator: draws the order in which the layers are visited in each sweep.
        max_sweeps: stop after this many sweeps even if a permutation still changed.

    Returns:
        ``(perms, sweeps)``: ``perms[l-1]: LongTensor[h_l]`` for :func:`~quadriga_std.weightspace.mlp.permute`
        (new unit ``j`` = old unit ``perms[l-1][j]``), and the sweeps run (the last changed nothing
        unless ``max_sweeps`` was reached).

    Raises:
        ValueError: networks of different widths.

    Source: Ainsworth, Hayase, Srinivasa 2023, "Git Re-Basin", sec. 3.2, eq. 3 and Algorithm 1.
    """
    if widths(a) != widths(b):
        raise ValueError(f"networks of different widths: {widths(a)} and {widths(b)}")
    perms = [torch.arange(h) for h in widths(a)[1:-1]]
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):  # noqa: B007 (the count is returned)
        changed = False
        for p in torch.randperm(len(perms), generator=generator).tolist():
            cost = _cost(a, b, perms, p)
            _, cols = linear_sum_assignment(cost.numpy(), maximize=True)
            rows = torch.arange(len(cols))
            new = torch.as_tensor(cols, dtype=torch.long)
            if float(cost[rows, new].sum()) > float(cost[rows, perms[p]].sum()) + 1e-12:
                perms[p], changed = new, True
        if not changed:
            break
    return perms, sweeps


def activation_matching(a: Params, b: Params, x: torch.Tensor) -> list[torch.Tensor]:
    """Per hidden layer, the permutation of B's units maximising ``sum_i <z_A[i], z_B[P(i)]>`` on ``x``.

    Args:
        a, b: networks of one architecture.
        x: ``Tensor[n, h_0]`` inputs (the training data).

    Returns:
        ``perms[l-1]: LongTensor[h_l]`` (see :func:`weight_matching`).

    Raises:
        ValueError: networks of different widths.

    Source: Ainsworth et al. 2023, sec. 3.1 (activation matching, eq. 1-2: least squares on
    activations, one linear assignment per layer).
    """
    if widths(a) != widths(b):
        raise ValueError(f"networks of different widths: {widths(a)} and {widths(b)}")
    perms = []
    with torch.no_grad():
        for za, zb in zip(hidden_activations(a, x), hidden_activations(b, x), strict=True):
            _, cols = linear_sum_assignment((za.double().T @ zb.double()).numpy(), maximize=True)
            perms.append(torch.as_tensor(cols, dtype=torch.long))
    return perms


@attrs.define(kw_only=True)
class _Alignment(Learner):
    """Draw a zoo pair (as ``zoo-pair`` does, same seed) and return ``{"a": A, "b": pi(B)}``."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,)}
    check_task: ClassVar[dict[str, Any]] = CHECK_ZOO

    width: int | None = param(
        None, doc="hidden width of the pair (None: the zoo's hidden_sizes)", validator=optional(positive_int)
    )

    def _perms(self, zoo: MLPZoo, a: Params, b: Params, generator: torch.Generator) -> tuple[list, dict]:
        raise NotImplementedError

    def fit(self, task: Any, *, generator: torch.Generator, progress: Any = None) -> Fitted:
        """Draw the pair's seed from ``generator``, align B onto A, return both."""
        if not isinstance(task, MLPZoo):
            raise ConfigError(
                f"{type(self).__name__} needs an mlp-zoo task, got {type(task).__name__}.", key="task"
            )
        seed = int_seed(generator)
        a, b = task.pair(self.width, seed)
        perms, info = self._perms(task, a, b, generator)
        moved = sum(int((p != torch.arange(len(p))).sum()) for p in perms)
        return Fitted(
            model={"a": a, "b": permute(b, perms)},
            info={"seed": seed, "width": int(a["weights"][0].shape[0]), "units_moved": moved, **info},
        )


@attrs.define(kw_only=True)
class WeightMatching(_Alignment):
    """Git Re-Basin's weight matching: permute B's hidden units to match A's weights (Algorithm 1).

    ``fit(zoo)`` draws a pair of zoo members (the same pair as ``zoo-pair`` on the same replicate),
    runs :func:`weight_matching` and returns ``Fitted.model = {"a": A, "b": pi(B)}``; ``info``:
    ``seed``, ``width``, ``sweeps``, ``units_moved``.

    Shapes: networks ``64-h-...-h-10`` (:class:`~quadriga_std.weightspace.zoo.MLPZoo`).
    Units: none (permutations).

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``.

    Source: Ainsworth, Hayase, Srinivasa 2023, "Git Re-Basin: merging models modulo permutation
    symmetries", ICLR, arXiv 2209.04836, sec. 3.2, Algorithm 1.
    """

    max_sweeps: int = param(100, doc="most coordinate-descent sweeps over the layers", validator=positive_int)

    def _perms(self, zoo: MLPZoo, a: Params, b: Params, generator: torch.Generator) -> tuple[list, dict]:
        perms, sweeps = weight_matching(a, b, generator=generator, max_sweeps=self.max_sweeps)
        return perms, {"sweeps": sweeps}


@attrs.define(kw_only=True)
class ActivationMatching(_Alignment):
    """Git Re-Basin's activation matching: permute B's hidden units to match A's activations.

    ``fit(zoo)`` draws the pair, runs :func:`activation_matching` on the zoo's training inputs
    and returns ``Fitted.model = {"a": A, "b": pi(B)}``; ``info``: ``seed``, ``width``, ``units_moved``.

    Shapes: networks ``64-h-...-h-10``; activations ``[n_train, h]`` per hidden layer.
    Units: none (permutations).

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``.

    Source: Ainsworth et al. 2023, arXiv 2209.04836, sec. 3.1.
    """

    def _perms(self, zoo: MLPZoo, a: Params, b: Params, generator: torch.Generator) -> tuple[list, dict]:
        x, _ = zoo.data("train")
        return activation_matching(a, b, x), {}
