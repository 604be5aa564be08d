"""The shared policy-gradient baselines: closed forms, exact expected gradients, and bit-identity
with the code they replaced in quadriga-stratified-grpo, quadriga-flowrl and quadriga-gdc."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from quadriga_std.sequences.models import TabularAutoregressive, token_log_probs
from quadriga_std.sequences.policy_gradient import (
    check_groups,
    group_normalised_advantages,
    grpo_surrogate_loss,
    mean_baseline_advantages,
    normalise_by_spread,
    reinforce_loss,
)

from quadriga.errors import ConfigError

# --- the former implementations, verbatim, as the reference of the bit-identity tests ----------


def _former_global_advantages(rewards, *, eps=1e-6, normalize=True):
    """quadriga_stratified_grpo.advantages.global_advantages before the move (commit b596d23)."""
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if not normalize:
        return centred
    std = rewards.std(dim=1, unbiased=False, keepdim=True)
    spread = std > 0
    return torch.where(spread, centred / (std + eps), torch.zeros_like(centred))


def _former_grpo_sequence_loss(policy, x, old_tok, adv, clip_epsilon):
    """quadriga_flowrl.flowrl.GRPOSequence._loss before the move."""
    ratio = torch.exp(token_log_probs(policy, x) - old_tok)
    a = adv[:, None]
    surr = torch.minimum(ratio * a, ratio.clamp(1 - clip_epsilon, 1 + clip_epsilon) * a)
    return -surr.mean(1).mean()


def _former_reinforce_loss(log_pi, reward):
    """quadriga_gdc.gdc.Reinforce's update before the move."""
    with torch.no_grad():
        advantage = reward - reward.mean()
    return -(advantage * log_pi).mean()


def _tables():
    """Fixed reward tables: Gaussian, Bernoulli (constant rows included), float32 and float64."""
    gen = torch.Generator().manual_seed(2402_03300)
    out = []
    for dtype in (torch.float32, torch.float64):
        for p, g in ((1, 2), (3, 4), (8, 16), (5, 7)):
            out.append(torch.randn(p, g, generator=gen, dtype=dtype) * 3 + 1)
            out.append((torch.rand(p, g, generator=gen, dtype=dtype) < 0.3).to(dtype))
        out.append(torch.ones(2, 5, dtype=dtype))
    return out


@pytest.mark.parametrize("eps", [0.0, 1e-6, 0.1])
@pytest.mark.parametrize("normalize", [True, False])
def test_group_normalised_advantages_are_bit_identical_to_the_former_global_advantages(eps, normalize):
    for rewards in _tables():
        new = group_normalised_advantages(rewards, eps=eps, normalize=normalize)
        old = _former_global_advantages(rewards, eps=eps, normalize=normalize)
        assert new.dtype == old.dtype and torch.equal(new, old)


def test_group_normalised_advantages_closed_form():
    """(r - mean) / (std + eps) per group, population std (numpy's ddof = 0); constant groups give 0."""
    r = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, 0.0], [2.0, 2.0, 2.0, 2.0]], dtype=torch.float64)
    adv = group_normalised_advantages(r, eps=1e-6)
    x = r.numpy()
    expected = (x - x.mean(1, keepdims=True)) / (x.std(1, ddof=0, keepdims=True) + 1e-6)
    expected[2] = 0.0
    assert np.allclose(adv.numpy(), expected, rtol=0, atol=1e-15)
    assert float(adv[0, 3]) == pytest.approx(1.5 / (math.sqrt(1.25) + 1e-6), abs=1e-15)
    exact = group_normalised_advantages(r[:2], eps=0.0)  # mean 0, variance 1 in each group
    assert torch.allclose(exact.mean(1), torch.zeros(2, dtype=torch.float64), atol=1e-15)
    assert torch.allclose(exact.pow(2).mean(1), torch.ones(2, dtype=torch.float64), atol=1e-14)
    assert torch.equal(group_normalised_advantages(r, normalize=False), r - r.mean(1, keepdim=True))


def test_normalise_by_spread_leaves_constant_groups_at_zero_even_without_eps():
    centred = torch.tensor([[0.0, 0.0], [-1.0, 1.0]])
    out = normalise_by_spread(centred, torch.tensor([[0.0], [2.0]]), 0.0)
    assert torch.equal(out, torch.tensor([[0.0, 0.0], [-0.5, 0.5]]))


def test_check_groups_names_the_key():
    with pytest.raises(ConfigError, match="group_size") as e:
        check_groups(torch.zeros(4))
    assert e.value.key == "group_size"
    with pytest.raises(ConfigError, match="at least 2 rollouts") as e:
        group_normalised_advantages(torch.zeros(3, 1))
    assert e.value.key == "group_size"
    with pytest.raises(ConfigError, match="stage 'x'") as e:
        check_groups(torch.zeros(2, 3), torch.zeros(2, 4), stage="x")
    assert e.value.key == "stratum_key"


def _policy_and_batch(seed=0):
    gen = torch.Generator().manual_seed(seed)
    policy = TabularAutoregressive.random(3, 3, concentration=1.0, generator=gen).double()
    x = policy.sample(12, generator=gen)
    return policy, x, gen


