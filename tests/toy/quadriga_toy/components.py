"""Toy components with closed-form answers, for the core tests."""

from __future__ import annotations

import math
import time
from typing import ClassVar

import attrs
import torch

from quadriga import (
    Estimate,
    Estimator,
    Evaluator,
    Fitted,
    Learner,
    Metrics,
    Sampler,
    Samples,
    Target,
    named,
    param,
)
from quadriga.claims import Claim, Effect, Scale
from quadriga.progress import current_progress
from quadriga.validators import positive, positive_int


@attrs.define(kw_only=True)
class ToyNormal(Target):
    """N(mean, scale^2 I) in ``dim`` dimensions."""

    mean: float = param(0.0, doc="mean of every coordinate")
    scale: float = param(1.0, doc="standard deviation", validator=positive)
    dimension: int = param(2, doc="dimension d", validator=positive_int)

    @property
    def dim(self) -> int:
        """d."""
        return self.dimension

    def log_prob(self, x):
        """log N(x; mean, scale^2 I), Tensor[n, d] -> Tensor[n]."""
        z = (x - self.mean) / self.scale
        return -0.5 * (z**2).sum(-1) - self.dimension * math.log(self.scale * math.sqrt(2 * math.pi))

    def score(self, x):
        """-(x - mean) / scale^2."""
        return -(x - self.mean) / self.scale**2

    def sample(self, num_samples, *, generator):
        """Exact draws, Tensor[num_samples, d]."""
        return self.mean + self.scale * torch.randn(
            num_samples, self.dimension, generator=generator, dtype=torch.float64, device=generator.device
        )


@attrs.define(kw_only=True)
class ToyIID(Sampler):
    """Exact samples; ``fail`` raises, ``nan`` returns NaN, ``sleep`` waits (seconds)."""

    num_samples: int = param(100, doc="number of draws", validator=positive_int)
    fail: bool = param(False, doc="raise RuntimeError")
    nan: bool = param(False, doc="return NaN samples")
    sleep: float = param(0.0, doc="seconds to sleep")
    die_once: str = param("", doc="if set and this file does not exist: create it and SIGKILL this process")
    fail_once: str = param("", doc="if set and this file does not exist: create it and raise RuntimeError")

    def sample(self, target, *, generator):
        """Draw ``num_samples`` exact samples."""
        if self.fail:
            raise RuntimeError("asked to fail")
        if self.fail_once:
            import pathlib

            marker = pathlib.Path(self.fail_once)
            if not marker.exists():
                marker.write_text("failed")
                raise RuntimeError("asked to fail")
        if self.die_once:
            import os
            import pathlib
            import signal

            marker = pathlib.Path(self.die_once)
            if not marker.exists():
                marker.write_text("died")
                os.kill(os.getpid(), signal.SIGKILL)
        progress = current_progress()
        progress.start(self.num_samples)
        if self.sleep:
            time.sleep(self.sleep)
        x = target.sample(self.num_samples, generator=generator)
        progress.advance(self.num_samples)
        if self.nan:
            x[0, 0] = float("nan")
        return Samples(x=x, info={"score_evals": 0})


@attrs.define(kw_only=True)
class ToyWrap(Sampler):
    """Runs ``inner`` and scales its samples by ``factor`` (a nested component)."""

    inner: Sampler = param(doc="the sampler to run")
    factor: float = param(1.0, doc="multiplier")

    def sample(self, target, *, generator):
        """Samples of ``inner`` times ``factor``."""
        s = self.inner.sample(target, generator=generator)
        return Samples(x=s.x * self.factor, info=dict(s.info))


