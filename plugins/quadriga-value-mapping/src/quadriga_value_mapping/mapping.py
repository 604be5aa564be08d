"""Value mappings and reward decompositions of orchestrated value mapping.

A mapping ``f`` is strictly increasing; the agent keeps ``Q~ = f(Q)`` per reward channel. ``identity``
gives Q-learning; ``loglin`` (the official code's default) is logarithmic below a break point and
linear above it, continuous with a continuous slope:

    f(q) = c log q + d                 for q <= e^(-d/c)
    f(q) = c e^(d/c) q - c             above,  c = 0.5, d = 0 (break at q = 1)

The polar decomposition splits a scalar reward into non-negative channels ``r+ = max(r, 0)`` (weight
+1) and ``r- = max(-r, 0)`` (weight -1), so ``r = r+ - r-`` and each channel's values are >= 0, where
a logarithm is defined.

Source: Fatemi & Tavakoli 2022, "Orchestrated Value Mapping for Reinforcement Learning" (ICLR, arXiv
2203.07171), Section 4 (the log-lin mapping) and eq. (13) (the polar decomposition); official code
``microsoft/orchestrated-value-mapping`` @3233d43, ``map_rl/map_dqn_agent.py``
(``forward_loglin_func``, ``inverse_loglin_func``, ``polar_decomp``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["EPS_LOG", "MAPPINGS", "forward", "inverse", "polar_decomposition"]

#: lower clip of a channel's regular-space target before a log mapping (the code's 0.96^100)
EPS_LOG = 0.01687
_C, _D = 0.5, 0.0
MAPPINGS = ("identity", "log", "loglin")


def forward(name: str, q: np.ndarray) -> np.ndarray:
    """``f(q)`` elementwise (``q`` > 0 for ``log``/``loglin``'s log branch; callers clip at :data:`EPS_LOG`).

    Raises:
        ValueError: an unknown mapping name.
    """
    q = np.asarray(q, float)
    if name == "identity":
        return q
    if name == "log":
        return _C * np.log(q) + _D
    if name == "loglin":
        brk = np.exp(-_D / _C)
        low = _C * np.log(np.minimum(q, brk)) + _D
        return np.where(q <= brk, low, _C * np.exp(_D / _C) * q - _C)
    raise ValueError(f"unknown mapping {name!r}; one of {MAPPINGS}")


def inverse(name: str, y: np.ndarray) -> np.ndarray:
    """``f^-1(y)`` elementwise.

    Raises:
        ValueError: an unknown mapping name.
    """
    y = np.asarray(y, float)
    if name == "identity":
        return y
    if name == "log":
        return np.exp((y - _D) / _C)
    if name == "loglin":
        low = np.exp((np.minimum(y, 0.0) - _D) / _C)  # f(break) = 0 for c = 0.5, d = 0
        return np.where(y <= 0.0, low, (y + _C) / (_C * np.exp(_D / _C)))
    raise ValueError(f"unknown mapping {name!r}; one of {MAPPINGS}")


def polar_decomposition(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(channels [..., 2], weights [2])``: ``r+ = max(r, 0)``, ``r- = max(-r, 0)``, weights ``(+1, -1)``.

    Source: Fatemi & Tavakoli 2022, eq. (13); ``polar_decomp`` in the official code.
    """
    r = np.asarray(r, float)
    return np.stack([np.maximum(r, 0.0), np.maximum(-r, 0.0)], axis=-1), np.array([1.0, -1.0])
