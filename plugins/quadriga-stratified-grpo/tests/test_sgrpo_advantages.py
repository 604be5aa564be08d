"""SAN, global and blended advantages against closed forms and independent loops."""

import pytest
import torch
from quadriga_stratified_grpo.advantages import (
    advantage_decomposition,
    blended_advantages,
    global_advantages,
    stratified_advantages,
)

from quadriga import ConfigError


def _random_table(seed, prompts=6, size=12, num_strata=3):
    gen = torch.Generator().manual_seed(seed)
    strata = torch.randint(num_strata, (prompts, size), generator=gen)
    rewards = strata.double() * 0.5 + torch.randn(prompts, size, generator=gen, dtype=torch.float64)
    return rewards, strata


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decomposition_identity_and_variance_gap(seed):
    rewards, strata = _random_table(seed)
    parts = advantage_decomposition(rewards, strata)
    assert torch.allclose(parts["global"], parts["san"] + parts["cross_stratum_bias"], atol=1e-12, rtol=0)
    for p in range(rewards.shape[0]):
        r, s = rewards[p], strata[p]
        between = sum(int((s == k).sum()) * float(r[s == k].mean() - r.mean()) ** 2 for k in s.unique())
        gap = float(parts["var_global"][p] - parts["var_san"][p])
        assert gap == pytest.approx(between / len(r), abs=1e-12)
        assert gap >= 0
        assert float(parts["var_global"][p]) == pytest.approx(float(r.var(unbiased=False)), abs=1e-12)


def test_san_zero_mean_unit_variance_within_each_stratum():
    rewards, strata = _random_table(3, prompts=4, size=16)
    san = stratified_advantages(rewards, strata, eps=0.0)
    checked = 0
    for p in range(4):
        for k in strata[p].unique():
            a = san[p][strata[p] == k]
            if len(a) >= 2:
                checked += 1
                assert float(a.mean()) == pytest.approx(0.0, abs=1e-12)
                assert float(a.var(unbiased=False)) == pytest.approx(1.0, abs=1e-12)
    assert checked >= 8


def test_singleton_and_constant_strata_get_zero_and_global_matches_closed_form():
    rewards = torch.tensor([[1.0, 0.0, 0.5, 0.5, 2.0]], dtype=torch.float64)
    strata = torch.tensor([[0, 0, 1, 1, 2]])
    san = stratified_advantages(rewards, strata, eps=0.0)
    assert san.tolist() == [[1.0, -1.0, 0.0, 0.0, 0.0]]  # stratum 1 constant, stratum 2 singleton
    glob = global_advantages(rewards, eps=0.0)
    expected = (rewards - 0.8) / rewards.std(unbiased=False)
    assert torch.allclose(glob, expected, atol=1e-12)
    assert torch.allclose(global_advantages(torch.ones(2, 4)), torch.zeros(2, 4))


def test_strata_are_formed_per_prompt_group():
    # identical stratum keys in different rows must not be pooled
    rewards = torch.tensor([[0.0, 1.0], [10.0, 30.0]], dtype=torch.float64)
    strata = torch.zeros(2, 2, dtype=torch.long)
    san = stratified_advantages(rewards, strata, eps=0.0)
    assert san.tolist() == [[-1.0, 1.0], [-1.0, 1.0]]


def test_blend_interpolates_and_alpha_limits():
    rewards, strata = _random_table(4)
    san, glob = stratified_advantages(rewards, strata), global_advantages(rewards)
    assert torch.allclose(blended_advantages(rewards, strata, 1.0), san)
    assert torch.allclose(blended_advantages(rewards, strata, 0.0), glob)
    assert torch.allclose(blended_advantages(rewards, strata, 0.3), 0.3 * san + 0.7 * glob)
    with pytest.raises(ConfigError, match="alpha"):
        blended_advantages(rewards, strata, 1.5)


def test_affine_invariance_of_san():
    rewards, strata = _random_table(5)
    a = stratified_advantages(rewards, strata, eps=0.0)
    b = stratified_advantages(3.0 * rewards - 7.0, strata, eps=0.0)
    assert torch.allclose(a, b, atol=1e-10)


def test_group_size_below_two_and_shape_mismatch_are_config_errors():
    with pytest.raises(ConfigError, match="group_size is 1"):
        global_advantages(torch.zeros(3, 1))
    with pytest.raises(ConfigError, match="stratum"):
        stratified_advantages(torch.zeros(3, 4), torch.zeros(3, 5, dtype=torch.long))
