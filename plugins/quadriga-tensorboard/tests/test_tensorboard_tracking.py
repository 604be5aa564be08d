"""quadriga-tensorboard: runs written as event files, read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from quadriga import tracking
from quadriga.testing.trackers import (
    modules_after_listing,
    tracker_pipeline,
    tracker_registry,
    tracker_sweep_toml,
)

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


PIPELINE = tracker_pipeline("tb-demo")


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.delenv(tracking.ENV, raising=False)
    monkeypatch.delenv("QUADRIGA_TENSORBOARD_DIR", raising=False)
    return tracker_registry()


def _read(logdir):
    """Every scalar, text and image of the event files in ``logdir``."""
    acc = event_accumulator.EventAccumulator(
        str(logdir),
        size_guidance={
            event_accumulator.SCALARS: 0,
            event_accumulator.IMAGES: 0,
            event_accumulator.TENSORS: 0,
        },
    )
    acc.Reload()
    return acc


def _text(acc, tag):
    (event,) = acc.Tensors(f"{tag}/text_summary")
    return event.tensor_proto.string_val[0].decode()


def test_a_run_is_written_only_when_chosen_and_reads_back(registry, tmp_path):
    from quadriga.api import run

    run(PIPELINE, out=tmp_path / "quiet", registry=registry)
    assert not (tmp_path / "quiet" / "tensorboard").exists()  # installed, not chosen: nothing written
    with tracking.using("tensorboard"):
        result = run(PIPELINE, out=tmp_path / "tracked", registry=registry)
    assert result.warnings == []
    acc = _read(tmp_path / "tracked" / "tensorboard")
    # per-step metrics: the whole streamed history, step by step
    history = [(e.step, e.value) for e in acc.Scalars("count/loss")]
    assert history == [(s, pytest.approx(1.0 / (s + 1), rel=1e-6)) for s in range(20)]  # float32 events
    # final metrics: every evaluator value and sampler diagnostic, as in results.json
    saved = json.loads((tmp_path / "tracked" / "results.json").read_text())["stages"]
    for subject in ("mala", "rwm"):
        key = f"{subject}/energy_distance"
        ((step, value),) = [(e.step, e.value) for e in acc.Scalars(f"energy/{key}")]
        assert step == 0 and value == pytest.approx(saved["energy"]["values"][key], rel=1e-6)
    acc_rate = saved["mala"]["info"]["acceptance_rate"]
    assert acc.Scalars("mala/acceptance_rate")[0].value == pytest.approx(acc_rate, rel=1e-6)
    assert acc.Scalars("mala/num_samples")[0].value == saved["mala"]["num_samples"] == 4 * 100  # 4 chains
    assert acc.Scalars("mala/score_evals")[0].value == saved["mala"]["info"]["score_evals"]
    # the resolved pipeline, line for line (indented four spaces: a markdown code block)
    toml = (tmp_path / "tracked" / "pipeline.toml").read_text().splitlines()
    assert _text(acc, "pipeline").splitlines() == ["    " + line for line in toml]
    assert _text(acc, "status") == "finished"
    # figures: one image per PNG of the run, with its size
    from PIL import Image

    pngs = sorted(p for p in (tmp_path / "tracked").glob("*.png"))
    assert [p.name for p in pngs] == sorted(saved["energy"]["figures"]) and pngs
    assert sorted(acc.Tags()["images"]) == sorted(f"figures/{p.stem}" for p in pngs)
    for path in pngs:
        (image,) = acc.Images(f"figures/{path.stem}")
        with Image.open(path) as png:
            assert (image.width, image.height) == png.size


def test_a_failed_run_says_so(registry, tmp_path):
    from quadriga.api import run

    bad = {
        "pipeline": {"name": "tb-broken", "seed": 0},
        "task": PIPELINE["task"],
        "stage": {"b": {"use": "broken", "inputs": {"target": "normal"}}},
    }
    with tracking.using("tensorboard"):
        result = run(bad, out=tmp_path / "bad", registry=registry, raise_on_failure=False)
    assert result.status == "failed"
    text = _text(_read(tmp_path / "bad" / "tensorboard"), "status")
    assert text.startswith("failed: ") and "asked to fail" in text


def test_one_root_for_many_runs(registry, tmp_path, monkeypatch):
    from quadriga.api import run

    monkeypatch.setenv("QUADRIGA_TENSORBOARD_DIR", str(tmp_path / "tb"))
    small = {**PIPELINE, "stage": {"count": PIPELINE["stage"]["count"]}}
    with tracking.using("tensorboard"):
        run(small, out=tmp_path / "r1", registry=registry)
    acc = _read(tmp_path / "tb" / "tb-demo" / "r1")
    assert len(acc.Scalars("count/loss")) == 20
    assert not (tmp_path / "r1" / "tensorboard").exists()


def test_listing_imports_neither_tensorboardx_nor_torch():
    assert modules_after_listing("tensorboard", {"tensorboardX", "tensorboard", "torch"}) == []


SWEEP_TOML = tracker_sweep_toml("tb-sweep")


def test_a_sweep_writes_one_event_directory_per_run(tmp_path):
    pipeline = tmp_path / "sweep.toml"
    pipeline.write_text(SWEEP_TOML)
    env = {k: v for k, v in os.environ.items() if k not in (tracking.ENV, "QUADRIGA_TENSORBOARD_DIR")}
    args = [
        "sweep",
        str(pipeline),
        "--seeds",
        "0:2",
        "--grid",
        "stage.mala.step_size=0.1,0.5",
        "--workers",
        "2",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "quadriga", *args, "--out", str(tmp_path / "sw"), "--with", "tensorboard"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "warning" not in proc.stdout
    runs = sorted((tmp_path / "sw" / "runs").iterdir())
    assert len(runs) == 4  # 2 seeds x 2 step sizes
    for run_dir in runs:
        values = json.loads((run_dir / "results.json").read_text())["stages"]["energy"]["values"]
        acc = _read(run_dir / "tensorboard")
        assert acc.Scalars("energy/mala/energy_distance")[0].value == pytest.approx(
            values["mala/energy_distance"], rel=1e-6
        )
        # each run's text is its own resolved pipeline, with its own step size
        assert _text(acc, "pipeline").splitlines() == [
            "    " + line for line in (run_dir / "pipeline.toml").read_text().splitlines()
        ]
    step_sizes = {
        line.split("=")[1].strip()
        for run_dir in runs
        for line in _text(_read(run_dir / "tensorboard"), "pipeline").splitlines()
        if line.strip().startswith("step_size")
    }
    assert step_sizes == {"0.1", "0.5"}


@pytest.mark.parametrize("where", ["run", "env"])
def test_event_files_are_never_written_through_a_symbolic_link(tmp_path, monkeypatch, where):
    """A run directory (or the QUADRIGA_TENSORBOARD_DIR tree) holding a link: refused, nothing outside."""
    from types import SimpleNamespace

    from quadriga_tensorboard.writer import TensorBoardRun

    from quadriga.errors import ConfigError

    outside = tmp_path / "outside"
    outside.mkdir()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    run = SimpleNamespace(dir=str(run_dir), pipeline=SimpleNamespace(name="tb-demo", resolved=dict))
    if where == "run":
        monkeypatch.delenv("QUADRIGA_TENSORBOARD_DIR", raising=False)
        (run_dir / "tensorboard").symlink_to(outside, target_is_directory=True)
    else:
        root = tmp_path / "tb"
        root.mkdir()
        (root / "tb-demo").symlink_to(outside, target_is_directory=True)
        monkeypatch.setenv("QUADRIGA_TENSORBOARD_DIR", str(root))
    with pytest.raises(ConfigError, match="link"):
        TensorBoardRun.start(run)
    assert list(outside.iterdir()) == []
