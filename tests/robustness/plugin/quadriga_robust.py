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


#: what torch's CPU allocator raises for a size no machine has (16 TB)
ALLOCATOR = (
    "[enforce fail at alloc_cpu.cpp:127] data. DefaultCPUAllocator: can't allocate memory: you tried "
    "to allocate 16000000000000 bytes. Error code 12 (Cannot allocate memory)"
)


@attrs.define(kw_only=True)
class Hungry(Sampler):
    """Raises the allocator's ``RuntimeError`` for ``num_chains`` above 1000 (as a real sampler would)."""

    num_chains: int = param(4, doc="number of chains")

    def sample(self, target, *, generator):
        """``Samples[num_chains, d]`` of zeros, or the allocator's error."""
        if self.num_chains > 1000:
            raise RuntimeError(ALLOCATOR)
        return Samples(x=torch.zeros(self.num_chains, target.dim))


@attrs.define(kw_only=True)
class Unprepared(Target):
    """N(0, I) in 2-D whose ``prepare`` fails as ``fail`` says: ``config``, ``memory`` or ``none``."""

    fail: str = param("none", doc="'config', 'memory' or 'none'")

    @property
    def dim(self) -> int:
        """2."""
        return 2

    def prepare(self, *, generator):
        """Refuse ``scale`` (a ConfigError naming only its key) or raise the allocator's error."""
        if self.fail == "config":
            raise quadriga.ConfigError("'scale' must be a positive number or a list of 2.", key="scale")
        if self.fail == "memory":
            raise RuntimeError(ALLOCATOR)

    def log_prob(self, x):
        """Tensor[n, 2] -> Tensor[n]."""
        return -0.5 * (x**2).sum(-1) - math.log(2 * math.pi)

    def score(self, x):
        """-x."""
        return -x


@quadriga.hookimpl
def quadriga_register(registry):
    """Register the misbehaving components."""
    registry.add("target", "half-normal", "quadriga_robust:HalfNormal", summary="-inf outside x_0 > 1")
    registry.add("sampler", "hungry", "quadriga_robust:Hungry", summary="runs out of memory")
    registry.add("target", "unprepared", "quadriga_robust:Unprepared", summary="prepare fails")
    registry.add("sampler", "exits", "quadriga_robust:Exits", summary="calls sys.exit")
    registry.add("sampler", "exits-hard", "quadriga_robust:ExitsHard", summary="calls os._exit once")
    registry.add("sampler", "tally", "quadriga_robust:Tally", summary="counts its runs")
    registry.add("sampler", "stubborn", "quadriga_robust:Stubborn", summary="ignores Ctrl-C while it sleeps")
