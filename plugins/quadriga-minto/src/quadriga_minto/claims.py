"""MINTO's headline claims as statistical tests (``quadriga verify quadriga-minto``).

``smoke`` runs 2 replicates with a short budget (numbers only), ``paper`` 10 replicates with
``PAPER_FRAMES`` environment steps per learner (the early-learning phase, where a faster target
rule shows in the area under the curve).

Both are :class:`quadriga.claims.Claim` objects on the registered ``cartpole-minto`` pipeline:
the core repeats the ``minto`` and ``dqn`` stages (replicate i of both shares its seed: paired)
and reads the per-replicate metrics. The test bed is unchanged (CartPole-v1), where
min(target, online) rarely differs from the target.

Source: Hendawy et al. 2025, "Use the Online Network If You Can" (arXiv 2510.02590), sec. 4-5.
"""

from __future__ import annotations

from quadriga.claims import Claim, Effect, Scale, Tuning

__all__ = ["METHODS", "PAPER_FRAMES", "PIPELINE", "auc_claim", "overestimation_claim"]

PIPELINE = "cartpole-minto"
METHODS = ("dqn", "dqn-online", "minto")
PAPER_FRAMES = 8000


def _budget(frames: int, starts: int, anneal: int) -> tuple[str, ...]:
    return tuple(
        f"stage.{m}.{k}={v}"
        for m in METHODS
        for k, v in (("total_frames", frames), ("learning_starts", starts), ("eps_anneal_frames", anneal))
    )


_SCALES = {
    "smoke": Scale(
        replicates=2,
        overrides=(
            *_budget(1200, 300, 600),
            "stage.episode-return.num_episodes=2",
            "stage.q-overestimation.num_episodes=1",
            "stage.q-overestimation.tail_steps=50",
            "stage.return-curve.num_points=20",
        ),
    ),
    "paper": Scale(replicates=10, overrides=_budget(PAPER_FRAMES, 500, 3000)),
}
_TUNING = {
    "minto": Tuning(1, "CleanRL DQN defaults with the MINTO target"),
    "dqn": Tuning(1, "CleanRL DQN defaults"),
}

auc_claim = Claim(
    pipeline=PIPELINE,
    arms=("minto", "dqn"),
    metric=("return-curve", "auc"),
    also=("auc",),
    effect=Effect(
        quantity="area under the return curve on CartPole-v1 (step-normalised, return units), "
        "IQM(MINTO) - IQM(DQN) over replicates (replicate i of both shares its seed)",
        statistic="iqm-difference",
        relation="greater",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's area under the return curve is at least DQN's (interquartile means over replicates)."""

overestimation_claim = Claim(
    pipeline=PIPELINE,
    arms=("minto", "dqn"),
    metric=("q-overestimation", "q_overestimation"),
    effect=Effect(
        quantity="mean Q(s, a) - G(s) on greedy episodes (return units), MINTO - DQN (paired by replicate)",
        statistic="difference",
        relation="less",
        value=0.0,
    ),
    scales=_SCALES,
    tuning=_TUNING,
)
"""MINTO's Q-overestimation is not above DQN's (the min with the online network only lowers targets)."""
