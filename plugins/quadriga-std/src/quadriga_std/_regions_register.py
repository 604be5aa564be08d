"""Registration of the multivariate-region pieces (lazy "module:attr" strings only)."""

from __future__ import annotations

_P = "quadriga_std"
_PAPER = "Feldman, Bates & Romano 2023, JMLR, sec. 6"


def register(registry) -> None:
    """Add the box/ellipsoid conformal regions, region-coverage and mv-synthetic to ``registry``."""
    registry.add(
        "estimator",
        "box-conformal",
        f"{_P}.estimators.regions:BoxConformal",
        summary="Split-conformal box region for a multivariate response (max standardized residual)",
        paper=_PAPER,
        tags=("conformal", "supervised"),
    )
    registry.add(
        "estimator",
        "ellipsoid-conformal",
        f"{_P}.estimators.regions:EllipsoidConformal",
        summary="Split-conformal ellipsoid region for a multivariate response (Mahalanobis score)",
        paper=_PAPER,
        tags=("conformal", "supervised"),
    )
    registry.add(
        "evaluator",
        "region-coverage",
        f"{_P}.evaluators.regions:RegionCoverage",
        summary="Coverage over re-splits, with s.e., and Monte-Carlo volume of regions",
        paper=_PAPER,
        tags=("conformal",),
    )
    registry.add(
        "dataset",
        "mv-synthetic",
        f"{_P}.tasks.multivariate:MultivariateResponse",
        summary="x in [0.5, 2] with a 2-D banana, bimodal, ring or Gaussian response",
        paper=_PAPER,
        tags=("supervised",),
    )
