"""Isotropic model merging: Iso-C and Iso-CTS, and the subspace-alignment diagnostic.

Both act per hidden layer on the task matrices ``Delta_t = W_t - W_0`` of the fine-tunes (the
trunk's weight matrices; biases are averaged across tasks, as in the paper's code) and replace the
spectrum of the merged update by its mean, so that every direction it spans counts equally:

- **Iso-C** (eq. 3-4): ``Delta = sum_t Delta_t = U S V^T``, merged ``W = W_0 + alpha U (mean(S) I) V^T``;
- **Iso-CTS** (sec. 4.2, Algorithm 1): the top ``k`` singular directions of ``sum_t Delta_t`` (the
  common subspace, ``k = r * common_space_fraction`` adjusted so that ``r - k`` divides by the number
  of tasks ``T``) plus, per task, the top ``(r - k) / T`` directions of ``Delta_t`` projected off the
  common left subspace; both bases re-orthogonalised by their polar factor (``U <- U_s V_s^T``), and
  every singular value set to the mean of the kept ones.

``alpha`` is tuned on the validation split over the kit's grid ``linspace(0, 3, 31)[1:]``
(:class:`~quadriga_std.weightspace.merging.MergingLearner`). The diagnostic (sec. 3, eq. 5-6): the
alignment ratio of task ``t`` is ``||U_k^T Delta_t||_F / ||Delta_t||_F`` with ``U_k`` the top ``k``
left singular vectors of ``sum_t Delta_t``, ``k`` the smallest rank holding 95 % of its spectral
energy ``sum sigma_i^2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
import torch
from quadriga_std.weightspace.merging import CHECK_MERGED, MergingLearner, task_vectors
from quadriga_std.weightspace.mlp import Params
from quadriga_std.weightspace.zoo import MLPZoo

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.validators import in_range

__all__ = [
    "IsoC",
    "IsoCTS",
    "SubspaceAlignment",
    "alignment_ratios",
    "iso_c_matrix",
    "iso_cts_matrix",
]


def iso_c_matrix(deltas: list[torch.Tensor]) -> torch.Tensor:
    """Iso-C's merged update of one layer: ``U (mean(S) I) V^T`` of ``sum_t Delta_t`` (``Tensor[m, n]``).

    Source: Marczak et al. 2025, "No task left behind: isotropic model merging with common and
    task-specific subspaces", ICML, arXiv 2502.04959, eq. 3-4.
    """
    u, s, vh = torch.linalg.svd(sum(deltas), full_matrices=False)
    return s.mean() * (u @ vh)


def _polar(m: torch.Tensor) -> torch.Tensor:
    """The orthogonal polar factor ``U_s V_s^T`` of ``m = U_s S_s V_s^T``."""
    u, _, vh = torch.linalg.svd(m, full_matrices=False)
    return u @ vh


def iso_cts_matrix(deltas: list[torch.Tensor], common_space_fraction: float = 0.8) -> torch.Tensor:
    """Iso-CTS's merged update of one layer (``Tensor[m, n]``) from the task matrices ``deltas``.

    Args:
        deltas: ``T`` matrices ``Tensor[m, n]``.
        common_space_fraction: share of the rank ``r = min(m, n)`` given to the common subspace
            before the adjustment that makes ``r - k`` a multiple of ``T`` (the code's rounding).

    Raises:
        ValueError: a rank too small to give every task a direction (``r - k < T`` after rounding
            leaves no task-specific space only when ``r < T``).

    Source: Marczak et al. 2025, sec. 4.2 and Algorithm 1; the common size follows the official
    ``iso_cts`` (``round((r - k) / T) * T`` task directions).
    """
    t = len(deltas)
    r = min(deltas[0].shape)
    k = int(r * common_space_fraction)
    k = r - round((r - k) / t) * t
    per_task = (r - k) // t
    if per_task < 1 and r < t:
        raise ValueError(f"rank {r} leaves no task-specific direction for {t} tasks")
    u, s, vh = torch.linalg.svd(sum(deltas), full_matrices=False)
    us, ss, vs = [u[:, :k]], [s[:k]], [vh[:k]]
    proj = u[:, :k] @ u[:, :k].T
    for d in deltas:
        ut, st, vt = torch.linalg.svd(d - proj @ d, full_matrices=False)
        us.append(ut[:, :per_task])
        ss.append(st[:per_task])
        vs.append(vt[:per_task])
    big_u, big_vh, sigma = torch.cat(us, dim=1), torch.cat(vs, dim=0), torch.cat(ss)
    return sigma.mean() * (_polar(big_u) @ _polar(big_vh))


def _update(taus: Mapping[str, Params], fn: Any) -> Params:
    """``fn([Delta_t])`` per weight matrix and ``mean_t (b_t - b_0)`` per bias (the merged task vector)."""
    names = list(taus)
    first = taus[names[0]]
    weights = [
        fn([taus[t]["weights"][i].double() for t in names]).to(w.dtype)
        for i, w in enumerate(first["weights"])
    ]
    biases = [
        torch.stack([taus[t]["biases"][i] for t in names]).mean(dim=0) for i in range(len(first["biases"]))
    ]
    return {"weights": weights, "biases": biases}


@attrs.define(kw_only=True)
class IsoC(MergingLearner):
    """Iso-C: merge task fine-tunes with the flattened spectrum of their summed task matrices.

    ``W = W_0 + alpha * U (mean(S) I) V^T`` with ``sum_t Delta_t = U S V^T`` per hidden layer;
    biases ``b_0 + alpha * mean_t (b_t - b_0)``; ``alpha`` tuned on validation over
    ``scaling_grid``. Heads are not merged. ``Fitted`` as in
    :class:`~quadriga_std.weightspace.merging.MergingLearner`.

    Shapes: trunk matrices ``[h_l, h_{l-1}]``, SVD of rank ``min(h_l, h_{l-1})``.
    Units: ``alpha`` is dimensionless.

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``.

    Source: Marczak, Magistri, Cygert, Twardowski, Bagdanov, van de Weijer 2025, "No task left
    behind: isotropic model merging with common and task-specific subspaces", ICML, arXiv
    2502.04959, sec. 4.1, eq. 3-4.
    """

    def update(self, taus: Mapping[str, Params]) -> Params:
        """``iso_c_matrix([Delta_t])`` per layer, biases averaged."""
        return _update(taus, iso_c_matrix)


@attrs.define(kw_only=True)
class IsoCTS(MergingLearner):
    """Iso-CTS: Iso-C on a common subspace plus task-specific subspaces (Algorithm 1).

    Per hidden layer, :func:`iso_cts_matrix` (common fraction ``common_space_fraction`` of the
    rank); biases averaged; ``alpha`` tuned on validation over ``scaling_grid``.

    Shapes: trunk matrices ``[h_l, h_{l-1}]``; each task gets ``(r - k) / T`` directions.
    Units: ``alpha`` and ``common_space_fraction`` are dimensionless.

    Raises:
        ConfigError: a task that is not an ``mlp-zoo``.

    Source: Marczak et al. 2025, arXiv 2502.04959, sec. 4.2, Algorithm 1.
    """

    common_space_fraction: float = param(
        0.8, doc="share of each layer's rank for the common subspace", validator=in_range(0, 1, low_open=True)
    )

    def update(self, taus: Mapping[str, Params]) -> Params:
        """``iso_cts_matrix([Delta_t])`` per layer, biases averaged."""
        return _update(taus, lambda ds: iso_cts_matrix(ds, self.common_space_fraction))


def alignment_ratios(taus: Mapping[str, Params], energy: float = 0.95) -> dict[str, float]:
    """Per task, the mean over layers of ``||U_k^T Delta_t||_F / ||Delta_t||_F`` (eq. 5-6).

    ``U_k``: the top ``k`` left singular vectors of ``sum_t Delta_t``, ``k`` the smallest rank whose
    singular values hold ``energy`` of ``sum sigma_i^2``. A ratio of 1: the task's update lies in
    the merged update's dominant subspace; small: the merge leaves the task behind.

    Source: Marczak et al. 2025, sec. 3, eq. 5 (subspace alignment ratio) and eq. 6 (k at 95 %).
    """
    names = list(taus)
    out: dict[str, list[float]] = {t: [] for t in names}
    for i in range(len(taus[names[0]]["weights"])):
        deltas = [taus[t]["weights"][i].double() for t in names]
        u, s, _ = torch.linalg.svd(sum(deltas), full_matrices=False)
        share = torch.cumsum(s**2, 0) / (s**2).sum()
        k = int(torch.searchsorted(share, torch.tensor(energy, dtype=share.dtype))) + 1
        uk = u[:, :k]
        for t, d in zip(names, deltas, strict=True):
            out[t].append(float(torch.linalg.norm(uk.T @ d) / torch.linalg.norm(d)))
    return {t: float(np.mean(v)) for t, v in out.items()}


@attrs.define(kw_only=True)
class SubspaceAlignment(Evaluator):
    """Per-task alignment ratio of the task matrices with the summed update's dominant subspace.

    For each subject (a merged model: its suite is read back from the zoo by ``info``), values
    ``"<subject>/alignment_<task>"`` (:func:`alignment_ratios`) and ``"<subject>/alignment"`` (mean
    over tasks). It depends on the fine-tunes only, not on the merging method.

    Shapes: task matrices ``[h_l, h_{l-1}]`` per hidden layer.
    Units: ratios in [0, 1].

    Raises:
        ConfigError: no ``mlp-zoo`` reference, a subject that is not a merged model.

    Source: Marczak et al. 2025, arXiv 2502.04959, sec. 3, eq. 5-6 and Fig. 3a.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}
    check_inputs: ClassVar[dict[str, Any]] = CHECK_MERGED

    energy: float = param(
        0.95, doc="spectral energy share that fixes k", validator=in_range(0, 1, low_open=True)
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Alignment ratios of every subject's tasks (see the class docstring)."""
        if not isinstance(reference, MLPZoo):
            raise ConfigError("subspace-alignment needs the mlp-zoo as reference.", key="reference")
        values = {}
        for name, fitted in named(subject).items():
            info = getattr(fitted, "info", {})
            if not {"seed", "width", "tasks"} <= set(info):
                raise ConfigError(
                    "the subject is not a merged model: connect a merging learner.", key="subject"
                )
            suite = reference.suite(int(info["width"]), int(info["seed"]), list(info["tasks"]))
            ratios = alignment_ratios(task_vectors(suite), self.energy)
            values.update({f"{name}/alignment_{t}": r for t, r in ratios.items()})
            values[f"{name}/alignment"] = float(np.mean(list(ratios.values())))
        return Metrics(values=values, info={"energy": self.energy})
