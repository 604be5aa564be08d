"""FlowRL's flow-balance loss in closed form, its expected gradient, and both learners at fixed seeds."""

from __future__ import annotations

import math

import pytest
import torch
from quadriga_flowrl.flowrl import (
    FlowRL,
    GRPOSequence,
    flow_balance_residual,
    flowrl_loss,
    tilted_target,
)
from quadriga_std.sequences.evaluators import policy_metrics
from quadriga_std.sequences.models import TabularAutoregressive, token_log_probs
from quadriga_std.sequences.space import SequenceSpace, kl

from quadriga.errors import ConfigError
from quadriga.progress import StageProgress


def _space(**kw) -> SequenceSpace:
    base = {"vocab_size": 3, "length": 3, "feature_kind": "answers", "num_answers": 3, "answer_skew": 3.0}
    task = SequenceSpace(**{**base, **kw})
    task.prepare(generator=torch.Generator().manual_seed(0))
    return task


def _reward(task: SequenceSpace) -> torch.Tensor:
    # a reward with several values (not only 0/1), so the tilt is not flat on the answers
    seqs = task.sequences()
    return task.feature(seqs).double() + 0.3 * (seqs[:, 0] == 1).double()


@pytest.mark.parametrize("beta", [0.5, 2.0])
def test_flow_balance_is_zero_exactly_at_the_tilted_reference_with_the_true_log_z(beta):
    """delta = 0 everywhere iff pi ∝ pi_ref exp(L beta r), log Z = (1/L) log sum pi_ref exp(L beta r)."""
    task = _space()
    L, log_ref, r = task.length, task.base_log_probs(), _reward(task)
    log_p = tilted_target(log_ref, r, L * beta)
    log_z = torch.logsumexp(log_ref + L * beta * r, 0) / L
    delta = flow_balance_residual(log_z, log_p, log_ref, r, beta=beta, length=L)
    assert float(delta.abs().max()) < 1e-12
    zero = torch.zeros_like(delta)
    assert float(flowrl_loss(delta, zero, clip_epsilon=0.2)) < 1e-24
    # a wrong log Z: the residual is the constant offset; the reference itself: not zero
    off = flow_balance_residual(log_z + 0.1, log_p, log_ref, r, beta=beta, length=L)
    assert torch.allclose(off, torch.full_like(off, 0.1), atol=1e-12)
    at_ref = flow_balance_residual(log_z, log_ref, log_ref, r, beta=beta, length=L)
    assert float((at_ref**2).mean()) > 1e-3


def test_expected_gradient_is_the_reverse_kl_gradient_over_l_squared():
    """On-policy, E_pi[grad delta^2] = (2 / L^2) grad KL(pi || pi*) for any log Z (E_pi[grad log pi] = 0)."""
    task = _space()
    L, seqs, log_ref, r, beta = task.length, task.sequences(), task.base_log_probs(), _reward(task), 1.5
    log_star = tilted_target(log_ref, r, L * beta)
    gen = torch.Generator().manual_seed(3)
    start = log_ref + 0.5 * torch.randn(len(seqs), generator=gen, dtype=torch.float64)
    policy = TabularAutoregressive.from_log_probs(start, task.vocab_size, L).double()
    params = list(policy.parameters())
    log_pi = policy.log_prob(seqs)
    for log_z in (-0.7, 0.0, 2.0):
        delta = flow_balance_residual(torch.tensor(log_z), log_pi, log_ref, r, beta=beta, length=L)
        expected = (log_pi.detach().exp() * delta**2).sum()  # E_{y ~ pi_old = pi}[delta^2], weight 1
        g_tb = torch.autograd.grad(expected, params, retain_graph=True)
        kl_pi = (log_pi.exp() * (log_pi - log_star)).sum()
        g_kl = torch.autograd.grad(kl_pi, params, retain_graph=True)
        for a, b in zip(g_tb, g_kl, strict=True):
            assert torch.allclose(a, 2 / L**2 * b, atol=1e-10)
    assert float(kl_pi.detach()) == pytest.approx(kl(log_pi.detach(), log_star), abs=1e-12)


