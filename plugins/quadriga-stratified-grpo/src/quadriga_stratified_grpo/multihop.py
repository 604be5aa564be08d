"""``quadriga/MultiHopSearch-v0``: questions whose retrieval chain needs 0, 1 or 2 searches.

## Description
Each episode is one question ``q`` out of ``num_questions`` with a hidden answer in
``{0, ..., num_answers - 1}``. At reset the environment draws how many searches this rollout
of the question needs, ``H`` in ``{0, ..., max_hops}`` with probabilities ``hop_probs[q]`` (how
deep the retrieval chain runs this time; the agent does not choose it). While searches remain,
the agent's action chooses a **query formulation** ``j``; the search costs ``tool_cost`` and
returns a clue that names the hidden answer with probability ``good_quality`` when ``j`` is the
question's good query ``q mod num_answers`` and ``bad_quality`` otherwise (else the clue is
uniform over the answers). Once the ``H`` searches are done, the action is the **answer**.

The number of search calls of a rollout is therefore ``H``: trajectories with 0, 1 and 2 calls
have systematically different return distributions (no evidence and a question-dependent prior,
one clue, two clues, and ``tool_cost`` per call), and every decision the agent makes (which query,
which answer) is taken *inside* a stratum. This is the cross-stratum heterogeneity Stratified GRPO
(Zhu et al., arXiv 2510.06214) targets: the global baseline shifts every rollout's advantage by
its stratum's offset ``R̄_k - R̄``, which is noise for the within-stratum decisions.

## Action Space
``Discrete(num_answers)``: in the search phase action ``j`` is query formulation ``j``; in the
answer phase action ``a`` answers ``a``.

## Observation Space
``Box(0, 1, (num_questions + num_answers + 2,), float32)``:

| index | meaning |
|---|---|
| ``0 .. num_questions-1`` | one-hot question id |
| ``num_questions + a`` | clues so far that named answer ``a``, divided by ``max_hops`` |
| ``-2`` | searches made so far, divided by ``max_hops`` |
| ``-1`` | 1 in the answer phase (no search remains), 0 while searching |

## Rewards
``-tool_cost`` for every search, ``+1`` for a correct answer. The return is
``correct - tool_cost * H``.

## Starting State
The question is drawn uniformly, or fixed with ``reset(options={"question": q})``; the hidden
answer is the question's prior-mode answer ``q mod num_answers`` with probability
``prior_accuracy[q]``, otherwise uniform over the others; ``H`` is drawn from ``hop_probs[q]``.

## Episode End
Terminated by the answer; episodes last ``H + 1`` steps (no truncation).

## Information
``info`` holds ``question``, ``tool_calls`` (searches so far) and, at the end, ``correct`` and
``answered`` (always True).

Importing this module registers the id with gymnasium (once).

Source: environment designed for this package after the multi-hop search-agent setting of
Zhu et al., "Stratified GRPO", arXiv 2510.06214, sec. 1 (rollouts differ in tool-call number and
reward distribution; the cross-stratum bias of Proposition 1).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from quadriga_stratified_grpo.env import draw_question

__all__ = [
    "DEFAULT_HOP_PROBS",
    "DEFAULT_PRIOR_ACCURACY",
    "ENV_ID",
    "MultiHopSearchEnv",
    "cross_stratum_bias",
    "register",
]

ENV_ID = "quadriga/MultiHopSearch-v0"

#: Default questions: two the agent mostly knows, three it cannot answer unaided, one in between.
DEFAULT_PRIOR_ACCURACY = (0.9, 0.8, 0.25, 0.25, 0.25, 0.5)
#: Per question, probabilities of needing 0, 1 and 2 searches: every stratum occurs for every question.
DEFAULT_HOP_PROBS = (
    (0.5, 0.25, 0.25),
    (0.4, 0.3, 0.3),
    (0.3, 0.35, 0.35),
    (0.3, 0.35, 0.35),
    (0.2, 0.4, 0.4),
    (0.34, 0.33, 0.33),
)


class MultiHopSearchEnv(gymnasium.Env):
    """A multi-hop search environment whose number of tool calls is set by the question's chain.

    Args:
        prior_accuracy: ``num_questions`` probabilities in ``[1/num_answers, 1]``: chance that the
            hidden answer is the prior-mode answer ``q mod num_answers``.
        hop_probs: ``num_questions`` rows of ``max_hops + 1`` probabilities (each row sums to 1):
            chance that a rollout needs ``0 .. max_hops`` searches.
        num_answers: answers and query formulations ``A >= 2``.
        good_quality: chance that a search with the good query names the hidden answer.
        bad_quality: the same for the other ``A - 1`` queries.
        tool_cost: reward charged per search (reward units, ``>= 0``).
        render_mode: ``None`` or ``"ansi"``.

    Raises:
        ValueError: tables of different lengths, rows that do not sum to 1, probabilities out of
            range, ``num_answers < 2`` or a negative cost.

    Source: see the module docstring.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        prior_accuracy: Sequence[float] = DEFAULT_PRIOR_ACCURACY,
        hop_probs: Sequence[Sequence[float]] = DEFAULT_HOP_PROBS,
        num_answers: int = 4,
        good_quality: float = 0.85,
        bad_quality: float = 0.1,
        tool_cost: float = 0.1,
        render_mode: str | None = None,
    ) -> None:
        prior = np.asarray(prior_accuracy, dtype=np.float64)
        hops = np.asarray(hop_probs, dtype=np.float64)
        if prior.ndim != 1 or prior.size == 0 or hops.ndim != 2 or hops.shape[0] != prior.size:
            raise ValueError(
                "prior_accuracy must be a non-empty 1-D sequence and hop_probs one row per question, "
                f"got shapes {prior.shape} and {hops.shape}"
            )
        if hops.shape[1] < 1 or np.any(hops < 0) or not np.allclose(hops.sum(1), 1.0):
            raise ValueError("every hop_probs row must hold non-negative probabilities summing to 1")
        if int(num_answers) < 2:
            raise ValueError(f"num_answers must be >= 2, got {num_answers}")
        if np.any(prior < 1.0 / num_answers) or np.any(prior > 1):
            raise ValueError(
                f"prior_accuracy entries must lie in [1/num_answers, 1] = [{1 / num_answers:.3g}, 1]"
            )
        for name, q in (("good_quality", good_quality), ("bad_quality", bad_quality)):
            if not 0.0 <= float(q) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {q}")
        if float(tool_cost) < 0:
            raise ValueError(f"tool_cost must be >= 0, got {tool_cost}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.prior_accuracy, self.hop_probs = prior, hops
        self.num_questions, self.num_answers = int(prior.size), int(num_answers)
        self.max_hops = int(hops.shape[1] - 1)
        self.good_quality, self.bad_quality = float(good_quality), float(bad_quality)
        self.tool_cost = float(tool_cost)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(self.num_answers)
        self.observation_space = spaces.Box(
            0.0, 1.0, (self.num_questions + self.num_answers + 2,), dtype=np.float32
        )
        self._question = self._answer = self._hops = self._calls = 0
        self._evidence = np.zeros(self.num_answers, dtype=np.int64)
        self._done = True

    # ------------------------------------------------------------------ gymnasium API
    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        obs[self._question] = 1.0
        scale = max(1, self.max_hops)
        obs[self.num_questions : self.num_questions + self.num_answers] = self._evidence / scale
        obs[-2] = self._calls / scale
        obs[-1] = float(self._calls >= self._hops)
        return obs

    def _info(self) -> dict[str, Any]:
        return {"question": self._question, "tool_calls": self._calls}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; ``options={"question": q}`` fixes the question.

        Returns:
            ``(observation float32[num_questions + num_answers + 2], info)``.

        Raises:
            ValueError: a question id out of range.
        """
        super().reset(seed=seed)
        self._question, self._answer = draw_question(self, options)
        self._hops = int(self.np_random.choice(self.max_hops + 1, p=self.hop_probs[self._question]))
        self._calls = 0
        self._evidence[:] = 0
        self._done = False
        return self._obs(), self._info()

    def step(self, action: Any):
        """Search with query ``action`` (search phase) or answer ``action`` (answer phase).

        Returns:
            ``(observation, reward float, terminated bool, truncated False, info)``.

        Raises:
            RuntimeError: a step after the episode ended without ``reset``.
            ValueError: an action outside the action space.
        """
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        action = int(action)
        if not self.action_space.contains(action):
            raise ValueError(f"action must be in [0, {self.num_answers - 1}], got {action}")
        if self._calls < self._hops:
            self._calls += 1
            good = action == self._question % self.num_answers
            quality = self.good_quality if good else self.bad_quality
            if self.np_random.random() < quality:
                clue = self._answer
            else:
                clue = int(self.np_random.integers(self.num_answers))
            self._evidence[clue] += 1
            return self._obs(), -self.tool_cost, False, False, self._info()
        correct = action == self._answer
        self._done = True
        info = self._info()
        info.update(correct=bool(correct), answered=True)
        return self._obs(), float(correct), True, False, info

    def render(self) -> str | None:
        """Text rendering (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        phase = "answer" if self._calls >= self._hops else "search"
        return (
            f"question {self._question}: {self._calls} searches ({phase} phase), "
            f"clues per answer {self._evidence.tolist()}"
        )

    # ------------------------------------------------------------------ exact quantities
    def _prior(self, question: int) -> np.ndarray:
        num, mode = self.num_answers, question % self.num_answers
        prior = np.full(num, (1.0 - self.prior_accuracy[question]) / (num - 1))
        prior[mode] = self.prior_accuracy[question]
        return prior

    def _likelihood(self, quality: float) -> np.ndarray:
        """``[clue, answer]``: probability of a clue given the hidden answer."""
        return quality * np.eye(self.num_answers) + (1.0 - quality) / self.num_answers

    def oracle_action(self) -> int:
        """The Bayes-optimal action in the current state (good query; then the posterior's mode)."""
        if self._calls < self._hops:
            return self._question % self.num_answers
        lik = self._likelihood(self.good_quality)
        post = self._prior(self._question) * np.prod(lik ** self._evidence[:, None], axis=0)
        return int(np.argmax(post))

    def optimal_stratum_values(self) -> np.ndarray:
        """Expected return of the Bayes-optimal policy per question and number of searches.

        Returns:
            ``float64[num_questions, max_hops + 1]``: ``P(correct | h good-query clues) - tool_cost * h``,
            by enumerating the ``num_answers ** h`` clue sequences.
        """
        out = np.zeros((self.num_questions, self.max_hops + 1))
        lik = self._likelihood(self.good_quality)
        for q in range(self.num_questions):
            prior = self._prior(q)
            for h in range(self.max_hops + 1):
                acc = 0.0
                for clues in itertools.product(range(self.num_answers), repeat=h):
                    joint = prior * np.prod([lik[c] for c in clues], axis=0) if h else prior
                    acc += float(joint.max())  # sum over clue sequences of max_a P(a, clues)
                out[q, h] = acc - self.tool_cost * h
        return out

    def optimal_values(self) -> np.ndarray:
        """Expected return of the Bayes-optimal policy per question, ``float64[num_questions]``."""
        return (self.optimal_stratum_values() * self.hop_probs).sum(1)


def cross_stratum_bias(
    env: MultiHopSearchEnv,
    *,
    policy: str = "oracle",
    num_groups: int = 400,
    group_size: int = 8,
    seed: int = 0,
    eps: float = 1e-6,
) -> dict[str, Any]:
    """Mean advantage per stratum (number of searches) under GRPO's global and under SAN normalisation.

    Draws ``num_groups`` prompt groups (question ``g mod num_questions``) of ``group_size`` rollouts
    with a scripted policy, computes each rollout's global advantage ``(R_i - R̄) / (std(R) + eps)``
    and SAN advantage within its group, and averages them over the rollouts of each stratum. An
    unbiased per-stratum baseline gives 0 in every stratum (SAN does, by construction); the global
    advantage's offset is the cross-stratum bias ``(R̄_k - R̄) / std`` of Proposition 1.

    Args:
        env: the environment (its own generator is reseeded per episode from ``seed``).
        policy: ``"oracle"`` (Bayes-optimal: good query, posterior mode) or ``"uniform"``.
        num_groups, group_size: the batch drawn.
        seed: root seed (episode ``i`` uses ``seed * 10**6 + i``; actions of ``"uniform"`` come from
            ``numpy.random.default_rng(seed)``).
        eps: as in :func:`~quadriga_stratified_grpo.advantages.global_advantages`.

    Returns:
        ``{"global": {h: Interval}, "san": {h: Interval}, "rollouts": {h: count},
        "between_share": float}``: per stratum ``h`` the mean advantage with a BCa interval over the
        groups (:func:`quadriga.stats.bootstrap_ci` on the per-group stratum means), and the share of
        the return variance that lies between strata (mean over groups of between / total).

    Raises:
        ValueError: an unknown ``policy``.

    Source: Zhu et al. 2025, arXiv 2510.06214, Proposition 1 (A_global = A_SAN + (R̄_k - R̄)).
    """
    import torch

    from quadriga.stats import bootstrap_ci
    from quadriga_stratified_grpo.advantages import (
        advantage_decomposition,
        global_advantages,
        stratified_advantages,
    )

    if policy not in ("oracle", "uniform"):
        raise ValueError(f"policy must be 'oracle' or 'uniform', got {policy!r}")
    rng = np.random.default_rng(seed)
    rewards = np.zeros((num_groups, group_size))
    strata = np.zeros((num_groups, group_size), dtype=np.int64)
    for g in range(num_groups):
        for i in range(group_size):
            env.reset(seed=seed * 10**6 + g * group_size + i, options={"question": g % env.num_questions})
            total, done = 0.0, False
            while not done:
                a = env.oracle_action() if policy == "oracle" else int(rng.integers(env.num_answers))
                _, r, done, _, info = env.step(a)
                total += r
            rewards[g, i], strata[g, i] = total, info["tool_calls"]
    r_t, s_t = torch.as_tensor(rewards), torch.as_tensor(strata)
    adv = {
        "global": global_advantages(r_t, eps=eps).numpy(),
        "san": stratified_advantages(r_t, s_t, eps=eps).numpy(),
    }
    parts = advantage_decomposition(r_t, s_t)
    total_var = parts["var_global"].numpy()
    share = float(
        np.mean(
            np.where(
                total_var > 0, parts["between_stratum"].numpy() / np.where(total_var > 0, total_var, 1), 0
            )
        )
    )
    out: dict[str, Any] = {"global": {}, "san": {}, "rollouts": {}, "between_share": share}
    for h in range(env.max_hops + 1):
        mask = strata == h
        rows = mask.any(1)
        out["rollouts"][h] = int(mask.sum())
        for kind, a in adv.items():
            per_group = (a * mask).sum(1)[rows] / mask.sum(1)[rows]
            out[kind][h] = bootstrap_ci(per_group, "mean", rng=seed + h)
    return out


def register() -> None:
    """Register :data:`ENV_ID` with gymnasium unless it is already registered."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="quadriga_stratified_grpo.multihop:MultiHopSearchEnv")


register()
