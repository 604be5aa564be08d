"""Conformal selection arithmetic: clipped scores, conformal p-values, BH, e-BH and OptCS-MSel.

Every function here is pure numpy on 1-D or 2-D arrays; the estimators in
:mod:`quadriga_optcs.estimators` fit the candidate models and call these.

Notation (Bai & Jin 2024, arXiv 2411.17983, sec. 2-4): labelled calibration units
``(X_i, Y_i), i = 1..n``, unlabelled test units ``X_{n+j}, j = 1..m``, hypotheses
``H_j: Y_{n+j} <= c``. A score ``V(x, y)`` monotone in ``y`` gives calibration scores
``V_i = V(X_i, Y_i)`` and test scores ``Vhat_j = V(X_{n+j}, c)``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "benjamini_hochberg",
    "bh_size",
    "clipped_scores",
    "conformal_pvalues",
    "e_benjamini_hochberg",
    "optcs_msel",
    "optcs_selection",
]


def clipped_scores(
    mu_calibration: np.ndarray, y_calibration: np.ndarray, mu_test: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """Clipped scores ``V(x, y) = M 1{y > c} - mu(x)`` with ``M = +inf``.

    Args:
        mu_calibration: ``ndarray[n]`` predictions ``mu(X_i)`` (units of y).
        y_calibration: ``ndarray[n]`` labels ``Y_i`` (units of y).
        mu_test: ``ndarray[m]`` predictions ``mu(X_{n+j})``.
        threshold: ``c`` (units of y).

    Returns:
        ``(V[n], Vhat[m])``: ``V_i = +inf`` where ``Y_i > c`` else ``-mu(X_i)``; ``Vhat_j = -mu(X_{n+j})``.
        ``M = +inf`` is the limit of the official code's ``M = 1000``: it is valid for any ``M`` larger
        than the range of ``mu`` and never lets a calibration alternative count as ``<=`` a test score.

    Source: Jin & Candès 2023, JMLR 24(244), "Selection by prediction with conformal p-values",
    sec. 3 (the clipped score, eq. (7)); Bai & Jin 2024, sec. 2.
    """
    v = np.where(
        np.asarray(y_calibration, np.float64) > threshold, np.inf, -np.asarray(mu_calibration, np.float64)
    )
    return v, -np.asarray(mu_test, np.float64)


def conformal_pvalues(
    v_calibration: np.ndarray, v_test: np.ndarray, uniforms: np.ndarray | None = None
) -> np.ndarray:
    """Conformal p-values ``p_j = (#{V_i < Vhat_j} + U_j (1 + #{V_i = Vhat_j})) / (n + 1)``.

    Args:
        v_calibration: ``ndarray[n]`` calibration scores.
        v_test: ``ndarray[m]`` test scores.
        uniforms: ``ndarray[m]`` of ``U_j ~ U(0, 1)`` for the randomised p-value, or ``None`` for the
            deterministic ``U_j = 1`` (``p_j = (1 + #{V_i <= Vhat_j}) / (n + 1)``).

    Returns:
        ``ndarray[m]`` in ``(0, 1]``. Under ``H_j`` and exchangeability ``P(p_j <= t) <= t`` for every
        ``t``; randomised p-values of exchangeable nulls are exactly uniform.

    Source: Jin & Candès 2023, eq. (8) (randomised) and Lemma 3.1 (super-uniformity).
    """
    s = np.sort(np.asarray(v_calibration, np.float64))
    t = np.asarray(v_test, np.float64)
    below = np.searchsorted(s, t, side="left")
    ties = np.searchsorted(s, t, side="right") - below
    u = 1.0 if uniforms is None else np.asarray(uniforms, np.float64)
    return (below + u * (1.0 + ties)) / (s.size + 1.0)


def bh_size(pvalues: np.ndarray, q: float) -> np.ndarray:
    """Size of the Benjamini-Hochberg rejection set, row-wise.

    Args:
        pvalues: ``ndarray[..., m]``.
        q: the FDR level in (0, 1).

    Returns:
        integer ``ndarray[...]``: ``R = max{k : p_(k) <= q k / m}`` (0 when no such ``k``).

    Source: Benjamini & Hochberg 1995, JRSS-B 57(1), the step-up procedure of sec. 3.
    """
    p = np.sort(np.asarray(pvalues, np.float64), axis=-1)
    m = p.shape[-1]
    ok = p <= q * np.arange(1, m + 1) / m
    last = m - np.argmax(ok[..., ::-1], axis=-1)
    return np.where(ok.any(axis=-1), last, 0)


def benjamini_hochberg(pvalues: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Hochberg selection at level ``q``.

    Args:
        pvalues: ``ndarray[m]``.
        q: FDR level in (0, 1).

    Returns:
        boolean ``ndarray[m]``: ``p_j <= q R / m`` with ``R`` from :func:`bh_size` (the ``R`` smallest).

    Source: Benjamini & Hochberg 1995, sec. 3; equals ``scipy.stats.false_discovery_control(p) <= q``.
    """
    p = np.asarray(pvalues, np.float64)
    r = int(bh_size(p, q))
    return p <= q * r / p.size if r else np.zeros(p.shape, bool)


def e_benjamini_hochberg(evalues: np.ndarray, q: float) -> np.ndarray:
    """e-BH selection: the ``R`` largest e-values, ``R = max{k : e_(k) >= m / (q k)}``.

    Args:
        evalues: ``ndarray[m]`` of non-negative e-values (``0`` is allowed and never selected).
        q: FDR level in (0, 1).

    Returns:
        boolean ``ndarray[m]``. Equals BH on ``1 / e``. FDR ``<= q m_0 / m`` for e-values with
        ``sum_{null j} E[e_j] <= m_0`` under any dependence.

    Source: Wang & Ramdas 2022, JRSS-B 84(3), "False discovery rate control with e-values", Definition 2.
    """
    e = np.asarray(evalues, np.float64)
    with np.errstate(divide="ignore"):
        return benjamini_hochberg(np.where(e > 0, 1.0 / e, np.inf), q)


def optcs_msel(
    v_calibration: np.ndarray, v_test: np.ndarray, q: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OptCS-MSel p-values after choosing, for each test unit, the candidate score with most selections.

    For test unit ``j`` and candidate ``k`` the auxiliary p-values of the other units are
    ``a_l^k = (#{i : V_i^k <= Vhat_l^k} + 1{Vhat_j^k <= Vhat_l^k}) / (n + 1)``, ``l != j``, with
    ``a_j^k = 0`` (unit ``j`` imputed into the calibration set); ``R_j^k = |BH(a^k, q)|``. The model
    ``k_j = argmax_k R_j^k`` (ties at random) depends on the data only through a function symmetric in
    calibration ``+ {j}``, so ``p_j = (1 + #{i : V_i^{k_j} < Vhat_j^{k_j}}) / (n + 1)`` stays a valid
    conformal p-value despite the reuse.

    Args:
        v_calibration: ``ndarray[K, n]`` calibration scores of ``K`` candidates.
        v_test: ``ndarray[K, m]`` test scores.
        q: FDR level in (0, 1).
        rng: ``numpy.random.Generator`` for the ties in the argmax.

    Returns:
        ``(p[m], R[m], k[m])``: p-values, ``R_j = max_k R_j^k`` (integers in ``[1, m]``) and the chosen
        candidate indices.

    Source: Bai & Jin 2024, arXiv 2411.17983, sec. 4.1 (OptCS-MSel) and Algorithm 1; tie conventions
    as in the official ``simulation/MSel/choosescore_Jin.py``. Cost ``O(K m^2 log m)``.
    """
    vc = np.asarray(v_calibration, np.float64)
    vt = np.asarray(v_test, np.float64)
    K, m = vt.shape
    n = vc.shape[1]
    sizes = np.empty((K, m), np.int64)
    for k in range(K):
        count_le = np.searchsorted(np.sort(vc[k]), vt[k], side="right")  # #{i : V_i <= Vhat_l}
        aux = (count_le[None, :] + (vt[k][:, None] <= vt[k][None, :])) / (n + 1.0)  # [j, l]
        np.fill_diagonal(aux, 0.0)
        sizes[k] = bh_size(aux, q)
    best = sizes.max(axis=0)
    # argmax with ties broken uniformly at random: the largest random key among the maximisers
    keys = np.where(sizes == best[None, :], rng.random((K, m)), -1.0)
    chosen = np.argmax(keys, axis=0)
    cols = np.arange(m)
    less = np.array([np.searchsorted(np.sort(vc[k]), vt[k], side="left") for k in range(K)])
    p = (1.0 + less[chosen, cols]) / (n + 1.0)
    return p, best, chosen


PRUNING = ("deterministic", "heterogeneous", "homogeneous")


def optcs_selection(
    pvalues: np.ndarray,
    sizes: np.ndarray,
    q: float,
    pruning: str,
    rng: np.random.Generator,
    beta: float = 1.0,
) -> np.ndarray:
    """The OptCS multiple-testing step: conformal e-values, then e-BH with pruning.

    ``e_j = 1{p_j <= beta q R_j / m} / (beta q R_j / m)``; the selection is e-BH on ``e_j / xi_j`` with
    ``xi_j = 1`` (``"deterministic"``), ``xi_j ~ U(0, 1)`` i.i.d. (``"heterogeneous"``) or one
    ``xi ~ U(0, 1)`` shared by all ``j`` (``"homogeneous"``).

    Args:
        pvalues: ``ndarray[m]`` from :func:`optcs_msel`.
        sizes: ``ndarray[m]`` of ``R_j``.
        q: FDR level in (0, 1).
        pruning: one of :data:`PRUNING`.
        rng: ``numpy.random.Generator`` for ``xi``.
        beta: the shrinkage of the e-value threshold (``1`` or the paper's ``0.9``).

    Returns:
        boolean ``ndarray[m]`` selection. FDR ``<= q`` in finite samples (Bai & Jin 2024, Theorem 3.3).

    Raises:
        ValueError: unknown ``pruning``.

    Source: Bai & Jin 2024, sec. 3 (eq. (3.3): conformal e-values; pruning as in Jin & Candès 2023b,
    "Model-free selective inference under covariate shift via weighted conformal p-values", sec. 3).
    """
    p = np.asarray(pvalues, np.float64)
    m = p.size
    level = beta * q * np.asarray(sizes, np.float64) / m
    e = np.where(p <= level, 1.0 / np.maximum(level, 1e-300), 0.0)
    if pruning == "deterministic":
        xi = np.ones(m)
    elif pruning == "heterogeneous":
        xi = rng.random(m)
    elif pruning == "homogeneous":
        xi = np.full(m, rng.random())
    else:
        raise ValueError(f"unknown pruning '{pruning}'; choose one of {', '.join(PRUNING)}.")
    return e_benjamini_hochberg(e / np.maximum(xi, 1e-300), q)
