"""Registration of the components, pipelines and claims of this plugin (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_stochastic_interpolants"
_PAPER = (
    "Albergo, Boffi & Vanden-Eijnden 2023, Stochastic interpolants: a unifying framework for flows "
    "and diffusions (arXiv 2303.08797)"
)

COMPONENTS = [
    # kind, name, "module:attr", summary, paper
    (
        "learner",
        "stochastic-interpolant",
        "learner:StochasticInterpolant",
        "Velocity b(t, x) and denoiser/score of x_t = alpha x0 + beta x1 + gamma z between two densities "
        "(quadratic objectives L_b, L_eta)",
        _PAPER + ", Sec. 2.2",
    ),
    (
        "learner",
        "flow-matching",
        "learner:FlowMatching",
        "Conditional flow matching (linear interpolant, gamma = 0, velocity only): the baseline",
        "Lipman et al. 2023, eq. 23 (sigma_min = 0)",
    ),
    (
        "sampler",
        "interpolant-sampler",
        "sampler:InterpolantSampler",
        "Probability-flow ODE (torchdiffeq) or forward SDE with tunable epsilon (torchsde), rho_0 -> rho_1",
        _PAPER + ", Sec. 2",
    ),
    (
        "sampler",
        "dataset-points",
        "sampler:DatasetPoints",
        "A dataset split (or fresh exact draws) as Samples: references and distance floors",
        "",
    ),
    (
        "dataset",
        "two-moons",
        "datasets:TwoMoons",
        "scikit-learn make_moons, centred and scaled (2-D points)",
        "",
    ),
    (
        "dataset",
        "checkerboard",
        "datasets:Checkerboard",
        "Uniform on the dark cells of a 4 x 4 board (2-D points)",
        "",
    ),
    (
        "dataset",
        "swiss-roll",
        "datasets:SwissRoll",
        "scikit-learn make_swiss_roll, columns (0, 2), scaled",
        "",
    ),
    (
        "dataset",
        "gaussian-mixture-points",
        "datasets:GaussianMixturePoints",
        "Equal-weight 2-D Gaussian mixture with means on a circle (points)",
        "",
    ),
]

PIPELINES = [
    (
        "si-moons-to-checkerboard",
        "pipelines/si-moons-to-checkerboard.toml",
        "Moons -> checkerboard: probability-flow ODE vs SDE over epsilon in {0.1, 0.5, 1}, "
        "energy distance and MMD to held-out points with the two-sample floor",
    ),
    (
        "si-gaussian-base",
        "pipelines/si-gaussian-base.toml",
        "N(0, I) -> swiss roll: stochastic interpolant (ODE and SDE) against flow matching",
    ),
]

CLAIMS = [
    (
        "si-bridging",
        "claims:BRIDGING",
        "Samples transported from moons match the checkerboard: energy distance to held-out points "
        "within a margin of the two-sample floor",
        _PAPER + ", Sec. 2 (exact bridging in finite time)",
    ),
    (
        "si-sde-beats-ode",
        "claims:SDE_BEATS_ODE",
        "With an imperfectly learned drift, the SDE (epsilon = 0.5) lands closer to the target than "
        "the probability-flow ODE",
        _PAPER + ", Sec. 2 (likelihood control for stochastic dynamics)",
    ),
]


#: capability tags of each component (quadriga.tags), found by `quadriga list --where TAG`
TAGS = {
    ("learner", "stochastic-interpolant"): ("generative", "trains-network"),
    ("learner", "flow-matching"): ("generative", "trains-network"),
    ("sampler", "interpolant-sampler"): ("generative",),
    ("sampler", "dataset-points"): ("generative",),
    ("dataset", "two-moons"): ("generative",),
    ("dataset", "checkerboard"): ("generative",),
    ("dataset", "swiss-roll"): ("generative",),
    ("dataset", "gaussian-mixture-points"): ("generative",),
}


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the learners, samplers, datasets, pipelines and claims of this plugin."""
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
    for name, target, summary, paper in CLAIMS:
        registry.add_claim(name, f"{_P}.{target}", summary=summary, paper=paper)
