"""Evaluators of stream predictors on ``shifted-digits`` scenarios.

Each subject is a :class:`~quadriga.artifacts.Fitted` whose ``predict`` is a stream predictor
(:mod:`quadriga_std.shift.classifier`); the reference is a dataset with scenario splits,
``batches(name)`` and (for OOD) ``ood(name)`` (:class:`~quadriga_std.shift.digits.ShiftedDigits`).
Metric names use the scenario with ``-`` written ``_`` (``accuracy_class_sorted``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

from quadriga.artifacts import Fitted, Metrics
from quadriga.errors import ConfigError
from quadriga.interfaces import Dataset, Evaluator, named
from quadriga.params import param
from quadriga.stage_names import StageName, format_stage_name, parse_stage_name
from quadriga.validators import int_at_least
from quadriga_std.shift.metrics import expected_calibration_error, ood_auroc, selective_accuracy

__all__ = ["OODDetection", "ScenarioAccuracy", "SelectiveAccuracy", "grid_groups", "stream_probs"]


def _key(scenario: str) -> str:
    return scenario.replace("-", "_")


def stream_probs(subject: Any, data: Any, scenario: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(probs[n, C], labels[C], y[n])`` of one subject on one scenario's stream.

    Raises:
        ConfigError: a subject without a stream predictor or ``classes`` in its info, a
            reference without the scenario.
    """
    if not callable(getattr(subject, "predict", None)) or "classes" not in getattr(subject, "info", {}):
        raise ConfigError(
            "a shift evaluator needs Fitted subjects with a stream predictor and info['classes'] "
            "(e.g. from 'mlp-classifier' or a test-time adaptation learner).",
            key="subject",
        )
    try:
        X, y = data.split(scenario)
    except (KeyError, AttributeError) as exc:
        raise ConfigError(f"the reference has no scenario '{scenario}' ({exc}).", key="reference") from exc
    probs = np.asarray(subject.predict(X, data.batches(scenario)), np.float64)
    return probs, np.asarray(subject.info["classes"]), np.asarray(y)


def grid_groups(names: list[str]) -> dict[str, list[str]]:
    """Subjects grouped across the points of a ``matrix``: ``{"lame[0]": ["lame[knn=1][0]", ...]}``.

    The group of ``source[point][i]`` is ``source[i]`` (``source`` without a replicate); a subject
    without a matrix point is its own group.
    """
    out: dict[str, list[str]] = {}
    for name in names:
        parsed = parse_stage_name(name)
        group = format_stage_name(StageName(parsed.source, (), parsed.replicate))
        out.setdefault(group, []).append(name)
    return out


def _scenarios_of(data: Any, scenarios: tuple[str, ...]) -> tuple[str, ...]:
    chosen = tuple(scenarios) or tuple(getattr(data, "scenarios", ()))
    if not chosen:
        raise ConfigError(
            "no scenarios: give 'scenarios' or a reference with scenario splits.", key="scenarios"
        )
    return chosen


@attrs.define(kw_only=True)
class ScenarioAccuracy(Evaluator):
    """Accuracy and ECE per scenario, their mean over scenarios, and the worst case over a grid.

    Values per subject ``s``: ``s/accuracy_<scenario>``, ``s/ece_<scenario>`` (15 bins),
    ``s/mean_accuracy`` (mean over scenarios). Values per *grid group* ``g`` (a stage's matrix
    points with one replicate index, :func:`grid_groups`): ``g/worst_accuracy_<scenario>`` (the
    minimum over the grid in that scenario), ``g/worst_mean_accuracy`` (minimum over the grid of
    ``mean_accuracy``) and ``g/best_mean_accuracy``: the "no catastrophic failure" view of
    test-time adaptation, where a method's hyper-parameters cannot be tuned on the test stream.
    Units: fractions in [0, 1]. Table ``scenarios``: one row per (subject, scenario).

    Shapes: each subject's ``predict(X[n, 64], batches) -> ndarray[n, C]``; the reference's
    ``split(scenario) -> (X[n, 64], y[n])``.

    Raises:
        ConfigError: subjects without stream predictors, a reference without the scenarios.

    Source: Boudiaf et al. 2022, "Parameter-free online test-time adaptation", CVPR, sec. 4
    (accuracy per scenario; robustness to hyper-parameters as the worst case over a grid); ECE:
    Guo et al. 2017, eq. (3).
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}

    scenarios: tuple[str, ...] = param(
        (),
        doc="scenario splits to score (empty: every scenario of the reference)",
        converter=tuple,
        toml_type="list[str]",
    )
    bins: int = param(15, doc="confidence bins of the ECE", validator=int_at_least(1))

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject on every scenario (see the class docstring)."""
        subjects = named(subject)
        scenarios = _scenarios_of(reference, self.scenarios)
        values: dict[str, float] = {}
        rows = []
        for name, fitted in subjects.items():
            accs = []
            for sc in scenarios:
                probs, labels, y = stream_probs(fitted, reference, sc)
                correct = labels[probs.argmax(1)] == y
                acc = float(correct.mean())
                ece = expected_calibration_error(probs.max(1), correct, self.bins)
                values[f"{name}/accuracy_{_key(sc)}"] = acc
                values[f"{name}/ece_{_key(sc)}"] = ece
                accs.append(acc)
                rows.append({"subject": name, "scenario": sc, "accuracy": acc, "ece": ece, "n": len(y)})
            values[f"{name}/mean_accuracy"] = float(np.mean(accs))
        for group, members in grid_groups(list(subjects)).items():
            for sc in scenarios:
                values[f"{group}/worst_accuracy_{_key(sc)}"] = min(
                    values[f"{m}/accuracy_{_key(sc)}"] for m in members
                )
            means = [values[f"{m}/mean_accuracy"] for m in members]
            values[f"{group}/worst_mean_accuracy"] = min(means)
            values[f"{group}/best_mean_accuracy"] = max(means)
        return Metrics(values=values, tables={"scenarios": rows}, info={"scenarios": list(scenarios)})


