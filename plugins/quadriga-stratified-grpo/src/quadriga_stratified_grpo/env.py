"""``quadriga/SearchAgent-v0``: a question-answering agent with a costly, noisy search tool.

## Description
Each episode is one question ``q`` out of ``num_questions`` with a hidden answer in
``{0, ..., num_answers - 1}``. At every step the agent either calls the search tool, which
costs ``tool_cost`` and returns a noisy clue, or commits to an answer, which ends the episode.
Questions differ in how much the agent "already knows" (``prior_accuracy[q]``: probability
that the hidden answer is the question's prior-mode answer ``q mod num_answers``) and in how
good the tool is for them (``clue_quality[q]``: probability that a clue names the hidden
answer; otherwise the clue is uniform over all answers). Trajectories with different numbers
of tool calls therefore have different reward distributions: the structural heterogeneity
that Stratified GRPO (Zhu et al., arXiv 2510.06214) addresses.

## Action Space
``Discrete(1 + num_answers)``: ``0`` calls the search tool, ``1 + a`` answers ``a``.

## Observation Space
``Box(0, 1, (num_questions + num_answers + 1,), float32)``:

| index | meaning |
|---|---|
| ``0 .. num_questions-1`` | one-hot question id |
| ``num_questions + a`` | number of clues so far that named answer ``a``, divided by ``max_tool_calls`` |
| last | tool calls made so far, divided by ``max_tool_calls`` |

## Rewards
``-tool_cost`` for every executed search, ``+1`` for a correct answer, ``0`` for a wrong one.
The episode return is ``correct - tool_cost * tool_calls``.

## Starting State
The question is drawn uniformly, or fixed with ``reset(options={"question": q})`` (this is how
G rollouts of one prompt share a question); the hidden answer is drawn from the question's
prior. No clue has been seen.

## Episode End
Terminated when the agent answers, or when it asks for a search with the budget
``max_tool_calls`` exhausted (the search is not executed, no cost is charged and the episode
ends unanswered, i.e. with correctness 0). Episodes last at most ``max_tool_calls + 1`` steps,
so there is no truncation.

## Information
``info`` holds ``question`` (int), ``tool_calls`` (int, searches executed so far) and, at the
end, ``correct`` (bool) and ``answered`` (bool).

## Arguments
``gymnasium.make("quadriga/SearchAgent-v0", prior_accuracy=(...), clue_quality=(...),
num_answers=4, max_tool_calls=3, tool_cost=0.05)``.

Importing this module registers the id with gymnasium (once).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

__all__ = ["DEFAULT_CLUE_QUALITY", "DEFAULT_PRIOR_ACCURACY", "ENV_ID", "SearchAgentEnv", "register"]

ENV_ID = "quadriga/SearchAgent-v0"

#: Default question table: two "known" questions (answer at once), two the agent cannot answer
#: unaided but the tool answers well, two where the tool is poor, two in between. With
#: ``tool_cost = 0.05`` the Bayes-optimal policy returns 0.760 on average, never searching 0.481.
DEFAULT_PRIOR_ACCURACY = (0.9, 0.8, 0.25, 0.25, 0.3, 0.25, 0.6, 0.5)
DEFAULT_CLUE_QUALITY = (0.5, 0.5, 0.95, 0.9, 0.35, 0.3, 0.8, 0.7)
SEARCH = 0


class SearchAgentEnv(gymnasium.Env):
    """A search-tool question-answering environment (see the module docstring for the full spec).

    Args:
        prior_accuracy: ``num_questions`` probabilities in ``[1/num_answers, 1]``: chance that
            the hidden answer is question q's prior-mode answer ``q mod num_answers``.
        clue_quality: ``num_questions`` probabilities in ``[0, 1]``: chance that a clue names
            the hidden answer (otherwise it is uniform over the answers).
        num_answers: number of candidate answers ``A >= 2``.
        max_tool_calls: search budget per episode (``>= 1``).
        tool_cost: reward charged per executed search (reward units, ``>= 0``).
        render_mode: ``None`` or ``"ansi"``.

    Raises:
        ValueError: for tables of different lengths, probabilities out of range, or bad sizes.

    Source: environment designed for this package after the search-agent setting of
    Zhu et al., "Stratified GRPO", arXiv 2510.06214, sec. 1 (rollouts differ in tool-call number).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        prior_accuracy: Sequence[float] = DEFAULT_PRIOR_ACCURACY,
        clue_quality: Sequence[float] = DEFAULT_CLUE_QUALITY,
        num_answers: int = 4,
        max_tool_calls: int = 3,
        tool_cost: float = 0.05,
        render_mode: str | None = None,
    ) -> None:
        prior = np.asarray(prior_accuracy, dtype=np.float64)
        quality = np.asarray(clue_quality, dtype=np.float64)
        if prior.ndim != 1 or prior.shape != quality.shape or prior.size == 0:
            raise ValueError(
                "prior_accuracy and clue_quality must be non-empty 1-D sequences of equal "
                f"length, got {prior.shape} and {quality.shape}"
            )
        if int(num_answers) < 2:
            raise ValueError(f"num_answers must be >= 2, got {num_answers}")
        if np.any(prior < 1.0 / num_answers) or np.any(prior > 1):
            raise ValueError(
                f"prior_accuracy entries must lie in [1/num_answers, 1] = [{1 / num_answers:.3g}, 1]"
            )
        if np.any(quality < 0) or np.any(quality > 1):
            raise ValueError("clue_quality entries must lie in [0, 1]")
        if int(max_tool_calls) < 1:
            raise ValueError(f"max_tool_calls must be >= 1, got {max_tool_calls}")
        if float(tool_cost) < 0:
            raise ValueError(f"tool_cost must be >= 0, got {tool_cost}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.prior_accuracy, self.clue_quality = prior, quality
        self.num_questions, self.num_answers = int(prior.size), int(num_answers)
        self.max_tool_calls, self.tool_cost = int(max_tool_calls), float(tool_cost)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(1 + self.num_answers)
        self.observation_space = spaces.Box(
            0.0, 1.0, (self.num_questions + self.num_answers + 1,), dtype=np.float32
        )
        self._question = 0
        self._answer = 0
        self._calls = 0
        self._evidence = np.zeros(self.num_answers, dtype=np.int64)
        self._done = True

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        obs[self._question] = 1.0
        obs[self.num_questions : self.num_questions + self.num_answers] = self._evidence / self.max_tool_calls
        obs[-1] = self._calls / self.max_tool_calls
        return obs

    def _info(self) -> dict[str, Any]:
        return {"question": self._question, "tool_calls": self._calls}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode.

        Args:
            seed: seeds the environment's generator (gymnasium convention).
            options: ``{"question": q}`` fixes the question id ``q`` in ``[0, num_questions)``.

        Returns:
            ``(observation float32[num_questions + num_answers + 1], info)``.

        Raises:
            ValueError: for a question id out of range.
        """
        super().reset(seed=seed)
        self._question, self._answer = draw_question(self, options)
        self._calls = 0
        self._evidence[:] = 0
        self._done = False
        return self._obs(), self._info()

    def step(self, action: Any):
        """Search (action 0) or answer ``action - 1``.

        Returns:
            ``(observation, reward float, terminated bool, truncated False, info)``.

        Raises:
            RuntimeError: when called after the episode ended without ``reset``.
            ValueError: for an action outside the action space.
        """
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        action = int(action)
        if not self.action_space.contains(action):
            raise ValueError(f"action must be in [0, {self.num_answers}], got {action}")
        info = self._info()
        if action == SEARCH:
            if self._calls >= self.max_tool_calls:  # budget exhausted: ends unanswered
                self._done = True
                info.update(correct=False, answered=False)
                return self._obs(), 0.0, True, False, info
            self._calls += 1
            if self.np_random.random() < self.clue_quality[self._question]:
                clue = self._answer
            else:
                clue = int(self.np_random.integers(self.num_answers))
            self._evidence[clue] += 1
            return self._obs(), -self.tool_cost, False, False, self._info()
        correct = (action - 1) == self._answer
        self._done = True
        info.update(correct=bool(correct), answered=True)
        return self._obs(), float(correct), True, False, info

    def optimal_values(self) -> np.ndarray:
        """Expected return of the Bayes-optimal policy on each question, ``float64[num_questions]``.

        Exact dynamic programming over the clue counts seen so far: the belief over the hidden
        answer is the prior times the clue likelihoods, answering yields the posterior's maximum,
        searching yields ``-tool_cost`` plus the expected value after the next clue.
        (Answering beats giving up, so ending unanswered is never optimal.)

        Source: the environment's own dynamics (finite-horizon Bellman equation).
        """
        return np.array([self._optimal_value(q) for q in range(self.num_questions)])

    def _optimal_value(self, question: int) -> float:
        num, mode = self.num_answers, question % self.num_answers
        p, c = self.prior_accuracy[question], self.clue_quality[question]
        prior = np.full(num, (1.0 - p) / (num - 1))
        prior[mode] = p
        likelihood = c * np.eye(num) + (1.0 - c) / num  # [clue, answer]
        cache: dict[tuple[int, ...], float] = {}

        def value(counts: tuple[int, ...]) -> float:
            if counts not in cache:
                post = prior * np.prod(likelihood ** np.asarray(counts)[:, None], axis=0)
                post = post / post.sum()
                best = float(post.max())
                if sum(counts) < self.max_tool_calls:
                    clue_prob = likelihood @ post
                    search = -self.tool_cost + sum(
                        float(clue_prob[k]) * value(tuple(n + (i == k) for i, n in enumerate(counts)))
                        for k in range(num)
                    )
                    best = max(best, search)
                cache[counts] = best
            return cache[counts]

        return value((0,) * num)

    def render(self) -> str | None:
        """Text rendering (``render_mode="ansi"``): question, calls, clue counts."""
        if self.render_mode != "ansi":
            return None
        return (
            f"question {self._question}: {self._calls}/{self.max_tool_calls} tool calls, "
            f"clues per answer {self._evidence.tolist()}"
        )


def draw_question(env: Any, options: dict[str, Any] | None) -> tuple[int, int]:
    """The episode's question (``options["question"]`` or uniform) and its hidden answer.

    The answer is the question's prior mode (``question % num_answers``) with probability
    ``prior_accuracy[question]``, otherwise uniform over the other answers. Draws from
    ``env.np_random`` in a fixed order (question, then answer), shared by both search environments.

    Returns:
        ``(question, answer)``, integers.

    Raises:
        ValueError: a question id out of range.
    """
    question = (options or {}).get("question")
    if question is None:
        question = int(env.np_random.integers(env.num_questions))
    question = int(question)
    if not 0 <= question < env.num_questions:
        raise ValueError(f"options['question'] must be in [0, {env.num_questions}), got {question}")
    mode = question % env.num_answers
    if env.np_random.random() < env.prior_accuracy[question]:
        return question, mode
    others = [a for a in range(env.num_answers) if a != mode]
    return question, int(others[int(env.np_random.integers(len(others)))])


def check_prior_accuracy(prior_accuracy: Sequence[float], num_answers: int) -> None:
    """Refuse a prior accuracy below ``1 / num_answers`` (the prior mode must be the likeliest answer).

    Raises:
        ConfigError: naming ``prior_accuracy``.
    """
    from quadriga import ConfigError

    low = 1.0 / num_answers
    if any(float(p) < low for p in prior_accuracy):
        raise ConfigError(
            f"prior_accuracy entries must be >= 1/num_answers = {low:.3g} (the prior-mode "
            "answer must be the most likely one)",
            key="prior_accuracy",
        )


def register() -> None:
    """Register :data:`ENV_ID` with gymnasium unless it is already registered."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="quadriga_stratified_grpo.env:SearchAgentEnv")


register()
