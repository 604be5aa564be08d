"""Terminal output at the default 80 columns: no name cut or folded, every metric shown, --json everywhere."""

from __future__ import annotations

import io
import json
import sys

import pytest
import tomllib
from rich.console import Console

from quadriga.cli.output import chunk_columns, pivot, print_pivot, print_results
from quadriga.errors import RunInterrupted


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


@pytest.mark.parametrize("n", [40, 45])
def test_results_table_of_many_stages_prints_a_screenful_and_summarises_the_rest(n):
    """At most RESULT_ROWS (40) lines of stages: beyond that 39 stages and one summary line."""
    stages = {
        f"draw[{i}]": {"type": "Samples", "num_samples": 10 + i, "dim": 2, "component": "toy-iid"}
        for i in range(n)
    }
    text = console_text(lambda con: print_results(con, {"stages": stages}))
    rows = [line.split() for line in text.splitlines()]
    printed = [r[0] for r in rows if r and r[0].startswith("draw[")]
    if n == 40:
        assert printed == list(stages) and "more stage" not in text
    else:
        assert printed == list(stages)[:39]
        assert ["draw[38]", "toy-iid", "48", "x", "2", "samples"] in rows
        assert (
            "... and 6 more stages (repeat) of draw (every stage's result is in the run directory's"
            in " ".join(text.split())
        )


def test_list_fits_80_columns_without_folding_distribution_names(capsys):
    code, out, _ = cli(capsys, "list")
    assert code == 0
    lines_fit(out)
    assert all(line == line.rstrip() for line in out.splitlines())  # no trailing spaces
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
    # one value has no standard error and no interval: null, not 0.0
    assert err_row["stderr"] is None and err_row["ci_low"] is None and err_row["ci_high"] is None
    assert '"stderr": null' in out and '"stderr": 0.0' not in out
    # two runs: the standard error of the mean of the two values, |a - b| / 2
    code, _, err = cli(capsys, "run", "toy-pipeline", "--out", str(tmp_path / "r2"), "--seed", "5", "--json")
    assert code == 0, err
    code, out, err = cli(
        capsys, "compare", str(tmp_path / "r"), str(tmp_path / "r2"), "--out", str(tmp_path / "c2"), "--json"
    )
    assert code == 0, err
    values = [
        json.loads((tmp_path / d / "results.json").read_text())["stages"]["check"]["values"][
            "draw/mean_error"
        ]
        for d in ("r", "r2")
    ]
    pooled = [e for e in json.loads(out)["summary"] if e["metric"] == "draw/mean_error"]
    assert [e["n"] for e in pooled] == [2]
    assert pooled[0]["stderr"] == pytest.approx(abs(values[0] - values[1]) / 2)


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


def test_matrix_labels_show_in_headers_and_titles():
    # "[alpha=0.5]" is rich markup unless escaped: the header would print "srmc-gauss" four times
    values = {f"srmc-gauss[alpha={a}]/ratio": float(i) for i, a in enumerate((0.5, 1, 2, 5))}
    text = console_text(lambda con: print_pivot(con, values, title="mse[gauss]"))
    assert text.startswith("mse[gauss]\n")
    for a in (0.5, 1, 2, 5):
        assert f"srmc-gauss[alpha={a}]" in text
    lines_fit(text)


PLAN = [
    ("task.gmm", "gaussian-mixture", "target", ""),
    ("stage.rwm", "rwm", "sampler", "target=gmm"),
    ("stage.mala", "mala", "sampler", "target=gmm"),
    ("stage.hmc", "hmc", "sampler", "target=gmm"),
    ("stage.coverage", "mode-coverage", "evaluator", "subject=[rwm, mala, hmc], reference=gmm"),
    (
        "stage.mse",
        "replicate-mean-mse",
        "evaluator",
        "subject=[mala-gauss, srmc-gauss[alpha=0.5], srmc-gauss[alpha=1.0], srmc-gauss[alpha=2.0], "
        "srmc-gauss[alpha=5.0]], reference=gauss",
    ),
]


