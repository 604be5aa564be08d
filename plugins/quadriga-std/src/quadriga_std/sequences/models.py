"""Autoregressive models over an enumerable sequence space ``{0..V-1}^L``.

- :func:`enumerate_sequences`, :func:`sequence_index`: the ``V^L`` sequences in lexicographic order
  and the index of a sequence in it (its base-``V`` number).
- :class:`BigramModel`: ``a(x) = a_0(x_1) prod_t a(x_t | x_{t-1})``.
- :class:`TabularAutoregressive`: full context, one logit row per prefix; it represents every
  distribution on the space exactly (:meth:`TabularAutoregressive.from_log_probs`), so a policy can
  start at the base model and move anywhere.
- :class:`GRUModel`: a small recurrent network, full context through a hidden state (a base
  model with neither Markov nor tabular structure).

All are ``torch.nn.Module``s with ``next_logits(prefix)``, ``log_prob(x) -> Tensor[n]`` (sequence
log-probability, the sum over tokens), ``sample(n, generator=...) -> LongTensor[n, L]`` and
``all_log_probs()`` (exact, over the enumerated space); :func:`token_log_probs` gives the
per-token terms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = [
    "BigramModel",
    "GRUModel",
    "TabularAutoregressive",
    "enumerate_sequences",
    "sequence_index",
    "token_log_probs",
]


def enumerate_sequences(vocab_size: int, length: int) -> torch.Tensor:
    """All ``V^L`` sequences, lexicographic (the first token varies slowest).

    Shapes: returns ``LongTensor[V^L, L]``; row ``i`` is the base-``V`` digits of ``i``.

    Raises:
        ValueError: ``V^L`` above 10^6 (the space is meant to be enumerated).
    """
    if vocab_size**length > 10**6:
        raise ValueError(f"V^L = {vocab_size}^{length} is too large to enumerate (limit 10^6)")
    idx = torch.arange(vocab_size**length)
    powers = vocab_size ** torch.arange(length - 1, -1, -1)
    return (idx[:, None] // powers) % vocab_size


def sequence_index(x: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """Row of each sequence in :func:`enumerate_sequences`: ``LongTensor[n, t] -> LongTensor[n]``.

    A prefix of length ``t`` gets its index among the ``V^t`` prefixes (0 for ``t = 0``).
    """
    t = x.shape[1]
    powers = vocab_size ** torch.arange(t - 1, -1, -1, device=x.device)
    return (x * powers).sum(1) if t else torch.zeros(x.shape[0], dtype=torch.long, device=x.device)


def _dirichlet_log_rows(
    rows: int, vocab_size: int, concentration: float, generator: torch.Generator
) -> torch.Tensor:
    """``log`` of ``rows`` Dirichlet(``concentration``) vectors, ``Tensor[rows, V]``, from NumPy's sampler."""
    from quadriga.seeding import numpy_rng

    p = numpy_rng(generator).dirichlet(np.full(vocab_size, float(concentration)), size=rows)
    return torch.log(torch.as_tensor(p, dtype=torch.get_default_dtype()).clamp_min(1e-30))


def token_log_probs(model: Any, x: torch.Tensor) -> torch.Tensor:
    """Per-token ``log m(x_t | x_<t)`` of a model of this module: ``LongTensor[n, L] -> Tensor[n, L]``.

    Nats; differentiable in the model's parameters. Row sums are ``model.log_prob(x)`` (to rounding).
    """
    cols = []
    for t in range(x.shape[1]):
        logp = torch.log_softmax(model.next_logits(x[:, :t]), dim=-1)
        cols.append(logp.gather(1, x[:, t : t + 1]))
    return torch.cat(cols, dim=1)


