"""The local sweep backend: each task runs once, no worker outlives the pool, the aggregation is warmed."""

from __future__ import annotations

import json
import multiprocessing as mp
import sys

from quadriga.sweep.backends import AGGREGATION_MODULES, _import_in_background, _run_local
from quadriga.sweep.grid import plan


def test_background_imports_skip_what_is_missing(tmp_path, monkeypatch):
    (tmp_path / "qtest_bg_present.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "qtest_bg_present", raising=False)
    thread = _import_in_background(("qtest_bg_no_such_module", "qtest_bg_present"))
    thread.join(timeout=300)
    assert not thread.is_alive() and thread.daemon
    assert sys.modules["qtest_bg_present"].VALUE == 42
    assert "qtest_bg_no_such_module" not in sys.modules


def test_aggregation_modules_are_what_the_summary_uses():
    """The list names the modules quadriga.summary imports when it aggregates and writes."""
    import inspect

    import quadriga.stats.intervals as intervals
    import quadriga.summary as summary

    source = inspect.getsource(summary) + inspect.getsource(intervals)
    assert AGGREGATION_MODULES[-1] == "matplotlib.backends.backend_agg"  # what savefig loads for a .png
    for name in AGGREGATION_MODULES[2:-1]:
        assert f"import {name}" in source or f"from {name} import" in source, name


def test_local_pool_runs_each_task_once_and_leaves_no_worker(plugin_path, tmp_path):
    specs = plan(range(5), [], ["stage.draw.num_samples=50"])
    tasks = [("toy-pipeline", s, str(tmp_path / "runs" / s.run_id)) for s in specs]
    outcomes: list[dict] = []
    _run_local(tasks, 2, outcomes.append)
    assert sorted(o["run_id"] for o in outcomes) == sorted(s.run_id for s in specs)
    assert all(o["status"] == "finished" and o["error"] is None for o in outcomes)
    for s in specs:
        status = json.loads((tmp_path / "runs" / s.run_id / "status.json").read_text())
        assert status["status"] == "finished"
        results = json.loads((tmp_path / "runs" / s.run_id / "results.json").read_text())
        assert results  # the run's own results, written by the worker
    assert mp.active_children() == []  # every worker was told to stop and joined
