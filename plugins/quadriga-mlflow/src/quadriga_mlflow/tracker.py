"""Logging one quadriga run as one MLflow run, through :class:`mlflow.MlflowClient`.

Where: ``MLFLOW_TRACKING_URI`` (e.g. ``sqlite:////abs/path/mlflow.db``, ``http://host:5000``, or
a file store ``file:///abs/path/mlruns``, which MLflow 3 accepts only with
``MLFLOW_ALLOW_FILE_STORE=true``); when it is not set, :data:`DEFAULT_URI`, an SQLite database
``mlflow.db`` in the working directory (artifacts under ``./mlruns``), MLflow's recommended local
store. The experiment is the pipeline's name unless ``QUADRIGA_MLFLOW_EXPERIMENT`` names another;
it is created when missing.

What is logged:

- parameters: every key of the resolved pipeline (``pipeline.toml``), flattened with dots
  (``stage.mala.step_size = 0.1``, ``pipeline.seed = 0``), values as TOML writes them;
- metrics: each evaluator value as ``<stage>/<subject>/<metric>``, sampler diagnostics as
  ``<stage>/acceptance_rate`` and so on, an estimate and its standard error, and
  ``<stage>/seconds``; MLflow's key rules allow no ``[``/``]``, so ``mala[0]`` becomes ``mala.0``;
- per-step metrics: every ``progress.log(step, loss=...)`` record as ``<stage>/<key>`` at its step;
- artifacts: the run's figures under ``figures/``, and ``manifest.json``, ``pipeline.toml``,
  ``results.json`` and ``status.json``;
- tags: ``quadriga.run_dir``, ``quadriga.pipeline``, ``quadriga.version``; status FINISHED,
  FAILED or KILLED (interrupted) as the run ended.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import attrs

__all__ = [
    "DEFAULT_URI",
    "PARENT_ENV",
    "MlflowTracker",
    "SweepTracker",
    "announce",
    "flatten_params",
    "metric_key",
    "summary_metrics",
    "tracking_uri",
]

#: set during a sweep to the parent run's id; the sweep's runs are created as its children
PARENT_ENV = "QUADRIGA_MLFLOW_PARENT_RUN"
#: the experiment of every run (default: the pipeline's name)
EXPERIMENT_ENV = "QUADRIGA_MLFLOW_EXPERIMENT"

#: the store used when ``MLFLOW_TRACKING_URI`` is not set
DEFAULT_URI = "sqlite:///mlflow.db"

_BAD = re.compile(r"[^A-Za-z0-9_\-. /:]")


def metric_key(*parts: str) -> str:
    """An MLflow metric or parameter key from parts joined by ``/`` (``mala[0]`` -> ``mala.0``)."""
    key = "/".join(p for p in parts if p)
    key = re.sub(r"\[(\d+)\]", r".\1", key)
    return _BAD.sub("_", key)


def flatten_params(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"stage": {"mala": {"step_size": 0.1}}}`` -> ``{"stage.mala.step_size": "0.1"}``.

    Strings are logged as they are (``"normal"`` -> ``normal``, so MLflow's search filters
    ``params.`stage.m.init` = 'normal'`` match); every other value is written in TOML
    (``[0.1, 0.5]``, ``true``, ``{ target = "t" }``).
    """
    import tomli_w

    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten_params(value, name))
            continue
        if isinstance(value, str):
            out[metric_key(*name.split("/"))] = value
            continue
        try:
            text = tomli_w.dumps({"v": value}).split("=", 1)[1].strip()
        except (TypeError, ValueError):
            text = str(value)
        out[metric_key(*name.split("/"))] = text
    return out


def tracking_uri() -> str:
    """``MLFLOW_TRACKING_URI`` when set, else :data:`DEFAULT_URI`.

    Also quiets the store's set-up chatter (``INFO mlflow.store.db.utils: Creating initial
    MLflow database tables...`` and alembic's migration lines, printed on the first use of a new
    ``mlflow.db``): quadriga's own lines say where the run went. Warnings and errors still print.
    """
    import logging

    for name in ("mlflow.store.db.utils", "alembic"):
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.WARNING:
            logger.setLevel(logging.WARNING)
    return os.environ.get("MLFLOW_TRACKING_URI") or DEFAULT_URI


