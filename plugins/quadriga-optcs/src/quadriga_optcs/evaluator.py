"""False discovery proportion and power of selection sets, per replicate and pooled over replicates."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.stage_names import replicate_base
from quadriga.stats import mean_se
from quadriga_optcs._common import check_levels, level_key

__all__ = ["SelectionFDR", "fdp_and_power"]


def fdp_and_power(selected: np.ndarray, y: np.ndarray, threshold: float) -> tuple[float, float]:
    """False discovery proportion and power of one selection set.

    Args:
        selected: boolean ``ndarray[m]``; y: ``ndarray[m]`` true test labels; threshold: ``c``.

    Returns:
        ``(FDP, power)``: ``FDP = |R ∩ {Y <= c}| / max(|R|, 1)`` and
        ``power = |R ∩ {Y > c}| / max(#{Y > c}, 1)`` (both fractions in [0, 1]).

    Source: Benjamini & Hochberg 1995 (FDR = E[FDP]); power as in Jin & Candès 2023, sec. 6.
    """
    sel = np.asarray(selected, bool)
    alt = np.asarray(y, np.float64) > threshold
    return float((sel & ~alt).sum() / max(sel.sum(), 1)), float((sel & alt).sum() / max(alt.sum(), 1))


def _replicate(name: str) -> tuple[str, int | None]:
    """``"optcs[3]" -> ("optcs", 3)``; a name without a trailing ``[i]`` -> ``(name, None)``."""
    base = replicate_base(name)
    return (base, int(name[len(base) + 1 : -1])) if base != name else (name, None)


@attrs.define(kw_only=True)
class SelectionFDR(Evaluator):
    """Empirical FDR and power of selection estimates (``optcs``, ``split-selection``, ``naive-selection``).

    Per subject (a stage name such as ``optcs[3]``) and level ``q``: ``"<subject>/fdp_q<q>"``,
    ``"/power_q<q>"`` and ``"/selected_q<q>"``. Subjects are then grouped by the name before the last
    ``[i]`` (one configuration over its replicates): ``"<group>/fdr_q<q>"`` (mean FDP), ``"/fdr_se_q<q>"``
    (its standard error ``sd / sqrt(R)`` from :func:`quadriga.stats.mean_se`, given for ``R >= 2``
    replicates), ``"/power_q<q>"``,
    ``"/power_se_q<q>"`` and ``"/replicates"``; ``tables["summary"]`` holds one row per group and level.

    ``reference`` is the Dataset whose ``"test"`` labels the subjects selected from, or
    ``{name: Dataset}`` (``"data[*]"`` of a repeated task): subject ``x[i]`` is then scored on
    replicate ``i`` of the task, or on the only one.

    Shapes:
        each subject's ``value`` is ``Tensor[L, m]`` (0/1) with ``info["threshold"]`` and the level list
        ``levels`` of this evaluator matching its rows; ``reference.split("test") -> (X[m, p], y[m])``.

    Units:
        FDP, FDR, power and their standard errors are fractions; ``selected`` and ``replicates`` are counts.

    Raises:
        ConfigError: no reference, a subject that is not a selection estimate, a level count that differs
            from the subject's rows, test sizes that differ, or no reference replicate for a subject.

    Source: FDR of Benjamini & Hochberg 1995; the evaluation of Bai & Jin 2024, arXiv 2411.17983, sec. 5
    (FDP and power averaged over repetitions).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Estimate,), "reference": (Dataset,)}
    check_inputs: ClassVar[dict] = {
        "task": {"data": {"use": "optcs-synthetic", "n_train": 100, "n_calibration": 60, "n_test": 20}},
        "stage": {
            "sel": {
                "use": "optcs",
                "inputs": {"data": "data"},
                "models": ["ridge", "knn-5"],
                "threshold": 0.0,
            }
        },
        "inputs": {"subject": "sel", "reference": "data"},
    }

    levels: list = param(
        factory=lambda: [0.1, 0.2],
        doc="the FDR levels of the subjects' rows, in order",
        validator=check_levels,
    )

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject, then pool each group's replicates (see the class docstring)."""
        if reference is None:
            raise ConfigError(
                'selection-fdr needs the labelled Dataset: inputs = { subject = [...], reference = "data" }.',
                key="reference",
            )
        refs = reference if isinstance(reference, dict) else {"": reference}
        by_index = {_replicate(name)[1]: ds for name, ds in refs.items()}
        values: dict[str, float] = {}
        groups: dict[str, dict[str, list[float]]] = {}
        for name, est in named(subject, "subject").items():
            if not isinstance(getattr(est, "info", None), dict) or "threshold" not in est.info:
                raise ConfigError(
                    f"subject '{name}' is not a selection estimate (no info['threshold']).", key="subject"
                )
            base, i = _replicate(name)
            ds = refs[next(iter(refs))] if len(refs) == 1 else by_index.get(i)
            if ds is None:
                raise ConfigError(f"no reference replicate [{i}] for subject '{name}'.", key="reference")
            _, y = ds.split("test")
            sel = np.asarray(est.value.detach().cpu() if hasattr(est.value, "detach") else est.value) > 0.5
            if sel.ndim != 2 or sel.shape[0] != len(self.levels) or sel.shape[1] != len(y):
                raise ConfigError(
                    f"subject '{name}' has selections of shape {sel.shape}; expected "
                    f"({len(self.levels)}, {len(y)}) for levels {self.levels} and the test split.",
                    key="levels",
                )
            g = groups.setdefault(base, {})
            for q, row in zip(self.levels, sel, strict=True):
                key = level_key(q)
                fdp, power = fdp_and_power(row, y, float(est.info["threshold"]))
                values[f"{name}/fdp_{key}"] = fdp
                values[f"{name}/power_{key}"] = power
                values[f"{name}/selected_{key}"] = float(row.sum())
                g.setdefault(f"fdp_{key}", []).append(fdp)
                g.setdefault(f"power_{key}", []).append(power)
        rows = []
        for base, g in groups.items():
            for q in self.levels:
                key = level_key(q)
                row = {"subject": base, "q": float(q)}
                for stat, out in (("fdp", "fdr"), ("power", "power")):
                    x = g[f"{stat}_{key}"]
                    mean, se = mean_se(x)
                    values[f"{base}/{out}_{key}"] = row[out] = mean
                    if len(x) > 1:  # a single replicate has no standard error
                        values[f"{base}/{out}_se_{key}"] = row[f"{out}_se"] = se
                row["replicates"] = len(x)
                rows.append(row)
            values[f"{base}/replicates"] = float(len(next(iter(g.values()))))
        return Metrics(values=values, tables={"summary": rows})
