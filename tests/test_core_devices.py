"""Devices: [pipeline] device and per-stage device; GPU checks run only where CUDA is present."""

from __future__ import annotations

import json

import pytest
import torch

from quadriga.api import check, run
from quadriga.artifacts import Samples
from quadriga.errors import ConfigError
from quadriga.seeding import make_generator

CUDA = torch.cuda.is_available()


def _pipe(device=None, stage_device=None):
    data = {
        "pipeline": {"name": "dev", "seed": 3},
        "task": {"normal": {"use": "toy-normal", "mean": 1.0}},
        "stage": {
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 64},
            "check": {
                "use": "toy-mean",
                "kind": "evaluator",
                "inputs": {"subject": "draw", "reference": "normal"},
            },
        },
    }
    if device:
        data["pipeline"]["device"] = device
    if stage_device:
        data["stage"]["draw"]["device"] = stage_device
    return data


def test_devices_are_validated_and_recorded(registry, tmp_path):
    for bad in ({"pipeline_device": "tpu"}, {"stage_device": "gpu0"}):
        with pytest.raises(ConfigError, match="device must be") as info:
            check(_pipe(bad.get("pipeline_device"), bad.get("stage_device")), registry=registry)
        assert info.value.key == "device"
    p = check(_pipe("cpu", "cpu"), registry=registry)
    assert p.devices() == {"stage.draw": "cpu", "stage.check": "cpu"}
    result = run(_pipe(), registry=registry, out=tmp_path / "r")
    assert json.loads((result.dir / "manifest.json").read_text())["devices"]["stage.draw"] == "cpu"


@pytest.mark.skipif(CUDA, reason="checks the error on a machine without CUDA")
def test_an_unavailable_device_is_a_config_error():
    with pytest.raises(ConfigError, match="device 'cuda' is not available"):
        make_generator(0, "cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_a_cuda_pipeline_keeps_tensors_on_the_device_and_saves_them_on_cpu(registry, tmp_path):
    gpu = run(_pipe("cuda"), registry=registry, out=tmp_path / "g")
    assert gpu.status == "finished" and gpu.artifacts["draw"].x.device.type == "cuda"
    loaded = Samples.load(gpu.dir / "stages" / "draw")
    assert loaded.x.device.type == "cpu" and torch.equal(loaded.x, gpu.artifacts["draw"].x.cpu())
    # a per-stage override: the sampler on CPU in a CUDA pipeline
    mixed = run(_pipe("cuda", "cpu"), registry=registry, out=tmp_path / "m")
    assert mixed.artifacts["draw"].x.device.type == "cpu"
    value = gpu.results["stages"]["check"]["values"]["draw/mean_error"]
    assert 0 <= value < 4 * 1.0 / 8  # 4 standard errors of the mean of 64 draws of N(1, 1)
