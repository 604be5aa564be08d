"""Components that misbehave on purpose, for the robustness corpus (tests/robustness)."""

from __future__ import annotations

import math
import sys

import attrs
import torch

import quadriga
from quadriga import Sampler, Samples, Target, param


@attrs.define(kw_only=True)
class HalfNormal(Target):
    """N(0, I) in ``dimension`` dims restricted to x_0 > 1: log_prob is -inf elsewhere."""

    dimension: int = param(2, doc="dimension d")

    @property
    def dim(self) -> int:
        """d."""
        return self.dimension

    def log_prob(self, x):
        """Tensor[n, d] -> Tensor[n], -inf where x_0 <= 1."""
        lp = -0.5 * (x**2).sum(-1) - self.dimension * 0.5 * math.log(2 * math.pi)
        return torch.where(x[..., 0] > 1.0, lp, torch.full_like(lp, -math.inf))

    def score(self, x):
        """-x."""
        return -x


@attrs.define(kw_only=True)
class Exits(Sampler):
    """Calls ``sys.exit(code)`` when run."""

    code: int = param(3, doc="exit code")

    def sample(self, target, *, generator):
        """Exit."""
        sys.exit(self.code)


@attrs.define(kw_only=True)
class ExitsHard(Sampler):
    """Ends its process with ``os._exit(code)`` (no cleanup, nothing caught) the first time it runs.

    It runs first when ``once`` (a file path) does not exist yet, creating it; afterwards it draws
    ``num_samples`` from the target.
    """

    once: str = param("", doc="marker file: exit only while it does not exist")
    code: int = param(3, doc="exit code")
    num_samples: int = param(20, doc="draws")

    def sample(self, target, *, generator):
        """Exit hard once, then draw."""
        import os
        import pathlib

        if not pathlib.Path(self.once).exists():
            pathlib.Path(self.once).write_text("exited")
            os._exit(self.code)
        return Samples(x=target.sample(self.num_samples, generator=generator))


@attrs.define(kw_only=True)
class Tally(Sampler):
    """Appends one line to ``tally`` each time it runs, sleeps ``sleep`` s, then draws from the target."""

    tally: str = param("", doc="file to append to")
    sleep: float = param(0.0, doc="seconds to sleep")
    num_samples: int = param(20, doc="draws")

    def sample(self, target, *, generator):
        """Count, wait, draw."""
        import time

        with open(self.tally, "a", encoding="utf-8") as fh:
            fh.write("ran\n")
        time.sleep(self.sleep)
        return Samples(x=target.sample(self.num_samples, generator=generator))


@attrs.define(kw_only=True)
class Stubborn(Sampler):
    """Sleeps ``sleep`` s deaf to Ctrl-C (SIGINT ignored), as a long native call is; then draws."""

    sleep: float = param(0.0, doc="seconds to sleep with SIGINT ignored")
    num_samples: int = param(20, doc="draws")

    def sample(self, target, *, generator):
        """Ignore SIGINT, wait, restore the handler, draw."""
        import signal
        import time

        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            time.sleep(self.sleep)
        finally:
            signal.signal(signal.SIGINT, before)
        return Samples(x=target.sample(self.num_samples, generator=generator))


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the misbehaving components."""
    registry.add("target", "half-normal", "quadriga_robust:HalfNormal", summary="-inf outside x_0 > 1")
    registry.add("sampler", "exits", "quadriga_robust:Exits", summary="calls sys.exit")
    registry.add("sampler", "exits-hard", "quadriga_robust:ExitsHard", summary="calls os._exit once")
    registry.add("sampler", "tally", "quadriga_robust:Tally", summary="counts its runs")
    registry.add("sampler", "stubborn", "quadriga_robust:Stubborn", summary="ignores Ctrl-C while it sleeps")