def test_plan_inputs_break_only_between_names_and_fit_one_table():
    from quadriga.cli.output import print_table

    text = console_text(
        lambda con: print_table(
            con,
            ["table", "component", "kind", "inputs"],
            PLAN,
            title="pipeline p",
            wrap="inputs",
            wrap_at=", ",
        )
    )
    lines_fit(text)
    assert "(1/2)" not in text and text.count(" inputs") == 1  # 6 rows that fit: one table
    assert all(line == line.rstrip() for line in text.splitlines())  # no trailing spaces
    inputs = [line[line.index("subject=") if "subject=" in line else 50 :] for line in text.splitlines()]
    pieces = " ".join(line.strip() for line in inputs if line.strip())
    for name in ("srmc-gauss[alpha=0.5],", "srmc-gauss[alpha=5.0]],", "subject=[rwm,", "reference=gauss"):
        assert name in pieces.split(), name  # whole: never folded inside a name
    continued = [line for line in text.splitlines() if line.startswith(" " * 20) and line.strip()]
    assert continued and all(line.strip()[0] in "rsm" for line in continued)  # a name starts each


def test_wrap_items_breaks_at_the_separator_only():
    from quadriga.cli.output import wrap_items

    assert wrap_items("a=[x[1], y[2]], b=z", 9, ", ") == "a=[x[1],\ny[2]],\nb=z"
    assert wrap_items("one two three", 7) == "one two\nthree"
    assert wrap_items("averyveryverylongname, b", 5, ", ") == "averyveryverylongname,\nb"


def test_gmm_plan_at_80_columns_is_one_table_without_trailing_spaces(capsys):
    code, out, _ = cli(capsys, "run", "gmm-mcmc-baselines", "--check")
    assert code == 0
    lines_fit(out)
    assert "(1/2)" not in out and out.count(" inputs") == 1
    assert " subject=[rwm, mala, hmc]," in out  # broken after a name, never inside one
    assert all(line == line.rstrip() for line in out.splitlines())


Q_VALUES = {
    **{
        f"dqn[{i}]/{k}": v
        for i in range(3)
        for k, v in (("q_overestimation", 1.0 + i), ("q_overestimation_stderr", 0.1 * (i + 1)))
    },
    "dqn/q_overestimation_mean": 2.0,
    "dqn/q_overestimation_stderr": 0.5774,
}


def test_across_seed_aggregates_get_their_own_table_with_n():
    from quadriga.cli.output import across_seed_rows

    per_run, pooled = across_seed_rows(Q_VALUES)
    assert "dqn/q_overestimation_stderr" not in per_run and "dqn[2]/q_overestimation_stderr" in per_run
    assert pooled == [["dqn", "q_overestimation", 3, 2.0, 0.5774]]
    text = console_text(lambda con: print_pivot(con, Q_VALUES, title="q-overestimation"))
    lines_fit(text)
    rows = [line.split() for line in text.splitlines()]
    assert ["subject", "q_overestimation", "q_overestimation_stderr"] in rows
    assert ["dqn[0]", "1", "0.1"] in rows and not any(r and r[0] == "dqn" for r in rows[:8])
    assert "q-overestimation: across seeds (mean of n runs, its s.e.)" in text
    assert ["configuration", "metric", "n", "mean", "s.e."] in rows
    assert ["dqn", "q_overestimation", "3", "2", "0.5774"] in rows


def test_one_seed_prints_no_standard_error():
    values = {"dqn[0]/auc": 0.8, "dqn/auc_mean": 0.8, "dqn/auc_stderr": 0.0}
    text = console_text(lambda con: print_pivot(con, values, title="auc"))
    rows = [line.split() for line in text.splitlines()]
    assert ["dqn", "auc", "1", "0.8"] in rows  # one run has no s.e. (not 0), and no s.e. column
    assert "auc: across seeds (one run each, so no s.e.)" in text
    assert ["configuration", "metric", "n", "mean"] in rows
    assert not any(r[-1:] == ["0"] for r in rows)


