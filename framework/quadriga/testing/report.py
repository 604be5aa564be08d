"""What the checks raise and return: :class:`CheckFailed`, :class:`CheckSkipped`, :class:`CheckReport`, ..."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    pass


CHECKS = (
    "build",
    "config",
    "bad-params",
    "param-names",
    "docstring",
    "run",
    "output",
    "determinism",
    "stateless",
)


class CheckInputsUnavailable(Exception):
    """The check cannot make inputs for the component: declare ``check_inputs`` or pass ``inputs=``."""


class CheckFailed(AssertionError):
    """A conformance check failed; the message names the component, the check and each problem.

    Attributes:
        problems: the problems found, one sentence each.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems) or [message]


class CheckSkipped(Exception):
    """A check does not apply to the component (or a check it needs failed); the message says why."""


class ComponentCheckError(AssertionError):
    """One or more conformance checks failed.

    Attributes:
        failures: ``{check name: message}``.
    """

    def __init__(self, kind: str, name: str, failures: dict[str, str]) -> None:
        self.failures = dict(failures)
        lines = "\n".join(f"  [{check}] {msg}" for check, msg in failures.items())
        super().__init__(f"{kind} '{name}' failed {len(failures)} conformance check(s):\n{lines}")


@attrs.define
class CheckReport:
    """What :func:`check_component` returns when every check passed.

    Attributes:
        kind: the component's kind.
        name: its registered name.
        passed: names of the checks that ran and passed.
        skipped: ``{check: reason}`` for checks not run.
        artifact: the artifact of the first run (``None`` for tasks).
        pipeline: the pipeline dict the component ran in (``None`` for tasks).
    """

    kind: str
    name: str
    passed: list[str] = attrs.field(factory=list)
    skipped: dict[str, str] = attrs.field(factory=dict)
    artifact: Any = None
    pipeline: dict[str, Any] | None = None

    def summary(self) -> str:
        """One line, ``"N run / M skipped / K failed"`` (K is 0: a report means every check passed)."""
        return f"{len(self.passed)} run / {len(self.skipped)} skipped / 0 failed"
