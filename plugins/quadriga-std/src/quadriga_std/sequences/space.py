"""The enumerable sequence-space task and its exact quantities.

:class:`SequenceSpace` (``sequence-space``): vocabulary ``V``, length ``L`` (``V^L`` sequences,
enumerated), a random base model ``a`` (bigram, full-context tabular or a small GRU) and a binary feature
``phi`` with a desired moment ``mu_bar``. Everything the sequence-level methods are judged by is
computed exactly, not estimated:

- :func:`exact_lambda`: the ``lambda`` of the minimal-KL distribution ``p ∝ a exp(lambda phi)``
  with ``E_p[phi] = mu_bar`` (a root of a monotone function, :func:`scipy.optimize.brentq`);
- :func:`kl`: ``KL(P || Q)`` of two distributions given by their log-probabilities on the space.

Features (both with known modes):

- ``"count"``: ``phi(x) = 1[token c appears at least k times]`` (the GDC check's constraint);
- ``"answers"``: ``phi(x) = 1[x is one of m distinct "correct answers"]``; the answers are the
  modes, and the base model prefers answer 0 by ``answer_skew`` over each other answer (the
  FlowRL check's multimodal reward).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import attrs
import torch

from quadriga import Target, param
from quadriga.errors import ConfigError
from quadriga.validators import in_range, int_at_least, one_of, positive
from quadriga_std.sequences.models import (
    BigramModel,
    GRUModel,
    TabularAutoregressive,
    enumerate_sequences,
    sequence_index,
)

__all__ = ["SequenceSpace", "exact_lambda", "kl", "tilted_log_probs"]


def kl(log_p: torch.Tensor, log_q: torch.Tensor) -> float:
    """``KL(P || Q) = sum_x P(x) (log P(x) - log Q(x))`` in nats; both ``Tensor[N]`` normalised log-probs.

    Terms with ``P(x) = 0`` count zero; ``inf`` when ``Q`` misses mass of ``P``.
    """
    p = log_p.exp()
    mask = p > 0
    return float((p[mask] * (log_p[mask] - log_q[mask])).sum())


def tilted_log_probs(log_a: torch.Tensor, phi: torch.Tensor, lam: float) -> torch.Tensor:
    """Normalised ``log p`` of ``p ∝ a exp(lam phi)``: ``Tensor[N], Tensor[N] -> Tensor[N]``.

    Source: Khalifa et al. 2021 (GDC), eq. (1)-(2), the exponential-family solution of the
    moment-constrained minimal-KL problem (Csiszár 1975).
    """
    log_p = log_a + lam * phi.to(log_a.dtype)
    return log_p - torch.logsumexp(log_p, 0)


def exact_lambda(log_a: torch.Tensor, phi: torch.Tensor, target_moment: float) -> float:
    """The ``lambda`` with ``E_{a exp(lambda phi)}[phi] = target_moment`` (scalar feature).

    ``E_lambda[phi]`` increases in ``lambda`` (its derivative is ``Var_lambda[phi]``), so the root
    is bracketed and found by :func:`scipy.optimize.brentq` to 1e-12.

    Shapes: ``log_a Tensor[N]`` (normalised), ``phi Tensor[N]``.

    Raises:
        ValueError: ``target_moment`` outside ``(min phi, max phi)`` (no finite lambda).
    """
    from scipy.optimize import brentq

    lo, hi = float(phi.min()), float(phi.max())
    if not lo < target_moment < hi:
        raise ValueError(f"target moment {target_moment} is not inside the feature's range ({lo}, {hi})")
    la, ph = log_a.double(), phi.double()

    def gap(lam: float) -> float:
        w = torch.softmax(la + lam * ph, 0)
        return float((w * ph).sum()) - target_moment

    a, b = -1.0, 1.0
    while gap(a) > 0:
        a *= 2
    while gap(b) < 0:
        b *= 2
    return float(brentq(gap, a, b, xtol=1e-12))


@attrs.define(kw_only=True)
class SequenceSpace(Target):
    """Task: all sequences of length ``L`` over ``V`` tokens, a base model ``a`` and a feature ``phi``.

    ``prepare`` draws the base model from the task's generator (Dirichlet rows). As a ``Target``,
    ``log_prob`` is the base model's ``log a(x)`` and ``sample`` draws from ``a`` exactly; the
    sequence methods use :meth:`feature`, :meth:`base`, :meth:`sequences`, :meth:`target_log_probs`
    and :attr:`modes`.

    Shapes:
        Sequences ``LongTensor[n, L]`` with tokens in ``0..V-1``; ``feature(x) Tensor[n]`` in {0, 1};
        ``sequences() LongTensor[V^L, L]``; ``*_log_probs() Tensor[V^L]`` in that order.

    Units:
        Log-probabilities and KL in nats; the moment is a probability.

    Raises:
        ConfigError: ``V^L`` above 10^5; ``min_count`` above ``L``; more answers than sequences;
        ``target_moment`` not strictly inside ``(0, 1)`` (no finite lambda); using it before ``prepare``.

    Source: the enumerable toy of methods-wave3 §12 (d) (GDC: V = 4, L = 5, random bigram ``a``,
    ``phi = 1[token 0 at least twice]``, ``mu_bar = 0.5``) and §13 (d) (FlowRL: 4 correct answers).
    """

    check_params: ClassVar[dict[str, Any]] = {"vocab_size": 3, "length": 3, "min_count": 1}

    vocab_size: int = param(4, doc="number of tokens V", validator=int_at_least(2))
    length: int = param(5, doc="sequence length L", validator=int_at_least(1))
    base_model: str = param(
        "bigram",
        doc="base model a: 'bigram', 'tabular' (full context) or 'gru' (a small recurrent network)",
        validator=one_of(("bigram", "tabular", "gru")),
    )
    concentration: float = param(
        1.0,
        doc="symmetric Dirichlet concentration of the base model's rows ('gru': inverse logit variance)",
        validator=positive,
    )
    gru_width: int = param(16, doc="hidden-state width H of the 'gru' base model", validator=int_at_least(1))
    feature_kind: str = param(
        "count",
        doc="'count' (token c at least k times) or 'answers' (m correct sequences)",
        validator=one_of(("count", "answers")),
    )
    feature_token: int = param(0, doc="the counted token c ('count')", validator=int_at_least(0))
    min_count: int = param(2, doc="the count k ('count')", validator=int_at_least(1))
    num_answers: int = param(4, doc="number m of correct answers ('answers')", validator=int_at_least(1))
    answer_skew: float = param(
        10.0,
        doc="a(answer 0) / a(answer j) for j > 0 ('answers'); 1 keeps the base ratios",
        validator=positive,
    )
    target_moment: float = param(
        0.5,
        doc="desired moment mu_bar = E_p[phi]",
        validator=in_range(0.0, 1.0, low_open=True, high_open=True),
    )

    _model: Any = attrs.field(default=None, init=False, repr=False)
    _answers: torch.Tensor | None = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.vocab_size**self.length > 10**5:
            raise ConfigError(f"V^L = {self.vocab_size}^{self.length} exceeds 10^5", key="length")
        if self.feature_kind == "count" and (
            self.min_count > self.length or self.feature_token >= self.vocab_size
        ):
            raise ConfigError("min_count must be <= length and feature_token < vocab_size", key="min_count")
        if self.feature_kind == "answers" and self.num_answers >= self.vocab_size**self.length:
            raise ConfigError("num_answers must be below V^L", key="num_answers")

    def prepare(self, *, generator: torch.Generator) -> None:
        """Draw the base model (and, for 'answers', the answers and the skew) from ``generator``."""
        V, L = self.vocab_size, self.length
        if self.base_model == "gru":
            model: Any = GRUModel.random(
                V, L, concentration=self.concentration, generator=generator, hidden_size=self.gru_width
            )
        else:
            maker = BigramModel if self.base_model == "bigram" else TabularAutoregressive
            model = maker.random(V, L, concentration=self.concentration, generator=generator)
        if self.feature_kind == "answers":
            perm = torch.randperm(V**L, generator=generator)[: self.num_answers]
            self._answers = perm
            with torch.no_grad():
                log_a = model.all_log_probs()
                # set log a(answer j) = log a(answer 0) - log skew for j > 0, then renormalise
                log_a[perm[1:]] = log_a[perm[0]] - math.log(self.answer_skew)
                model = TabularAutoregressive.from_log_probs(log_a, V, L)
        # float64 throughout: exact KL and moments to ~1e-12 (the space is small)
        self._model = model.double().requires_grad_(False)

    # --- task surface -----------------------------------------------------------------------
    def _require(self) -> Any:
        if self._model is None:
            raise ConfigError("the sequence space has no base model yet: call prepare(generator=...) first.")
        return self._model

    def base(self) -> Any:
        """The base model ``a`` (a frozen module with ``log_prob``, ``sample``, ``all_log_probs``)."""
        return self._require()

    def sequences(self) -> torch.Tensor:
        """All sequences, ``LongTensor[V^L, L]`` (:func:`.models.enumerate_sequences` order)."""
        return enumerate_sequences(self.vocab_size, self.length)

    def feature(self, x: torch.Tensor) -> torch.Tensor:
        """``phi(x)``: ``LongTensor[n, L] -> Tensor[n]`` in {0., 1.}."""
        if self.feature_kind == "count":
            return ((x == self.feature_token).sum(1) >= self.min_count).to(torch.get_default_dtype())
        self._require()
        assert self._answers is not None
        return torch.isin(sequence_index(x, self.vocab_size), self._answers).to(torch.get_default_dtype())

    @property
    def modes(self) -> torch.Tensor | None:
        """Indices of the modes (the correct answers, answer 0 first), or ``None`` for 'count'."""
        self._require()
        return None if self._answers is None else self._answers.clone()

    def base_log_probs(self) -> torch.Tensor:
        """``log a`` of every sequence, ``Tensor[V^L]`` (normalised)."""
        with torch.no_grad():
            return self._require().all_log_probs()

    def target_lambda(self) -> float:
        """The exact ``lambda`` of ``p`` (:func:`exact_lambda`)."""
        return exact_lambda(self.base_log_probs(), self.feature(self.sequences()), self.target_moment)

    def target_log_probs(self) -> torch.Tensor:
        """``log p`` of every sequence, ``p ∝ a exp(lambda phi)`` with the exact lambda, ``Tensor[V^L]``."""
        return tilted_log_probs(self.base_log_probs(), self.feature(self.sequences()), self.target_lambda())

    # --- Target interface ---------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """The sequence length ``L``."""
        return self.length

    def log_prob(self, x: Any) -> Any:
        """``log a(x)`` of the base model: ``LongTensor[n, L] -> Tensor[n]`` (nats, normalised)."""
        with torch.no_grad():
            return self._require().log_prob(torch.as_tensor(x).long())

    def score(self, x: Any) -> Any:
        """Raises NotImplementedError: a discrete space has no score."""
        raise NotImplementedError("a sequence space is discrete: it has no score")

    def sample(self, num_samples: int, *, generator: torch.Generator) -> Any:
        """Exact draws from the base model ``a``, ``LongTensor[num_samples, L]``."""
        return self._require().sample(num_samples, generator=generator)
