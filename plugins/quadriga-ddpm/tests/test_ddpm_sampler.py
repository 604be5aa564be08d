"""Sampler behaviour: two-sample test against exact draws, score adapters, errors, pipeline and claim."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_ddpm.claims import dimension_free
from quadriga_ddpm.sampler import DDIM, DDPM
from quadriga_ddpm.score_models import AnalyticScore, NetworkScore, as_score_model
from quadriga_ddpm.targets import SphereMixture

import quadriga.api
from quadriga.artifacts import Fitted, Samples
from quadriga.errors import ConfigError


def _target(d: int, k: int, sigma: float) -> SphereMixture:
    t = SphereMixture(dim=d, num_components=k, scale=sigma)
    t.prepare(generator=torch.Generator().manual_seed(0))
    return t


def _mmd_pvalue(x: torch.Tensor, y: torch.Tensor, *, permutations: int = 300, seed: int = 0) -> float:
    """Permutation p-value of the biased Gaussian-kernel MMD^2 (median-heuristic bandwidth)."""
    z = torch.cat([x, y]).to(torch.float64)
    d2 = torch.cdist(z, z) ** 2
    k = torch.exp(-d2 / d2.median())
    n = x.shape[0]
    sign = torch.cat([torch.full((n,), 1.0 / n), torch.full((y.shape[0],), -1.0 / y.shape[0])]).double()
    gen = torch.Generator().manual_seed(seed)
    perms = torch.stack([sign[torch.randperm(sign.numel(), generator=gen)] for _ in range(permutations)])
    null = ((perms @ k) * perms).sum(-1)
    observed = float(sign @ k @ sign)
    return (int((null >= observed).sum()) + 1) / (permutations + 1)


def test_large_T_passes_two_sample_test_and_small_T_fails_it():
    target = _target(2, 4, 0.5)
    exact = target.sample(500, generator=torch.Generator().manual_seed(3))
    good = DDPM(num_steps=400, num_samples=500).sample(target, generator=torch.Generator().manual_seed(4)).x
    assert _mmd_pvalue(good, exact) > 0.05
    # negative control: with 3 steps the chain is visibly wrong and the same test rejects
    bad = (
        DDPM(num_steps=3, num_samples=500, schedule="linear")
        .sample(target, generator=torch.Generator().manual_seed(4))
        .x
    )
    assert _mmd_pvalue(bad, exact) < 0.01


def test_network_score_eps_and_score_parameterizations_reproduce_analytic_samples():
    target = _target(4, 3, 1.5)

    class EpsNet(torch.nn.Module):
        def forward(self, x, ab):
            return -torch.sqrt(1 - ab)[:, None] * target.noised_score(x, ab)

    class ScoreNet(torch.nn.Module):
        def forward(self, x, ab):
            return target.noised_score(x, ab)

    sampler = DDPM(num_steps=30, num_samples=200)
    ref = sampler.sample(target, generator=torch.Generator().manual_seed(5)).x
    eps = sampler.sample(
        Fitted(model=EpsNet(), info={"parameterization": "eps", "dim": 4}),
        generator=torch.Generator().manual_seed(5),
    ).x
    score = sampler.sample(
        Fitted(model=ScoreNet(), info={"parameterization": "score", "dim": 4}),
        generator=torch.Generator().manual_seed(5),
    ).x
    assert torch.allclose(eps, ref, atol=1e-9) and torch.allclose(score, ref, atol=1e-9)
    assert isinstance(as_score_model(target), AnalyticScore)
    assert isinstance(as_score_model(Fitted(model=EpsNet(), info={"dim": 4})), NetworkScore)


def test_same_seed_same_numbers_and_info():
    target = _target(3, 2, 1.0)
    a = DDIM(num_steps=20, num_samples=50, eta=0.3).sample(target, generator=torch.Generator().manual_seed(9))
    b = DDIM(num_steps=20, num_samples=50, eta=0.3).sample(target, generator=torch.Generator().manual_seed(9))
    assert torch.equal(a.x, b.x)
    assert a.info["score_evals"] == 1000 and len(a.info["betas"]) == 20 and a.info["method"] == "ddim"


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ConfigError, match="num_steps"):
        DDPM(num_steps=1)
    with pytest.raises(ConfigError, match="schedule must be one of") as bad:
        DDPM(schedule="quadratic")
    assert bad.value.key == "schedule"
    with pytest.raises(ConfigError, match=r"eta must be a number in \[0, 1\]"):
        DDIM(eta=1.5)
    with pytest.raises(ConfigError, match="noised_score"):
        DDPM(num_steps=5).sample(object(), generator=torch.Generator())
    with pytest.raises(ConfigError, match="parameterization"):
        NetworkScore(torch.nn.Identity(), parameterization="v", dim=2)


def test_diagnostics_refuse_a_reference_that_is_not_a_mixture():
    from quadriga_ddpm.evaluate import MixtureDiagnostics
    from quadriga_std.targets.gaussian import Gaussian

    target = _target(2, 1, 1.0)
    x = target.sample(50, generator=torch.Generator().manual_seed(1))
    subject = Samples(x=x, info={"num_steps": 10})
    gaussian = Gaussian(mean=[0.0, 0.0], covariance=[[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ConfigError, match=r"'ref' \(Gaussian\) has no mixture_weights") as info:
        MixtureDiagnostics().evaluate(
            {"s": subject}, {"ref": gaussian}, generator=torch.Generator().manual_seed(0)
        )
    assert info.value.key == "reference"
    ok = MixtureDiagnostics().evaluate(
        {"s": subject}, {"ref": target}, generator=torch.Generator().manual_seed(0)
    )
    assert 0 <= ok.values["s/weight_error"] <= 1


def test_pipeline_with_evaluator_reports_exact_k1_numbers(tmp_path):
    pipeline = {
        "pipeline": {"name": "ddpm-test", "seed": 0},
        "task": {"g": {"use": "sphere-mixture", "dim": 8, "num_components": 1, "scale": 2.0}},
        "stage": {
            **{
                f"t{T}": {"use": "ddpm", "inputs": {"target": "g"}, "num_steps": T, "num_samples": 300}
                for T in (10, 40, 160)
            },
            "diag": {
                "use": "mixture-diagnostics",
                "inputs": {"subject": ["t10", "t40", "t160"], "reference": "g"},
            },
        },
    }
    res = quadriga.api.run(pipeline, out=tmp_path / "run")
    vals = res.artifacts["diag"].values
    assert vals["t10/tv"] > vals["t40/tv"] > vals["t160/tv"] > 0
    assert -1.5 < vals["slope/theory/K1/d8/tv"] < -0.5


def test_claim_smoke(tmp_path):
    from pathlib import Path

    from quadriga.claims import evaluate_claim

    obs = dimension_free.observations("smoke", tmp_path)
    rec = evaluate_claim(dimension_free, obs, "smoke")
    assert rec["status"] == "ran"
    (c,) = rec["comparisons"]  # sigma = 2, d = 16 over d = 2 at T = 40
    assert c["group"] == "sigma=2, T=40: TV(d=16) / TV(d=2)" and c["estimate"] > 0
    assert math.isfinite(obs.numbers["theory/K1/tv_slope_median(sigma!=1)"])
    assert Path(obs.figures["k1_exact"]).exists()
