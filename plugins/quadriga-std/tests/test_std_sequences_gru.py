"""The GRU base model of the sequence kit: exact normalisation, sampling law, GRU recursion."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_std.sequences.models import GRUModel, sequence_index, token_log_probs
from quadriga_std.sequences.space import SequenceSpace, kl


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize(("vocab", "length", "dtype"), [(3, 4, torch.float32), (4, 5, torch.float64)])
def test_gru_probabilities_over_the_enumerated_space_sum_to_one(vocab, length, dtype):
    m = GRUModel.random(vocab, length, concentration=1.0, generator=_gen()).to(dtype)
    total = float(m.all_log_probs().double().exp().sum())
    assert total == pytest.approx(1.0, abs=1e-6)


def test_gru_samples_follow_the_exact_probabilities():
    """Chi-square goodness of fit of 20000 ancestral samples to the exact law (27 cells, seed fixed)."""
    from scipy.stats import chisquare

    m = GRUModel.random(3, 3, concentration=1.0, generator=_gen(2)).double()
    x = m.sample(20000, generator=_gen(3))
    counts = np.bincount(sequence_index(x, 3).numpy(), minlength=27)
    expected = m.all_log_probs().exp().numpy() * 20000
    assert expected.min() > 5  # the chi-square approximation holds cell by cell
    assert chisquare(counts, expected).pvalue > 1e-3


def test_gru_conditionals_are_torch_grucells_recursion_and_use_the_whole_prefix():
    """next_logits(x_<t) = head(h_t), h_t from torch.nn.GRUCell with the same weights, h_1 = 0; the
    third token's law changes with the first token at a fixed second one (not a bigram)."""
    m = GRUModel.random(4, 4, concentration=1.0, generator=_gen(5), hidden_size=6).double()
    cell = torch.nn.GRUCell(6, 6).double()
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(m.gru, f"{name}_l0"))
    x = torch.tensor([[0, 3, 1, 2], [2, 3, 1, 0]])
    h = torch.zeros(2, 6, dtype=torch.float64)
    want = []
    with torch.no_grad():
        for t in range(4):
            want.append(torch.log_softmax(m.head(h), -1).gather(1, x[:, t : t + 1]))
            h = cell(m.embedding(x[:, t]), h)
        got = token_log_probs(m, x)
    assert torch.allclose(got, torch.cat(want, 1), atol=1e-12)
    with torch.no_grad():
        third = torch.softmax(m.next_logits(x[:, :2]), -1)  # prefixes (0, 3) and (2, 3)
    assert float((third[0] - third[1]).abs().max()) > 1e-3


def test_gru_concentration_sets_the_peakedness_and_the_space_takes_gru_by_name():
    """Smaller concentration: lower mean entropy of the sequence law (V = 4, L = 2; 100 models each,
    at most log 16 = 2.77 nats); the space with base_model = 'gru' has a normalised GRU base model
    and an exact target meeting the moment."""
    ent = {}
    for c in (0.1, 10.0):
        logs = [GRUModel.random(4, 2, concentration=c, generator=_gen(s)).all_log_probs() for s in range(100)]
        ent[c] = float(np.mean([float(-(lp.exp() * lp).sum()) for lp in logs]))
    assert ent[0.1] < ent[10.0] - 0.5 and ent[10.0] < np.log(16)
    task = SequenceSpace(vocab_size=4, length=4, base_model="gru", min_count=3, gru_width=8)
    task.prepare(generator=_gen(1))
    assert isinstance(task.base(), GRUModel) and task.base().hidden_size == 8
    log_a = task.base_log_probs()
    assert log_a.dtype == torch.float64
    assert float(log_a.exp().sum()) == pytest.approx(1.0, abs=1e-12)
    log_p = task.target_log_probs()
    phi = task.feature(task.sequences()).double()
    assert float((log_p.exp() * phi).sum()) == pytest.approx(0.5, abs=1e-9)
    assert kl(log_p, log_a) > 0.01
    with pytest.raises(ValueError, match="hidden_size"):
        GRUModel(3, 2, hidden_size=0)
