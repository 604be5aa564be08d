"""Progress where no bar can be drawn: plain lines for logs and pipes, and the Jupyter display."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from quadriga.progress import ProgressLines, StageProgress, format_seconds
from quadriga.progress_display import rich_progress


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_format_seconds():
    assert [format_seconds(s) for s in (0, 41.4, 99.6, 185, 5999, 7620)] == [
        "0 s",
        "41 s",
        "1 min 40 s",
        "3 min 05 s",
        "99 min 59 s",
        "2 h 07 min",
    ]


def _train(step_seconds: float, steps: int = 6000) -> list[str]:
    clock, out = FakeClock(), []
    progress = StageProgress("train", on_update=ProgressLines("train", out.append, clock=clock))
    progress.start(steps)
    for _ in range(steps):
        clock.now += step_seconds
        progress.advance()
    return out


def test_lines_at_most_every_min_interval_and_at_most_one_per_ten_percent_step():
    # 6000 steps of 13.7 ms (82.2 s): 10 % takes 8.22 s < 10 s, so the interval rules: a line at
    # the first update 10 s after the last one (730 steps, 10.001 s; the rest extrapolated at that rate)
    assert _train(0.0137) == [
        "  stage train: 730/6000 (12%) 10 s elapsed, ~72 s left",
        "  stage train: 1460/6000 (24%) 20 s elapsed, ~62 s left",
        "  stage train: 2190/6000 (36%) 30 s elapsed, ~52 s left",
        "  stage train: 2920/6000 (49%) 40 s elapsed, ~42 s left",
        "  stage train: 3650/6000 (61%) 50 s elapsed, ~32 s left",
        "  stage train: 4380/6000 (73%) 60 s elapsed, ~22 s left",
        "  stage train: 5110/6000 (85%) 70 s elapsed, ~12 s left",
        "  stage train: 5840/6000 (97%) 80 s elapsed, ~2 s left",
    ]
    # 6000 steps of 30 ms (180 s): 10 % takes 18 s, between the intervals: one line per 10 % step;
    # 100 % is the caller's final line
    slow = _train(0.03)
    assert [line.split(": ")[1].split()[0] for line in slow] == [f"{600 * k}/6000" for k in range(1, 10)]
    assert slow[0] == "  stage train: 600/6000 (10%) 18 s elapsed, ~2 min 42 s left"
    assert all(len(line) <= 80 for line in slow)


def test_slow_stage_prints_at_max_interval_and_fast_stage_prints_nothing():
    clock, out = FakeClock(), []
    lines = ProgressLines("collect", out.append, clock=clock)
    lines(0, None, None)
    for step in range(1, 101):  # 100 updates, one per second, no total known: one line per 30 s
        clock.now = float(step)
        lines(step * 12, None, "episodes")
    assert out == [f"  stage collect (episodes): {12 * t} done, {t} s elapsed" for t in (30, 60, 90)]
    fast: list[str] = []
    quick = ProgressLines("fast", fast.append, clock=clock)
    quick(0, 1000, None)
    for step in range(1000):  # 1000 steps within 9 s
        clock.now += 0.009
        quick(step + 1, 1000, None)
    assert fast == []


def test_restart_starts_a_new_phase_and_long_names_fit_the_width():
    clock, out = FakeClock(), []
    name = "a-stage-with-a-very-long-name-that-would-not-fit-in-eighty-columns-at-all"
    lines = ProgressLines(name, out.append, clock=clock, width=80)
    progress = StageProgress(name, on_update=lines)
    progress.start(10, "warm-up")
    clock.now = 40.0
    progress.advance(5)  # 40 s: due (max_interval)
    progress.start(100, "sampling")  # a new phase: the rate restarts here
    clock.now = 80.0
    progress.advance(50)
    assert len(out) == 2 and all(len(line) == 80 for line in out)
    assert out[0].endswith(": 5/10 (50%) 40 s elapsed, ~40 s left") and "\N{HORIZONTAL ELLIPSIS}" in out[0]
    assert out[1].endswith(": 50/100 (50%) 80 s elapsed, ~40 s left")
    # a description that does not fit is left out before the name is cut
    short: list[str] = []
    tight = ProgressLines("srmc-gauss[alpha=0.5]", short.append, clock=clock)
    tight(0, 10000, "SR-MALA")
    clock.now += 31.0
    tight(1000, 10000, "SR-MALA")
    assert short == ["  stage srmc-gauss[alpha=0.5]: 1000/10000 (10%) 31 s elapsed, ~4 min 39 s left"]
    with pytest.raises(ValueError, match="min_interval"):
        ProgressLines("x", out.append, min_interval=40.0, max_interval=30.0)


def test_run_prints_progress_lines_for_a_long_stage_when_not_a_terminal(registry, tmp_path):
    """The runner's StageProgress feeds the lines: a learner advancing 50 steps, 1 s per clock reading."""
    from quadriga.pipeline import load_pipeline
    from quadriga.runs import execute

    class Ticking(FakeClock):
        def __call__(self) -> float:
            self.now += 1.0
            return self.now

    buffer = io.StringIO()
    con = Console(file=buffer, width=80, force_terminal=False, highlight=False)
    assert not con.is_terminal
    learn = {
        "pipeline": {"name": "learn"},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {
            "count": {"use": "toy-counter", "inputs": {"task": "normal"}, "num_steps": 50},
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10},
        },
    }
    pipeline = load_pipeline(learn, registry)
    with rich_progress(con, False, lines=True, clock=Ticking()) as display:
        result = execute(pipeline, registry, out=tmp_path / "run", display=display)
    assert result.status == "finished"
    text = buffer.getvalue().splitlines()
    progress_lines = [line for line in text if re.match(r"  stage count: \d+/50 ", line)]
    # one clock reading per update, 1 s each: the bar starts at reading 3 and step k lands at 3 + k,
    # so a line is due 10 s after the stage began (reading 2) and every 10 s after: steps 9, 19, ...
    counts = [line.split(": ")[1].split()[0] for line in progress_lines]
    assert counts == ["9/50", "19/50", "29/50", "39/50", "49/50"]
    pattern = r"  stage count: \d+/50 \(\d+%\) \d+ s elapsed, ~\d+ s left"
    assert all(re.fullmatch(pattern, x) for x in progress_lines)
    done = [line for line in text if " done in " in line]
    # the short sampler stage prints only its final line
    assert [line.split(" done in ")[0] for line in done] == ["  stage count", "  stage draw"]
    assert all(len(line) <= 80 for line in text)


