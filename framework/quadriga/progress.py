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
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable
from types import TracebackType
from typing import Any

from quadriga.errors import NonFiniteError

__all__ = ["StageProgress", "current_progress", "use_progress"]


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


_CURRENT: contextvars.ContextVar[StageProgress | None] = contextvars.ContextVar(
    "quadriga_progress", default=None
)


def current_progress() -> StageProgress:
    """The progress of the stage now running, or a silent one outside a run."""
    progress = _CURRENT.get()
    return progress if progress is not None else StageProgress()


class use_progress:
    """Context manager making ``progress`` the one :func:`current_progress` returns."""

    def __init__(self, progress: StageProgress) -> None:
        self.progress = progress
        self._token: contextvars.Token[StageProgress | None] | None = None

    def __enter__(self) -> StageProgress:
        """Make the progress current; returns it."""
        self._token = _CURRENT.set(self.progress)
        return self.progress

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Restore the progress that was current before."""
        if self._token is not None:
            _CURRENT.reset(self._token)
