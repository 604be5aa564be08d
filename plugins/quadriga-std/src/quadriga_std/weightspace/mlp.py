"""Functional multilayer perceptrons: parameters as plain tensors, so they can be permuted, merged and grown.

A network is a dict ``{"weights": [W_1, ..., W_L], "biases": [b_1, ..., b_L]}`` with
``W_l: Tensor[h_l, h_{l-1}]`` (PyTorch's ``nn.Linear`` layout: output axis first) and
``b_l: Tensor[h_l]``; ``forward`` applies ReLU after every layer but the last, whose outputs are
logits. Plain tensors in plain containers round-trip through :class:`quadriga.artifacts.Fitted`
and make the weight-space operations (permutation, interpolation, task vectors, zero-padding
expansion) one-line tensor expressions. No normalisation layers: interpolating their running
statistics needs a repair step (Jordan et al. 2023, "REPAIR") that this kit does not cover.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch.nn import functional as F

from quadriga.threads import single_thread

__all__ = [
    "Params",
    "accuracy",
    "combine",
    "cross_entropy",
    "forward",
    "hidden_activations",
    "init_params",
    "interpolate",
    "permute",
    "train",
    "widths",
]

#: ``{"weights": [Tensor[h_l, h_{l-1}]], "biases": [Tensor[h_l]]}``
Params = dict[str, list[torch.Tensor]]


def widths(params: Params) -> list[int]:
    """Layer widths ``[h_0 (inputs), h_1, ..., h_L (outputs)]``."""
    ws = params["weights"]
    return [int(ws[0].shape[1]), *(int(w.shape[0]) for w in ws)]


def init_params(sizes: Sequence[int], *, generator: torch.Generator) -> Params:
    """PyTorch's ``nn.Linear`` initialisation: ``W, b ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

    Args:
        sizes: ``[h_0, ..., h_L]``, inputs first, outputs last.
        generator: the only source of randomness.

    Shapes: ``W_l: Tensor[h_l, h_{l-1}]``, ``b_l: Tensor[h_l]``, float32.

    Source: He et al. 2015 via ``torch.nn.Linear.reset_parameters`` (kaiming_uniform with a = sqrt(5)).
    """
    weights, biases = [], []
    for fan_in, fan_out in itertools.pairwise(sizes):
        bound = 1.0 / math.sqrt(fan_in)
        weights.append((torch.rand(fan_out, fan_in, generator=generator) * 2 - 1) * bound)
        biases.append((torch.rand(fan_out, generator=generator) * 2 - 1) * bound)
    return {"weights": weights, "biases": biases}


def forward(params: Params, x: torch.Tensor) -> torch.Tensor:
    """Logits ``Tensor[n, h_L]`` of inputs ``x: Tensor[n, h_0]`` (ReLU between layers)."""
    ws, bs = params["weights"], params["biases"]
    for i, (w, b) in enumerate(zip(ws, bs, strict=True)):
        x = x @ w.T + b
        if i < len(ws) - 1:
            x = torch.relu(x)
    return x


def hidden_activations(params: Params, x: torch.Tensor) -> list[torch.Tensor]:
    """Post-ReLU activations of every hidden layer: ``[Tensor[n, h_l] for l = 1 .. L-1]``."""
    out = []
    ws, bs = params["weights"], params["biases"]
    for w, b in zip(ws[:-1], bs[:-1], strict=True):
        x = torch.relu(x @ w.T + b)
        out.append(x)
    return out


def cross_entropy(params: Params, x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean cross-entropy (nats) of ``forward(params, x)`` against labels ``y: Tensor[n]`` (int64)."""
    with torch.no_grad():
        return float(F.cross_entropy(forward(params, x), y))