def test_empty_rows_of_a_part_are_left_out():
    from quadriga.cli.output import print_table

    rows2 = [[f"a[{i}]", 1.0, ""] for i in range(6)] + [["b", "", 2.5]]
    text2 = console_text(lambda con: print_table(con, ["subject", "x", "x_" * 40 + "y"], rows2, title="t"))
    second = text2.split("(2/2)")[1]
    assert "a[0]" not in second and " b " in second + " "  # the part holding y shows b alone


SUMMARY = [
    {
        "stage.mala.step_size": step,
        "stage": stage,
        "metric": metric,
        "n": 4,
        "mean": mean,
        "stderr": se,
        "ci_low": lo,
        "ci_high": hi,
        "ci_method": method,
    }
    for step in (0.1, 0.3, 0.6)
    for stage, metric, mean, se, lo, hi, method in (
        ("coverage", "mala/modes_visited", 3.5, 0.29, 3.0, 4.0, "BCa bootstrap, 95%"),
        ("coverage", "hmc/total_variation_distance", 0.125, 0.01, 0.11, 0.14, "BCa bootstrap, 95%"),
        ("coverage", "rwm/modes_visited", 4.0, 0.0, 4.0, 4.0, "no interval: all 4 values equal"),
        ("mala", "rejected_nonfinite", 0.0, 0.0, 0.0, 0.0, "none (constant data, n=4), 95%"),
        ("mala", "acceptance_rate", 0.57, 0.01, 0.55, 0.59, "BCa bootstrap, 95%"),
    )
]


def test_sweep_summary_keeps_a_row_together_and_leaves_out_zero_diagnostics():
    from quadriga.cli.output import print_summary

    text = console_text(lambda con: print_summary(con, SUMMARY, ["stage.mala.step_size"]))
    lines_fit(text)
    assert "(1/2)" not in text and "rejected_nonfinite" not in text.split("left out")[0]
    rows = [line.split() for line in text.splitlines()]
    # the coverage table is too wide with a metric column: one table per metric, a row whole
    assert ["stage", "coverage:", "modes_visited"] in rows and ["stage", "mala"] in rows
    assert ["0.3", "mala", "4", "3.5", "0.29", "[3,", "4]"] in rows  # mean, s.e., interval: one line
    assert ["0.1", "rwm", "4", "4", "0", "all", "equal"] in rows
    assert ["0.6", "acceptance_rate", "4", "0.57", "0.01", "[0.55,", "0.59]"] in rows  # no subject
    assert "left out: rejected_nonfinite, 0 in every run of mala (kept in summary.csv)." in text
    assert "constant data" not in text
    assert "intervals: BCa bootstrap, 95%; all equal: no interval, all 4 values equal" in " ".join(
        text.split()
    )


def test_sweep_figure_has_no_panel_for_zero_diagnostics(tmp_path, monkeypatch):
    from quadriga import summary as summary_module

    drawn = {}

    def plot(summary, keys, path, **_):
        drawn["metrics"] = {(e["stage"], e["metric"]) for e in summary}
        return path

    monkeypatch.setattr(summary_module, "plot_summary", plot)
    assert summary_module.constant_zero(SUMMARY) == {("mala", "rejected_nonfinite")}
    rows = [{"stage": "mala", "metric": "acceptance_rate", "value": 0.5}]
    summary_module.write_outputs(tmp_path, rows, SUMMARY, ["stage.mala.step_size"])
    assert ("mala", "rejected_nonfinite") not in drawn["metrics"]
    assert ("mala", "acceptance_rate") in drawn["metrics"]
    assert "rejected_nonfinite" in (tmp_path / "summary.csv").read_text()  # the table keeps it