class _Autoregressive(torch.nn.Module):
    """Shared ``log_prob`` and ``sample`` of a model that gives next-token logits of a prefix."""

    vocab_size: int
    length: int

    def next_logits(self, prefix: torch.Tensor) -> torch.Tensor:
        """Unnormalised log-probabilities of the next token: ``LongTensor[n, t] -> Tensor[n, V]``."""
        raise NotImplementedError

    def _dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """``log m(x) = sum_t log m(x_t | x_<t)`` (nats): ``LongTensor[n, L] -> Tensor[n]``."""
        total = torch.zeros(x.shape[0], dtype=self._dtype(), device=x.device)
        for t in range(self.length):
            logp = torch.log_softmax(self.next_logits(x[:, :t]), dim=-1)
            total = total + logp.gather(1, x[:, t : t + 1]).squeeze(1)
        return total

    @torch.no_grad()
    def sample(self, num_samples: int, *, generator: torch.Generator) -> torch.Tensor:
        """Ancestral samples ``LongTensor[num_samples, L]``, drawn with ``generator``."""
        x = torch.zeros(num_samples, 0, dtype=torch.long, device=generator.device)
        for _ in range(self.length):
            probs = torch.softmax(self.next_logits(x), dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)
            x = torch.cat([x, nxt], dim=1)
        return x

    @torch.no_grad()
    def all_log_probs(self) -> torch.Tensor:
        """``log m`` of every sequence of :func:`enumerate_sequences` (``Tensor[V^L]``; no grad)."""
        return self.log_prob(enumerate_sequences(self.vocab_size, self.length))


class BigramModel(_Autoregressive):
    """Bigram model ``a(x) = softmax(initial)[x_1] prod_{t>1} softmax(transition[x_{t-1}])[x_t]``.

    Shapes: ``initial_logits Tensor[V]``, ``transition_logits Tensor[V, V]`` (row = previous token).

    Source: the random bigram base model of the GDC check (methods-wave3 §12 (d)); the bigram
    language model of Shannon 1948.
    """

    def __init__(self, initial_logits: torch.Tensor, transition_logits: torch.Tensor, length: int) -> None:
        super().__init__()
        self.vocab_size, self.length = int(initial_logits.shape[0]), int(length)
        self.initial_logits = torch.nn.Parameter(initial_logits.clone())
        self.transition_logits = torch.nn.Parameter(transition_logits.clone())

    @classmethod
    def random(
        cls, vocab_size: int, length: int, *, concentration: float, generator: torch.Generator
    ) -> BigramModel:
        """Rows drawn from a symmetric Dirichlet(``concentration``) (small: peaked rows)."""
        logits = _dirichlet_log_rows(vocab_size + 1, vocab_size, concentration, generator)
        return cls(logits[0], logits[1:], length)

    def next_logits(self, prefix: torch.Tensor) -> torch.Tensor:
        """See :meth:`_Autoregressive.next_logits`."""
        if prefix.shape[1] == 0:
            return self.initial_logits.expand(prefix.shape[0], -1)
        return self.transition_logits[prefix[:, -1]]


class TabularAutoregressive(_Autoregressive):
    """Full-context tabular model: one logit row per prefix, ``logits[t] : Tensor[V^t, V]``.

    Every distribution on ``{0..V-1}^L`` is one of these (the chain rule), so it serves as the
    policy ``pi_theta`` of sequence-level methods and as a base model without Markov structure.

    Source: the tabular "logits per prefix (full context)" policy of the GDC check (methods-wave3 §12 (d)).
    """

    def __init__(self, logits: list[torch.Tensor]) -> None:
        super().__init__()
        self.length, self.vocab_size = len(logits), int(logits[0].shape[-1])
        self.logits = torch.nn.ParameterList([torch.nn.Parameter(t.clone()) for t in logits])

    @classmethod
    def from_log_probs(cls, log_probs: torch.Tensor, vocab_size: int, length: int) -> TabularAutoregressive:
        """The model whose sequence distribution is ``softmax(log_probs)`` exactly.

        Shapes: ``log_probs Tensor[V^L]`` in :func:`enumerate_sequences` order (unnormalised is fine;
        ``-inf`` entries get zero mass). The logits of prefix ``x_<t`` are the log-masses of its
        one-token extensions, ``logsumexp`` over the completions.
        """
        grid = log_probs.detach().reshape((vocab_size,) * length)
        logits = []
        for t in range(length):
            marg = grid if t == length - 1 else torch.logsumexp(grid, dim=tuple(range(t + 1, length)))
            marg = marg.reshape(vocab_size**t, vocab_size)
            logits.append(torch.where(torch.isfinite(marg), marg, torch.full_like(marg, -1e9)))
        return cls(logits)

    @classmethod
    def copy_of(cls, model: Any) -> TabularAutoregressive:
        """A tabular copy of any model of this module (same distribution, own parameters)."""
        with torch.no_grad():
            return cls.from_log_probs(model.all_log_probs(), model.vocab_size, model.length)

    @classmethod
    def random(
        cls, vocab_size: int, length: int, *, concentration: float, generator: torch.Generator
    ) -> TabularAutoregressive:
        """Each prefix's next-token row drawn from a symmetric Dirichlet(``concentration``)."""
        logits = []
        for t in range(length):
            logits.append(_dirichlet_log_rows(vocab_size**t, vocab_size, concentration, generator))
        return cls(logits)

    def next_logits(self, prefix: torch.Tensor) -> torch.Tensor:
        """See :meth:`_Autoregressive.next_logits`."""
        return self.logits[prefix.shape[1]][sequence_index(prefix, self.vocab_size)]


