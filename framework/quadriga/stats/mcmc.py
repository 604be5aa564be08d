"""MCMC diagnostics through arviz: :func:`ess` (bulk/tail), :func:`rhat`, :func:`mcse`.

Guarded for chains that never move (:func:`stuck_chains`): arviz reports ESS = number of draws
there. Shapes: ``draws`` ``(chains, draws[, dim])``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from quadriga.errors import ConfigError


def _draws(draws: Any) -> np.ndarray:
    arr = np.asarray(draws, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim not in (2, 3) or arr.shape[1] < 4:
        raise ConfigError(
            f"draws must have shape (chains, draws[, dim]) with at least 4 draws, got {arr.shape}.",
            key="draws",
        )
    if not np.all(np.isfinite(arr)):
        raise ConfigError("draws hold non-finite values.", key="draws")
    return arr if arr.ndim == 3 else arr[:, :, None]


def _arviz() -> Any:
    """The ``arviz`` module, imported without its announcement of a coming refactor (a FutureWarning).

    The warning is about arviz's own future API, not about anything a run does; left alone it is
    shown in the middle of a run's output (and fails a test suite that turns warnings into errors).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"\s*ArviZ is undergoing a major refactor", FutureWarning)
        import arviz

    return arviz


def _per_dim(arr: np.ndarray, fn: Callable[[np.ndarray], float]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([float(fn(arr[:, :, j])) for j in range(arr.shape[2])])


def stuck_chains(draws: Any) -> np.ndarray:
    """Boolean ``(chains,)``: chains whose draws never change (in any dimension).

    Shapes: ``draws`` ``(chains, draws[, dim])``.
    """
    arr = _draws(draws)
    return np.all(np.ptp(arr, axis=1) == 0, axis=1)


def ess(draws: Any, method: str = "bulk") -> dict[str, Any]:
    """Effective sample size per dimension (arviz ``ess``), guarded against chains that never move.

    Shapes: ``draws`` ``(chains, draws[, dim])``.

    Returns:
        ``{"ess": (dim,) array, "stuck_chains": int, "note": str}``. A chain whose draws never
        change contributes one effective draw (its initial value) instead of arviz's
        ``draws`` (arviz sees zero variance and returns the number of draws); ESS above the
        number of draws (antithetic chains) is kept and noted.

    Raises:
        ConfigError: unknown method, bad shape, non-finite draws.

    Source: Vehtari et al. 2021, "Rank-normalization, folding, and localization", Sec. 3-4.
    """
    arviz = _arviz()

    if method not in ("bulk", "tail", "mean"):
        raise ConfigError(f"ESS method '{method}' is not bulk, tail or mean.", key="method")
    arr = _draws(draws)
    stuck = stuck_chains(arr)
    chains, n = arr.shape[:2]
    notes = []
    if stuck.all():
        values = np.full(arr.shape[2], float(chains))
        notes.append(f"all {chains} chains never moved: ESS is one draw per chain")
    else:
        moving = arr[~stuck]
        values = _per_dim(moving, lambda a: arviz.ess(a, method=method)) + float(stuck.sum())
        if stuck.any():
            notes.append(f"{int(stuck.sum())} of {chains} chains never moved and count one draw each")
    if np.any(values > chains * n):
        notes.append("ESS exceeds the number of draws (antithetic, negatively correlated draws)")
    return {"ess": values, "stuck_chains": int(stuck.sum()), "note": "; ".join(notes)}


def rhat(draws: Any, threshold: float = 1.01) -> dict[str, Any]:
    """Rank-normalised split R-hat per dimension (arviz ``rhat``), with a warning above ``threshold``.

    Shapes: ``draws`` ``(chains, draws[, dim])``.

    Returns:
        ``{"rhat": (dim,) array, "note": str}``; NaN R-hat (all chains constant) is reported as NaN
        with a note.

    Source: Vehtari et al. 2021, Sec. 4.
    """
    arviz = _arviz()

    arr = _draws(draws)
    values = _per_dim(arr, arviz.rhat)
    note = ""
    if np.any(~np.isfinite(values)):
        note = "R-hat undefined (chains that never move)"
    elif np.any(values > threshold):
        note = f"R-hat {values.max():.3f} > {threshold}: the chains have not mixed"
        warnings.warn(note, stacklevel=2)
    return {"rhat": values, "note": note}


def mcse(draws: Any, method: str = "mean") -> np.ndarray:
    """Monte Carlo standard error of the mean (or ``"sd"``) per dimension (arviz ``mcse``).

    Shapes: ``draws`` ``(chains, draws[, dim])`` -> ``(dim,)``.

    Source: Vehtari et al. 2021, Sec. 4.4.
    """
    arviz = _arviz()

    if method not in ("mean", "sd"):
        raise ConfigError(f"MCSE method '{method}' is not mean or sd.", key="method")
    return _per_dim(_draws(draws), lambda a: arviz.mcse(a, method=method))