@attrs.define(kw_only=True)
class OODDetection(Evaluator):
    """OOD-AUROC of the maximum-softmax-probability score on a scenario with held-out classes.

    Score ``1 - max_c p_c`` (``score = "msp"``) or the predictive entropy (``"entropy"``); the
    positives are the rows ``reference.ood(scenario)`` flags. Values ``s/ood_auroc`` (fraction in
    [0, 1]; 0.5 is chance) and ``s/accuracy_in_distribution`` (accuracy on the other rows).

    Shapes: each subject's ``predict(X[n, 64], batches) -> ndarray[n, C]``; the reference's
    ``split(scenario) -> (X[n, 64], y[n])``.
    Units: AUROC and accuracy are fractions in [0, 1].

    Raises:
        ConfigError: a reference without ``ood``, a scenario with no OOD or no in-distribution rows.

    Source: Hendrycks & Gimpel 2017, ICLR (MSP baseline, AUROC); scikit-learn ``roc_auc_score``.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}

    scenario: str = param("held-out", doc="scenario with held-out classes")
    score: str = param("msp", doc="'msp' (1 - max probability) or 'entropy'")

    def __attrs_post_init__(self) -> None:
        if self.score not in ("msp", "entropy"):
            raise ConfigError(f"score must be 'msp' or 'entropy' (got {self.score!r}).", key="score")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject (see the class docstring)."""
        if not callable(getattr(reference, "ood", None)):
            raise ConfigError(
                "the reference has no ood(scenario) flags (use 'shifted-digits').", key="reference"
            )
        flag = reference.ood(self.scenario)
        if flag.all() or not flag.any():
            raise ConfigError(
                f"scenario '{self.scenario}' needs both OOD and in-distribution rows.", key="scenario"
            )
        values: dict[str, float] = {}
        for name, fitted in named(subject).items():
            probs, labels, y = stream_probs(fitted, reference, self.scenario)
            if self.score == "msp":
                s = 1.0 - probs.max(1)
            else:
                s = -(probs * np.log(np.clip(probs, 1e-300, None))).sum(1)
            values[f"{name}/ood_auroc"] = ood_auroc(s, flag)
            values[f"{name}/accuracy_in_distribution"] = float(
                (labels[probs[~flag].argmax(1)] == y[~flag]).mean()
            )
        return Metrics(
            values=values, info={"scenario": self.scenario, "n_ood": int(flag.sum()), "n": len(flag)}
        )


@attrs.define(kw_only=True)
class SelectiveAccuracy(Evaluator):
    """Accuracy of the most confident fraction of rows, per scenario and coverage level.

    Values ``s/selective_accuracy_<scenario>_<100 x coverage>`` (``..._iid_80``), fractions in
    [0, 1]; rows ranked by the top-class probability (softmax response).

    Shapes: each subject's ``predict(X[n, 64], batches) -> ndarray[n, C]``; the reference's
    ``split(scenario) -> (X[n, 64], y[n])``.
    Units: accuracies and coverages are fractions.

    Raises:
        ConfigError: a coverage outside (0, 1], subjects or reference as for :class:`ScenarioAccuracy`.

    Source: Geifman & El-Yaniv 2017, NeurIPS, sec. 2.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Fitted,), "reference": (Dataset,)}

    scenarios: tuple[str, ...] = param(
        (),
        doc="scenario splits (empty: every scenario of the reference)",
        converter=tuple,
        toml_type="list[str]",
    )
    coverages: tuple[float, ...] = param(
        (0.5, 0.8, 1.0), doc="fractions of rows kept", converter=tuple, toml_type="list[float]"
    )

    def __attrs_post_init__(self) -> None:
        if not self.coverages or any(not 0.0 < c <= 1.0 for c in self.coverages):
            raise ConfigError(f"coverages must lie in (0, 1] (got {list(self.coverages)}).", key="coverages")

    def evaluate(self, subject: Any, reference: Any = None, *, generator: Any) -> Metrics:
        """Score every subject (see the class docstring)."""
        values: dict[str, float] = {}
        for name, fitted in named(subject).items():
            for sc in _scenarios_of(reference, self.scenarios):
                probs, labels, y = stream_probs(fitted, reference, sc)
                correct = labels[probs.argmax(1)] == y
                for c in self.coverages:
                    key = f"{name}/selective_accuracy_{_key(sc)}_{round(100 * c)}"
                    values[key] = selective_accuracy(probs.max(1), correct, c)
        return Metrics(values=values)