def accuracy(params: Params, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of ``x: Tensor[n, h_0]`` whose arg-max logit equals ``y: Tensor[n]``."""
    with torch.no_grad():
        return float((forward(params, x).argmax(dim=1) == y).double().mean())


def permute(params: Params, perms: Sequence[torch.Tensor]) -> Params:
    """Reorder the hidden units: unit ``j`` of hidden layer ``l`` becomes old unit ``perms[l-1][j]``.

    ``W_l <- W_l[P_l][:, P_{l-1}]``, ``b_l <- b_l[P_l]`` with ``P_0`` and ``P_L`` the identity
    (inputs and outputs keep their order), so the network computes the same function.

    Args:
        params: the network (``L`` layers).
        perms: ``L - 1`` index tensors, ``perms[l-1]: LongTensor[h_l]``, each a permutation.

    Raises:
        ValueError: not one permutation per hidden layer, or one of the wrong length.

    Source: Ainsworth, Hayase, Srinivasa 2023, "Git Re-Basin", sec. 2 (permutation symmetry).
    """
    ws, bs = params["weights"], params["biases"]
    if len(perms) != len(ws) - 1:
        raise ValueError(f"need {len(ws) - 1} permutations (one per hidden layer), got {len(perms)}")
    full = [None, *perms, None]
    new_w, new_b = [], []
    for layer, (w, b) in enumerate(zip(ws, bs, strict=True)):
        out_p, in_p = full[layer + 1], full[layer]
        if out_p is not None:
            if len(out_p) != w.shape[0]:
                raise ValueError(f"permutation {layer} has length {len(out_p)}, layer width {w.shape[0]}")
            w, b = w[out_p], b[out_p]
        if in_p is not None:
            w = w[:, in_p]
        new_w.append(w.clone())
        new_b.append(b.clone())
    return {"weights": new_w, "biases": new_b}


def combine(terms: Sequence[tuple[float, Params]]) -> Params:
    """The linear combination ``sum_k c_k theta_k`` of networks of one architecture.

    Raises:
        ValueError: no terms, or networks of different shapes.
    """
    if not terms:
        raise ValueError("combine needs at least one (coefficient, params) term")
    shapes = [[tuple(w.shape) for w in p["weights"]] for _, p in terms]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(f"networks of different shapes cannot be combined: {shapes}")
    out: Params = {}
    for key in ("weights", "biases"):
        out[key] = [sum(c * p[key][i] for c, p in terms) for i in range(len(terms[0][1][key]))]
    return out


def interpolate(a: Params, b: Params, lam: float) -> Params:
    """``(1 - lam) theta_A + lam theta_B`` (the linear path of Frankle et al. 2020, eq. 1)."""
    return combine([(1.0 - lam, a), (lam, b)])


def train(
    params: Params,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    num_steps: int,
    learning_rate: float,
    batch_size: int,
    generator: torch.Generator,
    trainable: Sequence[int] | None = None,
) -> tuple[Params, list[float]]:
    """Minimise the mean cross-entropy with Adam on minibatches drawn without replacement.

    Args:
        params: the initial network (not modified).
        x, y: ``Tensor[n, h_0]`` inputs and ``LongTensor[n]`` labels.
        num_steps: optimiser steps (epochs of ``ceil(n / batch_size)`` minibatches, the last
            one cut short).
        learning_rate: Adam's step size.
        batch_size: minibatch size.
        generator: shuffles the minibatches.
        trainable: indices of the layers that learn (default: all).

    Returns:
        ``(trained params, per-step training loss in nats)``.

    Source: Kingma & Ba 2015 (``torch.optim.Adam`` defaults besides the step size).
    """
    with single_thread():  # small matrices: one intra-op thread is faster and shares the machine
        layers = range(len(params["weights"])) if trainable is None else trainable
        state = {k: [t.detach().clone() for t in v] for k, v in params.items()}
        leaves = [state[k][i].requires_grad_() for i in layers for k in ("weights", "biases")]
        opt = torch.optim.Adam(leaves, lr=learning_rate)
        n, losses, order, pos = x.shape[0], [], torch.randperm(x.shape[0], generator=generator), 0
        for _ in range(num_steps):
            if pos >= n:
                order, pos = torch.randperm(n, generator=generator), 0
            idx = order[pos : pos + batch_size]
            pos += batch_size
            loss = F.cross_entropy(forward(state, x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        return {k: [t.detach() for t in v] for k, v in state.items()}, losses


def flat(params: Params, layers: Sequence[int] | None = None) -> Any:
    """All parameters of ``layers`` (default all) as one vector ``Tensor[p]``."""
    idx = range(len(params["weights"])) if layers is None else layers
    return torch.cat([t.reshape(-1) for i in idx for t in (params["weights"][i], params["biases"][i])])