class GRUModel(_Autoregressive):
    """A one-layer GRU language model ``m(x_t | x_<t) = softmax(W h_t + b)``.

    ``h_t = GRU(h_{t-1}, e(x_{t-1}))`` for ``t > 1`` and ``h_1 = 0`` (so the first token's
    distribution is ``softmax(b)``); ``e`` is a token embedding of width ``hidden_size``. The hidden
    state carries the whole prefix, so the model is neither a bigram nor a table, but its
    log-probabilities are exact over the enumerated space like theirs.

    Shapes: ``next_logits`` maps ``LongTensor[n, t]`` to ``Tensor[n, V]``; parameters
    ``embedding.weight [V, H]``, ``gru`` (:class:`torch.nn.GRU`, ``H -> H``), ``head`` (``H -> V``).

    Raises:
        ValueError: ``hidden_size`` below 1.

    Source: the GRU of Cho et al. 2014, "Learning phrase representations using RNN encoder-decoder
    for statistical machine translation", eq. 5-8, as :class:`torch.nn.GRU` computes it (the reset
    gate multiplies ``W_hn h + b_hn`` after the product, where the paper gates ``h`` before it; either
    is a valid base model here, nothing is compared with the paper's cell); the "small GRU" base
    model of the sequence kit (methods-wave3, shared piece S5).
    """

    def __init__(self, vocab_size: int, length: int, hidden_size: int = 16) -> None:
        super().__init__()
        if hidden_size < 1:
            raise ValueError(f"hidden_size must be at least 1, got {hidden_size}")
        self.vocab_size, self.length, self.hidden_size = int(vocab_size), int(length), int(hidden_size)
        self.embedding = torch.nn.Embedding(vocab_size, hidden_size)
        self.gru = torch.nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.head = torch.nn.Linear(hidden_size, vocab_size)

    @classmethod
    def random(
        cls,
        vocab_size: int,
        length: int,
        *,
        concentration: float,
        generator: torch.Generator,
        hidden_size: int = 16,
    ) -> GRUModel:
        """Every parameter Gaussian, drawn from ``generator`` in ``named_parameters`` order (torch's
        global RNG is left as it was).

        Embedding ``N(0, 1)``; GRU weights ``N(0, 1/H)``, GRU biases 0; head weights
        ``N(0, 1/(concentration H))`` and bias ``N(0, 1/concentration)``. With ``|h| < 1`` a logit's
        variance given ``h`` is ``(1 + mean_j h_j^2) / concentration``, between ``1/concentration``
        and ``2/concentration``: as for the Dirichlet rows of the other models, a small
        ``concentration`` gives peaked next-token distributions.
        """
        with torch.random.fork_rng(devices=[]):  # the default init draws from torch's global RNG
            model = cls(vocab_size, length, hidden_size)
        scale = {
            "embedding.weight": 1.0,
            "head.weight": (concentration * hidden_size) ** -0.5,
            "head.bias": concentration**-0.5,
        }
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.startswith("gru.bias"):
                    p.zero_()
                    continue
                std = scale.get(name, hidden_size**-0.5)
                p.copy_(torch.randn(p.shape, generator=generator, dtype=p.dtype) * std)
        return model

    def next_logits(self, prefix: torch.Tensor) -> torch.Tensor:
        """See :meth:`_Autoregressive.next_logits`: the GRU run over the prefix, then the head."""
        n = prefix.shape[0]
        h = torch.zeros(1, n, self.hidden_size, dtype=self._dtype(), device=prefix.device)
        if prefix.shape[1] > 0:
            _, h = self.gru(self.embedding(prefix), h)
        return self.head(h[0])