def announce(what: str, run_id: str, experiment: str) -> None:
    """Say where a tracked run went, on stderr: its MLflow run id, experiment and store.

    ``what`` is ``"run"`` or ``"sweep"``. The runs of a sweep are silent (their parent says it).
    A tracker's closing :func:`quadriga.tracking.note`: ``quadriga run`` and ``quadriga sweep``
    print it after their results tables.
    """
    from quadriga.tracking import note

    uri = tracking_uri()
    lines = [
        f"MLflow {what}: {run_id}",
        f"  experiment: {experiment}",
        f"  tracking URI: {uri}",
        "  browse: `mlflow ui` of the full mlflow, in its own environment",
        "  (how: the quadriga-mlflow README, section Browsing)",
    ]
    note("\n".join(lines))


def summary_metrics(summary_csv: Path) -> dict[str, float]:
    """The sweep summary (``summary.csv``) as MLflow metrics, to sort sweeps by result.

    A row ``stage, metric = "mala/energy_distance"`` at grid point ``step_size = 0.1`` gives
    ``summary/energy/mala/energy_distance/step_size_0.1/mean`` and, where the row has an
    interval, ``.../ci_low`` and ``.../ci_high`` (the interval's method is in ``summary.csv``).
    Rows without a finite mean are left out.
    """
    try:
        with Path(summary_csv).open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except OSError:
        return {}
    fixed = {"stage", "metric", "n", "mean", "stderr", "ci_low", "ci_high", "ci_method"}
    out: dict[str, float] = {}
    for row in rows:
        grid = [f"{k.split('.')[-1]}_{v}" for k, v in row.items() if k not in fixed]
        base = metric_key("summary", row.get("stage", ""), *str(row.get("metric", "")).split("/"), *grid)
        for column, suffix in (("mean", "mean"), ("ci_low", "ci_low"), ("ci_high", "ci_high")):
            try:
                value = float(row.get(column) or "nan")
            except ValueError:
                continue
            if math.isfinite(value):
                out[f"{base}/{suffix}"] = value
    return out


def _experiment(client: Any, name: str) -> str:
    """The id of experiment ``name``, created when missing."""
    experiment = client.get_experiment_by_name(name)
    return experiment.experiment_id if experiment is not None else client.create_experiment(name)


def _numbers(values: dict[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in values.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))
    }


@attrs.define(eq=False)
class MlflowTracker:
    """One open MLflow run mirroring a quadriga run (built by :meth:`start`)."""

    client: Any
    run_id: str
    run_dir: Path
    experiment: str = ""
    _t0: float = attrs.field(factory=time.time)

    @classmethod
    def start(cls, run: Any) -> MlflowTracker:
        """Create (or find) the experiment, open the MLflow run, log parameters and tags."""
        import mlflow
        from mlflow.entities import Param

        import quadriga

        client = mlflow.MlflowClient(tracking_uri=tracking_uri())
        experiment = os.environ.get(EXPERIMENT_ENV) or run.pipeline.name
        experiment_id = _experiment(client, experiment)
        tags = {
            "quadriga.run_dir": str(Path(run.dir).resolve()),
            "quadriga.pipeline": run.pipeline.name,
            "quadriga.version": quadriga.__version__,
            "mlflow.source.name": "quadriga",
        }
        if os.environ.get(PARENT_ENV):
            tags["mlflow.parentRunId"] = os.environ[PARENT_ENV]
        created = client.create_run(
            experiment_id, run_name=f"{run.pipeline.name} {Path(run.dir).name}", tags=tags
        )
        tracker = cls(client, created.info.run_id, Path(run.dir), experiment)
        params = [Param(k, v[:6000]) for k, v in flatten_params(run.pipeline.resolved()).items()]
        for i in range(0, len(params), 100):  # MLflow takes at most 100 parameters per batch
            client.log_batch(tracker.run_id, params=params[i : i + 100])
        return tracker

    def _log(self, values: dict[str, float], step: int = 0) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(k, v, now, step) for k, v in values.items()]
        for i in range(0, len(metrics), 1000):
            self.client.log_batch(self.run_id, metrics=metrics[i : i + 1000])

    def log_step(self, stage: str, record: dict[str, Any]) -> None:
        """One streamed record: its numbers as ``<stage>/<key>`` at ``record["step"]``."""
        step = int(record.get("step", 0))
        values = {k: v for k, v in record.items() if k not in ("stage", "step")}
        self._log({metric_key(stage, k): v for k, v in _numbers(values).items()}, step)

    def log_stage(self, stage: str, artifact: Any, seconds: float) -> None:
        """A finished stage: its summary numbers and its seconds."""
        values: dict[str, Any] = {"seconds": seconds, **type(artifact).scalars(artifact.summary())}
        self._log({metric_key(stage, *k.split("/")): v for k, v in _numbers(values).items()})

    def end(self, status: str, error: BaseException | None) -> None:
        """Log figures and records as artifacts, then close the run with its status."""
        for path in sorted(self.run_dir.glob("*.png")):
            self.client.log_artifact(self.run_id, str(path), artifact_path="figures")
        from quadriga.rundir import RunDir

        for path in RunDir(self.run_dir).record_files():
            self.client.log_artifact(self.run_id, str(path))
        if error is not None:
            self.client.set_tag(self.run_id, "quadriga.error", f"{type(error).__name__}: {error}"[:5000])
        mlflow_status = {"finished": "FINISHED", "interrupted": "KILLED"}.get(status, "FAILED")
        self.client.set_terminated(self.run_id, status=mlflow_status)
        if not os.environ.get(PARENT_ENV):  # a sweep's run: the parent announces the sweep
            announce("run", self.run_id, self.experiment)


