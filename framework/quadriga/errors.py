"""Exceptions raised by quadriga.

Every error a user can cause derives from :class:`QuadrigaError` and carries a
message meant to be read on a terminal: it names the file, the table
(``stage.srmc``) and the key at fault where there is one, and suggests the fix.
The CLI prints these without a traceback (exit code 2 for configuration and
usage errors, 1 for a run that failed) unless ``--debug`` is given.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "ConfigError",
    "DivergenceError",
    "DuplicateComponentError",
    "NonFiniteError",
    "PluginImportInterrupted",
    "QuadrigaError",
    "RunInterrupted",
    "StageError",
    "TaskError",
    "Terminated",
    "UnknownComponentError",
    "memory_asked",
    "out_of_memory_text",
    "sigterm_interrupts",
    "suggest",
]


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """Return a ``" did you mean ...?"`` hint for ``name`` among ``candidates``.

    Args:
        name: the name the user typed.
        candidates: the valid names.
        n: at most this many close matches are shown.

    Returns:
        ``" Did you mean 'a' or 'b'?"`` or the empty string when nothing is close.
        Uses :func:`difflib.get_close_matches` (cutoff 0.6), as gymnasium does, on lowercased
        names, so ``"RWM"`` suggests ``'rwm'``; the candidates are shown as spelled.
    """
    import difflib  # only when a name is unknown: it imports heapq, which start-up does not need

    names = sorted(set(candidates))
    by_lower: dict[str, list[str]] = {}
    for c in names:
        by_lower.setdefault(c.lower(), []).append(c)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    matches = [c for low in close for c in by_lower[low]][:n]
    if not matches:
        return ""
    quoted = [f"'{m}'" for m in matches]
    joined = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" Did you mean {joined}?"


class QuadrigaError(Exception):
    """Base class of every error quadriga raises on purpose.

    ``exit_code`` is what the CLI returns: 2 for usage and configuration
    errors (the default), 1 for a run that started and failed.
    """

    exit_code = 2


class ConfigError(QuadrigaError):
    """A pipeline file, an override or a component's parameters are invalid.

    Args:
        message: what is wrong and how to fix it.
        file: the pipeline file (or ``"--set"`` for a command-line override).
        table: the TOML table at fault, e.g. ``"stage.srmc"``.
        key: the key at fault within the table, e.g. ``"alpha"``; a command-line flag such as
            ``"--seeds"`` is shown as ``option --seeds``.
    """

    def __init__(
        self, message: str, *, file: str | None = None, table: str | None = None, key: str | None = None
    ) -> None:
        self.file, self.table, self.key, self.reason = file, table, key, message
        where = []
        if file:
            where.append(str(file))
        if table:
            where.append(f"[{table}]")
        if key and key.startswith("--"):
            where.append(f"option {key}")  # a command-line flag, not a TOML key
        elif key:
            where.append(f"key '{key}'")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message)


class UnknownComponentError(ConfigError):
    """No component of that kind and name is registered (close matches are suggested)."""


class DuplicateComponentError(QuadrigaError):
    """Two distributions registered the same kind and name; the message names both."""


class DivergenceError(QuadrigaError):
    """A sampler's or learner's iterates blew up (overflow): its output is refused, not handed on.

    Raised by a component while it runs; the runner reports it as the failure of its stage (exit 1).
    """

    exit_code = 1


class StageError(QuadrigaError):
    """A stage raised while running; the run is marked failed and earlier stages stay saved.

    Args:
        stage: the stage name.
        message: what went wrong.
        details: the traceback of the exception the component raised, when there was one (the
            run writes it to ``error.txt``); ``None`` otherwise.
    """

    exit_code = 1

    def __init__(self, stage: str, message: str, *, details: str | None = None) -> None:
        self.stage, self.details = stage, details
        super().__init__(f"stage '{stage}' failed: {message}")


class TaskError(QuadrigaError):
    """A task's ``prepare`` raised at the start of a run; the run is marked failed.

    Args:
        task: the task's table, e.g. ``"task.gmm"``.
        message: what went wrong.
        details: the traceback of the exception ``prepare`` raised (the run writes it to
            ``error.txt``).
    """

    exit_code = 1

    def __init__(self, task: str, message: str, *, details: str | None = None) -> None:
        self.task, self.details = task, details
        super().__init__(f"[{task}] could not be prepared: {message}")


class NonFiniteError(StageError):
    """A stage produced NaN or inf (in its artifact, or in a metric it logged at ``step``).

    Args:
        stage: the stage's name.
        what: where the value was found (``"logged metric 'loss'"``).
        step: the step at which it was logged, if any.
        advice: what to try, appended to the message (the raiser knows its component best).
    """

    #: the advice when the raiser gives none: the usual causes of a diverging iteration
    ADVICE = "Lower the step size or learning rate, or check the inputs."

    def __init__(self, stage: str, what: str, step: int | None = None, advice: str = ADVICE) -> None:
        self.step = step
        at = f" at step {step}" if step is not None else ""
        super().__init__(
            stage,
            f"non-finite value (NaN or inf) in {what}{at}; "
            f"results computed so far are kept in the run directory. {advice}".rstrip(),
        )


class PluginImportInterrupted(KeyboardInterrupt):
    """Ctrl-C arrived while a plugin module was being imported (a plugin that hangs at import).

    A :class:`KeyboardInterrupt`, so whatever handles Ctrl-C handles it too; the command line adds
    the plugin's name and how to disable it.

    Args:
        plugin: the entry-point name (what ``--disable`` takes).
        target: the entry point's module.
        distribution: the distribution that declares it.
    """

    def __init__(self, plugin: str, target: str, distribution: str) -> None:
        self.plugin, self.target, self.distribution = plugin, target, distribution
        super().__init__(f"interrupted while importing plugin '{plugin}' ({target}) from '{distribution}'")

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        """Pickle with the constructor's arguments."""
        return type(self), (self.plugin, self.target, self.distribution)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped a run; the run is marked interrupted and its finished stages are saved.

    A :class:`KeyboardInterrupt`, so that whatever handles Ctrl-C handles it too; raised by
    :func:`quadriga.runs.execute` from the interrupt it caught.

    Args:
        run_dir: the run directory (``quadriga run --resume RUN_DIR`` continues it).
        exit_code: what the command line returns: 130 for Ctrl-C, 143 for SIGTERM.
    """

    def __init__(self, run_dir: Path, exit_code: int = 130) -> None:
        self.run_dir, self.exit_code = Path(run_dir), exit_code
        super().__init__(f"interrupted; finished stages are saved in {self.run_dir}")

    def __reduce__(self) -> tuple[type, tuple[Path, int]]:
        """Pickle with the constructor's arguments (a sweep sends errors between processes)."""
        return type(self), (self.run_dir, self.exit_code)


