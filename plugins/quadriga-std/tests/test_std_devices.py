"""A sampler, a learner and evaluators end to end on the stage's device.

Each pipeline runs once on the CPU (here, always) and once on CUDA (marked ``cuda``; skipped where
no CUDA device is present): the stage's generator lives on its device, so the chains, the
networks, the replay buffer and the updates must stay there, the evaluators must read them, and
what is saved must load back on a CPU-only machine. The CPU run checks the same values, so the
path every user takes is exercised wherever the suite runs.
"""

from __future__ import annotations

import math

import pytest
import torch

from quadriga.api import run
from quadriga.artifacts import Samples

CUDA = torch.cuda.is_available()
DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=[pytest.mark.cuda, pytest.mark.skipif(not CUDA, reason="needs a CUDA device")]
    ),
]


def _mcmc(device: str) -> dict:
    return {
        "pipeline": {"name": "std-devices-mcmc", "seed": 5, "device": device},
        "task": {"gauss": {"use": "gaussian", "dim": 3, "equicorrelation": 0.5}},
        "stage": {
            "mala": {
                "use": "mala",
                "inputs": {"target": "gauss"},
                "num_chains": 32,
                "num_samples": 300,
                "burn_in": 100,
                "step_size": 0.3,
            },
            "hmc": {
                "use": "hmc",
                "inputs": {"target": "gauss"},
                "num_chains": 16,
                "num_samples": 200,
                "burn_in": 50,
                "step_size": 0.3,
                "num_leapfrog_steps": 5,
            },
            "moments": {
                "use": "moment-error",
                "inputs": {"subject": ["mala", "hmc"], "reference": "gauss"},
            },
        },
    }


@pytest.mark.parametrize("device", DEVICES)
def test_mcmc_chains_stay_on_the_device_and_match_the_target(device, tmp_path):
    result = run(_mcmc(device), out=tmp_path / "r")
    assert result.status == "finished"
    for name, chains in (("mala", 32), ("hmc", 16)):
        x = result.artifacts[name].x
        assert x.device.type == device and x.dtype == torch.float64
        assert x.shape[-1] == 3 and x.numel() // 3 == chains * (300 if name == "mala" else 200)
        # N(0, Sigma), Sigma = 0.5 I + 0.5 11^T: the mean of 9600 (resp. 3200) correlated draws is
        # within 0.25 of 0 (about 5 standard errors for an effective size of a few hundred)
        assert float(x.reshape(-1, 3).mean(0).abs().max()) < 0.25
        assert 0.0 <= result.artifacts[name].info["acceptance_rate"] <= 1.0
    values = result.results["stages"]["moments"]["values"]
    mean_errors = {k: v for k, v in values.items() if "mean" in k}
    assert mean_errors and all(math.isfinite(v) and v < 0.3 for v in mean_errors.values())
    loaded = Samples.load(result.dir / "stages" / "mala")  # saved on the CPU: loads anywhere
    assert loaded.x.device.type == "cpu" and torch.equal(loaded.x, result.artifacts["mala"].x.cpu())


def _dqn(device: str) -> dict:
    return {
        "pipeline": {"name": "std-devices-dqn", "seed": 2, "device": device},
        "task": {"cartpole": {"use": "gym-env", "env_id": "CartPole-v1"}},
        "stage": {
            "dqn": {
                "use": "dqn",
                "inputs": {"task": "cartpole"},
                "total_frames": 800,
                "frames_per_batch": 10,
                "num_updates_per_batch": 2,
                "batch_size": 32,
                "buffer_size": 1000,
                "learning_starts": 200,
            },
            "returns": {
                "use": "episode-return",
                "inputs": {"subject": ["dqn"], "reference": "cartpole"},
                "num_episodes": 3,
            },
        },
    }


@pytest.mark.parametrize("device", DEVICES)
def test_dqn_trains_on_the_device_and_its_policy_is_evaluated(device, tmp_path):
    result = run(_dqn(device), out=tmp_path / "r")
    assert result.status == "finished"
    fitted = result.artifacts["dqn"]
    assert {p.device.type for p in fitted.model.parameters()} == {device}
    assert fitted.info["env_steps"] == 800
    losses = fitted.history["loss"]
    assert losses and all(math.isfinite(v) for v in losses)
    ret = result.results["stages"]["returns"]["values"]["dqn/mean_return"]
    assert 8.0 <= ret <= 500.0  # CartPole-v1: an episode lasts at least 8 steps and at most 500
    state = torch.load(result.dir / "stages" / "dqn" / "model.pt", map_location="cpu")
    assert all(torch.equal(v.cpu(), fitted.model.state_dict()[k].cpu()) for k, v in state.items())


@pytest.mark.parametrize("device", DEVICES)
def test_dqn_update_diagnostics_on_the_device_are_averaged(device):
    # a td_target rule's info (e.g. MinTo's min_binds_fraction) is a 0-d tensor on the training
    # device; the record averages it on the host
    from quadriga_std.learners._dqn_loop import TrainingRecord

    from quadriga.progress import StageProgress

    record = TrainingRecord(2, StageProgress(), lambda frames: 0.1)
    for i, value in enumerate([0.25, 0.75, 0.5, 1.0, 0.0]):
        loss = torch.tensor(float(i), device=device)
        info = {"binds": torch.tensor(value, device=device)}
        record.update(10 * (i + 1), loss, loss.reshape(1), info)
    means = record.averages()
    assert means == {"binds": 0.5}
    assert record.history["binds"] == [0.5, 0.75]


@pytest.mark.parametrize("device", DEVICES)
def test_q_table_of_a_network_on_the_device(device):
    import numpy as np
    from quadriga_std.rl.evaluators import q_table
    from quadriga_std.rl.vector_env import VectorRewardChain

    mdp = VectorRewardChain().tabular()
    torch.manual_seed(0)
    net = torch.nn.Linear(mdp.observations.shape[1], 3)
    expected = net.weight.detach().numpy().T + net.bias.detach().numpy()
    got = q_table(net.to(device), mdp)
    assert isinstance(got, np.ndarray) and got.shape == (mdp.num_states, 3)
    np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_a_mixture_target_samples_and_scores_on_the_device(device, tmp_path):
    data = {
        "pipeline": {"name": "std-devices-gmm", "seed": 1, "device": device},
        "task": {"gmm": {"use": "gaussian-mixture", "preset": "random", "dim": 3, "num_components": 2}},
        "stage": {
            "mala": {
                "use": "mala",
                "inputs": {"target": "gmm"},
                "num_chains": 8,
                "num_samples": 100,
                "burn_in": 20,
                "step_size": 0.2,
                "init": "target",
            },
            "modes": {"use": "mode-coverage", "inputs": {"subject": ["mala"], "reference": "gmm"}},
        },
    }
    result = run(data, out=tmp_path / "r")
    assert result.status == "finished"
    assert result.artifacts["mala"].x.device.type == device
    # two modes 12 apart (radius 6): 8 chains started from exact draws cover both modes, each chain
    # staying in its own; the fractions per mode sum to one
    values = result.results["stages"]["modes"]["values"]
    assert values["mala/modes_visited"] == 2.0 and values["mala/chain_modes_visited"] == 1.0
    assert abs(values["mala/fraction_0"] + values["mala/fraction_1"] - 1.0) < 1e-9
