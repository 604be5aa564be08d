"""The conformance checks (quadriga.testing) on every component of quadriga-ddpm.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import parametrize_with_checks, plugin_cases

DIFFUSION = {"params": {"num_samples": 100, "num_steps": 10}, "task": {"use": "sphere-mixture", "dim": 2}}
GMM = {"use": "gaussian-mixture", "preset": "4-mode-2d"}
ODE = {"params": {"num_samples": 50, "nfe": 4}, "task": GMM}
#: solvers repeated so that replicate i of each shares its seed, hence its x_T
PAIRED = {
    "task": {"target": GMM},
    "stage": {
        "fast": {
            "use": "dpm-solver-pp",
            "inputs": {"target": "target"},
            "num_samples": 50,
            "nfe": 4,
            "repeat": 2,
        },
        "ref": {"use": "reference-ode", "inputs": {"target": "target"}, "num_samples": 50, "repeat": 2},
    },
    "inputs": {"subject": ["fast[*]"], "reference": ["ref[*]"]},
}
COND = {"use": "conditional-gaussian-mixture", "preset": "3-class-2d", "grid_size": 100}
GUIDED = {
    "task": {"target": COND},
    "stage": {
        "cfg": {
            "use": "ddim",
            "inputs": {"target": "target"},
            "num_samples": 100,
            "num_steps": 10,
            "guidance": 3.0,
        }
    },
    "inputs": {"subject": ["cfg"], "reference": "target"},
}
SETUP = {
    ("evaluator", "guided-density-distance"): {"params": {"num_reference_samples": 100}, "inputs": GUIDED},
    ("evaluator", "score-error"): {
        "params": {"num_samples": 50, "sigmas": [0.1, 0.5]},
        "inputs": {
            "task": {
                "target": GMM,
                "shifted": {"use": "gaussian-mixture", "preset": "4-mode-2d", "radius": 2.2},
            },
            "inputs": {"subject": ["shifted"], "reference": "target"},
        },
    },
    ("sampler", "dpm-solver-pp"): ODE,
    ("sampler", "reference-ode"): {"params": {"num_samples": 50}, "task": GMM},
    ("sampler", "edm-heun"): {"params": {"num_samples": 50, "num_steps": 4}, "task": GMM},
    ("evaluator", "solver-error"): {"inputs": PAIRED},
    ("sampler", "ddpm"): DIFFUSION,
    ("sampler", "ddim"): DIFFUSION,
    ("evaluator", "mixture-diagnostics"): {"task": {"use": "sphere-mixture", "dim": 2}},
}


@parametrize_with_checks(plugin_cases("quadriga-ddpm", setup=SETUP))
def test_conformance(case, check):
    check(case)
