"""Compact one-line ``repr`` of artifacts and run results: shapes and counts, no tensor dumps."""

from __future__ import annotations

import torch

from quadriga.api import run
from quadriga.artifacts import Estimate, Fitted, Metrics, Samples


def test_repr_of_large_samples_is_one_short_line_with_its_shape():
    x = torch.randn(10000, 20, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    s = Samples(x=x, info={"acceptance_rate": 0.57312, "score_evals": 10000})
    text = repr(s)
    assert len(text) < 200 and "\n" not in text
    assert "Tensor[10000, 20] float64" in text and "acceptance_rate: 0.5731" in text
    assert str(round(float(x[0, 0]), 4)) not in text  # no values of x
    chains = Samples(x=x, chains=x.reshape(4, 2500, 20))
    assert "chains=Tensor[4, 2500, 20] float64" in repr(chains) and len(repr(chains)) < 200


def test_repr_of_estimate_metrics_and_fitted():
    est = Estimate(value=1.23456789, stderr=0.0123456, interval=(1.2, 1.27))
    assert repr(est).startswith("Estimate(value=1.235, stderr=0.01235, interval=[1.2, 1.27]")
    m = Metrics(values={f"m{i}": i / 3 for i in range(40)})
    text = repr(m)
    assert "m1: 0.3333" in text and "... 34 more" in text and len(text) < 200
    assert m.label() == "Metrics[40 values]"
    f = Fitted(model=torch.nn.Linear(3, 2), history={"loss": [0.5] * 1000})
    assert len(repr(f)) < 200 and "loss: list[1000]" in repr(f)


def test_repr_of_a_run_result_names_each_stage_artifact(registry, tmp_path):
    data = {
        "pipeline": {"name": "toy-repr", "seed": 1},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 5000},
            "est": {"use": "toy-mean", "kind": "estimator", "inputs": {"data": "draw"}},
        },
    }
    result = run(data, registry=registry, out=tmp_path / "r")
    text = repr(result)
    shown = "{draw: Samples[5000, 2], est: Estimate}"
    assert text == f"RunResult(status='finished', dir='{tmp_path / 'r'}', artifacts={shown})"
