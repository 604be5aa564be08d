"""Registration of quadriga-nero's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Zhao, Matsuzawa, Irvine, Maire, Kindlmann 2023, arXiv 2305.19889"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the nero evaluator, the orbit-classifier learner, two pipelines and four claims."""
    registry.add(
        "evaluator",
        "nero",
        "quadriga_nero.evaluator:NERO",
        summary=(
            "Metrics along group orbits (rotations, shifts, scales): NERO curves per class and pooled, "
            "orbit consensus as a label substitute"
        ),
        paper=f"{_PAPER}, sec. 3",
        tags=("equivariance", "supervised"),
    )
    registry.add(
        "learner",
        "orbit-classifier",
        "quadriga_nero.learner:OrbitClassifier",
        summary="MLP or CNN on square images (load_digits 8x8), rotation/shift augmentation, C4 averaging",
        paper=f"{_PAPER}, sec. 4.1",
        tags=("equivariance", "real-data", "supervised", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "nero-rotation-flatness",
        "quadriga_nero.claims:ROTATION_FLATNESS",
        summary=(
            "The rotation-augmented CNN's NERO accuracy curve over rotations is flatter (max - min) than "
            "the plain CNN's and the MLP's, paired over replicates"
        ),
        paper=f"{_PAPER}, sec. 4.1",
    )
    registry.add_claim(
        "nero-accuracy-overlap",
        "quadriga_nero.claims:ACCURACY_OVERLAP",
        summary=(
            "On upright test digits the rotation-augmented and plain CNNs have accuracies within 0.03: the "
            "scalar metric does not separate what the NERO curve does"
        ),
        paper=f"{_PAPER}, sec. 1 and 4.1",
    )
    registry.add_claim(
        "nero-shift-flatness",
        "quadriga_nero.claims:SHIFT_FLATNESS",
        summary="Over integer shifts the CNN has a flatter NERO curve than the MLP",
        paper=f"{_PAPER}, sec. 3",
    )
    registry.add_claim(
        "nero-consensus-tracking",
        "quadriga_nero.claims:CONSENSUS_TRACKING",
        summary=(
            "Consensus-based NERO curves (no labels) track the ground-truth curves: correlation over "
            "rotations above 0.9 for the plain CNN"
        ),
        paper=f"{_PAPER}, sec. 3 and 4.2",
    )
