"""The ``search-agent`` task: :class:`~quadriga_stratified_grpo.env.SearchAgentEnv` as an Environment."""

from __future__ import annotations

from typing import Any

import attrs

from quadriga import ConfigError, Environment, param
from quadriga.validators import int_at_least, non_negative, positive_int, probabilities, probability
from quadriga_stratified_grpo.env import (
    DEFAULT_CLUE_QUALITY,
    DEFAULT_PRIOR_ACCURACY,
    ENV_ID,
    check_prior_accuracy,
)
from quadriga_stratified_grpo.multihop import DEFAULT_HOP_PROBS
from quadriga_stratified_grpo.multihop import DEFAULT_PRIOR_ACCURACY as DEFAULT_MH_PRIOR

__all__ = ["MultiHopSearch", "SearchAgent"]


@attrs.define(kw_only=True)
class SearchAgent(Environment):
    """Question answering with a costly noisy search tool (``quadriga/SearchAgent-v0``).

    ``make(**overrides)`` returns ``gymnasium.make("quadriga/SearchAgent-v0", ...)``: observations
    ``float32[num_questions + num_answers + 1]`` in ``[0, 1]``, actions ``Discrete(1 + num_answers)``
    (0 = search), reward ``correct - tool_cost * tool_calls`` per episode. See
    :mod:`quadriga_stratified_grpo.env` for the full specification.

    Shapes:
        observation ``float32[num_questions + num_answers + 1]`` (one-hot question, clue counts and
        tool calls, both divided by ``max_tool_calls``); action a scalar integer in
        ``[0, num_answers]``; reward a scalar per step; at most ``max_tool_calls + 1`` steps per episode.

    Units:
        reward in reward units (+1 for a correct answer, ``-tool_cost`` per search);
        ``info["tool_calls"]`` counts searches; probabilities are fractions in [0, 1].

    Raises:
        ConfigError: when built, for ``prior_accuracy`` and ``clue_quality`` of different lengths,
            probabilities outside [0, 1], a ``prior_accuracy`` entry below ``1/num_answers``,
            ``num_answers < 2``, ``max_tool_calls < 1`` or ``tool_cost < 0`` (naming the key).

    Source: built for this package after the search-agent setting of Zhu et al.,
    "Stratified GRPO", arXiv 2510.06214.
    """

    prior_accuracy: list = param(
        factory=lambda: list(DEFAULT_PRIOR_ACCURACY),
        doc="per question, probability the hidden answer is the prior-mode answer (in [1/num_answers, 1])",
        validator=probabilities,
    )
    clue_quality: list = param(
        factory=lambda: list(DEFAULT_CLUE_QUALITY),
        doc="per question, probability a search clue names the hidden answer",
        validator=probabilities,
    )
    num_answers: int = param(4, doc="number of candidate answers", validator=int_at_least(2))
    max_tool_calls: int = param(3, doc="search budget per episode (calls)", validator=positive_int)
    tool_cost: float = param(
        0.05, doc="reward charged per search call (reward units)", validator=non_negative
    )

    def __attrs_post_init__(self) -> None:
        if len(self.prior_accuracy) != len(self.clue_quality):
            raise ConfigError(
                f"prior_accuracy has {len(self.prior_accuracy)} entries but clue_quality has "
                f"{len(self.clue_quality)}; give one of each per question",
                key="clue_quality",
            )
        check_prior_accuracy(self.prior_accuracy, self.num_answers)

    @property
    def num_questions(self) -> int:
        """Number of distinct questions (prompts)."""
        return len(self.prior_accuracy)

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments passed to the gymnasium constructor."""
        return {
            "prior_accuracy": tuple(float(p) for p in self.prior_accuracy),
            "clue_quality": tuple(float(c) for c in self.clue_quality),
            "num_answers": self.num_answers,
            "max_tool_calls": self.max_tool_calls,
            "tool_cost": float(self.tool_cost),
        }

    def make(self, **overrides: Any) -> Any:
        """A new ``gymnasium.Env`` (registering the id on first use).

        Args:
            overrides: constructor keyword arguments replacing the task's (e.g. ``render_mode="ansi"``).

        Returns:
            ``gymnasium.Env`` from ``gymnasium.make("quadriga/SearchAgent-v0", ...)``.
        """
        import gymnasium

        from quadriga_stratified_grpo import env as _env

        _env.register()
        return gymnasium.make(ENV_ID, **{**self.kwargs(), **overrides})


def _hop_rows(instance: Any, attribute: Any, value: Any) -> None:
    rows = list(value) if isinstance(value, (list, tuple)) else None
    if not rows or any(not isinstance(r, (list, tuple)) or not r for r in rows):
        raise ConfigError(
            f"{attribute.name} must be a list of rows, one per question, each giving the "
            "probabilities of needing 0, 1, ... searches (e.g. [[0.4, 0.3, 0.3], ...])",
            key=attribute.name,
        )
    width = len(rows[0])
    for q, row in enumerate(rows):
        if len(row) != width or any(not 0.0 <= float(p) <= 1.0 for p in row) or abs(sum(row) - 1.0) > 1e-6:
            raise ConfigError(
                f"{attribute.name}[{q}] = {row!r}: every row needs {width} probabilities in [0, 1] "
                "summing to 1",
                key=attribute.name,
            )


@attrs.define(kw_only=True)
class MultiHopSearch(Environment):
    """Multi-hop question answering: the number of searches is set by the question's retrieval chain.

    ``make(**overrides)`` returns ``gymnasium.make("quadriga/MultiHopSearch-v0", ...)``; see
    :mod:`quadriga_stratified_grpo.multihop` for the full specification.

    Shapes:
        observation ``float32[num_questions + num_answers + 2]`` (one-hot question, clue counts and
        searches divided by the maximum number of hops, answer-phase flag); action a scalar integer
        in ``[0, num_answers)`` (a query while searching, an answer after); at most
        ``len(hop_probs[0])`` steps per episode.

    Units:
        reward in reward units (+1 for a correct answer, ``-tool_cost`` per search); probabilities
        are fractions in [0, 1].

    Raises:
        ConfigError: when built, for tables of different lengths, hop rows that are not
            probability vectors of one length, probabilities outside [0, 1], a ``prior_accuracy``
            entry below ``1/num_answers``, ``num_answers < 2`` or ``tool_cost < 0`` (naming the key).

    Source: built for this package after the multi-hop search-agent setting of Zhu et al.,
    "Stratified GRPO", arXiv 2510.06214 (rollouts differ in tool-call number and reward distribution).
    """

    prior_accuracy: list = param(
        factory=lambda: list(DEFAULT_MH_PRIOR),
        doc="per question, probability the hidden answer is the prior-mode answer (in [1/num_answers, 1])",
        validator=probabilities,
    )
    hop_probs: list = param(
        factory=lambda: [list(r) for r in DEFAULT_HOP_PROBS],
        doc="per question, probabilities that a rollout needs 0, 1, ... searches (rows sum to 1)",
        validator=_hop_rows,
    )
    num_answers: int = param(
        4, doc="number of candidate answers (and query formulations)", validator=int_at_least(2)
    )
    good_quality: float = param(
        0.85,
        doc="probability that a search with the good query names the answer",
        validator=probability,
    )
    bad_quality: float = param(
        0.1,
        doc="probability that a search with another query names the answer",
        validator=probability,
    )
    tool_cost: float = param(0.1, doc="reward charged per search call (reward units)", validator=non_negative)

    def __attrs_post_init__(self) -> None:
        if len(self.prior_accuracy) != len(self.hop_probs):
            raise ConfigError(
                f"prior_accuracy has {len(self.prior_accuracy)} entries but hop_probs has "
                f"{len(self.hop_probs)} rows; give one of each per question",
                key="hop_probs",
            )
        check_prior_accuracy(self.prior_accuracy, self.num_answers)

    @property
    def num_questions(self) -> int:
        """Number of distinct questions (prompts)."""
        return len(self.prior_accuracy)

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments passed to the gymnasium constructor."""
        return {
            "prior_accuracy": tuple(float(p) for p in self.prior_accuracy),
            "hop_probs": tuple(tuple(float(p) for p in row) for row in self.hop_probs),
            "num_answers": self.num_answers,
            "good_quality": float(self.good_quality),
            "bad_quality": float(self.bad_quality),
            "tool_cost": float(self.tool_cost),
        }

    def make(self, **overrides: Any) -> Any:
        """A new ``gymnasium.Env`` (registering the id on first use); ``overrides`` replace kwargs."""
        import gymnasium

        from quadriga_stratified_grpo import multihop

        multihop.register()
        return gymnasium.make(multihop.ENV_ID, **{**self.kwargs(), **overrides})