@attrs.define(kw_only=True)
class ToyMean(Estimator):
    """Mean of coordinate 0 with its standard error."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"data": (Samples,)}
    fail_once: str = param("", doc="if set and this file does not exist: create it and raise RuntimeError")

    def estimate(self, data, *, generator):
        """Sample mean and standard error of ``data.x[:, 0]``."""
        if self.fail_once:
            import pathlib

            marker = pathlib.Path(self.fail_once)
            if not marker.exists():
                marker.write_text("failed")
                raise RuntimeError("asked to fail")
        x = data.x[:, 0]
        return Estimate(value=float(x.mean()), stderr=float(x.std() / math.sqrt(len(x))))


@attrs.define(kw_only=True)
class ToyMeanError(Evaluator):
    """Absolute error of the sample mean of coordinate 0 against the target mean."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    plot: bool = param(False, doc="also make a figure")

    metrics_doc: ClassVar[dict[str, str]] = {
        "mean_error": "absolute error of the sample mean's first coordinate (units of x)"
    }

    def evaluate(self, subject, reference=None, *, generator):
        """``{subject}/mean_error``."""
        values = {
            f"{name}/mean_error": abs(float(s.x[:, 0].mean()) - reference.mean)
            for name, s in named(subject).items()
        }
        figures = {}
        if self.plot:
            from matplotlib.figure import Figure

            fig = Figure()
            fig.add_subplot().bar(list(values), list(values.values()))
            figures["bars"] = fig
        return Metrics(values=values, figures=figures)


@attrs.define(kw_only=True)
class ToyRows(Evaluator):
    """A per-item table with known values: row ``i`` of the ``k``-th subject is ``(k + 1) * values[i] + k``.

    ``tables["per_item"]`` holds ``num_items`` rows per subject ``{"subject", "item", "value"}``;
    the rows of every second subject are written in reverse order and their items shifted by
    ``key_offset`` (so a reader must pair by ``item``, not by position). The cells named in
    ``nonfinite`` (``"SUBJECT:ITEM"``, or ``"SUBJECT:ITEM:inf"``) hold NaN (or inf) instead.
    """

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"subject": (Samples,), "reference": (Target,)}
    values: list[float] = param(factory=lambda: [1.0, 4.0, 2.0, 8.0], doc="the per-item base values (cycled)")
    num_items: int = param(4, doc="rows per subject", validator=positive_int)
    key_offset: int = param(0, doc="added to the items of every second subject")
    nonfinite: list[str] = param(
        factory=list, doc='cells holding NaN: "SUBJECT:ITEM" ("SUBJECT:ITEM:inf": inf)'
    )

    metrics_doc: ClassVar[dict[str, str]] = {"rows": "number of rows written (count)"}

    def evaluate(self, subject, reference=None, *, generator):
        """``tables["per_item"]`` as described above, and ``values["rows"]``."""
        rows = []
        for k, name in enumerate(named(subject)):
            mine = [
                {
                    "subject": name,
                    "item": i + (self.key_offset if k % 2 else 0),
                    "value": (k + 1) * self.values[i % len(self.values)] + k,
                }
                for i in range(self.num_items)
            ]
            rows += mine[::-1] if k % 2 else mine
        for cell in self.nonfinite:
            subject_name, item, *inf = cell.split(":")
            for row in rows:
                if row["subject"] == subject_name and row["item"] == int(item):
                    row["value"] = float("inf") if inf else float("nan")
        return Metrics(values={"rows": float(len(rows))}, tables={"per_item": rows})


@attrs.define(kw_only=True)
class ToyCounter(Learner):
    """Logs ``loss = 1/(step+1)`` for ``num_steps`` steps; ``nan_at`` logs NaN at that step."""

    input_types: ClassVar[dict[str, tuple[type, ...]]] = {"task": (Target,)}
    num_steps: int = param(10, doc="steps", validator=positive_int)
    nan_at: int = param(-1, doc="step at which to log NaN (-1: never)")

    def fit(self, task, *, generator, progress):
        """Count."""
        progress.start(self.num_steps)
        history = {"loss": []}
        for step in range(self.num_steps):
            loss = float("nan") if step == self.nan_at else 1.0 / (step + 1)
            history["loss"].append(loss)
            progress.log(step, loss=loss)
            progress.advance()
        return Fitted(model=None, history=history, info={"steps": self.num_steps})


#: the toy sampler's mean is near zero: replicate i of ``draw`` is scored by ``check``
toy_claim = Claim(
    pipeline="toy-pipeline",
    arms=("draw",),
    metric=("check", "mean_error"),
    effect=Effect(quantity="absolute error of the sample mean", statistic="mean", relation="less", value=0.2),
    scales={
        "smoke": Scale(replicates=3, overrides=("stage.draw.num_samples=200",)),
        "paper": Scale(replicates=5, overrides=("stage.draw.num_samples=2000",)),
    },
)
