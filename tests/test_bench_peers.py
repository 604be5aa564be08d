"""benchmarks/bench_peers.py: the peer rows (BlackJAX, stable-baselines3) leave out cleanly when absent.

Nothing here is timed: the arms are not run, only the rows, notes and table around them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def peers():
    """``benchmarks/bench_peers.py`` as a module."""
    return _load("bench_peers")


@pytest.fixture
def without_peers(monkeypatch):
    """``importlib.util.find_spec`` answers None for every peer module, as when the extra is absent."""
    real = importlib.util.find_spec
    absent = {"blackjax", "jax", "jaxlib", "stable_baselines3"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a, **k: None if name in absent else real(name, *a, **k)
    )
    monkeypatch.delenv("XLA_FLAGS", raising=False)


def test_peer_rows_are_left_out_with_a_note_when_the_libraries_are_missing(peers, without_peers):
    made, before = [], set(sys.modules)
    rows, notes = peers.peer_benches(True, lambda **kw: made.append(kw) or kw)
    assert rows == [] and made == []
    assert notes == [
        "BlackJAX arms skipped: blackjax, jax, jaxlib not installed (optional `bench` extra: "
        "`pip install -c constraints.txt -e '.[bench]'`).",
        "stable-baselines3 arms skipped: stable_baselines3 not installed (optional `bench` extra: "
        "`pip install -c constraints.txt -e '.[bench]'`).",
    ]
    assert not {"jax", "blackjax", "stable_baselines3"} & (set(sys.modules) - before)


def test_run_all_lists_the_other_rows_and_carries_the_notes(without_peers):
    import torch

    run_all = _load("run_all")
    notes: list[str] = []
    threads = torch.get_num_threads()
    try:
        rows = run_all.benches(True, notes)
    finally:
        torch.set_num_threads(threads)
    names = [b.name for b in rows]
    assert not any("BlackJAX" in n or "stable-baselines3" in n for n in names)
    assert any(n.startswith("DQN env steps/s / CleanRL") for n in names)  # the rows without peers stay
    assert [n.split(" arms skipped")[0] for n in notes] == ["BlackJAX", "stable-baselines3"]


def test_a_reported_row_has_no_verdict_and_an_interval():
    run_all = _load("run_all")
    costs = iter([2.0, 1.0, 1.0, 2.2, 2.1, 1.0])  # method, baseline, baseline, method, method, baseline
    bench = run_all.Bench("x / y", lambda: next(costs), lambda: next(costs), "reported", None, repeats=(3, 2))
    row = run_all.measure(bench, quick=False)
    assert row["met"] is None and row["n"] == 3
    assert row["ratio"] == pytest.approx(2.1)
    assert row["mean_ratio"] == pytest.approx(6.3 / 3.0)
    low, high = row["ci"]
    assert low < row["mean_ratio"] < high
    line = run_all.table([row]).splitlines()[-1]
    assert line.endswith("| reported | — |") and "2.100 [" in line


def test_a_row_with_an_absolute_target_is_judged_on_the_arms_medians():
    run_all = _load("run_all")
    # method 7, 6, 5 ms against baseline 1, 1, 1 ms: medians 6 and 1, a fixed cost of 5 ms
    costs = iter([7e-3, 1e-3, 1e-3, 6e-3, 5e-3, 1e-3])
    row = run_all.measure(
        run_all.Bench(
            "x / y",
            lambda: next(costs),
            lambda: next(costs),
            "fixed cost <= 5 ms",
            None,
            repeats=(3, 2),
            absolute=lambda m, b: m - b <= 5e-3 + 1e-12,
        ),
        quick=False,
    )
    assert row["method"] == pytest.approx(6e-3) and row["baseline"] == pytest.approx(1e-3)
    assert row["met"] is True and row["ratio"] == pytest.approx(6.0)
    costs = iter([9e-3, 1e-3, 1e-3, 8e-3, 7e-3, 1e-3])  # a 7 ms fixed cost
    row = run_all.measure(
        run_all.Bench(
            "x / y", lambda: next(costs), lambda: next(costs), "t", None, absolute=lambda m, b: m - b <= 5e-3
        ),
        quick=False,
    )
    assert row["met"] is False and run_all.table([row]).endswith("| t | NO |")


def test_the_blackjax_arm_uses_the_precision_of_quadrigas_gaussian(peers):
    from quadriga_std.targets.gaussian import Gaussian

    for d in (1, 10, 100):
        cov = Gaussian(dim=d, equicorrelation=peers.RHO).covariance.numpy()
        np.testing.assert_allclose(peers.precision(d) @ cov, np.eye(d), atol=1e-12)


def test_configure_threads_sets_one_xla_thread_once(peers, monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/x")
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    assert peers.configure_threads().endswith(f"--xla_dump_to=/tmp/x {peers.XLA_ONE_THREAD}")
    peers.configure_threads()
    assert os.environ["XLA_FLAGS"].count("intra_op_parallelism_threads=1") == 1
