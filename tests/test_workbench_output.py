"""Terminal output at the default 80 columns: no name cut or folded, every metric shown, --json everywhere."""

from __future__ import annotations

import io
import json
import sys

import pytest
import tomllib
from rich.console import Console

from quadriga.cli.output import chunk_columns, pivot, print_pivot, print_results


@pytest.fixture(autouse=True)
def default_width(monkeypatch):
    """Rich uses COLUMNS when set; the tests run at the width a user without it gets (80)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    from quadriga.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def lines_fit(text: str, width: int = 80) -> None:
    long = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not long, long[:3]


def console_text(render, width: int = 80) -> str:
    buf = io.StringIO()
    con = Console(file=buf, width=width, highlight=False, soft_wrap=False, color_system=None)
    render(con)
    return buf.getvalue()


def test_chunk_columns_repeats_keys_and_fits():
    widths = [10, 30, 30, 30]  # key + three 32-wide columns: 12 + 32 + 32 = 76 fits, + 32 does not
    assert chunk_columns(widths, 1, 80) == [[0, 1, 2], [0, 3]]
    assert chunk_columns(widths, 1, 200) == [[0, 1, 2, 3]]
    assert chunk_columns([5], 1, 80) == [[0]]


def test_pivot_splits_on_the_last_slash():
    subjects, metrics, cells = pivot({"a/b/tv": 1.0, "mala[0]/tv": 2.0, "mala[0]/ess": 3.0, "total": 4.0})
    assert subjects == ["a/b", "mala[0]", ""] and metrics == ["tv", "ess", "total"]
    assert cells[("mala[0]", "ess")] == 3.0 and cells[("", "total")] == 4.0


LONG = {
    f"conditional-conformal-{i}/{m}": float(i) + j / 10
    for i in range(6)
    for j, m in enumerate(["modes_visited", "energy_distance_sqrt", "coverage_of_the_interval", "ratio"])
}


def test_a_wide_pivot_is_split_and_shows_every_metric_and_whole_names():
    text = console_text(lambda con: print_pivot(con, LONG, title="stage"))
    lines_fit(text)
    for name in ("conditional-conformal-5", "coverage_of_the_interval", "energy_distance_sqrt"):
        assert name in text  # never folded across lines
    for value in ("5.3", "0.2", "4.1"):  # every one of the 24 values printed, no "... more"
        assert value in text
    assert "more" not in text and "…" not in text


def test_run_results_are_one_table_per_evaluator_not_one_row_per_metric():
    results = {
        "stages": {
            "rwm": {"type": "Samples", "num_samples": 8000, "dim": 2, "info": {"acceptance_rate": 0.2649}},
            "coverage": {
                "type": "Metrics",
                "component": "mode-coverage",
                "values": {
                    f"{s}/{m}": v for s in ("rwm", "mala", "hmc") for m, v in (("tv", 0.08), ("modes", 4))
                },
                "figures": ["coverage-samples.png"],
            },
        }
    }
    text = console_text(lambda con: print_results(con, results))
    lines_fit(text)
    rows = [line.split() for line in text.splitlines()]
    assert ["subject", "tv", "modes"] in rows  # subject x metric; it fits, so one table
    assert ["rwm", "0.08", "4"] in rows and ["hmc", "0.08", "4"] in rows
    assert "0.2649" in text and "coverage-samples.png" in text


def test_list_fits_80_columns_without_folding_distribution_names(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0
    lines_fit(out)
    assert "quadriga-std" in out and "gaussian-mixture" in out
    code, out, _ = cli(capsys, "list", "--json")
    data = json.loads(out)
    assert {"kind": "sampler", "name": "mala"}.items() <= next(
        c for c in data["components"] if c["name"] == "mala"
    ).items()


def test_info_component_is_dedented_with_toml_defaults(capsys):
    code, out, _ = cli(capsys, "info", "mala")
    assert code == 0
    lines_fit(out)
    lines = out.splitlines()
    doc = lines.index(next(line for line in lines if line.startswith("Metropolis-adjusted Langevin:")))
    assert lines[doc + 1].startswith("Metropolis-Hastings")  # the continuation is not indented
    assert "  step_size: float = 0.1" in out and '  init: str = "normal"' in out  # TOML, not repr
    assert "Any" not in out
    code, out, _ = cli(capsys, "info", "mala", "--json")
    (entry,) = json.loads(out)
    step = next(p for p in entry["parameters"] if p["name"] == "step_size")
    assert step == {
        "name": "step_size",
        "type": "float",
        "default": "0.1",
        "doc": step["doc"],
        "required": False,
    }
    assert entry["inputs"] == {"target": "Target"} and entry["output"] == "Samples"


def test_info_pipeline_prints_toml_that_parses(capsys):
    code, out, _ = cli(capsys, "info", "gmm-mcmc-baselines")
    assert code == 0
    data = tomllib.loads(out)
    assert data["pipeline"]["name"] == "gmm-mcmc-baselines" and "mala" in data["stage"]


def test_run_json_prints_only_json(capsys, registry, tmp_path, monkeypatch):
    from quadriga import registry as registry_module

    monkeypatch.setattr(registry_module, "_DEFAULT", registry)
    monkeypatch.setattr(sys, "argv", ["quadriga"])
    code, out, err = cli(capsys, "run", "toy-pipeline", "--out", str(tmp_path / "r"), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["status"] == "finished" and data["dir"] == str(tmp_path / "r")
    saved = json.loads((tmp_path / "r" / "results.json").read_text())
    assert data["stages"]["check"]["values"] == saved["stages"]["check"]["values"]
    code, out, err = cli(capsys, "compare", str(tmp_path / "r"), "--out", str(tmp_path / "c"), "--json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    err_row = next(e for e in summary if e["metric"] == "draw/mean_error")
    assert err_row["n"] == 1 and err_row["mean"] == pytest.approx(
        saved["stages"]["check"]["values"]["draw/mean_error"]
    )


@pytest.mark.parametrize("width", [50, 60, 80, 100, 120, 200])
@pytest.mark.parametrize("verdict", [False, True])
def test_plain_list_table_is_byte_identical_to_the_rich_table(width, verdict):
    # quadriga list writes its one-line tables as plain text off a terminal (speed); the text
    # must be exactly what print_table renders, short and over-long summaries alike, with the
    # claims' verdict column or without it, and no trailing spaces
    from rich.text import Text

    from quadriga.cli.listing import _write_plain_table
    from quadriga.cli.output import print_table

    rows = [
        ["sampler", "mala", "Metropolis-adjusted Langevin algorithm (Roberts & Tweedie 1996)"],
        ["target", "gaussian-mixture", "a mixture of Gaussians: presets or explicit means " * 3],
        ["pipeline", "gmm-mcmc-baselines", "RWM, MALA and HMC on the 4-mode mixture"],
        ["claim", "x", "short"],
    ]
    columns = ["kind", "name", "summary"]
    if verdict:
        rows = [[r[0], r[1], "refuted" if r[0] == "claim" else "", r[2]] for r in rows]
        columns = ["kind", "name", "verdict", "summary"]

    def render(plain: bool) -> str:
        buf = io.StringIO()
        con = Console(file=buf, width=width, force_terminal=False, highlight=False, soft_wrap=False)
        if plain and _write_plain_table(con, "quadriga-std 0.2.0", rows, columns):
            return buf.getvalue()
        assert not plain or (verdict and width < 80), "the plain path handles this table"
        print_table(
            con,
            columns,
            rows,
            title=Text("quadriga-std 0.2.0", style="bold"),
            key_columns=len(columns) - 1,
            wrap="summary",
            one_line=True,
            drop_empty=False,
        )
        return buf.getvalue()

    text = render(False)
    assert render(True) == text
    assert all(line == line.rstrip() for line in text.splitlines())
    if width >= 80:
        assert " mala " in text and "Metropolis-adjusted Langevin" in text


def test_split_tables_never_cut_a_header_at_80_columns():
    # rich puts 3 characters between columns and 1 at each edge: six columns of these widths are
    # 82 characters, so the table must split rather than crop "final_return_mean"
    from quadriga.cli.output import print_table

    buf = io.StringIO()
    con = Console(file=buf, width=80, force_terminal=False, highlight=False, soft_wrap=False)
    cols = [
        "subject",
        "auc",
        "final_return",
        "auc_mean",
        "auc_stderr",
        "final_return_mean",
        "final_return_stderr",
    ]
    rows = [
        ["dqn-online[0]", 13.41, 10, None, None, None, None],
        ["dqn", None, None, 89.76, 7.555, 134.3, 56.7],
    ]
    print_table(con, cols, rows, key_columns=1)
    lines = buf.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    header = " ".join(lines)
    for name in cols:
        assert f" {name} " in header, name
