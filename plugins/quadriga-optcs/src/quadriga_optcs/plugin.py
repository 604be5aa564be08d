"""Registration of quadriga-optcs's components, pipelines and claims (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_PAPER = "Bai & Jin 2024, arXiv 2411.17983"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register four selection estimators, the selection-fdr evaluator, a dataset, pipelines and claims."""
    registry.add(
        "estimator",
        "optcs",
        "quadriga_optcs.estimators:OptCS",
        summary="Conformal selection after choosing the best of K candidate scores (OptCS-MSel), FDR <= q",
        paper=f"{_PAPER}, sec. 3 and 4.1",
        tags=("conformal", "fdr", "supervised"),
    )
    registry.add(
        "estimator",
        "optcs-full",
        "quadriga_optcs.full:OptCSFull",
        summary="OptCS on leave-one-out ridge scores fitted on all labelled and test units (Full, Full-MSel)",
        paper=f"{_PAPER}, sec. 4.2-4.3",
        tags=("conformal", "fdr", "supervised"),
    )
    registry.add(
        "estimator",
        "split-selection",
        "quadriga_optcs.estimators:SplitSelection",
        summary="Conformal p-values + BH with the model chosen on half of the calibration data",
        paper="Jin & Candès 2023, JMLR 24(244), Algorithm 1",
        tags=("conformal", "fdr", "supervised"),
    )
    registry.add(
        "estimator",
        "naive-selection",
        "quadriga_optcs.estimators:NaiveSelection",
        summary="The largest BH set over K candidates, reusing the data without correction (invalid)",
        paper=f"{_PAPER}, sec. 5",
        tags=("conformal", "fdr", "supervised"),
    )
    registry.add(
        "evaluator",
        "selection-fdr",
        "quadriga_optcs.evaluator:SelectionFDR",
        summary="False discovery proportion and power per replicate; FDR and power with standard errors",
        paper="Benjamini & Hochberg 1995",
        tags=("conformal", "fdr"),
    )
    registry.add(
        "dataset",
        "optcs-synthetic",
        "quadriga_optcs.synthetic:SyntheticSelection",
        summary="Jin-Candès simulation settings 1-4: U[-1,1]^d covariates, known signal, Gaussian noise",
        paper=f"{_PAPER}, sec. 5",
        tags=("conformal", "supervised"),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "optcs-fdr-control",
        "quadriga_optcs.claims:FDR_CONTROL",
        summary="OptCS's FDR <= q = 0.1 despite choosing the model on the data",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "optcs-power",
        "quadriga_optcs.claims:POWER",
        summary="OptCS selects more true positives than split selection (paired, q = 0.2)",
        paper=f"{_PAPER}, sec. 5",
    )
    registry.add_claim(
        "optcs-naive-violation",
        "quadriga_optcs.claims:NAIVE_VIOLATION",
        summary="The naive reuse procedure's FDR exceeds q = 0.1",
        paper=f"{_PAPER}, sec. 5",
    )
