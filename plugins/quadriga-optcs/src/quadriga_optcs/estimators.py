"""Conformal selection estimators: OptCS-MSel and its two baselines.

Each estimator reads a ``Dataset`` with the splits ``"train"`` (fits the ``K`` candidate models),
``"calibration"`` (labelled) and ``"test"`` (only its covariates are used) and selects test units
whose label is believed to exceed the threshold ``c``, at every FDR level in ``levels``.

Output (the same for all three): ``Estimate(value = Tensor[L, m])`` with ``value[l, j] = 1.0`` when
test unit ``j`` is selected at level ``levels[l]`` (``0.0`` otherwise), ``info = {threshold,
n_train, n_calibration, n_test, num_models, selected_q<q>}``. The ``selection-fdr`` evaluator scores
it against the test labels.
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
from quadriga.seeding import int_seed, numpy_rng
from quadriga.validators import finite, in_range, one_of, optional
from quadriga_optcs._common import check_levels, level_key
from quadriga_optcs.candidates import candidate_predictions, check_models
from quadriga_optcs.selection import (
    PRUNING,
    benjamini_hochberg,
    bh_size,
    clipped_scores,
    conformal_pvalues,
    optcs_msel,
    optcs_selection,
)

__all__ = ["NaiveSelection", "OptCS", "SplitSelection", "read_splits"]


def read_splits(data: Any) -> dict[str, np.ndarray]:
    """``X_train, y_train, X_cal, y_cal, X_test`` (float64) from a Dataset, checked.

    Raises:
        ConfigError: ``data`` has no ``split``, a split is missing, feature counts differ, or a split
            is empty.
    """
    if not hasattr(data, "split"):
        raise ConfigError(f"'data' must be a Dataset (got {type(data).__name__}).", key="data")
    out = {}
    for name in ("train", "calibration", "test"):
        try:
            X, y = data.split(name)
        except KeyError as exc:
            raise ConfigError(f"the dataset has no '{name}' split ({exc}).", key="data") from exc
        X = np.asarray(X, np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ConfigError(f"split '{name}' must be a non-empty 2-D array (got {X.shape}).", key="data")
        out[f"X_{name}"] = X
        if name != "test":
            out[f"y_{name}"] = np.asarray(y, np.float64).reshape(-1)
    if len({out[f"X_{s}"].shape[1] for s in ("train", "calibration", "test")}) != 1:
        raise ConfigError("train, calibration and test splits have different feature counts.", key="data")
    return out


@attrs.define(kw_only=True)
class _Selection(Estimator):
    """Parameters and plumbing shared by the three selection estimators (not registered)."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Dataset,)}
    check_params: ClassVar[dict] = {"models": ["ridge", "knn-5"]}

    levels: list = param(
        factory=lambda: [0.1, 0.2], doc="FDR levels q in (0, 1) to select at", validator=check_levels
    )
    models: list = param(
        factory=lambda: ["ridge", "random-forest-small", "gradient-boosting-small"],
        doc="candidate regressors mu_k fitted on 'train' (see quadriga_optcs.candidates.CANDIDATES)",
        validator=check_models,
    )
    threshold_quantile: float = param(
        0.7,
        doc="c = this quantile of the training labels (used when 'threshold' is unset)",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    threshold: float | None = param(
        None, doc="absolute threshold c (units of y); H_j: Y_j <= c", validator=optional(finite)
    )

    def _prepare(self, data: Any, generator: Any) -> tuple[dict[str, Any], np.ndarray, np.ndarray, Any]:
        """Fit the candidates; return ``(splits, mu_cal[K, n], mu_test[K, m], rng)``, ``splits["c"]`` set."""
        s: dict[str, Any] = read_splits(data)
        seed = int_seed(generator)  # first draw: the same in every arm of a replicate
        rng = numpy_rng(generator)
        s["c"] = (
            float(self.threshold)
            if self.threshold is not None
            else float(np.quantile(s["y_train"], self.threshold_quantile))
        )
        with threadpool_limits(1):  # small fits: extra BLAS/OpenMP threads only contend
            mu_cal, mu_test = candidate_predictions(
                self.models, s["X_train"], s["y_train"], seed, (s["X_calibration"], s["X_test"])
            )
        return s, mu_cal, mu_test, rng

    def _scores(
        self, s: dict[str, Any], mu_cal: np.ndarray, mu_test: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Clipped scores ``(V[K, n], Vhat[K, m])`` of every candidate."""
        pairs = [
            clipped_scores(a, s["y_calibration"], b, s["c"]) for a, b in zip(mu_cal, mu_test, strict=True)
        ]
        return np.stack([v for v, _ in pairs]), np.stack([v for _, v in pairs])

    def _estimate(self, s: dict[str, Any], selected: np.ndarray, generator: Any, **extra: Any) -> Estimate:
        import torch

        info = {
            "threshold": s["c"],
            "n_train": int(s["X_train"].shape[0]),
            "n_calibration": int(s["X_calibration"].shape[0]),
            "n_test": int(s["X_test"].shape[0]),
            "num_models": len(self.models),
            **{
                f"selected_{level_key(q)}": int(row.sum())
                for q, row in zip(self.levels, selected, strict=True)
            },
            **extra,
        }
        device = getattr(generator, "device", None)
        value = torch.as_tensor(selected.astype(np.float64), device=device)
        return Estimate(value=value, info=info)


@attrs.define(kw_only=True)
class OptCS(_Selection):
    """OptCS-MSel: conformal selection after choosing the best of ``K`` candidate scores, FDR <= q.

    Every candidate ``mu_k`` is fitted on ``"train"``; its clipped scores ``V^k(x, y) = inf 1{y > c}
    - mu_k(x)`` are computed on ``"calibration"`` and ``"test"``. For each test unit ``j`` the model
    ``k_j`` maximises the BH selection size of auxiliary p-values in which ``j`` is imputed into the
    calibration set (:func:`quadriga_optcs.selection.optcs_msel`); the p-value
    ``p_j = (1 + #{V_i^{k_j} < Vhat_j^{k_j}}) / (n + 1)`` is valid although the calibration data chose
    ``k_j``. Then ``e_j = 1{p_j <= q R_j / m} / (q R_j / m)`` and e-BH with ``pruning`` gives the
    selection (:func:`quadriga_optcs.selection.optcs_selection`): finite-sample FDR ``<= q`` under
    exchangeability of calibration and test units.

    Shapes:
        reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])``; ``value`` is ``Tensor[L, m]`` (float64,
        0/1) for ``L = len(levels)`` levels and ``m`` test units.

    Units:
        ``threshold`` in units of y; ``levels`` are probabilities; ``selected_q<q>`` and
        ``mean_aux_size_q<q>`` (the mean of ``R_j``) are counts.

    Raises:
        ConfigError: levels outside (0, 1), an unknown candidate, an unknown pruning, ``beta`` outside
            (0, 1] (when built); a ``data`` input without the three splits (before fitting).

    Source: Bai & Jin 2024, "Optimized conformal selection: powerful selective inference after
    conformity score optimization", arXiv 2411.17983, sec. 3 (Theorem 3.3, conformal e-values and
    e-BH) and sec. 4.1 (model selection, OptCS-MSel).
    """

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
        s, mu_cal, mu_test, rng = self._prepare(data, generator)
        vc, vt = self._scores(s, mu_cal, mu_test)
        rows, extra = [], {}
        for q in self.levels:
            p, sizes, _ = optcs_msel(vc, vt, float(q), rng)
            rows.append(optcs_selection(p, sizes, float(q), self.pruning, rng, self.beta))
            extra[f"mean_aux_size_{level_key(q)}"] = float(sizes.mean())
        return self._estimate(s, np.stack(rows), generator, **extra)


@attrs.define(kw_only=True)
class SplitSelection(_Selection):
    """Conformal selection with sample splitting: choose the model on one half of the calibration data.

    The calibration set is split at random into a model-selection half and a p-value half; the
    model-selection half is split again into a pseudo-calibration and a pseudo-test part, on which each
    candidate's randomised conformal p-values give a BH selection size. The candidate with the most
    selections (ties at random) then gives randomised conformal p-values from the p-value half, and
    BH at ``q`` selects. The model choice is independent of the p-value half and the test units, so
    Jin & Candès' finite-sample FDR ``<= q`` holds, at the price of half the calibration data.

    Shapes:
        reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])``; ``value`` is ``Tensor[L, m]``.

    Units:
        ``threshold`` in units of y; ``levels`` are probabilities; counts otherwise.

    Raises:
        ConfigError: bad levels or candidates (when built); a dataset without the three splits or with
            fewer than 4 calibration units (before fitting).

    Source: Jin & Candès 2023, JMLR 24(244), Algorithm 1 (conformal p-values + BH, Theorem 2.3);
    splitting as the "data splitting" baseline of Bai & Jin 2024, sec. 5 (official
    ``simulation/MSel/choosescore_Jin.py``, baseline 2).
    """

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Select at every level (see the class docstring)."""
        s, mu_cal, mu_test, rng = self._prepare(data, generator)
        vc, vt = self._scores(s, mu_cal, mu_test)
        K, n = vc.shape
        if n < 4:
            raise ConfigError(f"split selection needs >= 4 calibration units (got {n}).", key="data")
        perm = rng.permutation(n)
        choose, pv = perm[: n // 2], perm[n // 2 :]
        pseudo_cal, pseudo_test = choose[: len(choose) // 2], choose[len(choose) // 2 :]
        rows = []
        for q in self.levels:
            # the pseudo-test units are scored as test units would be, V(x, c) = -mu(x)
            sizes = np.array(
                [
                    bh_size(
                        conformal_pvalues(
                            vc[k, pseudo_cal], -mu_cal[k, pseudo_test], rng.random(pseudo_test.size)
                        ),
                        float(q),
                    )
                    for k in range(K)
                ]
            )
            k = int(rng.choice(np.flatnonzero(sizes == sizes.max())))
            p = conformal_pvalues(vc[k, pv], vt[k], rng.random(vt.shape[1]))
            rows.append(benjamini_hochberg(p, float(q)))
        return self._estimate(s, np.stack(rows), generator)


@attrs.define(kw_only=True)
class NaiveSelection(_Selection):
    """The naive data-reusing procedure: the candidate whose BH set is largest, with no correction.

    Each candidate gives randomised conformal p-values from the whole calibration set and a BH set
    at ``q``; the largest set (ties at random) is returned. Choosing the model on the same calibration
    and test data breaks the exchangeability the p-values rely on, so its FDR can exceed ``q``: it is
    the positive control that shows why OptCS corrects for the choice.

    Shapes:
        reads ``split(name) -> (X: ndarray[n, p], y: ndarray[n])``; ``value`` is ``Tensor[L, m]``.

    Units:
        ``threshold`` in units of y; ``levels`` are probabilities; counts otherwise.

    Raises:
        ConfigError: bad levels or candidates (when built); a dataset without the three splits.

    Source: Bai & Jin 2024, arXiv 2411.17983, sec. 1 and 5 (the "naive" procedure; official
    ``simulation/MSel/choosescore_Jin.py``).
    """

    def estimate(self, data: Any, *, generator: Any) -> Estimate:
        """Select at every level (see the class docstring)."""
        s, mu_cal, mu_test, rng = self._prepare(data, generator)
        vc, vt = self._scores(s, mu_cal, mu_test)
        K, m = vt.shape
        rows = []
        for q in self.levels:
            sets = [
                benjamini_hochberg(conformal_pvalues(vc[k], vt[k], rng.random(m)), float(q)) for k in range(K)
            ]
            sizes = np.array([x.sum() for x in sets])
            rows.append(sets[int(rng.choice(np.flatnonzero(sizes == sizes.max())))])
        return self._estimate(s, np.stack(rows), generator)
