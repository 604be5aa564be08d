"""A shared report carries no more than the run: only regular PNG files inside the reported
directory are embedded, whatever its records name (paths outside, symlinks, files that are not PNG)."""

from __future__ import annotations

import base64
import json
import os

from robust_helpers import GOOD

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_tampered_run_cannot_smuggle_files_into_its_report(cli, tmp_path):
    (tmp_path / "p.toml").write_text(GOOD)
    assert cli("run", "p.toml", "--out", "r", "--quiet").rc == 0
    run = tmp_path / "r"
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "key.png").write_bytes(PNG + b"SECRET-OUTSIDE")
    (run / "linked.png").symlink_to(secret / "key.png")
    (run / "text.png").write_bytes(b"SECRET-NOT-A-PNG")
    (run / "fine.png").write_bytes(PNG + b"FIGURE-INSIDE")
    results = json.loads((run / "results.json").read_text())
    names = [str(secret / "key.png"), "../outside/key.png", "linked.png", "text.png", "fine.png"]
    results["stages"]["check"]["figures"] = names
    (run / "results.json").write_text(json.dumps(results))

    o = cli("report", "r", "--out", "page.html")
    assert o.rc == 0, o.text
    page = (tmp_path / "page.html").read_text()
    encoded = {w: base64.b64encode(PNG + w.encode()).decode() for w in ("SECRET-OUTSIDE", "FIGURE-INSIDE")}
    assert encoded["FIGURE-INSIDE"] in page  # the run's own figure is there
    assert encoded["SECRET-OUTSIDE"] not in page  # neither by absolute path, by ../, nor by symlink
    assert base64.b64encode(b"SECRET-NOT-A-PNG").decode() not in page
    assert os.path.islink(run / "linked.png")  # the report did not touch the run


def test_a_run_whose_records_are_links_to_outside_is_refused(cli, tmp_path):
    """pipeline.toml or manifest.json linked to a file outside: refused, nothing of that file in a page."""
    (tmp_path / "p.toml").write_text(GOOD)
    assert cli("run", "p.toml", "--out", "r", "--quiet").rc == 0
    (tmp_path / "secret.txt").write_text('[pipeline]\nname = "SECRET-OUTSIDE"\n')
    (tmp_path / "secret.json").write_text(json.dumps({"x": "SECRET-OUTSIDE"}))
    for name, target in (("pipeline.toml", "secret.txt"), ("manifest.json", "secret.json")):
        assert cli("run", "p.toml", "--out", name, "--quiet").rc == 0
        run = tmp_path / name
        (run / name).unlink()
        (run / name).symlink_to(tmp_path / target)
        o = cli("report", name, "--out", f"{name}.html")
        assert o.rc == 2 and "is a symbolic link" in o.err and name in o.err, o.text
        page = tmp_path / f"{name}.html"
        assert not page.exists() or "SECRET-OUTSIDE" not in page.read_text()


#: paths opened or listed while ``_WATCH`` is set (an audit hook cannot be removed, so it is gated)
_OPENED: list[str] = []
_WATCH = [False]
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if _WATCH[0] and event in ("open", "os.listdir", "os.scandir") and args:
        _OPENED.append(os.fsdecode(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else "")


def test_report_and_compare_of_an_unfinished_run_never_read_its_full_copies(cli, tmp_path):
    """An interrupted run keeps full copies of thinned stages in .resume/; report and compare
    neither open them nor list that folder, and the page carries nothing of them."""
    import sys

    text = GOOD.replace("num_samples = 50\n", "num_samples = 50\nsave_thin = 5\n")
    text += '\n[stage.boom]\nuse = "toy-iid"\ninputs = { target = "normal" }\nfail = true\n'
    (tmp_path / "p.toml").write_text(text)
    assert cli("run", "p.toml", "--out", "r", "--quiet").rc == 1
    copy = tmp_path / "r" / ".resume" / "draw" / "artifact.pt"
    assert copy.is_file()
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    _OPENED.clear()
    _WATCH[0] = True
    try:
        report = cli("report", "r", "--out", "page.html")
        compare = cli("compare", "r", "--out", "cmp")
    finally:
        _WATCH[0] = False
    assert report.rc == 0 and compare.rc == 0, (report.text, compare.text)
    assert any(p.endswith("results.json") for p in _OPENED)  # the hook saw the reads
    assert [p for p in _OPENED if ".resume" in p] == []
    page = (tmp_path / "page.html").read_text()
    assert ".resume" not in page and base64.b64encode(copy.read_bytes()[:60]).decode() not in page


def test_the_page_writes_the_home_directory_as_a_tilde(tmp_path, monkeypatch, registry):
    """A shared page does not carry the account name: paths under the home directory read ``~/``."""
    from quadriga.api import run
    from quadriga.report import build_report

    home = tmp_path / "home" / "ada"
    result = run("toy-pipeline", out=home / "runs" / "r", registry=registry)
    monkeypatch.setattr("pathlib.Path.home", lambda: home)
    text = build_report([result.dir])
    assert str(home) not in text
    assert "~/runs/r" in text
