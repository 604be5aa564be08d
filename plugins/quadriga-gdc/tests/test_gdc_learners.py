"""GDC and REINFORCE on small enumerable spaces: SNIS lambda, DPG's gradient, bounds at fixed seeds."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_gdc.gdc import GDC, Reinforce, fit_lambda_snis
from quadriga_std.sequences.evaluators import policy_metrics
from quadriga_std.sequences.models import TabularAutoregressive
from quadriga_std.sequences.space import SequenceSpace, kl

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress


def _space(**kw) -> SequenceSpace:
    task = SequenceSpace(**{"vocab_size": 3, "length": 4, "min_count": 2, **kw})
    task.prepare(generator=torch.Generator().manual_seed(0))
    return task


def _fit(learner, task, seed=1):
    fitted = learner.fit(task, generator=torch.Generator().manual_seed(seed), progress=StageProgress())
    return fitted, policy_metrics(fitted.model.all_log_probs(), task)


def test_snis_lambda_within_two_percent_of_the_root():
    """SNIS on 10240 draws from a finds lambda within 2 % of the exact root (methods-wave3 §12 (d) (i))."""
    task = SequenceSpace()  # V = 4, L = 5, token 0 at least twice
    task.prepare(generator=torch.Generator().manual_seed(3))
    draws = task.sample(10240, generator=torch.Generator().manual_seed(4))
    lam, iters = fit_lambda_snis(task.feature(draws), 0.5)
    exact = task.target_lambda()
    assert abs(lam - exact) <= 0.02 * abs(exact) + 0.01 / 0.25  # + the stopping tolerance 0.01 / Var(phi)
    assert 1 < iters < 1000
    with pytest.raises(ConfigError):
        fit_lambda_snis(torch.zeros(10), 0.5)


def test_snis_lambda_exact_on_a_two_point_sample():
    # draws with a fraction s of ones: SNIS moment s e^l / (1 - s + s e^l); tolerance 1e-6 -> closed form
    phi = torch.tensor([1.0] * 2 + [0.0] * 8)
    lam, _ = fit_lambda_snis(phi, 0.6, tolerance=1e-9, max_iterations=100000)
    assert lam == pytest.approx(math.log(0.6 * 0.8 / (0.2 * 0.4)), abs=1e-6)


def test_dpg_expected_gradient_is_minus_the_gradient_of_kl():
    """E_q[(P / Z q) grad log pi] = -grad KL(p || pi): the weighted loss over the whole space, q != pi."""
    task = _space()
    seqs = task.sequences()
    log_a = task.base_log_probs()
    log_P = log_a + task.target_lambda() * task.feature(seqs).double()
    log_p = log_P - torch.logsumexp(log_P, 0)
    q = torch.softmax(
        torch.randn(len(seqs), generator=torch.Generator().manual_seed(5), dtype=torch.float64), 0
    )
    policy = TabularAutoregressive.copy_of(task.base())
    log_pi = policy.log_prob(seqs)
    w = torch.exp(log_p) / q  # P / (Z q)
    dpg = torch.autograd.grad(-(q * w * log_pi).sum(), list(policy.parameters()))
    kl_pi = (log_p.exp() * (log_p - policy.log_prob(seqs))).sum()
    exact = torch.autograd.grad(kl_pi, list(policy.parameters()))
    for g, e in zip(dpg, exact, strict=True):
        assert torch.allclose(g, e, atol=1e-10)
    assert float(kl_pi.detach()) == pytest.approx(kl(log_p, log_a), abs=1e-10)


def test_gdc_approaches_p_and_meets_the_moment_where_reinforce_overshoots():
    """Fixed seeds: GDC's KL(p || pi) below 0.5 KL(p || a) with the moment within 0.15;
    REINFORCE's moment above 0.7 and KL(pi || a) above 2 KL(p || a)."""
    task = _space()
    _, gdc = _fit(GDC(num_updates=150, batch_size=128, learning_rate=2.0), task)
    _, rf = _fit(Reinforce(num_updates=150, batch_size=128, learning_rate=0.5), task)
    assert gdc["kl_target_policy_relative"] < 0.5
    assert gdc["moment_error"] < 0.15
    assert rf["moment"] > 0.7
    assert rf["kl_policy_base"] > 2 * rf["kl_target_base"]


def test_reinforce_with_unit_kl_penalty_targets_p():
    """With beta = 1 the KL-regularised optimum is a exp(lambda phi) / Z = p (Korbak et al. 2022)."""
    task = _space()
    _, m = _fit(Reinforce(num_updates=200, batch_size=128, learning_rate=1.0, kl_coefficient=1.0), task)
    assert m["kl_target_policy_relative"] < 0.5


def test_fixed_proposal_is_never_replaced_and_history_is_logged():
    task = _space()
    fitted, _ = _fit(GDC(num_updates=20, batch_size=32, adaptive_proposal=False), task)
    assert fitted.info["proposal_updates"] == 0
    assert fitted.info["num_sequences"] == 640
    assert len(fitted.history["loss"]) == 20
    adaptive, _ = _fit(GDC(num_updates=40, batch_size=64, learning_rate=2.0), task)
    assert adaptive.info["proposal_updates"] >= 1


def test_learners_refuse_other_tasks():
    from quadriga_std.targets.gaussian import Gaussian

    with pytest.raises(ConfigError):
        GDC(num_updates=1).fit(Gaussian(), generator=torch.Generator(), progress=StageProgress())


def test_pipeline_takes_the_gru_base_model_by_name(tmp_path):
    """``--set task.space.base_model=gru``: the learners train from std's GRU base model; the
    evaluator's KL(p || a) is that of the GRU drawn with the task's seed, and GDC moves towards p."""
    from quadriga_std.sequences.models import GRUModel

    from quadriga import api
    from quadriga.seeding import make_generator

    overrides = [
        "task.space.base_model=gru",
        *(
            f"stage.{s}.{k}={v}"
            for s in ("gdc", "reinforce")
            for k, v in (("num_updates", 30), ("batch_size", 64))
        ),
        "stage.gdc.moment_sample_size=2048",
        "stage.reinforce.moment_sample_size=2048",
    ]
    pipeline = api.check("gdc-vs-reinforce", overrides=overrides)
    result = api.run("gdc-vs-reinforce", overrides=overrides, out=tmp_path / "run", progress=False)
    config = {k: v for k, v in pipeline.resolved()["task"]["space"].items() if k != "use"}
    assert config["base_model"] == "gru"
    space = SequenceSpace(**config)
    space.prepare(generator=make_generator(pipeline.seeds()["task.space"]))
    assert isinstance(space.base(), GRUModel)
    values = result.artifacts["divergence"].values
    assert values["gdc/kl_target_base"] == pytest.approx(
        kl(space.target_log_probs(), space.base_log_probs()), abs=1e-12
    )
    assert values["gdc/kl_target_policy_relative"] < 0.9
