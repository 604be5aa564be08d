"""The conformance checks (quadriga.testing) on every component of quadriga-std.

One pytest item per (component, check); setup for the components whose defaults are expensive
or whose inputs the checks cannot make themselves.
"""

from __future__ import annotations

from quadriga.testing import cheap_dqn, parametrize_with_checks, plugin_cases

MCMC = {"params": {"num_samples": 40, "burn_in": 20}}
#: cheap settings of the DQN family for the checks (defaults train for minutes)
DQN = cheap_dqn()
SHIFTED = {"use": "sklearn-dataset", "name": "diabetes", "shift": True}
FITTED_DQN = {
    "task": {"env": {"use": "gym-env", "env_id": "CartPole-v1"}},
    "stage": {"policy": {"use": "dqn", "inputs": {"task": "env"}, **DQN}},
    "inputs": {"subject": "policy", "reference": "env"},
}
#: small shift-kit fixtures: two scenarios, a two-epoch source classifier
DIGITS = {"use": "shifted-digits", "scenarios": ["iid", "noise"]}
DIGITS_OOD = {"use": "shifted-digits", "scenarios": ["held-out"], "held_out_classes": [8, 9]}


def _fitted_digits(task):
    return {
        "task": {"digits": task},
        "stage": {"source": {"use": "mlp-classifier", "inputs": {"task": "digits"}, "num_epochs": 2}},
        "inputs": {"subject": "source", "reference": "digits"},
    }


FITTED_DIGITS = _fitted_digits(DIGITS)
FITTED_DIGITS_OOD = _fitted_digits(DIGITS_OOD)
MV = {"use": "mv-synthetic", "n_train": 200, "n_calibration": 100, "n_test": 100}
CHAIN = {"use": "vector-reward-chain"}
FITTED_DQN_CHAIN = {
    "task": {"chain": CHAIN},
    "stage": {"policy": {"use": "dqn", "inputs": {"task": "chain"}, **DQN}},
    "inputs": {"subject": "policy", "reference": "chain"},
}
SETUP = {
    ("sampler", "rwm"): MCMC,
    ("sampler", "ula"): MCMC,
    ("sampler", "mala"): MCMC,
    ("sampler", "hmc"): MCMC,
    ("sampler", "gibbs"): {**MCMC, "task": {"use": "ising", "size": 3}},
    ("learner", "dqn"): {"params": DQN},
    ("learner", "double-dqn"): {"params": DQN},
    ("learner", "dqn-online"): {"params": DQN},
    ("estimator", "weighted-conformal"): {"task": SHIFTED},
    ("evaluator", "mode-coverage"): {"task": {"use": "gaussian-mixture", "preset": "4-mode-2d"}},
    ("evaluator", "episode-return"): {"params": {"num_episodes": 2}, "inputs": FITTED_DQN},
    ("evaluator", "q-overestimation"): {"params": {"num_episodes": 1}, "inputs": FITTED_DQN},
    ("evaluator", "return-curve"): {
        "params": {"num_points": 10, "smoothing_episodes": 2},
        "inputs": FITTED_DQN,
    },
    ("evaluator", "interval-coverage"): {
        "inputs": {
            "task": {"data": SHIFTED},
            "stage": {"conformal": {"use": "split-conformal", "inputs": {"data": "data"}}},
            "inputs": {"subject": "conformal", "reference": "data"},
        }
    },
    ("learner", "mlp-classifier"): {"params": {"num_epochs": 2}, "task": DIGITS},
    ("evaluator", "scenario-accuracy"): {"inputs": FITTED_DIGITS},
    ("evaluator", "selective-accuracy"): {"inputs": FITTED_DIGITS},
    ("evaluator", "ood-auroc"): {"inputs": FITTED_DIGITS_OOD},
    ("estimator", "box-conformal"): {"task": MV},
    ("estimator", "ellipsoid-conformal"): {"task": MV},
    ("evaluator", "region-coverage"): {
        "params": {"volume_points": 5, "mc_samples": 100},
        "inputs": {
            "task": {"data": MV},
            "stage": {"box": {"use": "box-conformal", "inputs": {"data": "data"}}},
            "inputs": {"subject": "box", "reference": "data"},
        },
    },
    ("target", "gaussian"): {"params": {"dim": 2}},
    ("target", "gaussian-mixture"): {"params": {"preset": "4-mode-2d"}},
    ("environment", "gym-env"): {"params": {"env_id": "CartPole-v1"}},
    ("evaluator", "q-error"): {"inputs": FITTED_DQN_CHAIN},
}


@parametrize_with_checks(plugin_cases("quadriga-std", setup=SETUP))
def test_conformance(case, check):
    check(case)
