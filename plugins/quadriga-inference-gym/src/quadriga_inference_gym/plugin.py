"""Registration of quadriga-inference-gym's targets, evaluator, sampler, pipeline and benchmark (lazy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_inference_gym"
_IG = "Inference Gym (tensorflow/probability spinoffs/inference_gym)"


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the inference-gym targets, the ground-truth evaluator, the tuner, pipeline and benchmark."""
    registry.add(
        "target",
        "ig-eight-schools",
        f"{_P}.targets:EightSchools",
        summary="Eight schools, centred (d = 10)",
        paper=f"Rubin 1981, {_IG}",
        tags=("ground-truth", "posterior", "real-data"),
    )
    registry.add(
        "target",
        "ig-neals-funnel",
        f"{_P}.targets:NealsFunnel",
        summary="Neal's funnel (d = 10)",
        paper=f"Neal 2003; {_IG}",
        tags=("exact-target", "ground-truth"),
    )
    registry.add(
        "target",
        "ig-banana",
        f"{_P}.targets:Banana",
        summary="Banana, curvature 0.03 (d = 2)",
        paper=f"Haario et al. 1999; {_IG}",
        tags=("exact-target", "ground-truth"),
    )
    registry.add(
        "target",
        "ig-ill-conditioned-gaussian",
        f"{_P}.targets:IllConditionedGaussian",
        summary="Ill-conditioned Gaussian, inverse-Gamma(0.5) spectrum (d = 100)",
        paper=f"{_IG}",
        tags=("exact-target", "ground-truth"),
    )
    registry.add(
        "target",
        "ig-brownian-motion",
        f"{_P}.targets:BrownianMotionMissingMiddle",
        summary="Brownian motion with the middle ten of 30 observations missing (d = 30)",
        paper=f"Ambrogioni et al. 2021; {_IG}",
        tags=("ground-truth", "posterior"),
    )
    registry.add(
        "target",
        "ig-stochastic-volatility",
        f"{_P}.targets:StochasticVolatilitySP500Small",
        summary="Stochastic volatility of 100 S&P 500 returns (d = 103)",
        paper=f"Kim, Shephard & Chib 1998; {_IG}",
        tags=("ground-truth", "posterior", "real-data"),
    )
    registry.add(
        "target",
        "ig-item-response-theory",
        f"{_P}.targets:SyntheticItemResponseTheory",
        summary="One-parameter item response theory on synthetic data (d = 501)",
        paper=f"Rasch 1960; {_IG}",
        tags=("ground-truth", "posterior"),
    )
    registry.add(
        "evaluator",
        "ground-truth-error",
        f"{_P}.evaluators:GroundTruthError",
        summary=(
            "Standardized error of the posterior mean (in sds and in ground-truth standard errors), sd "
            "error and bulk ESS per gradient against inference-gym's ground truth"
        ),
        paper=f"{_IG}; Vehtari et al. 2021",
        tags=("ground-truth", "mcmc"),
    )
    registry.add(
        "sampler",
        "dual-averaging",
        f"{_P}.tuning:DualAveraging",
        summary="Tune a kernel's step size by dual averaging on a pilot, then run the sampler from its end",
        paper="Hoffman & Gelman 2014, Algorithm 5",
        tags=("mcmc",),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "inference-gym-table",
        f"{_P}.claims:TABLE",
        summary=(
            "Benchmark table (no claim, no verdict): standardized error and ESS per evaluation of every "
            "installed sampler on seven inference-gym targets"
        ),
        paper=f"{_IG}",
    )
