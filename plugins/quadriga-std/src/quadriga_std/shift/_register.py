"""Registration of the shift kit (lazy "module:attr" strings only)."""

from __future__ import annotations

_P = "quadriga_std.shift"
_LAME = "Boudiaf, Mueller, Ben Ayed & Bertinetto 2022, CVPR, sec. 4"


def register(registry) -> None:
    """Add the shift kit's dataset, learner and evaluators to ``registry``."""
    registry.add(
        "dataset",
        "shifted-digits",
        f"{_P}.digits:ShiftedDigits",
        summary="load_digits under noise, blur, rotation, held-out classes and non-i.i.d. batch streams",
        paper=_LAME,
        tags=("covariate-shift", "real-data", "supervised"),
    )
    registry.add(
        "learner",
        "mlp-classifier",
        f"{_P}.classifier:MLPClassifier",
        summary="BatchNorm MLP classifier with a stream predictor (source model for test-time adaptation)",
        tags=("supervised", "trains-network"),
    )
    registry.add(
        "evaluator",
        "scenario-accuracy",
        f"{_P}.evaluators:ScenarioAccuracy",
        summary="Accuracy and ECE per shift scenario, with the worst case over a hyper-parameter grid",
        paper=_LAME,
        tags=("covariate-shift",),
    )
    registry.add(
        "evaluator",
        "ood-auroc",
        f"{_P}.evaluators:OODDetection",
        summary="OOD-AUROC of max-softmax or entropy scores on held-out classes",
        paper="Hendrycks & Gimpel 2017, ICLR",
        tags=("covariate-shift",),
    )
    registry.add(
        "evaluator",
        "selective-accuracy",
        f"{_P}.evaluators:SelectiveAccuracy",
        summary="Accuracy of the most confident fraction of predictions per scenario",
        paper="Geifman & El-Yaniv 2017, NeurIPS",
        tags=("covariate-shift",),
    )