def test_grpo_surrogate_loss_and_its_gradient_are_bit_identical_to_flowrls_former_loss():
    policy, x, gen = _policy_and_batch()
    with torch.no_grad():
        old_tok = token_log_probs(policy, x)
        for p in policy.parameters():  # move away from pi_old so that some ratios are clipped
            p.add_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    adv = group_normalised_advantages((torch.rand(3, 4, generator=gen) < 0.5).double()).reshape(-1)
    losses, grads = [], []
    for fn in (
        lambda: grpo_surrogate_loss(token_log_probs(policy, x), old_tok, adv, clip_epsilon=0.2),
        lambda: _former_grpo_sequence_loss(policy, x, old_tok, adv, 0.2),
    ):
        loss = fn()
        losses.append(loss)
        grads.append(torch.autograd.grad(loss, list(policy.parameters())))
    assert torch.equal(losses[0], losses[1])
    assert all(torch.equal(a, b) for a, b in zip(*grads, strict=True))
    ratio = torch.exp(token_log_probs(policy, x) - old_tok)
    assert bool(((ratio - 1).abs() > 0.2).any())  # the clipped branch was exercised


def test_grpo_surrogate_closed_form_values_and_gradient_at_pi_old():
    """Ratio 1.5 with eps 0.2: min(1.5 A, 1.2 A) is 1.2 for A = 1 and -1.5 for A = -1; at
    pi_theta = pi_old the gradient is -(1/n) sum_i A_i (1/L) grad log pi(y_i)."""
    log_ratio = torch.full((2, 3), math.log(1.5), dtype=torch.float64)
    loss = grpo_surrogate_loss(
        log_ratio,
        torch.zeros(2, 3, dtype=torch.float64),
        torch.tensor([1.0, -1.0]).double(),
        clip_epsilon=0.2,
    )
    assert float(loss) == pytest.approx(-(1.2 - 1.5) / 2, abs=1e-15)
    policy, x, gen = _policy_and_batch(1)
    adv = torch.randn(len(x), generator=gen, dtype=torch.float64)
    old = token_log_probs(policy, x).detach()
    g = torch.autograd.grad(
        grpo_surrogate_loss(token_log_probs(policy, x), old, adv, clip_epsilon=0.2), list(policy.parameters())
    )
    ref = torch.autograd.grad(-(adv * policy.log_prob(x)).mean() / x.shape[1], list(policy.parameters()))
    assert all(torch.allclose(a, b, atol=1e-14) for a, b in zip(g, ref, strict=True))


def test_reinforce_update_is_bit_identical_to_gdcs_former_update():
    gen = torch.Generator().manual_seed(1992)
    for n in (2, 7, 64, 256):
        logits = torch.randn(50, generator=gen, dtype=torch.float64, requires_grad=True)
        x = torch.randint(50, (n,), generator=gen)
        log_pi = torch.log_softmax(logits, 0)[x]
        reward = 1.7 * (torch.rand(n, generator=gen, dtype=torch.float64) < 0.2) - 0.3 * torch.randn(
            n, generator=gen, dtype=torch.float64
        )
        new = reinforce_loss(log_pi, mean_baseline_advantages(reward))
        old = _former_reinforce_loss(log_pi, reward)
        assert torch.equal(new, old)
        (g_new,) = torch.autograd.grad(new, logits, retain_graph=True)
        (g_old,) = torch.autograd.grad(old, logits)
        assert torch.equal(g_new, g_old)


@pytest.mark.parametrize("n", [2, 3])
def test_reinforce_expected_gradient_exact_with_leave_one_out_and_shrunk_with_the_mean(n):
    """Enumerate every batch of n draws from a categorical pi (K = 4): E[-grad loss] is grad E_pi[r]
    for the leave-one-out baseline and (1 - 1/n) grad E_pi[r] for the batch mean (Williams 1992;
    Kool et al. 2019)."""
    gen = torch.Generator().manual_seed(7)
    logits = torch.randn(4, generator=gen, dtype=torch.float64, requires_grad=True)
    r = torch.tensor([1.0, -0.5, 2.0, 0.25], dtype=torch.float64)
    (exact,) = torch.autograd.grad((torch.softmax(logits, 0) * r).sum(), logits)
    pi = torch.softmax(logits, 0).detach()
    for loo, factor in ((True, 1.0), (False, 1.0 - 1.0 / n)):
        expected = torch.zeros(4, dtype=torch.float64)
        for batch in itertools.product(range(4), repeat=n):
            idx = torch.tensor(batch)
            log_pi = torch.log_softmax(logits, 0)[idx]
            loss = reinforce_loss(log_pi, mean_baseline_advantages(r[idx], leave_one_out=loo))
            (g,) = torch.autograd.grad(loss, logits)
            expected -= float(pi[idx].prod()) * g
        assert torch.allclose(expected, factor * exact, atol=1e-13)


def test_mean_baseline_closed_form_and_errors():
    r = torch.tensor([[1.0, 2.0, 6.0]], dtype=torch.float64)
    assert torch.equal(mean_baseline_advantages(r), torch.tensor([[-2.0, -1.0, 3.0]], dtype=torch.float64))
    loo = mean_baseline_advantages(r, leave_one_out=True)  # r_i - mean of the other two
    assert torch.allclose(loo, torch.tensor([[1 - 4.0, 2 - 3.5, 6 - 1.5]], dtype=torch.float64), atol=1e-15)
    with pytest.raises(ValueError, match="at least 2"):
        mean_baseline_advantages(torch.ones(1))