def test_compare_footer_paths_are_never_wrapped(capsys, registry, tmp_path, monkeypatch):
    from quadriga import registry as registry_module

    monkeypatch.setattr(registry_module, "_DEFAULT", registry)
    monkeypatch.setattr(sys, "argv", ["quadriga"])
    run_dir = tmp_path / "r"
    code, _, err = cli(capsys, "run", "toy-pipeline", "--out", str(run_dir), "--quiet")
    assert code == 0, err
    out_dir = tmp_path / ("a-rather-long-directory-name-for-the-comparison-" * 2)
    code, out, err = cli(capsys, "compare", str(run_dir), "--out", str(out_dir))
    assert code == 0, err
    lines = out.splitlines()
    assert f"table: {out_dir / 'summary.csv'}" in lines or any(
        line.startswith(f"table: {out_dir}/results.") for line in lines
    )
    assert f"figure: {out_dir / 'summary.png'}" in lines
    assert all(line == line.rstrip() for line in lines)


def test_doctor_uses_the_shared_table_and_never_cuts_names(capsys):
    _, out, _ = cli(capsys, "doctor")
    lines_fit(out.split("plugins (")[1].split("\n\n", 2)[-1].split("\n\n")[0])
    assert "…" not in out
    assert " ─" in out and "┃" not in out and "│" not in out  # SIMPLE_HEAD, as every table
    header = next(line for line in out.splitlines() if line.startswith(" distribution"))
    assert header.split() == ["distribution", "version", "status", "components"]
    assert any(
        line.split()[:3] == ["quadriga-std", line.split()[1], "ok"]
        for line in out.splitlines()[15:]
        if line.startswith(" quadriga-std ")
    )


def test_doctor_lists_the_optional_extras_with_their_install_command(capsys, monkeypatch):
    import importlib.metadata as md

    from quadriga.cli import doctor

    real = doctor.version_of
    monkeypatch.setattr(doctor, "version_of", lambda name: "" if name == "submitit" else real(name))
    lines = doctor.optional_lines()
    assert (
        "  submitit not installed: quadriga sweep --backend submitit (SLURM); pip install 'quadriga[slurm]'"
        in lines
    )
    assert f"  pyarrow {md.version('pyarrow')}: results.parquet (else results.csv)" in lines
    assert len(lines) == len(doctor.OPTIONAL)
    _, out, _ = cli(capsys, "doctor")
    section = out.split("optional (not needed to run pipelines):\n")[1].split("plugins (")[0]
    assert section.splitlines() == lines


def test_list_shows_the_verdict_in_its_own_column(capsys, monkeypatch):
    import quadriga.claims as claims

    monkeypatch.setattr(
        claims, "last_verdict", lambda spec: {"status": "refuted", "date": "2026-12-01", "version": "0.1.0"}
    )
    monkeypatch.setattr(claims, "stale_reason", lambda spec: "")  # fresh records
    code, out, _ = cli(capsys, "list", "--kind", "claim")
    assert code == 0
    lines_fit(out)
    header = next(line for line in out.splitlines() if line.split()[:3] == ["kind", "name", "verdict"])
    start = header.index("summary")
    row = next(line for line in out.splitlines() if line.startswith(" claim "))
    assert row.split()[2] == "refuted" and "2026-12-01" not in out and "(refuted" not in out
    assert len(row) - start >= 30  # the summary keeps its room
    assert "*: stale" not in out
    code, out, _ = cli(capsys, "list", "--kind", "claim", "--full")
    assert "refuted 2026-12-01" in out and "(v0.1.0)" not in out
    lines_fit(out)
    # a stale record (its code changed since) is starred, and the footer says what the star means
    monkeypatch.setattr(claims, "stale_reason", lambda spec: "the source changed")
    code, out, _ = cli(capsys, "list", "--kind", "claim")
    row = next(line for line in out.splitlines() if line.startswith(" claim "))
    assert row.split()[2] == "refuted*" and "*: stale, the code that recorded it changed" in out
    lines_fit(out)


def _subcommand_parsers():
    import argparse

    from quadriga.cli import build_parser

    todo = [("quadriga", build_parser())]
    while todo:
        name, parser = todo.pop()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {n}", p) for n, p in action.choices.items()]


def test_every_argument_of_every_command_has_help():
    import argparse

    missing = [
        (name, action.option_strings or action.dest)
        for name, parser in _subcommand_parsers()
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not (action.help or "").strip()
    ]
    assert not missing


