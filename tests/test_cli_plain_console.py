"""The command line's start-up: what ``quadriga list`` imports, and the plain console that avoids rich.

``quadriga.cli._common.console`` writes plain strings itself when the output is not a terminal;
these tests hold it to the characters rich writes (random markup, fixed seed), and check in a
subprocess, from the modules it imported, that the warm-cache ``quadriga list`` path imports no
rich (off a terminal) and none of the modules it does not need. Structural checks, no timing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import subprocess
import sys

import pytest
from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

from quadriga.cli._common import (
    Formatter,
    _PlainConsole,
    _rich_console,
    _rich_formatter_class,
    console,
)
from quadriga.markup import escape

PIECES = [
    "a", "bc", "def", " ", "  ", "[", "]", "\\", "[red]", "[/]", "[bold]", "[/bold]", "x" * 30,
    ":", "-", "`", "'", "[1]", "\\[", "[@click]", ".", "ghij klm", "é", "\t", ":smile:", "[b]",
]  # fmt: skip


def _random_text(rng: random.Random, most: int = 25) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, most)))


def test_escape_is_rich_markups():
    rng = random.Random(0)
    for _ in range(3000):
        text = _random_text(rng, 12)
        assert escape(text) == rich_escape(text), text


def test_plain_console_writes_what_rich_writes(monkeypatch, capsys):
    """Random markup at random widths: every string the plain path takes comes out as rich's."""
    rng = random.Random(1)
    plain = 0
    for _ in range(4000):
        text = _random_text(rng)
        if rng.random() < 0.3:
            text = escape(text)
        width = rng.randint(10, 120)
        options = rng.choice(
            [{}, {"emoji": False}, {"markup": False}, {"highlight": False}, {"soft_wrap": True}]
        )
        if options.get("soft_wrap") and rng.random() < 0.5:
            text = text + "\n" + _random_text(rng)  # soft-wrapped text may hold newlines
        buffer = io.StringIO()
        try:
            _rich_console(False, file=buffer, width=width).print(text, **options)
            expected = buffer.getvalue()
        except Exception as exc:  # rich refuses the markup: the plain path must leave it to rich
            expected = type(exc).__name__
        monkeypatch.setenv("COLUMNS", str(width))
        lines = _PlainConsole(False)._q_plain_lines(
            text, options.get("markup"), options.get("emoji"), bool(options.get("soft_wrap"))
        )
        if lines is None:
            continue
        plain += 1
        assert "".join(line + "\n" for line in lines) == expected, (text, width, options)
    assert plain > 600  # the plain path is taken, not left to rich every time
    capsys.readouterr()


@pytest.mark.parametrize("columns", [None, "57", "200"])
def test_plain_console_has_richs_width_and_terminal_answer(monkeypatch, capsys, columns):
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(var, raising=False)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    con = console()
    assert isinstance(con, _PlainConsole)  # capsys: stdout is not a terminal
    real = _rich_console(False)
    assert (con.width, con.is_terminal) == (real.width, real.is_terminal) == (con.width, False)
    con.print("[red]error:[/] a \\[tag] and words " * 9)
    real.print("[red]error:[/] a \\[tag] and words " * 9)
    out = capsys.readouterr().out.splitlines()
    half = len(out) // 2
    assert half > 1 and out[:half] == out[half:]  # wrapped alike
    assert all(line == line.rstrip() for line in out)  # and no line ends in a space