class Terminated(KeyboardInterrupt):
    """SIGTERM reached a command (``timeout``, ``kill``, a batch system's time limit).

    A :class:`KeyboardInterrupt`, so that it is handled as Ctrl-C is (a run is marked interrupted
    with its finished stages kept, a sweep's jobs are cancelled); the command line then exits with
    :attr:`exit_code`, 128 + 15.
    """

    exit_code = 143


def _raise_terminated(signum: int, frame: Any) -> None:
    """The SIGTERM handler of :func:`sigterm_interrupts`: raise :class:`Terminated` once.

    Raises:
        Terminated: always; later SIGTERMs are ignored, so the cleanup it starts is not cut short.
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Inside the block, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the main thread.

    So what handles Ctrl-C (a run marking itself interrupted and keeping its finished stages, a
    sweep cancelling its jobs) handles ``kill``, ``timeout`` and a batch system's time limit too.
    The handler before the block is restored after it. Off the main thread (where Python cannot
    install signal handlers) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


#: "... you tried to allocate 16000000000000 bytes" (torch's CPU allocator) and
#: "Tried to allocate 2.00 GiB" (its CUDA one)
_ASKED_BYTES = re.compile(r"allocate (\d+) bytes")
_ASKED_UNITS = re.compile(r"allocate ([\d.]+) ?([KMGT])i?B", re.IGNORECASE)


def out_of_memory_text(exc: BaseException, subject: str) -> str | None:
    """The plain message for an allocation failure of ``subject`` (``"it"``, ``"building MALA"``).

    Returns:
        ``"<subject> needs more memory than this machine can give (N GiB asked for). Lower ..."``,
        or ``None`` when ``exc`` is not an allocation failure (:func:`memory_asked`).
    """
    size = memory_asked(exc)
    if size is None:
        return None
    return (
        f"{subject} needs more memory than this machine can give{size}. Lower the parameter that sets "
        "a size (num_chains, num_samples, dim, widths), or run where there is more memory."
    )


def memory_asked(exc: BaseException) -> str | None:
    """Whether ``exc`` is an allocation failure, and how much it asked for, as a message part.

    Recognises ``MemoryError`` and the allocators' ``RuntimeError`` texts (torch on CPU: "[enforce
    fail at alloc_cpu.cpp:127] ... DefaultCPUAllocator: can't allocate memory: you tried to allocate
    N bytes"; CUDA: "CUDA out of memory. Tried to allocate 2.00 GiB").

    Returns:
        ``" (N GiB asked for)"`` when the size is stated, ``""`` when it is not, ``None`` when
        ``exc`` is not an allocation failure.
    """
    text = str(exc)
    if not (isinstance(exc, MemoryError) or ("allocate" in text and "memory" in text.lower())):
        return None
    asked = _ASKED_BYTES.search(text)
    if asked:
        return f" ({int(asked.group(1)) / 2**30:,.0f} GiB asked for)"
    units = _ASKED_UNITS.search(text)
    if units:
        power = "KMGT".index(units.group(2).upper()) + 1
        return f" ({float(units.group(1)) * 1024**power / 2**30:,.1f} GiB asked for)"
    return ""