def test_importance_weight_is_clipped_as_the_paper_states_and_unclipped_as_the_code():
    delta = torch.tensor([1.0, 2.0])
    log_ratio = torch.log(torch.tensor([3.0, 0.1]))
    assert float(flowrl_loss(delta, log_ratio, clip_epsilon=0.2)) == pytest.approx((1.2 * 1 + 0.8 * 4) / 2)
    assert float(flowrl_loss(delta, log_ratio, clip_epsilon=None)) == pytest.approx((3.0 * 1 + 0.1 * 4) / 2)


def test_token_log_probs_sum_to_the_sequence_log_prob():
    task = _space()
    model = task.base()
    x = task.sequences()
    assert torch.allclose(token_log_probs(model, x).sum(1), model.log_prob(x), atol=1e-12)


def _fit(learner, task, seed=1):
    fitted = learner.fit(task, generator=torch.Generator().manual_seed(seed), progress=StageProgress())
    return fitted, policy_metrics(fitted.model.all_log_probs(), task)


def test_flowrl_keeps_the_modes_where_grpo_collapses_at_fixed_seeds():
    """The pipeline's test bed (V = 4, L = 3, 4 answers, skew 3), one task seed: FlowRL's mode entropy
    is above 1.0 nats (its fixed point: 1.24) with all 4 answers covered, GRPO's below 0.5."""
    task = SequenceSpace(
        vocab_size=4,
        length=3,
        base_model="tabular",
        concentration=10.0,
        feature_kind="answers",
        answer_skew=3.0,
    )
    task.prepare(generator=torch.Generator().manual_seed(7))
    flow, fm = _fit(FlowRL(num_updates=300, beta=1.0, learning_rate=0.05), task)
    _, gm = _fit(GRPOSequence(num_updates=300, learning_rate=0.05), task)
    assert fm["mean_reward"] > 0.9 and gm["mean_reward"] > 0.9
    assert fm["mode_entropy"] > 1.0 and fm["mode_coverage"] == 4
    assert gm["mode_entropy"] < 0.5
    assert flow.info["num_sequences"] == 300 * 16 and len(flow.history["log_z"]) == 300


def test_learners_refuse_other_tasks():
    count_space = SequenceSpace(vocab_size=3, length=3, min_count=1)
    count_space.prepare(generator=torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError):
        FlowRL(num_updates=1).fit(count_space, generator=torch.Generator(), progress=StageProgress())
    with pytest.raises(ConfigError):
        GRPOSequence(group_size=1)


def test_beta_15_on_normalised_rewards_tilts_by_tens_of_nats():
    """One correct draw in a group of 16: r_hat = sqrt(15), so beta r_hat = 58 nats at beta = 15."""
    from quadriga_std.sequences.policy_gradient import group_normalised_advantages

    r = torch.zeros(1, 16, dtype=torch.float64)
    r[0, 0] = 1.0
    adv = group_normalised_advantages(r, eps=0.0)
    assert float(adv[0, 0]) == pytest.approx(math.sqrt(15))
    assert 15 * float(adv[0, 0]) > 50


def test_pipeline_takes_the_gru_base_model_by_name(tmp_path):
    """``--set task.space.base_model=gru``: the reference model is std's GRU (answers skewed 3:1),
    the one drawn with the task's seed; both learners raise the mean reward above the base's."""
    from quadriga import api
    from quadriga.seeding import make_generator

    overrides = ["task.space.base_model=gru", "stage.flowrl.num_updates=60", "stage.grpo.num_updates=60"]
    pipeline = api.check("flowrl-vs-grpo", overrides=overrides)
    result = api.run("flowrl-vs-grpo", overrides=overrides, out=tmp_path / "run", progress=False)
    config = {k: v for k, v in pipeline.resolved()["task"]["space"].items() if k != "use"}
    assert config["base_model"] == "gru"
    space = SequenceSpace(**config)
    space.prepare(generator=make_generator(pipeline.seeds()["task.space"]))
    log_a = space.base_log_probs()
    base_reward = float((log_a.exp() * space.feature(space.sequences()).double()).sum())
    values = result.artifacts["divergence"].values
    for arm in ("flowrl", "grpo"):
        assert values[f"{arm}/kl_target_base"] == pytest.approx(
            kl(space.target_log_probs(), log_a), abs=1e-12
        )
        assert values[f"{arm}/mean_reward"] > base_reward + 0.1
