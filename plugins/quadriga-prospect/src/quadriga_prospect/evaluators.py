"""The evaluator ``spectral-suboptimality``: relative suboptimality curves against an L-BFGS optimum.

For each fitted subject with objective values ``F(w_k)`` after pass ``k`` (``Fitted.history``):

- ``F*``: the minimum of ``F`` by full-batch L-BFGS on the reference task's train split
  (:func:`~quadriga_prospect.optimizers.lbfgs_optimum`), lowered to the smallest value any
  subject reached if one went below it (the gap is reported as ``lbfgs_excess``);
- ``s_k = (F(w_k) - F*) / (F(w_0) - F*)``, the relative suboptimality the paper plots;
- ``passes_to_tol``: the first pass ``k`` with ``s_k <= tol``; ``K + 1`` when the run never gets
  there (a censored value, with ``reached = 0``); ``grad_passes_to_tol``: the per-example
  gradient evaluations spent by then, divided by ``n`` (LSVRG spends 3 per step);
- ``log10_rate``: least-squares slope of ``log10 s_k`` against ``k`` over the passes before ``s_k``
  first falls below ``floor``, leaving out the first ``burn_in`` fraction of them (the initial
  transient, which is faster than the asymptotic rate for every method here); negative means
  linear convergence at ``10^rate`` per pass;
- ``curvature``: ``2 a (k_last - k_first) / b`` from the quadratic fit ``a k^2 + b' k + c`` on the
  same passes, ``b`` the linear slope: the relative change of the slope across the fit window
  (0 for a straight line; negative when convergence slows down: about -0.7 for a ``1/k`` decay).
  Both are left out when fewer than 4 passes remain in the window (very short runs).

Values are written ``"<subject>/<metric>"`` plus ``"optimum"`` and ``"lbfgs_excess"``.

Source: Mehta, Roulet, Pillutla, Harchaoui, ICLR 2024, sec. 5 (suboptimality against an L-BFGS
optimum, log scale, against passes); official ``scripts/lbfgs.py``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Evaluator, named
from quadriga.params import param
from quadriga.stage_names import replicate_base
from quadriga.validators import in_range
from quadriga_prospect.optimizers import lbfgs_optimum

__all__ = ["SpectralSuboptimality", "curve_summary", "relative_suboptimality"]


def relative_suboptimality(values: list[float], optimum: float) -> np.ndarray:
    """``s_k = (F_k - F*) / (F_0 - F*)`` clipped at 0: ``ndarray[K + 1]`` (dimensionless).

    Raises:
        ValueError: ``F_0 <= F*`` (the start is already optimal, nothing to measure).
    """
    v = np.asarray(values, dtype=np.float64)
    gap0 = v[0] - optimum
    if not gap0 > 0:
        raise ValueError(f"the start value {v[0]} is not above the optimum {optimum}.")
    return np.maximum(v - optimum, 0.0) / gap0


def curve_summary(
    rel: np.ndarray, grad_evals: list[int], n: int, *, tol: float, floor: float, burn_in: float = 0.25
) -> dict[str, float]:
    """Passes to ``tol``, the log-linear rate and its curvature for one curve (see the module docstring).

    Args:
        rel: ``ndarray[K + 1]`` relative suboptimality per pass.
        grad_evals: cumulative gradient evaluations per pass (length ``K + 1``).
        n: number of training examples.
        tol: target relative suboptimality.
        floor: fits use the passes before ``rel`` first drops to ``floor`` or below...
        burn_in: ...except the first ``burn_in`` fraction of those passes.

    Returns:
        ``{"passes_to_tol", "grad_passes_to_tol", "reached", "log10_rate", "curvature", "suboptimality"}``;
        the rate and curvature are left out when the fit window has fewer than 4 passes.
    """
    K = len(rel) - 1
    hit = np.flatnonzero(rel <= tol)
    reached = hit.size > 0
    k_tol = int(hit[0]) if reached else K + 1
    evals = grad_evals[k_tol] if reached else grad_evals[-1] + (grad_evals[-1] - grad_evals[-2] if K else 0)
    below = np.flatnonzero(rel <= floor)
    stop = int(below[0]) if below.size else K + 1
    first = math.floor(burn_in * stop)
    k = np.arange(first, stop, dtype=np.float64)
    out = {
        "passes_to_tol": float(k_tol),
        "grad_passes_to_tol": float(evals) / n,
        "reached": float(reached),
        "suboptimality": float(rel[-1]),
    }
    if k.size >= 4:
        y = np.log10(rel[first:stop])
        rate = float(np.polyfit(k, y, 1)[0])
        a = float(np.polyfit(k, y, 2)[0])
        out["log10_rate"] = rate
        if rate != 0:
            out["curvature"] = 2.0 * a * (k[-1] - k[0]) / rate
    return out


@attrs.define(kw_only=True)
class SpectralSuboptimality(Evaluator):
    """Relative suboptimality of spectral-risk optimizers against an L-BFGS optimum, per subject.

    Shapes: each subject's ``history["objective"]`` is a list of ``K + 1`` floats; metrics are
    scalars (see the module docstring for each). Units: passes (epochs), gradient evaluations per
    ``n``, ``log10`` of relative suboptimality per pass; ``optimum`` in the loss's units.
    The figure ``curves`` plots ``log10 s_k`` against passes, replicates of a subject (names ending
    ``[i]``) pooled into their median with a min-max band.

    Raises:
        ConfigError: a subject that is not a ``Fitted`` from this plugin's learners, a reference
            that is not a ``spectral-risk-data`` task, or subjects fitted to another objective.

    Source: Mehta et al., ICLR 2024, sec. 5 and Fig. 2-3 (suboptimality vs. passes).
    """

    check_inputs: ClassVar[dict] = {
        "task": {"data": {"use": "spectral-risk-data", "dataset": "wine"}},
        "stage": {"fit": {"use": "prospect", "inputs": {"task": "data"}, "num_epochs": 3}},
        "inputs": {"subject": "fit", "reference": "data"},
    }

    tol: float = param(
        1e-6,
        doc="target relative suboptimality for passes_to_tol",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    floor: float = param(
        1e-12,
        doc="rate fits stop where relative suboptimality first reaches this",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )
    burn_in: float = param(
        0.25,
        doc="fraction of the above-floor passes left out of the rate fits (the transient)",
        validator=in_range(0.0, 1.0, high_open=True),
    )
    figure: bool = param(True, doc="draw the suboptimality curves")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any = None) -> Metrics:
        """Score every subject (see the class docstring); ``generator`` is unused (deterministic)."""
        subjects = named(subject)
        if reference is None or not callable(getattr(reference, "objective", None)):
            raise ConfigError(
                "spectral-suboptimality needs reference = the spectral-risk-data task the subjects fit.",
                key="reference",
            )
        settings = dict(reference.describe())
        for name, fit in subjects.items():
            if not isinstance(fit, Fitted) or "objective" not in fit.history:
                raise ConfigError(
                    f"subject '{name}' must be a Fitted from a spectral-risk learner.", key="subject"
                )
            if dict(fit.info.get("objective", {})) != settings:
                raise ConfigError(
                    f"subject '{name}' minimized {fit.info.get('objective')}, "
                    f"not the reference's {settings}.",
                    key="reference",
                )
        obj = reference.objective("train")
        optimum, _ = lbfgs_optimum(obj)
        lowest = min(min(f.history["objective"]) for f in subjects.values())
        values: dict[str, float] = {
            "optimum": min(optimum, lowest),
            "lbfgs_excess": max(optimum - lowest, 0.0),
        }
        optimum = values["optimum"]
        rows, curves = [], {}
        for name, fit in subjects.items():
            rel = relative_suboptimality(fit.history["objective"], optimum)
            summary = curve_summary(
                rel, fit.history["grad_evals"], obj.n, tol=self.tol, floor=self.floor, burn_in=self.burn_in
            )
            summary["lr"] = float(fit.info.get("lr", math.nan))
            summary["settings_tried"] = float(fit.info.get("settings_tried", 1))
            for key, value in summary.items():
                values[f"{name}/{key}"] = value
            rows.append({"subject": name, **summary})
            curves.setdefault(replicate_base(name), []).append(rel)
        figures = {"curves": _figure(curves, self.tol)} if self.figure else {}
        return Metrics(values=values, tables={"suboptimality": rows}, figures=figures)


def _figure(curves: dict[str, list[np.ndarray]], tol: float) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, group in curves.items():
        K = min(len(c) for c in group)
        logs = np.log10(np.maximum(np.stack([c[:K] for c in group]), 1e-16))
        x = np.arange(K)
        ax.plot(x, np.median(logs, axis=0), label=f"{name} (n = {len(group)})")
        if len(group) > 1:
            ax.fill_between(x, logs.min(axis=0), logs.max(axis=0), alpha=0.2)
    ax.axhline(math.log10(tol), color="grey", lw=0.8, ls="--")
    ax.set_xlabel("passes")
    ax.set_ylabel("log10 relative suboptimality")
    ax.set_title("median over replicates; band: min to max (none at n = 1)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
