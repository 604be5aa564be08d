"""The ``excess-risk`` evaluator: each active design's fit against the full-data least-squares fit."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Metrics, Samples
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.stage_names import replicate_base
from quadriga.stage_names import replicate_index as stage_replicate_index

__all__ = ["ExcessRisk", "replicate_index"]


def replicate_index(subject: str) -> int | None:
    """The replicate index ``i`` of ``name[i]`` (:func:`quadriga.stage_names.replicate_index`), or
    ``None`` for a subject that is not a replicate of a repeated stage."""
    return stage_replicate_index(subject)


def _optimum(pool: Any, d: int) -> tuple[float, float]:
    def compute() -> tuple[float, float]:
        a, b = pool.split("pool")
        a = a[:, :d]
        coef, *_ = np.linalg.lstsq(a, b, rcond=None)
        return float(np.sum((a @ coef - b) ** 2)), float(np.sum(b**2))

    return pool.cached(("optimum", d), compute)


@attrs.define(kw_only=True)
class ExcessRisk(Evaluator):
    """Excess risk of each subject's weighted least-squares fit over the full-data optimum.

    For a subject with coefficients ``x~`` on the first ``d`` columns ``A`` of the pool's design
    and the pool's labels ``b`` (all of them, known to the evaluator only):

    - ``risk_ratio = ||A x~ - b||^2 / min_x ||A x - b||^2`` (1 is optimal; the paper's
      ``(1 + epsilon)`` guarantee bounds it);
    - ``excess_risk = risk_ratio - 1``;
    - ``normalized_error = mean((A x~ - b)^2) / mean(b^2)`` (the metric of the paper's figures).

    Values are ``"<subject>/<metric>"``, plus ``num_queried``, ``budget`` and ``num_features``
    (counts) and ``rank_deficient`` (1 when the sample did not determine the model, else 0).
    ``tables["summary"]`` has one row per group of replicates (the subject name before its last
    ``[i]``): the replicates' count and median ``risk_ratio``, and the mean number of labels.

    Shapes:
        each subject ``Samples`` with ``info["coef"]`` (d floats) and ``info["num_queried"]``;
        reference a pool with ``design: ndarray[n, D]``, ``D >= d``; every value is a scalar (float).

    Units:
        ratios are dimensionless; counts are labels or features.

    Raises:
        ConfigError: a subject without ``info["coef"]`` (not made by an active design), a reference
            that is not an active-regression pool, more coefficients than the pool's columns, or a
            pool the model fits exactly (``min ||Ax - b|| = 0``: add ``noise`` to the task).

    Source: Shimizu et al. 2024, sec. 2 (the agnostic guarantee
    ``||A x~ - b||^2 <= (1 + epsilon) min_x ||A x - b||^2``) and sec. 5 (normalised error).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Dataset,)}
    check_inputs: ClassVar[dict[str, Any]] = {
        "task": {"pool": {"use": "legendre-regression", "num_points": 256, "num_features": 8}},
        "stage": {"design": {"use": "pivotal-leverage", "inputs": {"target": "pool"}}},
        "inputs": {"subject": "design", "reference": "pool"},
    }

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject against the pool ``reference`` (see the class docstring).

        Args:
            subject: ``Samples`` or ``{name: Samples}`` from the active designs.
            reference: the pool they sampled from.
            generator: the stage's generator; unused (the score is a deterministic function of
                the fits and the pool).

        Shapes:
            returns scalar metrics.

        Raises:
            ConfigError: see the class docstring.
        """
        if not getattr(reference, "active_pool", False):
            raise ConfigError(
                "excess-risk needs the active-regression pool the designs sampled from as reference, "
                f"got {type(reference).__name__}.",
                key="reference",
            )
        from threadpoolctl import threadpool_limits

        design, labels = reference.split("pool")
        values: dict[str, float] = {}
        groups: dict[str, dict[str, list[float]]] = {}
        with threadpool_limits(limits=1, user_api="blas"):  # one n x d matvec per subject
            for name, s in named(subject).items():
                coef = s.info.get("coef") if isinstance(s, Samples) else None
                if coef is None:
                    raise ConfigError(
                        f"subject '{name}' has no fitted coefficients (info['coef']); point 'subject' at "
                        "pivotal-leverage, leverage-iid or uniform stages.",
                        key="subject",
                    )
                coef = np.asarray(coef, dtype=np.float64)
                d = coef.size
                if d > design.shape[1]:
                    raise ConfigError(
                        f"subject '{name}' has {d} coefficients but the pool has {design.shape[1]} columns.",
                        key="reference",
                    )
                best, total = _optimum(reference, d)
                if best <= 0.0:
                    raise ConfigError(
                        "the model fits the pool's labels exactly, so the risk ratio is undefined; give the "
                        "task a non-polynomial function or noise > 0.",
                        key="reference",
                    )
                err = float(np.sum((design[:, :d] @ coef - labels) ** 2))
                ratio = err / best
                row = {
                    "risk_ratio": ratio,
                    "excess_risk": ratio - 1.0,
                    "normalized_error": err / total,
                    "num_queried": float(s.info.get("num_queried", s.num_samples)),
                    "budget": float(s.info.get("budget", s.num_samples)),
                    "num_features": float(d),
                    "rank_deficient": float(int(s.info.get("rank", d)) < d),
                }
                for metric, value in row.items():
                    values[f"{name}/{metric}"] = value
                    groups.setdefault(replicate_base(name), {}).setdefault(metric, []).append(value)
        rows = [
            {
                "group": group,
                "replicates": len(m["risk_ratio"]),
                "num_features": int(m["num_features"][0]),
                "budget": int(m["budget"][0]),
                "mean_num_queried": float(np.mean(m["num_queried"])),
                "median_risk_ratio": float(np.median(m["risk_ratio"])),
                "rank_deficient_fraction": float(np.mean(m["rank_deficient"])),
            }
            for group, m in groups.items()
        ]
        return Metrics(values=values, tables={"summary": rows})