def test_forced_terminal_gets_a_rich_console(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert isinstance(console(), Console)
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert isinstance(console(), Console)


def test_plain_console_hands_everything_else_to_rich(capsys):
    con = console()
    table = Table("kind", "name")
    table.add_row("sampler", "mala")
    con.print("before")
    con.print(table)  # a renderable: rich's console, made now
    assert isinstance(con._q_real, Console)
    with con.capture() as captured:  # later prints go to it, so capture sees them
        con.print("inside")
    con.print("after", style="bold")
    out = capsys.readouterr().out
    assert captured.get() == "inside\n"
    assert out.startswith("before\n") and "sampler" in out and out.endswith("after\n")
    assert "inside" not in out


def test_after_a_table_plain_strings_bypass_rich_only_while_it_holds_nothing_back(capsys, monkeypatch):
    """Once rich's console exists, a plain string is still written directly (as rich writes it,
    at rich's width) unless a capture, a live display or recording holds rich's output back."""
    monkeypatch.setenv("COLUMNS", "30")
    con = console()
    table = Table("kind", "name")
    table.add_row("sampler", "mala")
    con.print(table)
    capsys.readouterr()
    real = con._q_real
    assert isinstance(real, Console)
    real.width = 24  # a width set on the console is the one plain lines wrap at
    calls = []
    monkeypatch.setattr(
        type(real), "print", lambda self, *a, **k: calls.append(a) or Console.print(self, *a, **k)
    )
    text = "[bold]stage[/] draw\\[0] done in 0.0 s and more words"
    con.print(text)
    assert calls == []  # written directly
    direct = capsys.readouterr().out
    buffer = io.StringIO()
    _rich_console(False, file=buffer, width=24).print(text)
    assert direct == buffer.getvalue() and direct.count("\n") == 2
    with con.capture() as captured:
        con.print(text)
    assert len(calls) == 1 and captured.get() == direct  # rich's, so capture sees it
    real.record = True
    con.print("recorded")
    assert len(calls) == 2 and "recorded" in real.export_text()
    capsys.readouterr()


def test_formatter_prints_richs_help():
    """The lazy formatter gives the help text rich-argparse's formatter gives (markup off)."""

    def parser(formatter: type[argparse.HelpFormatter]) -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(
            prog="quadriga", description="A [pipeline] table.", formatter_class=formatter
        )
        p.add_argument("--kind", choices=["sampler", "claim"], help="only this kind [sampler]")
        p.add_argument("name", nargs="?", metavar="NAME", help="see `quadriga list`")
        return p

    assert parser(Formatter).format_help() == parser(_rich_formatter_class()).format_help()
    assert parser(Formatter).format_usage() == parser(_rich_formatter_class()).format_usage()
    assert "[pipeline]" in parser(Formatter).format_help()


#: ``quadriga list`` as ``python -m quadriga list`` runs it, then the names in ``sys.modules`` on stderr
#: (``-X importtime`` does not show modules imported through ``importlib.import_module``)
LIST = (
    "import json, runpy, sys\n"
    "sys.argv = ['quadriga', 'list']\n"
    "try:\n"
    "    runpy.run_module('quadriga', run_name='__main__', alter_sys=True)\n"
    "except SystemExit as exc:\n"
    "    assert not exc.code, exc.code\n"
    "sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
)


#: not needed to list from a warm cache (rich: off a terminal)
#: quadriga.versions may be imported (importlib.metadata, re and functools only): staleness marks
#: read each plugin's version from its metadata's Version header through it
NOT_FOR_LISTING = {
    "torch",
    "numpy",
    "rich",
    "rich.console",
    "rich_argparse",
    "hashlib",
    "_hashlib",
    "difflib",
    "quadriga.api",
    "quadriga.claims.model",
    "quadriga.claims.claim",
    "quadriga.claims.run",
    "quadriga.claims.verdict",
    "quadriga.claims.report",
    "quadriga.cli.run",
    "quadriga.cli.info",
    "quadriga.cli.sweep",
}


@pytest.fixture
def list_env(tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "QUADRIGA_NO_CACHE")
    }
    env["QUADRIGA_CACHE_DIR"] = str(tmp_path / "cache")
    env["COLUMNS"] = "120"
    subprocess.run([sys.executable, "-c", LIST], env=env, capture_output=True, check=True)
    assert any((tmp_path / "cache").glob("registry-*.json"))  # the cache is warm
    return env


