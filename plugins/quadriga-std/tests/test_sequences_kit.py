"""The sequence kit against closed forms: enumeration, bigram/tabular models, exact lambda, KL."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from quadriga_std.sequences.evaluators import SequenceDivergence, policy_metrics
from quadriga_std.sequences.models import (
    BigramModel,
    TabularAutoregressive,
    enumerate_sequences,
    sequence_index,
)
from quadriga_std.sequences.space import SequenceSpace, exact_lambda, kl, tilted_log_probs

from quadriga import Fitted
from quadriga.errors import ConfigError


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_enumeration_matches_itertools_and_index_inverts_it():
    x = enumerate_sequences(3, 4)
    assert x.tolist() == [list(t) for t in itertools.product(range(3), repeat=4)]
    assert torch.equal(sequence_index(x, 3), torch.arange(81))


def test_bigram_log_prob_is_the_product_of_its_conditionals():
    m = BigramModel.random(3, 4, concentration=1.0, generator=_gen())
    p0 = torch.softmax(m.initial_logits, 0)
    T = torch.softmax(m.transition_logits, 1)
    m = m.double()
    p0 = torch.softmax(m.initial_logits, 0)
    T = torch.softmax(m.transition_logits, 1)
    x = torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
    p0, T = p0.detach(), T.detach()
    want = [math.log(p0[s[0]] * T[s[0], s[1]] * T[s[1], s[2]] * T[s[2], s[3]]) for s in x.tolist()]
    assert m.log_prob(x).detach().numpy() == pytest.approx(want, abs=1e-10)
    assert float(m.all_log_probs().exp().sum()) == pytest.approx(1.0, abs=1e-12)


def test_tabular_from_log_probs_reproduces_any_distribution():
    logits = torch.randn(4**3, generator=_gen(1), dtype=torch.float64) * 2
    logits[5] = -math.inf  # a sequence with no mass
    m = TabularAutoregressive.from_log_probs(logits, 4, 3)
    want = torch.log_softmax(logits, 0)
    got = m.all_log_probs()
    finite = torch.isfinite(want)
    assert torch.allclose(got[finite], want[finite], atol=1e-9)
    assert float(got[5].exp()) < 1e-300


def test_ancestral_samples_follow_the_model():
    """Chi-square goodness of fit of 20000 samples to the exact sequence law (27 cells)."""
    from scipy.stats import chisquare

    m = BigramModel.random(3, 3, concentration=2.0, generator=_gen(2))
    x = m.sample(20000, generator=_gen(3))
    counts = np.bincount(sequence_index(x, 3).numpy(), minlength=27)
    expected = m.all_log_probs().exp().detach().numpy() * 20000
    assert chisquare(counts, expected).pvalue > 1e-3


def test_exact_lambda_meets_the_moment_and_matches_the_two_point_closed_form():
    # two sequences: a = (1 - s, s), phi = (0, 1): E_lambda[phi] = s e^l / (1 - s + s e^l) = mu
    # => lambda = log(mu (1 - s) / (s (1 - mu)))
    s, mu = 0.2, 0.6
    log_a = torch.log(torch.tensor([1 - s, s], dtype=torch.float64))
    phi = torch.tensor([0.0, 1.0], dtype=torch.float64)
    lam = exact_lambda(log_a, phi, mu)
    assert lam == pytest.approx(math.log(mu * (1 - s) / (s * (1 - mu))), abs=1e-10)
    log_p = tilted_log_probs(log_a, phi, lam)
    # KL(p || a) of the two-point laws
    assert kl(log_p, log_a) == pytest.approx(
        mu * math.log(mu / s) + (1 - mu) * math.log((1 - mu) / (1 - s)), abs=1e-10
    )
    with pytest.raises(ValueError):
        exact_lambda(log_a, phi, 1.0)


def test_space_count_feature_moment_and_kl_identity():
    """E_p[phi] = mu_bar, and KL(p || a) = lambda mu_bar - log E_a[exp(lambda phi)] (exponential family)."""
    task = SequenceSpace(vocab_size=4, length=5, min_count=2, target_moment=0.5)
    task.prepare(generator=_gen(0))
    x = task.sequences()
    phi = task.feature(x).double()
    assert torch.equal(phi, ((x == 0).sum(1) >= 2).double())
    log_a, log_p = task.base_log_probs().double(), task.target_log_probs().double()
    assert float((log_p.exp() * phi).sum()) == pytest.approx(0.5, abs=1e-9)
    lam = task.target_lambda()
    log_z = float(torch.logsumexp(log_a + lam * phi, 0))
    assert kl(log_p, log_a) == pytest.approx(lam * 0.5 - log_z, abs=1e-9)
    m = policy_metrics(log_a, task)
    assert m["kl_policy_base"] == pytest.approx(0.0, abs=1e-12)
    assert m["kl_target_policy"] == pytest.approx(m["kl_target_base"], abs=1e-12)
    assert m["kl_target_policy_relative"] == pytest.approx(1.0, abs=1e-12)
    assert policy_metrics(log_p, task)["moment_error"] == pytest.approx(0.0, abs=1e-9)


def test_space_answers_have_the_declared_skew_and_coverage_counts_them():
    task = SequenceSpace(vocab_size=3, length=3, feature_kind="answers", num_answers=4, answer_skew=10.0)
    task.prepare(generator=_gen(4))
    modes = task.modes
    log_a = task.base_log_probs()
    ratios = (log_a[modes[0]] - log_a[modes[1:]]).exp()
    assert ratios.numpy() == pytest.approx([10.0, 10.0, 10.0], rel=1e-6)
    assert float(task.feature(task.sequences()).sum()) == 4.0
    # a policy uniform on the four answers covers all four; one on answer 0 alone covers one
    uniform = torch.full((27,), -math.inf, dtype=torch.float64)
    uniform[modes] = math.log(0.25)
    m = policy_metrics(uniform, task)
    assert m["mode_coverage"] == 4.0 and m["mode_mass"] == pytest.approx(1.0)
    assert m["mode_entropy"] == pytest.approx(math.log(4))
    single = torch.full((27,), -1e9, dtype=torch.float64)
    single[modes[0]] = 0.0
    assert policy_metrics(single, task)["mode_coverage"] == 1.0


def test_evaluator_reads_fitted_models_and_checks_its_inputs():
    task = SequenceSpace(vocab_size=3, length=3, min_count=1)
    task.prepare(generator=_gen(5))
    fitted = {"a[0]": Fitted(model=task.base()), "a[1]": Fitted(model=task.base())}
    out = SequenceDivergence().evaluate(fitted, task, generator=_gen())
    assert out.values["a[0]/kl_policy_base"] == pytest.approx(0.0, abs=1e-12)
    assert out.values["a/moment_mean"] == pytest.approx(
        float(task.base_log_probs().exp()[task.feature(task.sequences()) > 0].sum())
    )
    with pytest.raises(ConfigError):
        SequenceDivergence().evaluate(fitted, None, generator=_gen())
    with pytest.raises(ConfigError):
        SequenceSpace(vocab_size=10, length=6)
    with pytest.raises(ConfigError):
        SequenceSpace().base()
