"""Weight and activation matching: exact recovery of a known permutation, function preserved."""

from __future__ import annotations

import torch
from quadriga_git_rebasin.matching import activation_matching, weight_matching
from quadriga_std.weightspace.mlp import forward, hidden_activations, init_params, permute

from quadriga.seeding import make_generator

SIZES = [64, 24, 16, 10]


def _scrambled():
    gen = make_generator(3)
    a = init_params(SIZES, generator=gen)
    perms = [torch.randperm(h, generator=gen) for h in SIZES[1:-1]]
    return a, permute(a, perms), torch.rand(200, 64, generator=gen)


def _same(p, q):
    return all(torch.equal(u, v) for k in ("weights", "biases") for u, v in zip(p[k], q[k], strict=True))


def test_weight_matching_undoes_a_permutation_exactly():
    a, b, x = _scrambled()
    perms, sweeps = weight_matching(a, b, generator=make_generator(0))
    assert _same(permute(b, perms), a)
    assert 2 <= sweeps <= 100  # the last sweep changed nothing
    torch.testing.assert_close(forward(permute(b, perms), x), forward(b, x), rtol=1e-6, atol=1e-6)


def test_activation_matching_undoes_a_permutation_exactly():
    a, b, x = _scrambled()
    aligned = permute(b, activation_matching(a, b, x))
    # units dead on x (all-zero activations) tie, so compare activations, which the ties do not change
    for za, zb in zip(hidden_activations(a, x), hidden_activations(aligned, x), strict=True):
        assert torch.equal(za, zb)


def test_matching_keeps_the_function_of_an_unrelated_network():
    gen = make_generator(4)
    a, b = init_params(SIZES, generator=gen), init_params(SIZES, generator=gen)
    x = torch.rand(100, 64, generator=gen)
    perms, _ = weight_matching(a, b, generator=gen)
    aligned = permute(b, perms)
    torch.testing.assert_close(forward(aligned, x), forward(b, x), rtol=1e-5, atol=1e-6)
    # the matched objective is no worse than the identity's (coordinate ascent from it)
    inner = sum(float((wa * wb).sum()) for wa, wb in zip(a["weights"], aligned["weights"], strict=True))
    start = sum(float((wa * wb).sum()) for wa, wb in zip(a["weights"], b["weights"], strict=True))
    assert inner >= start
