"""Writing one quadriga run as one TensorBoard event directory, through :class:`tensorboardX.SummaryWriter`.

Where: ``<run dir>/tensorboard/`` by default, so a sweep's runs each have theirs under the sweep
directory (``<sweep dir>/runs/<run>/tensorboard``) and ``tensorboard --logdir <sweep dir>`` shows them
side by side, named by their settings. When ``QUADRIGA_TENSORBOARD_DIR`` is set, a run writes to
``$QUADRIGA_TENSORBOARD_DIR/<pipeline>/<run dir name>`` instead (one root for many runs).

What is written:

- scalars: each streamed record (``progress.log(step, loss=...)``) as ``<stage>/<key>`` at its
  step; each evaluator value as ``<stage>/<subject>/<metric>``, sampler diagnostics as
  ``<stage>/acceptance_rate`` and so on, an estimate and its standard error and
  ``<stage>/seconds``, at step 0 (a run's final numbers);
- text: ``pipeline``, the resolved ``pipeline.toml`` (as a code block), and ``status``, how the run
  ended (with the error of a failed run);
- images: each PNG figure of the run as ``figures/<file name>``.

Source: the TensorBoard event format (``tensorboard.compat.proto.event_pb2``), written by
tensorboardX (https://github.com/lanpa/tensorboardX).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import attrs

__all__ = ["DIR_ENV", "TensorBoardRun", "event_dir", "stage_numbers"]

#: a root for the event directories of every run (default: each run's own directory)
DIR_ENV = "QUADRIGA_TENSORBOARD_DIR"


def event_dir(run: Any) -> Path:
    """Where ``run`` writes its event file: ``<run dir>/tensorboard`` or under :data:`DIR_ENV`."""
    root = os.environ.get(DIR_ENV)
    if root:
        return Path(root) / run.pipeline.name / Path(run.dir).name
    return Path(run.dir) / "tensorboard"


def _numbers(values: dict[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in values.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
    }


def stage_numbers(stage: str, artifact: Any, seconds: float) -> dict[str, float]:
    """The finite numbers of a finished stage, as ``{"<stage>/<key>": value}``.

    The numbers are those the artifact reads from its own summary
    (:meth:`quadriga.artifacts.Artifact.scalars`: ``Metrics`` every value, ``Samples`` the
    diagnostics in ``info`` and ``num_samples``/``dim``, ``Estimate`` ``estimate`` and
    ``estimate_stderr``, ``Fitted`` its ``final`` numbers), and always ``seconds`` (wall clock).
    Non-finite values are left out.
    """
    values: dict[str, Any] = {"seconds": seconds, **type(artifact).scalars(artifact.summary())}
    return {f"{stage}/{k}": v for k, v in _numbers(values).items()}


@attrs.define(eq=False)
class TensorBoardRun:
    """One open event file mirroring a quadriga run (built by :meth:`start`)."""

    writer: Any
    run_dir: Path
    logdir: Path

    @classmethod
    def start(cls, run: Any) -> TensorBoardRun:
        """Open the event directory and write the resolved pipeline (``pipeline.toml``'s text) as text.

        Raises:
            ConfigError: the event directory, or a directory between the run (or
                ``QUADRIGA_TENSORBOARD_DIR``) and it, is a symbolic link: nothing is written.
        """
        from tensorboardX import SummaryWriter  # type: ignore[import-untyped]

        from quadriga.fileio import refuse_symlinks

        logdir = event_dir(run)
        # never through a link: a copied or tampered run directory could point it anywhere
        root = os.environ.get(DIR_ENV)
        refuse_symlinks(logdir, root=Path(root) if root else Path(run.dir))
        logdir.mkdir(parents=True, exist_ok=True)
        writer = SummaryWriter(logdir=str(logdir), flush_secs=10)
        import tomli_w

        text = tomli_w.dumps(run.pipeline.resolved())  # what the run saves as pipeline.toml
        # TensorBoard's text panel renders markdown: indented by four spaces, the TOML is a code block
        writer.add_text("pipeline", "\n".join("    " + line for line in text.splitlines()), 0)
        return cls(writer, Path(run.dir), logdir)

    def log_step(self, stage: str, record: dict[str, Any]) -> None:
        """One streamed record: its numbers as ``<stage>/<key>`` at ``record["step"]`` (0 if absent)."""
        step = int(record.get("step", 0))
        values = {k: v for k, v in record.items() if k not in ("stage", "step")}
        for key, value in _numbers(values).items():
            self.writer.add_scalar(f"{stage}/{key}", value, step)

    def log_stage(self, stage: str, artifact: Any, seconds: float) -> None:
        """A finished stage: its numbers (:func:`stage_numbers`) at step 0."""
        for key, value in stage_numbers(stage, artifact, seconds).items():
            self.writer.add_scalar(key, value, 0)

    def end(self, status: str, error: BaseException | None) -> None:
        """Write the run's PNG figures as images and its status as text; flush and close."""
        try:
            import numpy as np
            from PIL import Image

            for path in sorted(self.run_dir.glob("*.png")):
                with Image.open(path) as image:
                    pixels = np.asarray(image.convert("RGB"))  # uint8[H, W, 3]
                self.writer.add_image(f"figures/{path.stem}", pixels, 0, dataformats="HWC")
            text = status if error is None else f"{status}: {type(error).__name__}: {error}"
            self.writer.add_text("status", text, 0)
        finally:
            self.writer.close()
