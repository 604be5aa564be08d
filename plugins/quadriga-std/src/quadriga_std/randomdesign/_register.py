"""Registrations of the random-design kit (lazy "module:attr" paths; imports nothing heavy)."""

from __future__ import annotations

from typing import Any

_P = "quadriga_std.randomdesign"
_RIDGE = "Hastie, Montanari, Rosset & Tibshirani 2022, Ann. Statist., sec. 2-5"


def register(registry: Any) -> None:
    """Add the random-design dataset and the least-squares and ridge learners to ``registry``."""
    registry.add(
        "dataset",
        "random-design",
        f"{_P}.task:RandomDesign",
        summary="Gaussian design (isotropic, equicorrelated or power-law spectrum), planted linear signal, "
        "exact ridge risks",
        paper=_RIDGE,
        tags=("supervised",),
    )
    registry.add(
        "learner",
        "least-squares",
        f"{_P}.learners:LeastSquares",
        summary="Minimum-norm least squares (numpy lstsq), multi-output",
        paper="Gauss 1809; Penrose 1955 (minimum-norm solution)",
        tags=("supervised",),
    )
    registry.add(
        "learner",
        "ridge-regression",
        f"{_P}.learners:Ridge",
        summary="Ridge regression (X^T X + n lambda I)^-1 X^T Y, multi-output",
        paper="Hoerl & Kennard 1970",
        tags=("supervised",),
    )