def test_warm_cache_list_off_a_terminal_imports_no_rich(list_env):
    proc = subprocess.run(
        [sys.executable, "-c", LIST], env=list_env, capture_output=True, text=True, check=True
    )
    modules, out = set(json.loads(proc.stderr)), proc.stdout
    assert "quadriga.cli.listing" in modules and "quadriga.registry" in modules  # it did list
    assert not any(m.endswith(".plugin") for m in modules)  # no plugin module: the cache served
    assert not modules & NOT_FOR_LISTING, sorted(modules & NOT_FOR_LISTING)
    assert not any(m.startswith("rich") for m in modules)
    assert "claim" in out and "pipeline" in out  # and it printed the table
    data = json.loads(
        subprocess.run(
            [sys.executable, "-m", "quadriga", "list", "--json"],  # the registry's answer, for comparison
            env=list_env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    names = {c["name"] for c in data["claims"]}
    assert names and all(f" {n} " in out or f" {n}\n" in out for n in names)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_warm_cache_list_on_a_terminal_imports_only_what_it_draws(list_env, tmp_path):
    import pty

    leader, follower = pty.openpty()
    with open(tmp_path / "stderr", "w") as err:
        proc = subprocess.Popen([sys.executable, "-c", LIST], env=list_env, stdout=follower, stderr=err)
    os.close(follower)
    drawn = b""
    while True:  # drain the terminal, or the child blocks on a full one
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    assert proc.wait() == 0
    os.close(leader)
    modules = set(json.loads((tmp_path / "stderr").read_text()))
    assert {"rich.console", "rich.table"} <= modules  # what it draws
    unneeded = NOT_FOR_LISTING - {"rich", "rich.console"}
    assert not modules & unneeded, sorted(modules & unneeded)
    assert b"claim" in drawn


def test_last_verdict_follows_the_record_file(tmp_path, monkeypatch):
    """The record is read once while it is unchanged, and again when it is rewritten."""
    from quadriga.claims import record
    from quadriga.claims.fingerprint import verdict_text

    package = tmp_path / "recpkg_for_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = argparse.Namespace(name="c1", target="recpkg_for_test.claims:C1")
    assert record.last_verdict(spec) is None and verdict_text(spec) == "not recorded"
    path = package / record.RECORD_FILE
    path.write_text(json.dumps({"c1": {"status": "passed", "date": "2026-01-02", "version": "0.1"}}))
    # a record without a fingerprint (claims protocol 2) is stale
    assert verdict_text(spec) == "passed stale 2026-01-02 (v0.1)"
    got = record.last_verdict(spec)
    assert got is not None
    got["status"] = "changed by the caller"  # a copy: the next reader sees the file
    assert record.last_verdict(spec)["status"] == "passed"
    tmp = package / "new.json"
    tmp.write_text(json.dumps({"c1": {"status": "refuted", "date": "2026-01-03", "version": "0.2"}}))
    os.replace(tmp, path)  # as atomic_write_json rewrites it
    assert verdict_text(spec) == "refuted stale 2026-01-03 (v0.2)"
    path.unlink()
    assert record.last_verdict(spec) is None


def test_version_is_read_on_first_use():
    code = (
        "import sys, quadriga; a = 'quadriga.versions' in sys.modules; v = quadriga.__version__; print(a, v)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    from quadriga.versions import version_of

    assert out == ["False", version_of("quadriga")]


def test_cell_len_is_richs():
    from rich.cells import cell_len as rich_cell_len

    from quadriga.cli._common import ONE_CELL, cell_len

    for start, stop in ONE_CELL:
        for code in range(start, stop):
            assert rich_cell_len(chr(code)) == 1, hex(code)
    rng = random.Random(2)
    alphabet = "aé─…→≤θЖ\u0301\u3042\U0001f600\t\x07 "
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert cell_len(text) == rich_cell_len(text), ascii(text)
