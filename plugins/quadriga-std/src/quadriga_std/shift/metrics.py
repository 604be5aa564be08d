"""Classification metrics under shift: accuracy, calibration, OOD detection, selective accuracy.

Pure numpy functions on class probabilities ``probs: ndarray[n, C]`` (rows sum to 1) and labels.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["expected_calibration_error", "ood_auroc", "selective_accuracy"]


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, bins: int = 15) -> float:
    """ECE: ``sum_b (n_b / n) |acc_b - conf_b|`` over ``bins`` equal-width confidence bins.

    Args:
        confidence: ``ndarray[n]`` in [0, 1] (the top-class probability); correct: ``ndarray[n]``
            bool; bins: number of bins on (0, 1] (a confidence ``c`` falls in bin ``ceil(c * bins)``,
            0 joins the first).

    Returns:
        a fraction in [0, 1]; 0 for a perfectly calibrated predictor on every bin.

    Raises:
        ValueError: empty or mismatched inputs.

    Source: Guo, Pleiss, Sun & Weinberger 2017, "On calibration of modern neural networks", ICML,
    eq. (3) (after Naeini et al. 2015).
    """
    conf = np.asarray(confidence, np.float64)
    hit = np.asarray(correct, np.float64)
    if conf.size == 0 or conf.shape != hit.shape:
        raise ValueError(f"need equal non-empty shapes, got {conf.shape} and {hit.shape}")
    idx = np.clip(np.ceil(conf * bins).astype(int) - 1, 0, bins - 1)
    acc_b = np.bincount(idx, weights=hit, minlength=bins)
    conf_b = np.bincount(idx, weights=conf, minlength=bins)
    return float(np.abs(acc_b - conf_b).sum() / conf.size)


def ood_auroc(score: np.ndarray, is_ood: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` (higher = more out-of-distribution) for ``is_ood``.

    scikit-learn's ``roc_auc_score``; equal to ``P(score_ood > score_in) + P(tie) / 2`` (the
    Mann-Whitney statistic). NaN when one class is absent.

    Args:
        score: ``ndarray[n]``; is_ood: ``ndarray[n]`` bool.

    Source: Hendrycks & Gimpel 2017, "A baseline for detecting misclassified and out-of-distribution
    examples", ICLR (maximum-softmax-probability score, AUROC).
    """
    from sklearn.metrics import roc_auc_score

    flag = np.asarray(is_ood, bool)
    if flag.all() or not flag.any():
        return math.nan
    return float(roc_auc_score(flag, np.asarray(score, np.float64)))


def selective_accuracy(confidence: np.ndarray, correct: np.ndarray, coverage: float) -> float:
    """Accuracy on the ``ceil(coverage * n)`` most confident rows (ties broken by row order).

    Args:
        confidence: ``ndarray[n]``; correct: ``ndarray[n]`` bool; coverage: fraction in (0, 1].

    Raises:
        ValueError: coverage outside (0, 1] or empty inputs.

    Source: Geifman & El-Yaniv 2017, "Selective classification for deep neural networks", NeurIPS,
    sec. 2 (selective risk at a given coverage, softmax-response rule).
    """
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    conf = np.asarray(confidence, np.float64)
    if conf.size == 0:
        raise ValueError("empty inputs")
    keep = np.argsort(-conf, kind="stable")[: math.ceil(coverage * conf.size - 1e-9)]
    return float(np.asarray(correct, np.float64)[keep].mean())
