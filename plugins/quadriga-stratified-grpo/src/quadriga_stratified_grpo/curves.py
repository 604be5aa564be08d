"""``training-curves``: learning curves of several learners across seeds, with bootstrap intervals."""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga import ConfigError, Evaluator, Metrics, named, param
from quadriga.artifacts import Fitted
from quadriga.interfaces import Environment
from quadriga.seeding import child_numpy_rng
from quadriga.stage_names import replicate_base
from quadriga.stats import bootstrap_ci
from quadriga.validators import in_range, int_at_least, positive_int

__all__ = ["TrainingCurves", "group_label"]

_SEED_SUFFIX = re.compile(r"[-_]s(eed)?\d+$")


def group_label(name: str, artifact: Any) -> str:
    """The band an artifact belongs to: its learner's ``info["label"]`` when set, else the stage
    name before its replicate index (``"sgrpo[alpha=0.5][3]"`` -> ``"sgrpo[alpha=0.5]"``: one
    configuration, see :func:`quadriga.stage_names.replicate_base`), else the stage name without a
    ``-s<k>`` seed suffix. Never the component name: two variants of one learner are two bands."""
    info = getattr(artifact, "info", {}) or {}
    if info.get("label"):
        return str(info["label"])
    base = replicate_base(name)
    return base if base != name else _SEED_SUFFIX.sub("", name)


