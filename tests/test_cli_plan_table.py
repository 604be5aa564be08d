"""The plan table ``quadriga run`` prints first: at most a screenful, the rest summarised in one line."""

from __future__ import annotations

import pytest

from quadriga.cli.output import PLAN_ROWS, plan_rows


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("LINES", raising=False)


def _rows(names):
    return [(f"stage.{n}", "toy-iid", "sampler", "target=normal") for n in names]


def test_short_plans_are_printed_whole():
    rows = [("task.normal", "toy-normal", "task", ""), *_rows(f"draw[{i}]" for i in range(PLAN_ROWS - 1))]
    assert plan_rows(rows) == (rows, None)


def test_long_plans_keep_a_screenful_and_say_what_the_rest_is():
    points = [f"draw[step=0.{k}][{i}]" for k in range(1, 6) for i in range(10)]  # 5 points x 10 seeds
    rows = [("task.normal", "toy-normal", "task", ""), *_rows(points), *_rows(["check"])]
    shown, rest = plan_rows(rows)
    assert shown == rows[:19]
    # 52 rows: 19 shown, 33 left out: 32 replicates of the matrix stage and the plain 'check'
    assert rest == "... and 33 more stages (matrix x repeat) of draw, check"
    only_seeds = _rows(f"fit[{i}]" for i in range(25))
    assert plan_rows(only_seeds, limit=10)[1] == "... and 16 more stages (repeat) of fit"
    tasks = [(f"task.t[{i}]", "toy-normal", "task", "") for i in range(3)]
    summary = plan_rows(tasks + _rows(["a", "b"]), limit=2)[1]  # t[0] shown
    assert summary == "... and 2 more tasks, 2 more stages (repeat) of t, a, b"


def test_quadriga_run_check_prints_one_screenful(plugin_path, tmp_path, capsys):
    from quadriga.cli import main

    path = tmp_path / "p.toml"
    path.write_text(
        '[pipeline]\nname = "wide"\n[task.normal]\nuse = "toy-normal"\n'
        '[stage.draw]\nuse = "toy-iid"\ninputs = { target = "normal" }\nrepeat = 12\n'
        "matrix = { num_samples = [2, 3, 4, 5] }\n"
    )
    assert main(["run", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.strip().startswith(("task.", "stage."))]
    assert len(table) == PLAN_ROWS - 1  # 1 task + 48 stages: 19 rows and the summary
    assert "... and 30 more stages (matrix x repeat) of draw" in " ".join(out.split())
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_pilot_s_markdown_table_prints_as_a_terminal_table(capsys):
    """``verify --plan`` prints the pilot's table aligned, numbers right-aligned, no ``|`` rules."""
    from quadriga.cli._common import console
    from quadriga.cli.verify import print_markdown_tables

    text = (
        "pilot of 3 replicates\n\n| group | arm | baseline | sd | n needed |\n|---|---|---|---|---|\n"
        "| - | gap-noisy | gap-clean | 11.04 | 12 |\n| - | wide | base | 3.5 | 120 |"
    )
    print_markdown_tables(console(), text)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "pilot of 3 replicates"
    assert not any("|" in line or "---|" in line for line in lines)
    header = next(line for line in lines if "n needed" in line)
    row = next(line for line in lines if "gap-noisy" in line)
    assert header.split() == ["group", "arm", "baseline", "sd", "n", "needed"]
    assert row.split() == ["-", "gap-noisy", "gap-clean", "11.04", "12"]
    assert row.rstrip().endswith(" 12") and len(row.rstrip()) == len(header.rstrip())  # right-aligned
    assert max(len(line) for line in lines) <= 80


def test_a_markdown_block_with_a_ragged_row_prints_as_written(capsys):
    from quadriga.cli._common import console
    from quadriga.cli.verify import print_markdown_tables

    text = "| a | b |\n|---|---|\n| x | y | z |"
    print_markdown_tables(console(), text)
    assert capsys.readouterr().out.strip() == text
