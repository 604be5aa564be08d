"""The lifecycle hooks (run start, stage end, run end) reach plugins with the arguments they declare."""

from __future__ import annotations

import quadriga
from quadriga.api import run
from quadriga.registry import Registry


class Recorder:
    """A plugin object implementing every lifecycle hook; it records the calls in order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    @quadriga.hookimpl
    def quadriga_run_start(self, run):
        self.calls.append(("start", run.dir.name))

    @quadriga.hookimpl
    def quadriga_stage_end(self, stage, artifact, seconds):  # takes a subset of the arguments
        self.calls.append(("stage", stage, type(artifact).__name__, seconds >= 0))

    @quadriga.hookimpl
    def quadriga_run_end(self, run, status, error):
        self.calls.append(("end", status, error))


class Raises:
    """A plugin whose hook raises: the run goes on and reports a warning naming the plugin."""

    @quadriga.hookimpl
    def quadriga_stage_end(self, stage):
        raise RuntimeError(f"cannot handle {stage}")


def test_hooks_are_called_in_order_with_their_arguments(plugin_path, tmp_path):
    recorder = Recorder()
    reg = Registry(use_env=False, plugins={"recorder": recorder})
    result = run("toy-pipeline", out=tmp_path / "r", registry=reg)
    assert result.status == "finished"
    assert recorder.calls[0] == ("start", "r")
    stages = [c for c in recorder.calls if c[0] == "stage"]
    assert stages == [
        ("stage", "draw", "Samples", True),
        ("stage", "est", "Estimate", True),
        ("stage", "check", "Metrics", True),
    ]
    assert recorder.calls[-1] == ("end", "finished", None)
    assert len(recorder.calls) == 5


def test_a_raising_hook_is_a_warning_not_a_failure(plugin_path, tmp_path):
    reg = Registry(use_env=False, plugins={"raises": Raises()})
    result = run("toy-pipeline", out=tmp_path / "r", registry=reg)
    assert result.status == "finished"
    assert sum("plugin 'raises' raised in quadriga_stage_end" in w for w in result.warnings) == 3
    assert any("RuntimeError: cannot handle draw" in w for w in result.warnings)


def test_run_end_reports_a_failed_run(plugin_path, tmp_path):
    recorder = Recorder()
    reg = Registry(use_env=False, plugins={"recorder": recorder})
    result = run(
        "toy-pipeline",
        out=tmp_path / "r",
        registry=reg,
        overrides=["stage.draw.fail=true"],
        raise_on_failure=False,
    )
    assert result.status == "failed"
    status, error = recorder.calls[-1][1:]
    assert status == "failed" and error is result.error and "asked to fail" in str(error)
    assert [c for c in recorder.calls if c[0] == "stage"] == []  # the first stage failed: no stage ended


def test_quadriga_with_names_are_checked_like_the_with_option(monkeypatch):
    """A misspelt ``QUADRIGA_WITH`` is refused (naming the variable), not silently ignored."""
    import pytest

    from quadriga.errors import ConfigError
    from quadriga.tracking import ENV, check

    reg = Registry(use_env=False, plugins={"recorder": Recorder()})
    monkeypatch.setenv(ENV, "recordr")
    with pytest.raises(ConfigError) as info:
        check([], reg)
    assert info.value.key == "QUADRIGA_WITH"
    assert "'recordr' (in QUADRIGA_WITH='recordr') is not an installed tracker" in str(info.value)
    assert "Did you mean 'recorder'" in str(info.value)
    with pytest.raises(ConfigError) as info:  # --with is checked first, under its own name
        check(["recordr"], reg)
    assert info.value.key == "--with" and "'recordr' is not an installed tracker" in str(info.value)
    monkeypatch.setenv(ENV, "recorder, ")
    assert check(["recorder"], reg) == ["recorder"]
    monkeypatch.delenv(ENV)
    assert check([], reg) == []


def test_a_misspelt_quadriga_with_stops_quadriga_run(plugin_path, tmp_path):
    from qtest_helpers import run_cli

    proc = run_cli(["run", "toy-pipeline", "--out", str(tmp_path / "r")], env={"QUADRIGA_WITH": "mlfow"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "'mlfow' (in QUADRIGA_WITH='mlfow') is not an installed tracker" in proc.stderr
    assert not (tmp_path / "r").exists()
