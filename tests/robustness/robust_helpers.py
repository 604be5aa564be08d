"""Shared pieces of the robustness corpus: the good toy pipeline, a CLI outcome, the cleanliness check."""

from __future__ import annotations

import attrs

GOOD = """\
[pipeline]
name = "good"
seed = 1

[task.normal]
use = "toy-normal"

[stage.draw]
use = "toy-iid"
inputs = { target = "normal" }
num_samples = 50

[stage.check]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["draw"], reference = "normal" }
"""


@attrs.define
class Outcome:
    """What one CLI call gave: exit code, stdout, stderr."""

    rc: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """stdout and stderr together."""
        return self.out + self.err


def assert_clean(o: Outcome, rc: int = 2, *needles: str) -> None:
    """Exit code ``rc``, no traceback or internal error, one paragraph naming every needle."""
    assert o.rc == rc, (o.rc, o.text)
    assert "Traceback" not in o.text and "internal error" not in o.text, o.text
    if rc == 2:
        message = o.err.strip()
        assert message, o.text
        assert "\n\n" not in message, message
    for n in needles:
        assert n in o.text, (n, o.text)