@pytest.mark.parametrize(
    "command", ["run", "sweep", "report", "verify", "compare", "list", "info", "new plugin", "new update"]
)
def test_help_paragraphs_wrap_at_80_columns_and_examples_stay_verbatim(command, capsys, monkeypatch):
    from quadriga.cli import build_parser

    monkeypatch.setenv("COLUMNS", "80")
    argv = [*command.split(), "--help"]
    with pytest.raises(SystemExit):
        build_parser(argv).parse_args(argv)
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if len(line) > 80]  # examples and usage included
    assert not long, long
    if command == "sweep":  # the examples as written, each on its own line
        assert "  quadriga sweep gmm-mcmc-baselines --seeds 0:10\n" in out
        assert "--backend submitit \\\n      --max-jobs 8 --slurm partition=cpu" in out
        assert "NAME_OR_PATH          a registered pipeline name or a TOML file" in out
    if command == "run":
        assert "  [stage.mala]\n" in out  # TOML example kept


def test_interrupt_and_failure_messages_print_the_resume_command_whole(
    capsys, registry, tmp_path, monkeypatch
):
    from quadriga import registry as registry_module
    from quadriga import runs

    monkeypatch.setattr(registry_module, "_DEFAULT", registry)
    run_dir = tmp_path / ("a-long-run-directory-name-" * 3)

    def interrupted(*args, **kwargs):
        raise RunInterrupted(run_dir)

    monkeypatch.setattr(runs, "execute", interrupted)
    code, out, err = cli(capsys, "run", "toy-pipeline", "--quiet")
    assert code == 130
    assert f"  quadriga run --resume {run_dir}" in err.splitlines()  # one line, however long
    assert f"  {run_dir}" in err.splitlines() and "resume" not in out


