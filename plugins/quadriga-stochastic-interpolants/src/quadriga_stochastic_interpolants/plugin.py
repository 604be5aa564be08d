"""Registration of the components, pipelines and claims of this plugin (imports nothing heavy)."""

from __future__ import annotations

import quadriga

_P = "quadriga_stochastic_interpolants"
_PAPER = (
    "Albergo, Boffi & Vanden-Eijnden 2023, Stochastic interpolants: a unifying framework for flows "
    "and diffusions (arXiv 2303.08797)"
)


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the learners, samplers, datasets, pipelines and claims of this plugin."""
    registry.add(
        "learner",
        "stochastic-interpolant",
        f"{_P}.learner:StochasticInterpolant",
        summary=(
            "Velocity b(t, x) and denoiser/score of x_t = alpha x0 + beta x1 + gamma z between two "
            "densities (quadratic objectives L_b, L_eta)"
        ),
        paper=f"{_PAPER}, Sec. 2.2",
        tags=("generative", "trains-network"),
    )
    registry.add(
        "learner",
        "flow-matching",
        f"{_P}.learner:FlowMatching",
        summary="Conditional flow matching (linear interpolant, gamma = 0, velocity only): the baseline",
        paper="Lipman et al. 2023, eq. 23 (sigma_min = 0)",
        tags=("generative", "trains-network"),
    )
    registry.add(
        "sampler",
        "interpolant-sampler",
        f"{_P}.sampler:InterpolantSampler",
        summary=(
            "Probability-flow ODE (torchdiffeq) or forward SDE with tunable epsilon (torchsde), rho_0 -> "
            "rho_1"
        ),
        paper=f"{_PAPER}, Sec. 2",
        tags=("generative",),
    )
    registry.add(
        "sampler",
        "dataset-points",
        f"{_P}.sampler:DatasetPoints",
        summary="A dataset split (or fresh exact draws) as Samples: references and distance floors",
        tags=("generative",),
    )
    registry.add(
        "dataset",
        "two-moons",
        f"{_P}.datasets:TwoMoons",
        summary="scikit-learn make_moons, centred and scaled (2-D points)",
        tags=("generative",),
    )
    registry.add(
        "dataset",
        "checkerboard",
        f"{_P}.datasets:Checkerboard",
        summary="Uniform on the dark cells of a 4 x 4 board (2-D points)",
        tags=("generative",),
    )
    registry.add(
        "dataset",
        "swiss-roll",
        f"{_P}.datasets:SwissRoll",
        summary="scikit-learn make_swiss_roll, columns (0, 2), scaled",
        tags=("generative",),
    )
    registry.add(
        "dataset",
        "gaussian-mixture-points",
        f"{_P}.datasets:GaussianMixturePoints",
        summary="Equal-weight 2-D Gaussian mixture with means on a circle (points)",
        tags=("generative",),
    )
    registry.add_pipelines(__package__)
    registry.add_claim(
        "si-bridging",
        f"{_P}.claims:BRIDGING",
        summary=(
            "Samples transported from moons match the checkerboard: energy distance to held-out points "
            "within a margin of the two-sample floor"
        ),
        paper=f"{_PAPER}, Sec. 2 (exact bridging in finite time)",
    )
    registry.add_claim(
        "si-sde-beats-ode",
        f"{_P}.claims:SDE_BEATS_ODE",
        summary=(
            "With an imperfectly learned drift, the SDE (epsilon = 0.5) lands closer to the target than the"
            " probability-flow ODE"
        ),
        paper=f"{_PAPER}, Sec. 2 (likelihood control for stochastic dynamics)",
    )
