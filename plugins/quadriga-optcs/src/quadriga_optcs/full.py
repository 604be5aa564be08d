"""OptCS with the scores fitted on the full sample (OptCS-Full), and with a model chosen too (Full-MSel).

No training split: every labelled unit (the dataset's ``"train"`` and ``"calibration"`` splits
together, ``n`` units) is both fitted on and calibrated against. The ``n + m`` labelled and test
units are pooled with the binary labels ``b_i = 1{Y_i > c}`` for labelled units and the null label
``b = 0`` imputed for every test unit; each unit's score comes from the model fitted on the pool
*without that unit* (leave-one-out), ``V_i = inf 1{Y_i > c} - mu^{-i}(X_i)``, ``Vhat_j = -mu^{-j}(X_j)``.
Under ``H_j`` the imputed label of ``j`` is its true binary label, so the pooled fits treat the
labelled units and ``j`` symmetrically and ``p_j`` stays a valid conformal p-value; the OptCS
e-values and e-BH (:func:`quadriga_optcs.selection.optcs_selection`) then control the FDR across
test units. With several candidates the choice per test unit is made as in OptCS-MSel
(:func:`quadriga_optcs.selection.optcs_msel`), on these leave-one-out scores (Full-MSel).

The ``n + m`` leave-one-out refits of each candidate are what made the paper's version costly; here
the candidates are ridge regressions (linear or quadratic features, several penalties), linear
smoothers whose leave-one-out predictions are exact in closed form from one fit
(:func:`ridge_loo_predictions`), so a replicate costs ``K`` solves of a ``(p + 1) x (p + 1)`` system.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np
from threadpoolctl import threadpool_limits

from quadriga.artifacts import Estimate
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Estimator
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import finite, in_range, one_of, optional
from quadriga_optcs._common import check_levels, level_key
from quadriga_optcs.estimators import read_splits
from quadriga_optcs.selection import PRUNING, clipped_scores, optcs_msel, optcs_selection

__all__ = ["FEATURES", "OptCSFull", "feature_map", "ridge_loo_predictions"]

#: feature maps of the ridge candidates
FEATURES = ("linear", "quadratic")


def feature_map(X: np.ndarray, kind: str) -> np.ndarray:
    """Features of the ridge candidates, standardised with statistics of the rows of ``X``.

    Args:
        X: ``ndarray[N, p]`` pooled covariates (labelled and test units).
        kind: ``"linear"`` (``x``) or ``"quadratic"`` (``x`` and every ``x_a x_b``, ``a <= b``).

    Returns:
        ``ndarray[N, F]`` (``F = p`` or ``p + p (p + 1) / 2``), each column centred and scaled to unit
        standard deviation over the ``N`` rows (constant columns left at 0). The statistics are
        symmetric in the rows and use no label, so they keep the units exchangeable.

    Raises:
        ValueError: unknown ``kind``.
    """
    X = np.asarray(X, np.float64)
    if kind == "linear":
        F = X
    elif kind == "quadratic":
        a, b = np.triu_indices(X.shape[1])
        F = np.hstack([X, X[:, a] * X[:, b]])
    else:
        raise ValueError(f"unknown feature map '{kind}'; choose one of {', '.join(FEATURES)}.")
    sd = F.std(axis=0)
    return (F - F.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def ridge_loo_predictions(F: np.ndarray, y: np.ndarray, penalty: float) -> np.ndarray:
    """Exact leave-one-out predictions of ridge regression with an unpenalised intercept.

    With ``A = [1, F]``, ``P = diag(0, penalty, ..., penalty)`` and the hat matrix
    ``H = A (A^T A + P)^{-1} A^T``, the prediction at row ``i`` of the fit without row ``i`` is
    ``(yhat_i - H_ii y_i) / (1 - H_ii)`` (the leave-one-out identity of linear smoothers).

    Args:
        F: ``ndarray[N, F]`` features; y: ``ndarray[N]`` labels; penalty: ``alpha > 0``.

    Returns:
        ``ndarray[N]``: ``mu^{-i}(F_i)``, equal to ``sklearn.linear_model.Ridge(alpha=penalty)`` refitted
        without row ``i`` and evaluated at row ``i``.

    Source: Hastie, Tibshirani & Friedman 2009, "The Elements of Statistical Learning", eq. (7.52)
    (leave-one-out for linear smoothers); Bai & Jin 2024, arXiv 2411.17983, sec. 4.2 (OptCS-Full:
    leave-one-out scores on the pooled sample).
    """
    F = np.asarray(F, np.float64)
    y = np.asarray(y, np.float64)
    A = np.hstack([np.ones((F.shape[0], 1)), F])
    P = np.full(A.shape[1], float(penalty))
    P[0] = 0.0
    G = A.T @ A + np.diag(P)
    S = np.linalg.solve(G, A.T)  # [F+1, N]
    fitted = A @ (S @ y)
    h = np.einsum("ij,ji->i", A, S)
    return (fitted - h * y) / (1.0 - h)


def _check_features(inst: Any, attribute: Any, value: Any) -> None:
    if (
        isinstance(value, str)
        or not value
        or any(v not in FEATURES for v in value)
        or len(set(value)) < len(value)
    ):
        raise ConfigError(
            f"'{attribute.name}' must be a non-empty list of distinct feature maps from "
            f"{', '.join(FEATURES)}, e.g. ['linear', 'quadratic'] (got {value!r}).",
            key=attribute.name,
        )


def _check_penalties(inst: Any, attribute: Any, value: Any) -> None:
    try:
        ok = not isinstance(value, str) and len(value) > 0 and all(float(v) > 0 for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ConfigError(
            f"'{attribute.name}' must be a non-empty list of positive ridge penalties, e.g. [1.0, 10.0] "
            f"(got {value!r}).",
            key=attribute.name,
        )


@attrs.define(kw_only=True)
class OptCSFull(Estimator):
    """OptCS-Full / Full-MSel: leave-one-out scores on the pooled labelled and test units, no split.

    The candidates are every pair (feature map, penalty) of ``features x penalties`` (``K`` of them),
    ridge regressions of ``b = 1{Y > c}`` (test units imputed ``b = 0``) on the pooled units; their
    exact leave-one-out predictions give clipped scores on all ``n`` labelled units (``"train"`` and
    ``"calibration"`` together) and the ``m`` test units. OptCS-MSel's per-unit choice of the
    candidate (``K = 1``: none) and OptCS's e-BH with ``pruning`` select (see the module docstring).
    The guarantee needs a threshold fixed before seeing the labels (``threshold``): with
    ``threshold_quantile`` the threshold is computed from ``"train"`` labels that are also calibration
    units here, which the finite-sample argument does not cover.

    Shapes:
        reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])``; ``value`` is ``Tensor[L, m]`` (float64,
        0/1) for ``L = len(levels)``.

    Units:
        ``threshold`` in units of y; ``levels`` probabilities; ``penalties`` in units of the squared
        standardised features; ``selected_q<q>`` counts.

    Raises:
        ConfigError: bad levels, feature maps, penalties, pruning or beta (when built); a ``data`` input
            without the three splits (before fitting).

    Source: Bai & Jin 2024, "Optimized conformal selection", arXiv 2411.17983, sec. 4.2 (OptCS-Full,
    leave-one-out training on labelled and test units with null labels imputed; official
    ``simulation/Full/loo_Jin.py``) and sec. 4.3 (Full-MSel, model selection on these scores; official
    ``simulation/Full-MSel/choosescore_loo_Jin.py``).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}

    levels: list = param(
        factory=lambda: [0.1, 0.2], doc="FDR levels q in (0, 1) to select at", validator=check_levels
    )
    features: list = param(
        factory=lambda: ["linear", "quadratic"],
        doc=f"feature maps of the ridge candidates, from {', '.join(FEATURES)}",
        validator=_check_features,
    )
    penalties: list = param(
        factory=lambda: [1.0, 10.0, 100.0],
        doc="ridge penalties alpha > 0; the candidates are features x penalties",
        validator=_check_penalties,
    )
    threshold_quantile: float = param(
        0.7,
        doc="c = this quantile of the 'train' labels (used when 'threshold' is unset), as the other arms",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    threshold: float | None = param(
        None, doc="absolute threshold c (units of y); H_j: Y_j <= c", validator=optional(finite)
    )
    pruning: str = param(
        "homogeneous",
        doc=f"e-BH pruning: one of {', '.join(PRUNING)}",
        validator=one_of(PRUNING),
    )
    beta: float = param(
        1.0,
        doc="shrinks the e-value threshold beta q R_j / m (paper: 1 or 0.9)",
        validator=in_range(0.0, 1.0, low_open=True),
    )

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Select at every level (see the class docstring)."""
        import torch

        s = read_splits(data)
        rng = numpy_rng(generator)
        c = (
            float(self.threshold)
            if self.threshold is not None
            else float(np.quantile(s["y_train"], self.threshold_quantile))
        )
        X_lab = np.vstack([s["X_train"], s["X_calibration"]])
        y_lab = np.concatenate([s["y_train"], s["y_calibration"]])
        n, m = X_lab.shape[0], s["X_test"].shape[0]
        pooled = np.vstack([X_lab, s["X_test"]])
        b = np.concatenate([(y_lab > c).astype(np.float64), np.zeros(m)])
        vc, vt = [], []
        with threadpool_limits(1):  # small solves: extra BLAS threads only contend
            for kind in self.features:
                F = feature_map(pooled, kind)
                for alpha in self.penalties:
                    mu = ridge_loo_predictions(F, b, float(alpha))
                    v, vhat = clipped_scores(mu[:n], y_lab, mu[n:], c)
                    vc.append(v)
                    vt.append(vhat)
        vc_arr, vt_arr = np.stack(vc), np.stack(vt)
        rows, extra = [], {}
        for q in self.levels:
            p, sizes, _ = optcs_msel(vc_arr, vt_arr, float(q), rng)
            rows.append(optcs_selection(p, sizes, float(q), self.pruning, rng, self.beta))
            extra[f"mean_aux_size_{level_key(q)}"] = float(sizes.mean())
        selected = np.stack(rows)
        info = {
            "threshold": c,
            "n_labelled": int(n),
            "n_test": int(m),
            "num_models": len(vc),
            **{f"selected_{level_key(q)}": int(r.sum()) for q, r in zip(self.levels, selected, strict=True)},
            **extra,
        }
        device = getattr(generator, "device", None)
        return Estimate(value=torch.as_tensor(selected.astype(np.float64), device=device), info=info)
