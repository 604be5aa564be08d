"""Progress reporting and metric streaming for long stages.

The runner gives each stage a :class:`StageProgress`. Learners receive it as
``progress``; any other component reaches the current one with
:func:`current_progress` (outside a run it is a silent no-op, so components
work unchanged in a notebook)::

    progress = current_progress()
    progress.start(total=num_steps, description="MALA")
    for step in range(num_steps):
        ...
        progress.advance()
        if step % 100 == 0:
            progress.log(step, acceptance_rate=acc)

``log`` streams one JSON line per call to the run's ``metrics.jsonl`` and raises
:class:`~quadriga.errors.NonFiniteError` (naming the stage and step) on NaN or inf.

Where the output is a log file or a pipe rather than a terminal, :class:`ProgressLines` turns the
same updates into an occasional plain line (``quadriga run`` uses it)::

      stage train: 3000/6000 (50%) 41 s elapsed, ~41 s left
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from quadriga.errors import NonFiniteError

__all__ = ["ProgressLines", "StageProgress", "current_progress", "format_seconds", "use_progress"]


class StageProgress:
    """Progress of one stage: a bar on the terminal and a metrics stream on disk.

    Args:
        stage: the stage name (used in errors and in ``metrics.jsonl`` records).
        on_log: called with each record dict (the runner appends it to ``metrics.jsonl``).
        on_update: called as ``on_update(completed, total, description)`` to move a bar.
    """

    def __init__(
        self,
        stage: str = "",
        *,
        on_log: Callable[[dict[str, Any]], None] | None = None,
        on_update: Callable[[float, float | None, str | None], None] | None = None,
    ) -> None:
        self.stage = stage
        self._on_log, self._on_update = on_log, on_update
        self.total: float | None = None
        self.completed = 0.0
        self.description: str | None = None

    def start(self, total: float | None, description: str | None = None) -> None:
        """Begin (or restart) the bar with ``total`` units of work (``None`` if unknown)."""
        self.total, self.completed, self.description = total, 0.0, description
        self._push()

    def advance(self, amount: float = 1) -> None:
        """Mark ``amount`` more units of work done."""
        self.completed += amount
        self._push()

    def _push(self) -> None:
        if self._on_update is not None:
            self._on_update(self.completed, self.total, self.description)

    def log(self, step: int | None = None, **metrics: Any) -> None:
        """Stream one record of scalar metrics (e.g. ``loss``, ``episode_return``) at ``step``.

        Raises:
            NonFiniteError: when a value is NaN or infinite; the records already
                streamed stay on disk.
        """
        record: dict[str, Any] = {"stage": self.stage}
        if step is not None:
            record["step"] = int(step)
        for key, value in metrics.items():
            if hasattr(value, "item"):
                value = value.item()
            record[key] = value
        if self._on_log is not None:
            self._on_log(record)
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise NonFiniteError(self.stage, f"logged metric '{key}'", step)


def format_seconds(seconds: float) -> str:
    """A duration for a progress line: ``"41 s"``, ``"3 min 05 s"``, ``"2 h 07 min"``.

    Args:
        seconds: a non-negative duration in seconds (negative values print as 0 s).
    """
    s = max(0, round(seconds))
    if s < 100:
        return f"{s} s"
    if s < 6000:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3g}"


class ProgressLines:
    """A stage's progress as occasional plain lines, for logs and pipes (no terminal to draw on).

    Called as ``on_update(completed, total, description)`` (the signature
    :class:`StageProgress` pushes to). A line is written when at least ``min_interval``
    seconds have passed since the last one (or since the stage began) *and* the known total
    has crossed another 10 % step, or when ``max_interval`` seconds have passed whatever the
    count; so a stage shorter than ``min_interval`` writes nothing here and a long one at most
    one line per ``min_interval`` and, with a known total, about one per 10 %::

          stage train: 3000/6000 (50%) 41 s elapsed, ~41 s left
          stage collect: 1200 done, 31 s elapsed                  (no total known)

    The remaining time is extrapolated from the rate since the last ``start`` (a count
    restarting from 0 starts a new phase). Lines are cut to ``width`` columns: the description
    is left out first, then the stage name is shortened with an ellipsis.

    Args:
        stage: the stage name.
        write: called with each line (no trailing newline).
        min_interval: seconds, the least wall time between two lines.
        max_interval: seconds after which a line is written even without a new 10 % step.
        clock: a monotonic clock in seconds (tests pass a fake one).
        width: the most columns a line takes.
        prefix: written before the name (``"stage "``; ``quadriga sweep`` uses ``""``).
        unit: written after the count, e.g. ``"runs"`` (``  sweep: 3/12 runs (25%) ...``).

    Raises:
        ValueError: ``min_interval`` negative or above ``max_interval``, or ``width`` below 40.
    """

    def __init__(
        self,
        stage: str,
        write: Callable[[str], None],
        *,
        min_interval: float = 10.0,
        max_interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
        width: int = 80,
        prefix: str = "stage ",
        unit: str = "",
    ) -> None:
        if not 0 <= min_interval <= max_interval:
            raise ValueError(f"need 0 <= min_interval <= max_interval, got {min_interval}, {max_interval}")
        if width < 40:
            raise ValueError(f"width must be at least 40 columns, got {width}")
        self.stage, self.write, self.clock, self.width = stage, write, clock, width
        self.prefix, self.unit = prefix, f" {unit}" if unit else ""
        self.min_interval, self.max_interval = min_interval, max_interval
        self.began = self._last_line = self._phase_began = clock()
        self._last_completed = 0.0
        self._last_step = 0
        self.lines = 0

    def __call__(self, completed: float, total: float | None, description: str | None) -> None:
        """Take one update; write a line if one is due."""
        now = self.clock()
        if completed < self._last_completed or completed == 0:  # start() was called again
            self._phase_began, self._last_step = now, 0
        self._last_completed = completed
        since = now - self._last_line
        known = total is not None and total > 0
        step = min(10, int(10 * completed / total)) if known and total else 0
        due = since >= self.max_interval or (since >= self.min_interval and known and step > self._last_step)
        if not due or (known and total is not None and completed >= total):
            return  # the caller prints the final line of a finished stage
        self._last_line, self._last_step = now, step
        self.lines += 1
        self.write(self.line(completed, total, description, now))

    def line(self, completed: float, total: float | None, description: str | None, now: float) -> str:
        """The line for ``completed`` of ``total`` at clock time ``now`` (fitted to ``width``)."""
        name = self.stage if not description or description == self.stage else f"{self.stage} ({description})"
        elapsed = format_seconds(now - self.began)
        if total is not None and total > 0:
            count = f"{_count(completed)}/{_count(total)}{self.unit}"
            rest = f": {count} ({100 * completed / total:.0f}%) {elapsed} elapsed"
            phase = now - self._phase_began
            if completed > 0 and phase > 0:
                rest += f", ~{format_seconds(phase * (total - completed) / completed)} left"
        else:
            rest = f": {_count(completed)}{self.unit} done, {elapsed} elapsed"
        room = self.width - len(f"  {self.prefix}") - len(rest)
        if len(name) > room:  # the description goes first, then the name is shortened
            name = self.stage
        if len(name) > room:
            name = name[: max(1, room - 1)] + "\N{HORIZONTAL ELLIPSIS}"
        return f"  {self.prefix}{name}{rest}"[: self.width]


_CURRENT: contextvars.ContextVar[StageProgress | None] = contextvars.ContextVar(
    "quadriga_progress", default=None
)


def current_progress() -> StageProgress:
    """The progress of the stage now running, or a silent one outside a run."""
    progress = _CURRENT.get()
    return progress if progress is not None else StageProgress()


@contextlib.contextmanager
def use_progress(progress: StageProgress) -> Iterator[StageProgress]:
    """Make ``progress`` the one :func:`current_progress` returns inside the block (yields it)."""
    token = _CURRENT.set(progress)
    try:
        yield progress
    finally:
        _CURRENT.reset(token)
