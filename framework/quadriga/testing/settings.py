"""Cheap parameter settings that the conformance checks of several plugins share.

A component's defaults are sized for a paper run (minutes of training); the checks build and run
it many times, so a plugin's conformance test passes cheap ``params`` per component. The settings
of one family live here once instead of in every plugin's test module.
"""

from __future__ import annotations

from typing import Any

__all__ = ["cheap_dqn"]

#: the DQN family (std's ``dqn`` and the learners built on its loop): a few frames and updates on a tiny net
_CHEAP_DQN: dict[str, Any] = {
    "total_frames": 48,
    "frames_per_batch": 8,
    "learning_starts": 16,
    "batch_size": 8,
    "buffer_size": 64,
    "eps_anneal_frames": 32,
    "num_updates_per_batch": 1,
    "log_every": 1,
    "hidden_sizes": [8],
}


def cheap_dqn(**more: Any) -> dict[str, Any]:
    """Cheap settings of a DQN-family learner for the checks (48 frames, one 8-unit layer).

    Args:
        more: further parameters of the learner (``num_particles=4``), or replacements.

    Returns:
        A fresh dict (the caller may change it).
    """
    out = {k: list(v) if isinstance(v, list) else v for k, v in _CHEAP_DQN.items()}
    out.update(more)
    return out