@attrs.define(kw_only=True)
class TrainingCurves(Evaluator):
    """Plot return and tool calls against training steps (mean across seeds, bootstrap band); score each band.

    ``evaluate(subject)``: ``subject`` is ``{stage: Fitted}`` whose ``history`` has ``step``,
    ``mean_return`` (reward units) and optionally ``tool_calls`` (calls per episode), one entry per
    update. Stages are grouped by :func:`group_label`. For each band ``B`` the values are
    ``B/final_return`` (mean return over the last ``final_fraction`` of updates, averaged over
    seeds), ``B/auc`` (area under the return curve divided by the number of updates, i.e. the
    mean return over training), their ``_low``/``_high`` bounds over seeds (percentile bootstrap,
    :func:`quadriga.stats.bootstrap_ci`; differences resample the two bands independently),
    ``B/final_tool_calls`` and ``B/num_seeds``; for every band other than ``baseline`` also
    ``B/final_return_diff`` and ``B/auc_diff`` (band minus baseline) with bounds.

    Shapes:
        per band, S seeds: the return and tool-call curves are ``float[S, T]`` (T = the shortest
        history of the band; longer ones are cut to T), per-seed scores ``float[S]``; every value is
        a scalar (float); the ``summary`` table has one row per band; the figure has two panels.

    Units:
        returns, ``final_return``, ``auc`` and their differences in reward units; ``final_tool_calls``
        in calls per episode; ``num_seeds`` a count; the x axis counts updates.

    Raises:
        ConfigError: when a subject is not a Fitted with a ``mean_return`` history, or ``baseline``
            names no band (close matches listed).

    Source: evaluation protocol of Agarwal et al. 2021 ("Deep RL at the edge of the statistical
    precipice": interval estimates over seeds).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {
        "subject": (Fitted,),
        "reference": (Environment,),
    }

    baseline: str = param("grpo", doc="label of the band the others are compared against ('' = none)")
    final_fraction: float = param(
        0.1,
        doc="fraction of the last updates averaged into the final return",
        validator=in_range(0.0, 1.0, low_open=True),
    )
    confidence: float = param(
        0.95, doc="bootstrap interval level", validator=in_range(0.0, 1.0, low_open=True, high_open=True)
    )
    num_resamples: int = param(2000, doc="bootstrap resamples", validator=int_at_least(100))
    smooth: int = param(
        5, doc="moving-average window (updates) of the plotted curves", validator=positive_int
    )

    def _bands(self, subject: Any) -> dict[str, dict[str, np.ndarray]]:
        raw: dict[str, list[dict[str, list]]] = {}
        for name, artifact in named(subject).items():
            history = getattr(artifact, "history", None)
            if not isinstance(history, dict) or not history.get("mean_return"):
                raise ConfigError(
                    f"subject '{name}' has no 'mean_return' history; training-curves needs the "
                    "Fitted artifacts of learners such as grpo or stratified-grpo",
                    key="subject",
                )
            raw.setdefault(group_label(name, artifact), []).append(history)
        bands = {}
        for label, histories in raw.items():
            length = min(len(h["mean_return"]) for h in histories)
            ref = histories[0]
            bands[label] = {
                "step": np.asarray(ref.get("step", range(1, length + 1))[:length], dtype=float),
                "mean_return": np.array([h["mean_return"][:length] for h in histories], dtype=float),
                "tool_calls": np.array(
                    [h.get("tool_calls", [math.nan] * length)[:length] for h in histories], dtype=float
                ),
            }
        return bands

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score and plot (see the class docstring). Returns :class:`quadriga.Metrics`."""
        bands = self._bands(subject)
        if self.baseline and self.baseline not in bands:
            from quadriga.errors import suggest

            raise ConfigError(
                f"baseline '{self.baseline}' is not among the bands {sorted(bands)}."
                f"{suggest(self.baseline, bands)}",
                key="baseline",
            )
        boot = {"method": "percentile", "level": self.confidence, "resamples": self.num_resamples}
        per_seed = {}
        for label, band in bands.items():
            length = band["mean_return"].shape[1]
            tail = max(1, round(self.final_fraction * length))
            per_seed[label] = {
                "final_return": band["mean_return"][:, -tail:].mean(axis=1),
                "auc": band["mean_return"].mean(axis=1),
                "final_tool_calls": band["tool_calls"][:, -tail:].mean(axis=1),
            }
        values: dict[str, float] = {}
        rows = []
        for label, scores in per_seed.items():
            row: dict[str, Any] = {"band": label, "num_seeds": len(scores["auc"])}
            values[f"{label}/num_seeds"] = float(len(scores["auc"]))
            for metric in ("final_return", "auc"):
                rng = child_numpy_rng(generator, f"bootstrap/{label}/{metric}")
                ci = bootstrap_ci(scores[metric], "mean", rng=rng, **boot)
                est, low, high = ci.estimate, ci.low, ci.high
                values[f"{label}/{metric}"] = est
                if np.isfinite(low) and np.isfinite(high):  # no interval from a single seed
                    values.update({f"{label}/{metric}_low": low, f"{label}/{metric}_high": high})
                    row[metric] = f"{est:.4f} [{low:.4f}, {high:.4f}]"
                else:
                    row[metric] = f"{est:.4f} (n = {ci.n}, no interval)"
                if self.baseline and label != self.baseline:
                    rng = child_numpy_rng(generator, f"bootstrap/{label}/{metric}_diff")
                    ci = bootstrap_ci(
                        scores[metric],
                        "difference",
                        per_seed[self.baseline][metric],
                        paired=False,
                        rng=rng,
                        **boot,
                    )
                    est, low, high = ci.estimate, ci.low, ci.high
                    values[f"{label}/{metric}_diff"] = est
                    if np.isfinite(low) and np.isfinite(high):
                        values[f"{label}/{metric}_diff_low"] = low
                        values[f"{label}/{metric}_diff_high"] = high
                        row[f"{metric}_diff"] = f"{est:+.4f} [{low:+.4f}, {high:+.4f}]"
                    else:
                        row[f"{metric}_diff"] = f"{est:+.4f} (no interval)"
            calls = scores["final_tool_calls"]
            if np.all(np.isfinite(calls)):
                values[f"{label}/final_tool_calls"] = float(calls.mean())
                row["final_tool_calls"] = round(float(calls.mean()), 4)
            rows.append(row)
        return Metrics(
            values=values,
            tables={"summary": rows},
            figures={"curves": self._figure(bands)},
            info={"bands": sorted(bands), "baseline": self.baseline},
        )

    def _figure(self, bands: dict[str, dict[str, np.ndarray]]) -> Any:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(10, 4), layout="constrained")
        axes = fig.subplots(1, 2)
        for label, band in bands.items():
            for ax, key in zip(axes, ("mean_return", "tool_calls"), strict=False):
                curves = band[key]
                if not np.all(np.isfinite(curves)):
                    continue
                curves = _moving_average(curves, self.smooth)
                mean = curves.mean(axis=0)
                line = ax.plot(band["step"], mean, label=f"{label} (n={curves.shape[0]})")[0]
                if curves.shape[0] > 1:
                    half = 1.96 * curves.std(axis=0, ddof=1) / math.sqrt(curves.shape[0])
                    ax.fill_between(band["step"], mean - half, mean + half, color=line.get_color(), alpha=0.2)
        axes[0].set(xlabel="training step (update)", ylabel="mean episode return", title="Return")
        axes[1].set(xlabel="training step (update)", ylabel="tool calls per episode", title="Tool calls")
        axes[0].legend(fontsize="small")
        fig.suptitle(f"mean over seeds, band = mean ± 1.96 s.e., moving average over {self.smooth} updates")
        return fig


def _moving_average(curves: np.ndarray, window: int) -> np.ndarray:
    if window <= 1 or curves.shape[1] < window:
        return curves
    kernel = np.ones(window) / window
    padded = np.concatenate([np.repeat(curves[:, :1], window - 1, axis=1), curves], axis=1)
    return np.stack([np.convolve(row, kernel, mode="valid") for row in padded])