def test_a_failed_run_reports_on_stderr_and_keeps_stdout_for_results(capsys, registry, monkeypatch, tmp_path):
    from quadriga import registry as registry_module

    monkeypatch.setattr(registry_module, "_DEFAULT", registry)
    code, out, err = cli(
        capsys,
        "run",
        "toy-pipeline",
        "--quiet",
        "--set",
        "stage.draw.fail=true",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 1
    assert "run failed" in err and "asked to fail" in err and f"quadriga run --resume {tmp_path / 'r'}" in err
    assert "run failed" not in out and "run directory:" in out


def test_info_and_error_paragraphs_end_without_spaces(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(capsys, "info", "srmc")  # a long docstring, wrapped and indented by rich
    assert code == 0 and len(out.splitlines()) > 20
    assert [line for line in out.splitlines() if line != line.rstrip()] == []
    code, _, err = cli(capsys, "run", "no-such-pipeline-" + "x" * 30)
    assert code == 2 and len(err.splitlines()) > 1  # a wrapped paragraph
    assert [line for line in err.splitlines() if line != line.rstrip()] == []


@pytest.mark.parametrize("width", ["80", "100"])
def test_list_cuts_long_summaries_with_an_ellipsis_never_silently(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", width)
    code, out, _ = cli(capsys, "list", "--json")
    summaries = {(c["kind"], c["name"]): c["summary"] for c in json.loads(out)["components"] if c["summary"]}
    code, out, _ = cli(capsys, "list")
    assert code == 0
    checked = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or (parts[0], parts[1]) not in summaries or len(line) < int(width) - 20:
            continue
        summary = summaries[(parts[0], parts[1])]
        if summary in line:
            continue
        checked += 1
        shown = line.rstrip().rsplit("   ", 1)[-1].strip()
        assert shown.endswith("…") and summary.startswith(shown[:-1]), (line, summary)
        assert len(line) <= int(width)
    assert checked > 5  # long summaries were cut, each visibly


def test_a_two_seed_summary_notes_the_t_interval_it_printed_not_a_bootstrap():
    from rich.console import Console

    from quadriga.cli.output import print_summary
    from quadriga.summary import aggregate

    rows = [{"stage": "s", "metric": "m", "value": v} for v in (1.0, 3.0)]
    (entry,) = aggregate(rows, [])
    # mean 2, s.e. 1, t(0.975, df 1) = 12.706: [2 - 12.706, 2 + 12.706]
    assert entry["ci_low"] == pytest.approx(2 - 12.7062, abs=1e-3)
    assert entry["ci_method"].startswith("Student t")
    con = Console(record=True, width=80, color_system=None)
    print_summary(con, [entry], [])
    text = " ".join(con.export_text().split())
    assert "bootstrap" not in text
    assert "at n = 2 a Student t interval has 1 degree of freedom: mean ± 12.7 s.e. at 95%" in text


def test_long_stage_names_in_a_list_are_never_broken_across_lines():
    """The run preamble's inputs column: matrix stage names longer than the room beside the key
    column go below their row, whole, within 80 columns."""
    from quadriga.cli.output import print_table

    names = [
        f"mala[step_size={s},num_samples={n}][{i}]" for s in (0.1, 0.35) for n in (100, 200) for i in (0, 1)
    ]
    rows = [[f"stage.{m}", "target=normal"] for m in names]
    rows.append(["stage.energy", f"subject=[{', '.join(names)}], reference=normal"])
    text = console_text(lambda con: print_table(con, ["table", "inputs"], rows, wrap="inputs", wrap_at=", "))
    lines_fit(text)
    body = text.splitlines()
    for name in names:  # each name whole on one line, under its own row and in the energy list
        assert sum(name in line for line in body) == 2, name
    assert "table (its inputs indented below)" in text
    start = body.index(" stage.energy")
    assert body[start + 1] == f"   subject=[{names[0]},"
    # a list that fits beside its keys stays a column
    short = console_text(
        lambda con: print_table(
            con, ["table", "inputs"], [["stage.e", "subject=[a, b]"]], wrap="inputs", wrap_at=", "
        )
    )
    assert " stage.e   subject=[a, b]" in short.splitlines()


def test_the_summary_keeps_a_metric_name_holding_a_slash_whole():
    """A learner's own "flowrl/mean_reward" is not shown as subject "flowrl"; an evaluator's metric of
    that name has its subject in the subject column and the whole name in the metric column."""
    from quadriga.cli.output import print_summary
    from quadriga.summary import aggregate

    rows = [
        {"stage": "fit", "subject": "fit", "metric": "flowrl/mean_reward", "value": 0.5 + 0.1 * seed}
        for seed in range(3)
    ] + [
        {"stage": "check", "subject": "fit", "metric": "flowrl/mean_reward", "value": 0.4 + 0.1 * seed}
        for seed in range(3)
    ]
    text = console_text(lambda con: print_summary(con, aggregate(rows, []), []))
    lines_fit(text)
    table = [line.split() for line in text.splitlines()]
    assert ["flowrl/mean_reward", "3", "0.6"] == table[table.index(["stage", "fit"]) + 4][:3]
    assert ["fit", "flowrl/mean_reward", "3", "0.5"] == table[table.index(["stage", "check"]) + 4][:4]
    # a run's pivot: the evaluator's subject is a stage of the run, the rest is the metric
    values = {"fit/flowrl/mean_reward": 0.25, "fit/tv": 0.5}
    text = console_text(lambda con: print_pivot(con, values, title="check", stages={"fit", "check"}))
    assert any(line.split() == ["fit", "0.25", "0.5"] for line in text.splitlines()), text
    assert "flowrl/mean_reward" in text


def test_plain_list_table_asks_the_console_its_width_once():
    """Off a terminal each look at the width asks the stream whether it is one: once per table."""
    from quadriga.cli.listing import _write_plain_table

    class Counting:
        def __init__(self):
            self.file, self.looks = io.StringIO(), 0

        @property
        def width(self):
            self.looks += 1
            return 60

    con = Counting()
    rows = [["sampler", f"s{i}", "a summary " * 8] for i in range(30)]
    assert _write_plain_table(con, "quadriga-x", rows)
    lines = con.file.getvalue().splitlines()
    assert con.looks == 1 and len(lines) == 35 and max(map(len, lines)) == 59  # no trailing space
    assert lines[4].startswith(" sampler   s0     a summary") and lines[4].endswith("…")
