"""Leverage scores, capped inclusion probabilities, the spatial binary tree and pivotal sampling.

Plain numpy; nothing here imports torch. The four steps of Shimizu, Cheng, Musco & Weare,
"Improved Active Learning via Dependent Leverage Score Sampling" (ICLR 2024, arXiv 2310.04966):

1. :func:`leverage_scores`: ``tau_i = ||U_i||^2`` for an orthonormal basis ``U`` of the column
   span of the design ``A`` (sec. 2, eq. (2)); ``sum(tau) = rank(A)``.
2. :func:`inclusion_probabilities`: ``p_i = min(1, c tau_i)`` with ``c`` such that ``sum(p) = k``
   (sec. 3; the capping loop of the reference code's ``distPivotalSampling``).
3. :func:`tree_order`: a binary tree over the points' coordinates by recursive median splits,
   coordinate-wise (a k-d tree) or along the principal direction (Algorithm 2), laid out as a
   complete tree with ``2^L`` leaves (empty leaves are zero-probability dummies).
4. :func:`pivotal_sample`: the bottom-up pivotal tournament on that tree (Algorithm 1, after
   Deville & Tillé 1998): every marginal ``P(i in S) = p_i`` exactly, ``|S| = sum(p)`` exactly
   when the sum is an integer, and nearby points are negatively dependent.

:func:`bernoulli_sample` is the independent baseline with the same marginals, and
:func:`weighted_least_squares` the estimator ``argmin_x sum_{i in S} (a_i^T x - b_i)^2 / p_i``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TREES",
    "bernoulli_sample",
    "inclusion_probabilities",
    "leverage_scores",
    "pivotal_sample",
    "tree_order",
    "weighted_least_squares",
]

TREES = ("kd", "pca")
_ROUND = 1e-9  # residuals this close to 0 or 1 are rounding error of an integer sum


def leverage_scores(design: np.ndarray) -> np.ndarray:
    """Statistical leverage scores of the rows of a design matrix.

    ``tau_i = ||U_i||^2`` where ``U`` holds the left singular vectors of ``A`` whose singular
    values exceed ``max(n, d) * eps * s_max`` (so a rank-deficient ``A`` gives ``sum(tau) = rank``).

    Shapes:
        ``design: ndarray[n, d]`` -> ``ndarray[n]``, each in ``[0, 1]``.

    Units:
        dimensionless; ``sum(tau) = rank(A)`` (a count).

    Raises:
        ValueError: ``design`` is not a finite 2-D array.

    Source: Shimizu et al. 2024, sec. 2, eq. (2) (``tau_i = a_i^T (A^T A)^+ a_i``).
    """
    a = np.asarray(design, dtype=np.float64)
    if a.ndim != 2 or not np.isfinite(a).all():
        raise ValueError(f"design must be a finite 2-D array, got shape {a.shape}")
    u, s, _ = np.linalg.svd(a, full_matrices=False)
    if s.size == 0 or s[0] == 0.0:
        return np.zeros(a.shape[0])
    keep = s > max(a.shape) * np.finfo(np.float64).eps * s[0]
    return np.einsum("ij,ij->i", u[:, keep], u[:, keep])


def inclusion_probabilities(scores: np.ndarray, budget: int) -> np.ndarray:
    """Inclusion probabilities ``p_i = min(1, c * scores_i)`` with ``sum(p) = budget``.

    Scales the scores to sum to ``budget``, caps at 1 and rescales the uncapped rest, until
    no probability exceeds 1 (at most ``n`` rounds).

    Shapes:
        ``scores: ndarray[n]`` (non-negative) -> ``ndarray[n]`` in ``[0, 1]``.

    Units:
        probabilities; ``budget`` is a count of rows.

    Raises:
        ValueError: negative or non-finite scores, or ``budget`` not in ``[1, #{scores > 0}]``.

    Source: Shimizu et al. 2024, sec. 3 (``p_i = min(1, c tau_i)``); the capping loop of the
    reference code (``sampling.jl``, ``distPivotalSampling``).
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("scores must be a finite, non-negative 1-D array")
    positive = int((s > 0).sum())
    if not 1 <= budget <= positive:
        raise ValueError(f"budget must be in [1, {positive}] (rows with a positive score), got {budget}")
    p = s * (budget / s.sum())
    capped = np.zeros(s.size, dtype=bool)
    for _ in range(s.size):
        over = (p >= 1.0) & ~capped
        if not over.any():
            break
        capped |= over
        p[capped] = 1.0
        free = ~capped & (s > 0)
        if not free.any():
            break
        p[free] = s[free] * ((budget - capped.sum()) / s[free].sum())
    return np.clip(p, 0.0, 1.0)


def tree_order(coordinates: np.ndarray, tree: str = "kd") -> np.ndarray:
    """Leaf layout of the spatial binary tree: ``order[j]`` is the row at leaf ``j`` (-1: empty).

    The root holds every point; a node with ``m`` points and ``2^h`` leaf slots sends the
    ``ceil(m/2)`` points below the median of one direction to its left child and the rest to its
    right child, each with ``2^(h-1)`` slots, down to single points. The direction is the
    coordinate ``depth mod dim`` for ``tree = "kd"``, and the top principal axis of the node's
    points for ``tree = "pca"``. Siblings in this complete tree are the pairs the pivotal
    tournament combines.

    Shapes:
        ``coordinates: ndarray[n, m]`` (or ``[n]``) -> ``ndarray[2^ceil(log2 n)]`` of int row
        indices, each row exactly once, ``-1`` for empty leaves.

    Units:
        indices (counts); coordinates in the task's own units.

    Raises:
        ValueError: an unknown ``tree`` or non-finite coordinates.

    Source: Shimizu et al. 2024, sec. 4 and Algorithm 2 (PCA splits); the coordinate-wise
    variant is the reference code's ``createBinaryTree(..., "coordwise")``.
    """
    if tree not in TREES:
        raise ValueError(f"tree must be one of {TREES}, got {tree!r}")
    x = np.asarray(coordinates, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    if not np.isfinite(x).all():
        raise ValueError("coordinates must be finite")
    n, dim = x.shape
    height = max(0, int(np.ceil(np.log2(max(n, 1)))))
    order = np.full(2**height, -1, dtype=np.int64)
    stack = [(np.arange(n), 0, 0)]  # (rows, first leaf slot, depth)
    while stack:
        rows, start, depth = stack.pop()
        if rows.size == 1:
            order[start] = rows[0]
            continue
        if rows.size == 0:
            continue
        pts = x[rows]
        if tree == "kd":
            key = pts[:, depth % dim]
        else:
            centred = pts - pts.mean(axis=0)
            _, _, vt = np.linalg.svd(centred, full_matrices=False)
            key = centred @ vt[0]
        half = (rows.size + 1) // 2
        split = np.argsort(key, kind="stable")
        slots = 2 ** (height - depth - 1)
        stack.append((rows[split[:half]], start, depth + 1))
        stack.append((rows[split[half:]], start + slots, depth + 1))
    return order


def pivotal_sample(probabilities: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw a sample by pivotal sampling over a complete binary tree.

    Rows with ``p_i = 1`` are taken outright. The others play a tournament from the leaves
    up: two siblings with residual probabilities ``a`` and ``b`` combine as follows.

    - ``a + b <= 1``: one survives with ``a + b``; the left with probability ``a / (a + b)``.
    - ``a + b > 1``: one is selected; the other survives with ``a + b - 1``. The right is
      selected with probability ``(1 - a) / (2 - a - b)``.

    At the root the last residual ``r`` is selected with probability ``r`` (``r`` is 0 or 1
    when ``sum(p)`` is an integer). Every ``P(i in S) = p_i``; ``|S|`` is ``floor(sum p)`` or
    ``ceil(sum p)``, exactly ``sum(p)`` for an integer sum.

    Shapes:
        ``probabilities: ndarray[n]`` in ``[0, 1]``; ``order: ndarray[2^L]`` from
        :func:`tree_order` -> sorted ``ndarray[|S|]`` of int row indices.

    Units:
        probabilities; indices.

    Raises:
        ValueError: probabilities outside ``[0, 1]``, or ``order`` not a layout of all ``n`` rows.

    Source: Shimizu et al. 2024, Algorithm 1 (binary-tree pivotal sampling); Deville & Tillé,
    "Unequal probability sampling without replacement through a splitting method",
    Biometrika 1998.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    order = np.asarray(order, dtype=np.int64)
    if p.ndim != 1 or not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("probabilities must be a 1-D array of numbers in [0, 1]")
    real = order[order >= 0]
    if real.size != p.size or np.unique(real).size != p.size:
        raise ValueError(f"order must place each of the {p.size} rows at exactly one leaf")
    certain = p >= 1.0 - _ROUND
    q = np.where(order >= 0, p[np.maximum(order, 0)], 0.0)
    q[(order >= 0) & certain[np.maximum(order, 0)]] = 0.0
    who = order.copy()
    chosen = [np.flatnonzero(certain)]
    while q.size > 1:
        a, b = q[0::2], q[1::2]
        wa, wb = who[0::2], who[1::2]
        s = a + b
        u = rng.random(a.size)
        low = s <= 1.0
        left_survives = np.where(low, u * s < a, u * (2.0 - s) < (1.0 - a))
        chosen.append(np.where(left_survives, wb, wa)[~low])
        q = np.clip(np.where(low, s, s - 1.0), 0.0, 1.0)
        who = np.where(left_survives, wa, wb)
    r = float(q[0])
    if abs(r - round(r)) < _ROUND:
        r = float(round(r))
    if who[0] >= 0 and rng.random() < r:
        chosen.append(who[:1])
    return np.sort(np.concatenate(chosen))


def bernoulli_sample(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Independent (Poisson) sampling: row ``i`` is kept with probability ``p_i``, independently.

    Shapes:
        ``probabilities: ndarray[n]`` in ``[0, 1]`` -> sorted ``ndarray[|S|]`` of row indices;
        ``E|S| = sum(p)``.

    Units:
        probabilities; indices.

    Raises:
        ValueError: probabilities outside ``[0, 1]``.

    Source: Shimizu et al. 2024, sec. 5 (the "Bernoulli" leverage and uniform baselines).
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 1 or not np.isfinite(p).all() or (p < 0).any() or (p > 1).any():
        raise ValueError("probabilities must be a 1-D array of numbers in [0, 1]")
    return np.flatnonzero(rng.random(p.size) < p)


def weighted_least_squares(
    design: np.ndarray, labels: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, int]:
    """``argmin_x sum_i w_i (a_i^T x - b_i)^2`` by ``numpy.linalg.lstsq`` on the rows scaled by ``sqrt(w)``.

    A rank-deficient system (fewer than ``d`` independent rows) gets the minimum-norm solution,
    which is kept rather than re-drawn (re-drawing would favour the method that fails).

    Shapes:
        ``design: ndarray[k, d]``, ``labels: ndarray[k]``, ``weights: ndarray[k]`` (positive)
        -> ``(coef: ndarray[d], rank: int)``.

    Units:
        ``coef`` in label units per feature unit; ``weights`` are ``1 / p_i`` (dimensionless).

    Raises:
        ValueError: mismatched lengths or non-positive weights.

    Source: Shimizu et al. 2024, sec. 2 (the importance-weighted estimator
    ``x~ = argmin ||S A x - S b||``, ``S = diag(1/sqrt(p_i))``).
    """
    a = np.asarray(design, dtype=np.float64)
    b = np.asarray(labels, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if a.ndim != 2 or b.shape != (a.shape[0],) or w.shape != (a.shape[0],):
        raise ValueError(f"shapes do not match: design {a.shape}, labels {b.shape}, weights {w.shape}")
    if (w <= 0).any() or not np.isfinite(w).all():
        raise ValueError("weights must be positive and finite")
    if a.shape[0] == 0:
        return np.zeros(a.shape[1]), 0
    root = np.sqrt(w)
    coef, _, rank, _ = np.linalg.lstsq(a * root[:, None], b * root, rcond=None)
    return coef, int(rank)