def test_sweep_counts_runs_with_its_own_prefix_and_unit():
    """``quadriga sweep`` without a terminal: ``  sweep: k/N runs (p%) ...`` (no ``stage`` prefix)."""
    clock, out = FakeClock(), []
    runs = ProgressLines("sweep", out.append, clock=clock, prefix="", unit="runs")
    runs(0, 12, None)
    for k in range(1, 13):  # one run finishes every 6 s: a line per 10 % step once 10 s have passed
        clock.now = 6.0 * k
        runs(k, 12, None)
    assert out == [
        "  sweep: 2/12 runs (17%) 12 s elapsed, ~60 s left",
        "  sweep: 4/12 runs (33%) 24 s elapsed, ~48 s left",
        "  sweep: 6/12 runs (50%) 36 s elapsed, ~36 s left",
        "  sweep: 8/12 runs (67%) 48 s elapsed, ~24 s left",
        "  sweep: 10/12 runs (83%) 60 s elapsed, ~12 s left",
    ]


class FakeHandle:
    """What IPython's ``display(..., display_id=True)`` returns: a handle redrawn by ``update``."""

    def __init__(self, shown: list[dict[str, str]]) -> None:
        self.shown = shown

    def update(self, bundle: dict[str, str], raw: bool = False) -> None:
        assert raw
        self.shown.append(bundle)


def _toy_learn() -> dict:
    return {
        "pipeline": {"name": "learn"},
        "task": {"normal": {"use": "toy-normal"}},
        "stage": {
            "count": {"use": "toy-counter", "inputs": {"task": "normal"}, "num_steps": 40},
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10},
        },
    }


def test_jupyter_progress_table_shows_each_stage_and_its_completion(registry, tmp_path, monkeypatch):
    """In a (faked) Jupyter kernel ``api.run`` draws one table updated in place, one row per stage."""
    import quadriga.progress_display as nb
    from quadriga.api import run

    shown: list[dict[str, str]] = []

    def show(bundle):
        shown.append(bundle)
        return FakeHandle(shown)

    monkeypatch.setattr(nb, "in_jupyter", lambda: True)
    monkeypatch.setattr(nb, "_ipython_show", show)
    result = run(_toy_learn(), registry=registry, out=tmp_path / "run")
    assert result.status == "finished" and len(shown) >= 3
    last = shown[-1]
    rows = last["text/plain"].splitlines()
    assert len(rows) == 2 and rows[0].startswith("count (done)") and rows[1].startswith("draw (done)")
    assert "40/40" in rows[0] and "10/10" in rows[1]
    assert "count (done)" in last["text/html"] and last["text/html"].startswith("<pre")
    # while the learner ran, a redraw showed it unfinished
    assert any(re.search(r"count(: ToyCounter)? .* (\d|[1-3]\d)/40 ", b["text/plain"]) for b in shown[:-2])


def test_no_progress_display_outside_jupyter_unless_asked(registry, tmp_path, monkeypatch, capsys):
    import quadriga.progress_display as nb
    from quadriga.api import run

    monkeypatch.setattr(nb, "_ipython_show", lambda bundle: pytest.fail("displayed outside Jupyter"))
    assert not nb.in_jupyter()
    run(_toy_learn(), registry=registry, out=tmp_path / "quiet")
    assert capsys.readouterr().err == ""
    run(_toy_learn(), registry=registry, out=tmp_path / "asked", progress=True)  # stderr is not a terminal
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" done in ")[0] for line in err] == ["  stage count", "  stage draw"]
    monkeypatch.setattr(nb, "in_jupyter", lambda: True)
    run(_toy_learn(), registry=registry, out=tmp_path / "off", progress=False)  # off even in Jupyter


def test_in_jupyter_reads_the_ipython_shell_class(monkeypatch):
    import sys
    import types

    import quadriga.progress_display as nb

    class ZMQInteractiveShell:
        pass

    class TerminalInteractiveShell:
        pass

    fake = types.ModuleType("IPython")
    monkeypatch.setitem(sys.modules, "IPython", fake)
    fake.get_ipython = lambda: None  # type: ignore[attr-defined]
    assert not nb.in_jupyter()
    fake.get_ipython = TerminalInteractiveShell  # type: ignore[attr-defined]
    assert not nb.in_jupyter()
    fake.get_ipython = ZMQInteractiveShell  # type: ignore[attr-defined]
    assert nb.in_jupyter()
