"""Empirical coverage and width of prediction intervals (conformal estimators)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Estimate, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.validators import one_of

__all__ = ["IntervalCoverage", "coverage_and_width"]


def coverage_and_width(low: np.ndarray, high: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Coverage of ``y`` by ``[low, high]`` with its binomial standard error, and widths.

    Args:
        low, high, y: ``ndarray[n]`` (units of y); infinite bounds are allowed.

    Returns:
        ``coverage`` (fraction), ``coverage_se = sqrt(c (1 - c) / n)``, ``width`` (mean width
        of the finite intervals, units of y), ``median_width``, ``fraction_infinite``, ``n``.
    """
    low, high, y = (np.asarray(a, np.float64).reshape(-1) for a in (low, high, y))
    covered = (low <= y) & (y <= high)
    c, n = float(covered.mean()), y.size
    width = high - low
    finite = np.isfinite(width)
    return {
        "coverage": c,
        "coverage_se": math.sqrt(c * (1 - c) / n),
        "width": float(width[finite].mean()) if finite.any() else float("nan"),
        "median_width": float(np.median(width)),
        "fraction_infinite": float(1 - finite.mean()),
        "n": float(n),
    }


@attrs.define(kw_only=True)
class IntervalCoverage(Evaluator):
    """Coverage and mean width of the intervals of one or several ``Estimate`` subjects.

    Each subject must carry ``predict: X[n, p] -> (low[n], high[n])`` (``split-conformal``,
    ``weighted-conformal``, ``lr-qr``, ...). The reference ``Dataset`` gives the labeled points of
    ``split`` (default: ``"test"`` for ``domain = "source"``, ``"target_test"`` for ``"target"``).
    Values ``"<subject>/coverage"``, ``"/coverage_se"`` (binomial), ``"/width"`` (units of y),
    ``"/median_width"``, ``"/fraction_infinite"``; ``tables["summary"]``; ``figures["coverage"]``
    (coverage with +-2 s.e. bars and the nominal level ``1 - alpha`` when the subject reports ``alpha``,
    next to the widths).

    Shapes: reads ``reference.split(split) -> (X: ndarray[n, p], y: ndarray[n])`` and each
    ``predict(X) -> (low: ndarray[n], high: ndarray[n])``; every value is a float.
    Units: coverage, its standard error and ``fraction_infinite`` are fractions; widths are in
    units of y (mean over the finite intervals only).

    Raises:
        ConfigError: no reference, a subject without ``predict``, or an unknown split.

    Source: Vovk, Gammerman, Shafer 2005 (marginal coverage); Tibshirani et al. 2019 (target coverage).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Estimate,), "reference": (Dataset,)}

    domain: str = param(
        "target",
        doc="'source' or 'target' domain of the reference dataset",
        validator=one_of(("source", "target")),
    )
    split: str | None = param(None, doc="split to score; default 'test' (source) or 'target_test' (target)")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject's intervals on the chosen split (see the class docstring)."""
        if reference is None or not hasattr(reference, "split"):
            raise ConfigError(
                "interval-coverage needs a Dataset reference: inputs = { subject = [...], "
                'reference = "<dataset task>" }.',
                key="reference",
            )
        split = self.split or ("test" if self.domain == "source" else "target_test")
        try:
            X, y = reference.split(split)
        except KeyError as exc:
            raise ConfigError(
                f"the reference dataset has no split '{split}' ({exc}); for the target "
                "domain build the dataset with a shift.",
                key="split",
            ) from exc
        values, rows, nominal = {}, [], {}
        for name, est in named(subject).items():
            if not callable(getattr(est, "predict", None)):
                raise ConfigError(
                    f"subject '{name}' has no interval predictor (Estimate.predict); "
                    "connect a conformal estimator stage.",
                    key="subject",
                )
            low, high = est.predict(X)
            res = coverage_and_width(low, high, y)
            if "alpha" in getattr(est, "info", {}):
                nominal[name] = 1.0 - float(est.info["alpha"])
            rows.append({"subject": name, "split": split, **res})
            values.update({f"{name}/{k}": v for k, v in res.items() if k != "n"})
        return Metrics(
            values=values,
            tables={"summary": rows},
            figures={"coverage": _figure(rows, nominal, split)},
            info={"split": split},
        )


def _figure(rows: list[dict[str, Any]], nominal: dict[str, float], split: str) -> Any:
    """Coverage (dot, +-2 s.e. whisker, dashed line at the nominal level) and mean width per subject.

    The standard error is the binomial one over the ``n`` test points of ``split``, given under
    each subject; the width is in the units of the response y.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 3.8), layout="constrained")
    ax_c, ax_w = fig.subplots(1, 2)
    pos = np.arange(len(rows))
    names = [f"{r['subject']}\n(n = {int(r['n'])} points)" if "n" in r else r["subject"] for r in rows]
    ax_c.errorbar(
        pos, [r["coverage"] for r in rows], yerr=[2 * r["coverage_se"] for r in rows], fmt="o", capsize=4
    )
    levels = sorted(set(nominal.values()))
    for level in levels:
        ax_c.axhline(level, color="gray", ls="--", lw=1, label=f"nominal {level:g}")
    if levels:
        ax_c.legend(fontsize=8, loc="lower right")
    ax_c.set_xticks(pos, names, rotation=30, ha="right", fontsize=8)
    ax_c.set_ylabel("coverage\n(fraction of points covered)")
    ax_c.set_title("coverage: dot, whisker \u00b12 binomial s.e.", fontsize=9)
    ax_w.bar(pos, [r["width"] for r in rows], color="tab:orange")
    ax_w.set_xticks(pos, names, rotation=30, ha="right", fontsize=8)
    ax_w.set_ylabel("mean interval width (units of y)")
    ax_w.set_title("mean width of the intervals (one estimate each)", fontsize=9)
    fig.suptitle(f"Prediction intervals scored on the '{split}' split", fontsize=10)
    return fig
