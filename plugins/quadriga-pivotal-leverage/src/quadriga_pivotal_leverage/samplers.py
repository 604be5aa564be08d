"""Active designs: ``pivotal-leverage`` and its baselines ``leverage-iid`` and ``uniform``.

Each sampler takes an active-regression pool (see :mod:`quadriga_pivotal_leverage.tasks`),
chooses which rows to label, queries those labels and fits weighted least squares with weights
``1 / p_i``. The returned :class:`~quadriga.artifacts.Samples` holds:

- ``x: Tensor[k, m]`` the coordinates of the ``k`` queried points (float64);
- ``log_weights: Tensor[k]`` ``log(1 / p_i)``, the estimator's weights;
- ``info``: ``coef`` (the ``d`` fitted coefficients, a list of floats), ``num_queried`` and
  ``budget`` (counts), ``num_features`` (d), ``rank`` (of the weighted system; ``< d`` when a
  sample cannot determine the model). The queried points are ``x`` (their row indices are not
  kept: ``info`` goes into every run's ``results.json``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Sampler
from quadriga.params import param
from quadriga.seeding import numpy_rng
from quadriga.validators import one_of, optional, positive, positive_int
from quadriga_pivotal_leverage.pivotal import (
    TREES,
    bernoulli_sample,
    inclusion_probabilities,
    leverage_scores,
    pivotal_sample,
    tree_order,
    weighted_least_squares,
)

__all__ = ["LeverageIID", "PivotalLeverage", "Uniform"]

_SOURCE = (
    "Shimizu, Cheng, Musco & Weare, Improved Active Learning via Dependent Leverage Score Sampling, ICLR 2024"
)


_CHECK_INPUTS: dict[str, Any] = {
    "task": {"pool": {"use": "legendre-regression", "num_points": 256, "num_features": 8}},
    "inputs": {"target": "pool"},
}


@attrs.define(kw_only=True)
class _ActiveDesign(Sampler):
    """Shared parameters and the query-and-fit step of the three designs.

    Shapes:
        ``Samples.x: Tensor[k, m]`` (float64, coordinates of the queried rows),
        ``Samples.log_weights: Tensor[k]``; ``info["coef"]`` has ``d`` floats.

    Units:
        coordinates in the pool's units; ``log_weights`` in nats of the weight ``1 / p_i``;
        ``budget`` and ``num_queried`` are counts of labels.

    Raises:
        ConfigError: the target is not an active-regression pool; ``num_features`` above the pool's
            columns; a budget outside ``[1, n]`` (or above the rows with positive leverage).

    Source: Shimizu et al. 2024, sec. 2 (query k labels, importance-weighted least squares).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"target": (Dataset,)}
    check_inputs: ClassVar[dict[str, Any]] = _CHECK_INPUTS

    budget_per_feature: float = param(
        2.0,
        doc="label budget k as a multiple of d: k = round(budget_per_feature * d)",
        validator=positive,
    )
    budget: Any = param(
        None,
        toml_type="int | None",
        doc="label budget k (count); overrides budget_per_feature",
        validator=optional(positive_int),
    )
    num_features: Any = param(
        None,
        toml_type="int | None",
        doc="model size d: the first d columns of the pool's design (None: all)",
        validator=optional(positive_int),
    )

    def _probabilities(self, pool: Any, design: np.ndarray, k: int) -> np.ndarray:
        raise NotImplementedError

    def _draw(self, pool: Any, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def sample(self, target: Any, *, generator: Any) -> Samples:
        """Choose rows, query their labels and fit weighted least squares (see the class docstring).

        Shapes:
            ``target``: a pool with ``n`` rows and ``D`` columns -> ``Samples`` with ``k`` rows.

        Raises:
            ConfigError: see the class docstring.
        """
        import torch
        from threadpoolctl import threadpool_limits

        if not getattr(target, "active_pool", False):
            raise ConfigError(
                f"{type(self).__name__} needs an active-regression pool (legendre-regression, surrogate-2d "
                f"or diabetes-poly) as target, got {type(target).__name__}.",
                key="target",
            )
        d = self.num_features or target.num_columns
        if d > target.num_columns:
            raise ConfigError(
                f"num_features = {d} but the pool has {target.num_columns} columns; lower num_features "
                "or raise the task's number of features.",
                key="num_features",
            )
        design = target.design(d)
        k = self.budget if self.budget is not None else max(1, round(self.budget_per_feature * d))
        n = target.num_points
        if k > n:
            raise ConfigError(f"the budget k = {k} exceeds the pool's {n} points.", key="budget")
        # one BLAS thread: the systems are small (k x d, d <= a few hundred) and a multi-threaded
        # OpenBLAS spends ~100x the arithmetic in thread hand-offs on a busy machine
        with threadpool_limits(limits=1, user_api="blas"):
            p = self._probabilities(target, design, k)
            rows = self._draw(target, p, numpy_rng(generator))
            labels = target.query(rows)
            coef, rank = weighted_least_squares(design[rows], labels, 1.0 / p[rows])
        coords = target.coordinates()[rows]
        device = getattr(generator, "device", "cpu")
        return Samples(
            x=torch.as_tensor(coords, dtype=torch.float64, device=device),
            log_weights=torch.as_tensor(-np.log(p[rows]), dtype=torch.float64, device=device),
            info={
                "coef": [float(c) for c in coef],
                "num_queried": int(rows.size),
                "budget": int(k),
                "num_features": int(d),
                "rank": int(rank),
            },
        )


def _leverage(pool: Any, design: np.ndarray, k: int) -> np.ndarray:
    d = design.shape[1]
    tau = pool.cached(("leverage", d), lambda: leverage_scores(design))
    try:
        return inclusion_probabilities(tau, k)
    except ValueError as err:
        raise ConfigError(f"budget k = {k}: {err}.", key="budget") from None


@attrs.define(kw_only=True)
class PivotalLeverage(_ActiveDesign):
    """Pivotal leverage-score sampling: a dependent sample with leverage-score marginals.

    1. Leverage scores ``tau_i`` of the first ``d`` columns ``A`` of the pool's design (eq. (2)).
    2. Inclusion probabilities ``p_i = min(1, c tau_i)``, ``sum(p) = k`` (rows with ``p_i = 1``
       are taken outright); ``marginals = "uniform"`` uses ``p_i = k / n`` instead (an ablation).
    3. A binary tree over the points' coordinates by recursive median splits
       (``tree = "kd"``: coordinate-wise; ``"pca"``: principal direction, Algorithm 2).
    4. Pivotal sampling bottom-up over that tree (Algorithm 1): exactly ``k`` rows, each with
       marginal ``p_i``, spread out in space.
    5. Query the ``k`` labels; ``x~ = argmin sum_{i in S} (a_i^T x - b_i)^2 / p_i``.

    Shapes:
        target: a pool, ``design: ndarray[n, d]``; ``Samples.x: Tensor[k, m]``,
        ``log_weights: Tensor[k]``, ``info["coef"]``: d floats.

    Units:
        counts for ``k``, ``d``; probabilities for ``p``.

    Raises:
        ConfigError: an unknown ``tree`` or ``marginals`` (when built); see the base class.

    Source: Shimizu, Cheng, Musco & Weare, ICLR 2024 (arXiv 2310.04966), Algorithms 1-2, Theorem 1.1
    (O(d log d) labels under one-sided l_inf independence) and Theorem 1.2 (O(d) for polynomials).
    """

    tree: str = param("kd", doc=f"spatial tree: one of {', '.join(TREES)}", validator=one_of(TREES))
    marginals: str = param(
        "leverage",
        doc="inclusion probabilities: leverage or uniform",
        validator=one_of(("leverage", "uniform")),
    )

    def _probabilities(self, pool: Any, design: np.ndarray, k: int) -> np.ndarray:
        if self.marginals == "uniform":
            return np.full(design.shape[0], k / design.shape[0])
        return _leverage(pool, design, k)

    def _draw(self, pool: Any, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        order = pool.cached(("tree", self.tree), lambda: tree_order(pool.coordinates(), self.tree))
        return pivotal_sample(p, order, rng)


@attrs.define(kw_only=True)
class LeverageIID(_ActiveDesign):
    """Independent (Bernoulli) leverage-score sampling: the baseline with the same marginals.

    Row ``i`` is kept with probability ``p_i = min(1, c tau_i)``, ``sum(p) = k``, independently
    of the others, so the number of labels is random with mean ``k``. A draw with fewer than
    ``d`` independent rows keeps its minimum-norm fit (``info["rank"] < d``); it is not re-drawn.

    Shapes:
        as :class:`PivotalLeverage`; ``k`` (``num_queried``) varies between draws.

    Units:
        counts and probabilities.

    Raises:
        ConfigError: see the base class.

    Source: Shimizu et al. 2024, sec. 5 ("Bernoulli leverage" baseline); Chen & Price 2019,
    "Active regression via linear-sample sparsification" (leverage sampling, O(d log d)).
    """

    def _probabilities(self, pool: Any, design: np.ndarray, k: int) -> np.ndarray:
        return _leverage(pool, design, k)

    def _draw(self, pool: Any, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return bernoulli_sample(p, rng)


@attrs.define(kw_only=True)
class Uniform(_ActiveDesign):
    """Independent uniform sampling: every row kept with probability ``k / n``.

    Shapes:
        as :class:`PivotalLeverage`; ``k`` varies between draws (mean ``k``).

    Units:
        counts and probabilities.

    Raises:
        ConfigError: see the base class.

    Source: Shimizu et al. 2024, sec. 5 ("Bernoulli uniform" baseline).
    """

    def _probabilities(self, pool: Any, design: np.ndarray, k: int) -> np.ndarray:
        return np.full(design.shape[0], k / design.shape[0])

    def _draw(self, pool: Any, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return bernoulli_sample(p, rng)
