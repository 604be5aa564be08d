"""``torch.compile`` for multi-step kernels, with one clean fallback to eager: the one owner.

A Markov kernel that sets ``compile = true`` runs K transitions per call of one compiled
function, so that a chain of a few dimensions stops paying Python's dispatch of some 40 small
tensor operations per step. :func:`compiled` wraps a *pure* function of tensors (no random draws
inside, no mutation of its inputs: the random numbers are drawn outside by the caller, in the
order the eager kernel draws them, so the compiled chain consumes the generator exactly as the
eager one) and returns a callable that

- runs the function through ``torch.compile`` (Ansel et al. 2024, "PyTorch 2: Faster Machine
  Learning Through Dynamic Python Bytecode Transformation and Graph Compilation", ASPLOS),
- and, when the compiler is unavailable here (no ``torch.compile``, a Python version dynamo does
  not support, no C++ compiler) or fails on the function, runs it eagerly instead: the same
  inputs give the same chain, because the function is pure, and one warning line says so, once
  per process.

How a plugin kernel opts in: subclass :class:`quadriga_std.samplers.mcmc.MCMCKernel` and write
its transition as two methods instead of ``transition``: ``draw(state, generator)`` returns the
random tensors of one transition (depending only on the shapes and dtype of ``state``) and
``step(state, target, draws)`` is the deterministic rest. ``MCMCKernel.sample`` then runs
``compile_steps`` steps per compiled call (see ``MCMCKernel.run_compiled``); nothing else is
needed. Numerics: inductor generates its own C++ loops for the element-wise parts and
reductions, so the compiled chain equals the eager one to rounding (float64: relative
differences of order 1e-15 per step, which a contracting chain does not amplify), not bit for
bit; an accept decision flips only where ``log u`` and the log acceptance ratio agree to
rounding (probability of order 1e-15 per step).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["INDUCTOR_OPTIONS", "compiled", "compiler_problem", "reset_fallback"]

#: why the compiled path fell back to eager in this process (None: it has not)
_FALLBACK: list[str] = []


def compiler_problem() -> str | None:
    """Why ``torch.compile`` cannot run here, or None when it looks usable (not yet tried).

    Checks that ``torch.compile`` exists and that dynamo supports this Python; a missing C++
    compiler only shows on the first compiled call, which :func:`compiled` catches.
    """
    import torch

    if not hasattr(torch, "compile"):
        return f"torch {torch.__version__} has no torch.compile"
    try:
        import torch._dynamo as dynamo

        if not dynamo.is_dynamo_supported():
            import sys

            return f"torch.compile does not support Python {sys.version.split()[0]}"
    except Exception as exc:  # an import failure is one more reason to run eagerly
        return f"torch._dynamo cannot be imported ({type(exc).__name__}: {exc})"
    return None


def _fall_back(reason: str) -> None:
    """Record that the compiled path runs eagerly in this process; warn the first time only."""
    if not _FALLBACK:
        first = reason.strip().splitlines()[0] if reason.strip() else "unknown error"
        warnings.warn(
            f"compile = true: torch.compile is not usable here ({first[:160]}); the kernels run "
            "eagerly (same chains, slower).",
            RuntimeWarning,
            stacklevel=3,
        )
    _FALLBACK.append(reason)


def reset_fallback() -> None:
    """Forget an earlier fallback, so that the next call tries the compiler again (for tests)."""
    _FALLBACK.clear()


#: inductor options of every compiled function: ``cpp_wrapper`` generates the code that allocates
#: the buffers and calls the kernels in C++ instead of Python, which at a few dimensions is most of
#: a compiled call's time (MALA, d = 10, 16 steps per call: about 130 instead of 300 us a call)
INDUCTOR_OPTIONS: dict[str, Any] = {"cpp_wrapper": True}

_CACHE: dict[Callable[..., Any], Callable[..., Any]] = {}


def compiled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` through ``torch.compile`` where that works, else ``fn`` itself (one warning, once).

    Args:
        fn: a pure function (no random draws, no mutation of its arguments), so that running it
            again eagerly after a failed compilation gives the result the compiled call would.

    Returns:
        A callable with ``fn``'s signature. The compiled function is built once per ``fn`` per
        process (``torch.compile(fn, dynamic=False, options=INDUCTOR_OPTIONS)``: one
        specialisation per shape and per constant such as a step size, built on the first call
        with them); compilation happens on the first call and its time is that call's.

    Raises:
        Whatever ``fn`` raises when run eagerly; compiler errors are never raised (they select
        the eager path).
    """
    if fn in _CACHE:
        return _CACHE[fn]
    state: dict[str, Any] = {"fn": None}

    def first_call(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():  # importing inductor warns about torch's own internals
            warnings.simplefilter("ignore", DeprecationWarning)
            problem = compiler_problem()
            if problem is not None:
                raise RuntimeError(problem)
            import torch

            state["fn"] = torch.compile(fn, dynamic=False, options=INDUCTOR_OPTIONS)
            return state["fn"](*args, **kwargs)

    def call(*args: Any, **kwargs: Any) -> Any:
        if _FALLBACK:
            return fn(*args, **kwargs)
        try:
            return (first_call if state["fn"] is None else state["fn"])(*args, **kwargs)
        except Exception as exc:  # any compiler failure selects the eager path
            out = fn(*args, **kwargs)  # an error of fn itself is raised here, as fn's own
            _fall_back(f"{type(exc).__name__}: {exc}")
            return out

    call.__doc__ = fn.__doc__
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    _CACHE[fn] = call
    return call
