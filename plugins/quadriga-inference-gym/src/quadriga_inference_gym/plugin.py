"""Registration of quadriga-inference-gym's targets, evaluator, sampler, pipeline and benchmark (lazy)."""

from __future__ import annotations

import importlib.util

import quadriga

_P = "quadriga_inference_gym"
_IG = "Inference Gym (tensorflow/probability spinoffs/inference_gym)"

COMPONENTS = [
    (
        "target",
        "ig-eight-schools",
        "targets:EightSchools",
        "Eight schools, centred (d = 10)",
        f"Rubin 1981, {_IG}",
    ),
    ("target", "ig-neals-funnel", "targets:NealsFunnel", "Neal's funnel (d = 10)", f"Neal 2003; {_IG}"),
    ("target", "ig-banana", "targets:Banana", "Banana, curvature 0.03 (d = 2)", f"Haario et al. 1999; {_IG}"),
    (
        "target",
        "ig-ill-conditioned-gaussian",
        "targets:IllConditionedGaussian",
        "Ill-conditioned Gaussian, inverse-Gamma(0.5) spectrum (d = 100)",
        _IG,
    ),
    (
        "target",
        "ig-brownian-motion",
        "targets:BrownianMotionMissingMiddle",
        "Brownian motion with the middle ten of 30 observations missing (d = 30)",
        f"Ambrogioni et al. 2021; {_IG}",
    ),
    (
        "target",
        "ig-stochastic-volatility",
        "targets:StochasticVolatilitySP500Small",
        "Stochastic volatility of 100 S&P 500 returns (d = 103)",
        f"Kim, Shephard & Chib 1998; {_IG}",
    ),
    (
        "target",
        "ig-item-response-theory",
        "targets:SyntheticItemResponseTheory",
        "One-parameter item response theory on synthetic data (d = 501)",
        f"Rasch 1960; {_IG}",
    ),
    (
        "evaluator",
        "ground-truth-error",
        "evaluators:GroundTruthError",
        "Standardized error of the posterior mean (in sds and in ground-truth standard errors), "
        "sd error and bulk ESS per gradient against inference-gym's ground truth",
        f"{_IG}; Vehtari et al. 2021",
    ),
    (
        "sampler",
        "dual-averaging",
        "tuning:DualAveraging",
        "Tune a kernel's step size by dual averaging on a pilot, then run the sampler from its end",
        "Hoffman & Gelman 2014, Algorithm 5",
    ),
]

PIPELINES = [
    (
        "inference-gym-mcmc",
        "pipelines/inference-gym-mcmc.toml",
        "RWM, MALA and HMC on seven inference-gym targets, tuned step sizes, equal evaluation budgets",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("target", "ig-eight-schools"): ("ground-truth", "posterior", "real-data"),
    ("target", "ig-neals-funnel"): ("exact-target", "ground-truth"),
    ("target", "ig-banana"): ("exact-target", "ground-truth"),
    ("target", "ig-ill-conditioned-gaussian"): ("exact-target", "ground-truth"),
    ("target", "ig-brownian-motion"): ("ground-truth", "posterior"),
    ("target", "ig-stochastic-volatility"): ("ground-truth", "posterior", "real-data"),
    ("target", "ig-item-response-theory"): ("ground-truth", "posterior"),
    ("evaluator", "ground-truth-error"): ("ground-truth", "mcmc"),
    ("sampler", "dual-averaging"): ("mcmc",),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the inference-gym targets, the ground-truth evaluator, the tuner, pipeline and benchmark."""
    for kind, name, target, summary, paper in COMPONENTS:
        registry.add(
            kind,
            name,
            f"{_P}.{target}",
            summary=summary,
            paper=paper,
            tags=TAGS.get((kind, name), ()),
        )
    for name, path, summary in PIPELINES:
        registry.add_pipeline(name, f"{_P}:{path}", summary=summary)
    registry.add_claim(
        "inference-gym-table",
        f"{_P}.claims:TABLE",
        summary="Benchmark table (no claim, no verdict): standardized error and ESS per evaluation of every "
        "installed sampler on seven inference-gym targets",
        paper=_IG,
    )
    if importlib.util.find_spec("quadriga_srmc") is not None:  # SR-MALA only where quadriga-srmc is installed
        registry.add_pipeline(
            "inference-gym-mcmc-srmc",
            f"{_P}:pipelines/inference-gym-mcmc-srmc.toml",
            summary="inference-gym-mcmc plus SR-MALA (quadriga-srmc), same targets and budgets",
        )
