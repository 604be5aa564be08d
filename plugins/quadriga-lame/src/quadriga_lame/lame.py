"""LAME: Laplacian-adjusted maximum-likelihood estimation on a frozen classifier's outputs.

For one test batch with class probabilities ``p_i`` (the frozen model's softmax) and an affinity
``W`` over its L2-normalised penultimate features, LAME finds soft assignments ``z_i`` on the
simplex minimising

    L(z) = - sum_i z_i' log p_i + sum_i z_i' log z_i - sum_ij W_ij z_i' z_j

(a KL term to the model's predictions plus a Laplacian term that pulls neighbours to the same
class). The concave-convex procedure linearises the (concave) Laplacian term at the current
``z`` and minimises the rest in closed form, giving the fixed point

    z_i <- softmax( log p_i + sum_j W_ij z_j ),   started at z = p,

iterated until the relative change of ``L`` is at most ``1e-8`` (at most 100 steps). Nothing is
learned: the model's parameters never change, so a batch of one (``W = 0``) returns ``p``.

Source: Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, "Parameter-free online test-time
adaptation", CVPR, sec. 3 (the objective and its bound-optimisation / concave-convex update); the
official code's ``laplacian_optimization`` and ``kNN_affinity`` in ``src/adaptation/lame.py``.
Where the two differ we follow the paper: the code's energy multiplies the pairwise term by
``bound_lambda`` twice (``entropy_energy``), which changes only the stopping rule when
``bound_lambda != 1`` and is not used here (``bound_lambda = 1``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Learner
from quadriga.params import param
from quadriga.threads import single_thread
from quadriga.validators import int_at_least, one_of

__all__ = ["AFFINITIES", "LAME", "affinity_matrix", "lame_energy", "laplacian_optimization"]

AFFINITIES = ("knn", "rbf", "linear")


def affinity_matrix(features: Any, kind: str = "knn", knn: int = 5) -> Any:
    """The affinity ``W: Tensor[n, n]`` of one batch's L2-normalised features ``Tensor[n, d]``.

    - ``"knn"``: ``W_ij = 1`` when ``j`` is among the ``knn`` nearest neighbours of ``i`` (self
      excluded, Euclidean), else 0 (not symmetrised);
    - ``"rbf"``: ``W_ij = exp(-|f_i - f_j|^2 / (2 sigma^2))`` on the same neighbours, ``sigma`` the
      mean distance to the ``knn``-th neighbour;
    - ``"linear"``: ``W = F F'`` (cosine similarities), diagonal zeroed, negatives clipped at 0.

    Fewer than ``knn + 1`` rows use every other row as neighbours; one row gives ``W = 0``.

    Raises:
        ValueError: an unknown kind.

    Source: Boudiaf et al. 2022, sec. 3 and the official ``kNN_affinity``, ``rbf_affinity``,
    ``linear_affinity``.
    """
    import torch

    n = features.shape[0]
    if kind == "linear":
        W = (features @ features.T).clamp_min(0.0)
        return W.fill_diagonal_(0.0)
    if kind not in ("knn", "rbf"):
        raise ValueError(f"unknown affinity '{kind}'; choose one of {', '.join(AFFINITIES)}")
    W = torch.zeros(n, n, dtype=features.dtype)
    k = min(knn, n - 1)
    if k < 1:
        return W
    dist = torch.cdist(features, features)
    dist.fill_diagonal_(float("inf"))
    d_k, idx = dist.topk(k, dim=1, largest=False)
    if kind == "knn":
        W.scatter_(1, idx, 1.0)
    else:
        sigma = d_k[:, -1].mean().clamp_min(1e-12)
        W.scatter_(1, idx, torch.exp(-(d_k**2) / (2 * sigma**2)))
    return W


def lame_energy(z: Any, log_p: Any, W: Any) -> float:
    """``L(z) = sum_i z_i'(log z_i - log p_i) - sum_ij W_ij z_i' z_j`` (nats; the objective above)."""
    return float((z * (z.clamp_min(1e-30).log() - log_p)).sum() - (z * (W @ z)).sum())


def laplacian_optimization(probs: Any, W: Any, max_steps: int = 100, tol: float = 1e-8) -> tuple[Any, int]:
    """The concave-convex fixed point ``z_i <- softmax(log p_i + sum_j W_ij z_j)`` from ``z = p``.

    Args:
        probs: ``Tensor[n, C]`` class probabilities (rows on the simplex); W: ``Tensor[n, n]``
            non-negative affinities; max_steps: iteration cap; tol: relative energy change at
            which the iteration stops.

    Returns:
        ``(z: Tensor[n, C], steps)``; the energy :func:`lame_energy` does not increase along the
        iterations when ``W`` is symmetric positive semi-definite (the bound-optimisation
        guarantee; a kNN ``W`` in general is not, and the official code uses it as is).

    Source: Boudiaf et al. 2022, sec. 3 (concave-convex procedure); official ``laplacian_optimization``.
    """
    log_p = probs.clamp_min(1e-30).log()
    z = probs
    old = float("inf")
    steps = 0
    for steps in range(1, max_steps + 1):
        z = (log_p + W @ z).softmax(-1)
        energy = lame_energy(z, log_p, W)
        if steps > 1 and abs(energy - old) <= tol * abs(old):
            break
        old = energy
    return z, steps


def _check_model(model: Any) -> Any:
    net = getattr(model, "model", None)
    if not (callable(getattr(net, "features", None)) and callable(getattr(net, "head", None))):
        raise ConfigError(
            "'model' must be a Fitted network with features(x) and head(f) (e.g. from 'mlp-classifier').",
            key="model",
        )
    if "classes" not in model.info:
        raise ConfigError("'model' has no info['classes'] (use 'mlp-classifier').", key="model")
    return net


@attrs.define(kw_only=True)
class LAME(Learner):
    """LAME test-time adaptation of a frozen classifier (see the module docstring for the math).

    ``fit(task, model)`` wraps the frozen network of ``model`` (a ``Fitted`` from
    ``mlp-classifier``: a module with ``features`` and ``head``) in a stream predictor: each
    batch's probabilities are replaced by LAME's assignments ``z`` (:func:`laplacian_optimization`
    over :func:`affinity_matrix` of the batch's L2-normalised features). Batches are independent;
    the model is never updated. ``task`` is the shift dataset (not read: LAME uses no training data).

    Returns ``Fitted(model = the frozen network, predict = stream predictor, info = {classes,
    affinity, knn})``; the mean number of fixed-point steps of the last ``predict`` call is
    stored in the predictor's ``last_steps`` attribute.

    Shapes: ``predict(X[n, p], batches: list[slice]) -> ndarray[n, C]`` (rows on the simplex).
    Units: ``knn`` counts neighbours; probabilities are fractions.

    Raises:
        ConfigError: an unknown affinity, ``knn < 1``, a ``model`` that is not such a network.

    Source: Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, "Parameter-free online test-time
    adaptation", CVPR, sec. 3; defaults (kNN affinity, k = 5, 100 steps) from the official configs.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Dataset,), "model": (Fitted,)}

    affinity: str = param(
        "knn", doc=f"batch affinity: one of {', '.join(AFFINITIES)}", validator=one_of(AFFINITIES)
    )
    knn: int = param(5, doc="neighbours per row (knn and rbf affinities)", validator=int_at_least(1))
    max_steps: int = param(100, doc="cap on the fixed-point iterations per batch", validator=int_at_least(1))

    def fit(self, task: Any, model: Any, *, generator: Any, progress: Any) -> Fitted:
        """Wrap ``model``'s network in LAME's stream predictor (see the class docstring)."""
        net = _check_model(model)
        affinity, knn, max_steps = self.affinity, self.knn, self.max_steps

        def predict(X: np.ndarray, batches: list[slice]) -> np.ndarray:
            import torch

            net.eval()
            out, steps = [], []
            with torch.no_grad(), single_thread():
                for b in batches:
                    f = net.features(torch.as_tensor(X[b], dtype=torch.float32)).double()
                    probs = net.head(f.float()).double().softmax(-1)
                    W = affinity_matrix(torch.nn.functional.normalize(f, dim=-1), affinity, knn)
                    z, k = laplacian_optimization(probs, W, max_steps)
                    out.append(z)
                    steps.append(k)
            predict.last_steps = float(np.mean(steps)) if steps else 0.0  # type: ignore[attr-defined]
            return torch.cat(out).numpy()

        return Fitted(
            model=net,
            info={"classes": list(model.info["classes"]), "affinity": affinity, "knn": knn},
            predict=predict,
        )
