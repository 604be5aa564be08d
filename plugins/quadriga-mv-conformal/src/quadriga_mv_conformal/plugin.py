"""Registration of quadriga-mv-conformal's estimator, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Feldman, Bates & Romano 2023, JMLR 24, arXiv 2110.00816"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the st-dqr estimator, its pipeline and its two claims."""
    registry.add(
        "estimator",
        "st-dqr",
        "quadriga_mv_conformal.stdqr:STDQR",
        summary="Conformal region for a multivariate y through a CVAE latent where the region is a ball",
        paper=f"{_PAPER}, sec. 4-5",
        tags=("conformal", "supervised", "trains-network"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "mv-conformal-coverage",
        "quadriga_mv_conformal.claims:COVERAGE",
        summary="ST-DQR's coverage over re-splits is within 0.90 +- 0.02 on the banana response",
        paper=f"{_PAPER}, sec. 6",
    )
    registry.add_claim(
        "mv-conformal-volume",
        "quadriga_mv_conformal.claims:VOLUME",
        summary="ST-DQR's region area is below 0.7 times the box and ellipsoid conformal areas on the banana",
        paper=f"{_PAPER}, sec. 6",
    )