@attrs.define(eq=False)
class SweepTracker:
    """The parent MLflow run of a sweep; its runs find its id in :data:`PARENT_ENV`.

    The parent's parameters are the seeds, the grid and each fixed ``--set`` value
    (``set.stage.mala.num_samples = 500``); at the end it gets the summary's means and interval
    ends as metrics (:func:`summary_metrics`), so that sweeps can be sorted by result, and the
    sweep's ``summary.csv``, ``summary.png`` and tidy table as artifacts.
    """

    client: Any
    run_id: str
    saved_env: dict[str, str | None]
    experiment: str = ""

    @classmethod
    def start(cls, sweep: dict[str, Any]) -> SweepTracker:
        """Open the parent run in the pipeline's experiment and export its id to the sweep's workers."""
        import mlflow
        from mlflow.entities import Param

        from quadriga.api import check

        client = mlflow.MlflowClient(tracking_uri=tracking_uri())
        name = os.environ.get(EXPERIMENT_ENV) or check(sweep["source"]).name
        created = client.create_run(
            _experiment(client, name),
            run_name=f"sweep {name}",
            tags={"quadriga.sweep": sweep["source"], "mlflow.source.name": "quadriga"},
        )
        params = {"sweep.seeds": json.dumps(sweep["seeds"])}
        params.update({metric_key(f"sweep.grid.{k}"): json.dumps(v) for k, v in sweep["grid"].items()})
        for item in sweep.get("fixed") or []:
            key, sep, value = str(item).partition("=")
            if sep:
                params[metric_key(f"set.{key.strip()}")] = value.strip()
        batch = [Param(k, v[:6000]) for k, v in params.items()]
        for i in range(0, len(batch), 100):  # MLflow takes at most 100 parameters per batch
            client.log_batch(created.info.run_id, params=batch[i : i + 100])
        saved = {k: os.environ.get(k) for k in (PARENT_ENV, EXPERIMENT_ENV)}
        os.environ[PARENT_ENV], os.environ[EXPERIMENT_ENV] = created.info.run_id, name
        return cls(client, created.info.run_id, saved, name)

    def end(self, sweep: dict[str, Any], status: str) -> None:
        """Log the summary files, close the parent run, restore the environment."""
        try:
            directory = Path(sweep["dir"]) if sweep.get("dir") else None
            for name in ("summary.csv", "summary.png", "results.parquet", "results.csv", "sweep.json"):
                if directory is not None and (directory / name).is_file():
                    self.client.log_artifact(self.run_id, str(directory / name))
            if directory is not None:
                self.client.set_tag(self.run_id, "quadriga.sweep_dir", str(directory.resolve()))
                from mlflow.entities import Metric

                now = int(time.time() * 1000)
                metrics = [
                    Metric(k, v, now, 0) for k, v in summary_metrics(directory / "summary.csv").items()
                ]
                for i in range(0, len(metrics), 1000):
                    self.client.log_batch(self.run_id, metrics=metrics[i : i + 1000])
            self.client.set_terminated(self.run_id, status="FINISHED" if status == "finished" else "FAILED")
            announce("sweep", self.run_id, self.experiment)
        finally:
            for key, value in self.saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
