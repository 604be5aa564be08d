"""``quadriga report``: one self-contained page, checked by parsing it and by rendering it in Chromium."""

from __future__ import annotations

import base64
import html
import html.parser
import io
import json
import shutil
import subprocess

import numpy as np
import pytest

from quadriga.claims import Effect, decide

WHY = "the paper claims the direction only"

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Page(html.parser.HTMLParser):
    """The parts of the page the tests look at: images, tables (as lists of rows), headings."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.headings: list[str] = []
        self.links: list[str] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images.append(a.get("src", ""))
        elif tag in ("link", "script") and (a.get("href") or a.get("src")):
            self.links.append(a.get("href") or a.get("src"))
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag in ("h2", "h3") and self._heading is not None:
            self.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


@pytest.fixture
def reported(registry, tmp_path):
    """A toy run with a figure, a claim record with a real interval, and the page written for both."""
    from quadriga.api import run
    from quadriga.report import write_report

    result = run("toy-pipeline", overrides=["stage.check.plot=true"], out=tmp_path / "run", registry=registry)
    rng = np.random.default_rng(0)
    base = rng.normal(10.0, 2.0, 40)
    x, y = base + 1.0 + rng.normal(0, 0.5, 40), base  # paired arms, the method 1 unit higher
    effect = Effect(
        quantity="return difference", statistic="difference", relation="greater", value=0.0, why_sign=WHY
    )
    comparison = {**decide(effect, x, y), "arm": "method", "baseline": "baseline"}
    verify_dir = tmp_path / "verify" / "20260101T000000Z"
    verify_dir.mkdir(parents=True)
    record = {
        "name": "toy-difference",
        "claim": "the method's return exceeds the baseline's",
        "paper": "Toy 2026, Thm. 1",
        "scale": "paper",
        "status": comparison["verdict"],
        "effect": {"quantity": effect.quantity, "claimed": "difference > 0", "level": 0.95},
        "comparisons": [comparison],
    }
    (verify_dir / "report.json").write_text(json.dumps([record]))
    out = write_report([result.dir], tmp_path / "page" / "report.html", verify=[tmp_path / "verify"])
    return result, comparison, out


def test_the_page_holds_figures_tables_pipeline_and_verdicts(reported):
    result, comparison, out = reported
    text = out.read_text()
    page = Page()
    page.feed(text)
    assert not page.links  # self-contained: no stylesheet, script or image fetched from elsewhere
    (figure,) = page.images
    assert figure.startswith("data:image/png;base64,")
    png = base64.b64decode(figure.split(",", 1)[1])
    assert png == (result.dir / result.results["stages"]["check"]["figures"][0]).read_bytes()
    tables = {t[0][0] + ":" + t[0][1]: t for t in page.tables}
    metrics = tables["subject:mean_error"]
    value = result.results["stages"]["check"]["values"]["draw/mean_error"]
    assert metrics[1][:2] == ["draw", f"{value:.4g}"]
    stages = tables["stage:component"]
    assert [r[0] for r in stages[1:]] == ["draw", "est", "check"]
    claims = tables["arm:baseline"]
    row = dict(zip(claims[0], claims[1], strict=True))
    assert row["verdict"] == "passed" == comparison["verdict"] and row["n"] == "40"
    assert row["interval"] == f"[{comparison['low']:.4g}, {comparison['high']:.4g}]"
    assert 0 < comparison["low"] < 1.0 < comparison["high"]  # the interval covers the true shift of 1
    assert "[stage.draw]" in text and "toy-pipeline" in text  # the resolved pipeline.toml
    assert '"seeds"' in html.unescape(text)  # the manifest
    assert any(h.startswith("toy-difference passed") for h in page.headings)


def test_values_from_a_run_cannot_inject_markup(tmp_path):
    from quadriga.report import build_report

    run_dir = tmp_path / "r"
    run_dir.mkdir()
    bad = "<script>alert(1)</script>"
    (run_dir / "results.json").write_text(
        json.dumps(
            {"pipeline": bad, "seed": 0, "stages": {"e": {"type": "Metrics", "values": {f"{bad}/m": 1.0}}}}
        )
    )
    page = build_report([run_dir])
    assert bad not in page and "&lt;script&gt;" in page


def test_report_errors_name_the_fix(tmp_path, capsys, monkeypatch):
    from quadriga.cli import main

    monkeypatch.setenv("COLUMNS", "300")  # the long paths stay whole
    (tmp_path / "runs" / "a").mkdir(parents=True)
    (tmp_path / "runs" / "a" / "results.json").write_text("{}")
    assert main(["report", str(tmp_path / "runs")]) == 2
    assert "quadriga report" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--verify", str(tmp_path / "nothing")]) == 2
    capsys.readouterr()
    assert main(["report", str(tmp_path / "runs" / "doesnotexist")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"'{tmp_path / 'runs' / 'doesnotexist'}' does not exist" in err and "key" not in err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "is neither a run directory" in err and "key 'report'" not in err


@pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium browser (Debian package `chromium`)")
def test_the_page_renders_in_chromium_with_its_figure(reported, tmp_path):
    from PIL import Image

    _, _, out = reported
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1800",
            f"--screenshot={shot}",
            out.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    image = np.asarray(Image.open(io.BytesIO(shot.read_bytes())).convert("RGB")).astype(int)
    assert image.shape[:2] == (1800, 1200)
    ink = (image.sum(axis=2) < 600).mean()  # pixels clearly darker than white
    assert 0.01 < ink < 0.5, ink
    # the matplotlib figure: rows whose colours vary a lot (bars, axes, text), in the page's upper part
    colourful = (np.abs(np.diff(image, axis=2)).sum(axis=2) > 60).mean(axis=1)  # saturated pixels per row
    assert colourful.max() > 0.02, colourful.max()


def test_a_sweep_section_gives_n_mean_and_interval_per_grid_point(plugin_path, tmp_path):
    from qtest_helpers import run_cli

    from quadriga.report import build_report
    from quadriga.summary import aggregate, load_rows

    out = tmp_path / "sw"
    proc = run_cli(
        ["sweep", "toy-pipeline", "--seeds", "0:3", "--workers", "1", "--out", str(out)],
        site=plugin_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = Page()
    text = build_report([out])
    page.feed(text)
    rows, keys = load_rows(out)
    (expected,) = [e for e in aggregate(rows, keys) if e["metric"] == "draw/mean_error"]
    assert expected["n"] == 3
    # one table per metric: subjects as rows, the mean with its interval in one cell
    i = page.headings.index("Mean error (mean_error), stage check")
    table = page.tables[[t[0] for t in page.tables].index(["subject", "mean [interval]"])]
    assert table == [
        ["subject", "mean [interval]"],
        ["draw", f"{expected['mean']:.4g} [{expected['ci_low']:.4g}, {expected['ci_high']:.4g}]"],
    ], (i, table)
    # the interval's method is said once per table, under it, not in the cells
    assert not any("Student t" in c for t in page.tables for r in t for c in r)
    pivots = sum(1 for h in page.headings if ", stage " in h or h.endswith("per sampler stage"))
    assert html.unescape(text).count("n = 3 per cell; intervals: Student t") == pivots >= 1
    assert page.images  # the sweep's summary figure is embedded


@pytest.fixture
def claims_page(registry, tmp_path, monkeypatch):
    """``quadriga verify`` of a two-group claim whose experiment draws a figure, and the page of it."""
    from matplotlib.figure import Figure

    import quadriga.claims as qc
    from quadriga.claims import Claim, Observations, Scale
    from quadriga.report import write_report

    rng = np.random.default_rng(1)
    base = rng.normal(5.0, 1.0, 30)

    def experiment(scale, out_dir):
        fig = Figure(figsize=(5, 3.5))
        ax = fig.add_subplot()
        ax.bar(["tuned", "paper"], [0.6, 0.8], color=["tab:blue", "tab:orange"])
        ax.set_ylabel("variance ratio")
        fig.savefig(out_dir / "ratios.png", dpi=100)
        values = {
            "tuned step h=0.05": {"srmala": 0.6 * base + rng.normal(0, 0.1, 30), "mala": base},
            "paper step h=0.1": {"srmala": 0.8 * base + rng.normal(0, 0.1, 30), "mala": base},
        }
        return Observations(values=values, figures={"ratios": str(out_dir / "ratios.png")})

    claim = Claim(
        arms=("srmala", "mala"),
        effect=Effect(quantity="variance ratio", statistic="ratio", relation="less", value=1.0, why_sign=WHY),
        scales={"smoke": Scale(replicates=3), "paper": Scale(replicates=30)},
        experiment=experiment,
    )
    monkeypatch.setattr(registry, "load_claim", lambda s: claim)
    out_dir = tmp_path / "verify" / "toy"
    records, _ = qc.verify(registry, "toy-claim", scale="paper", out_dir=out_dir)
    page = write_report([], tmp_path / "claims.html", verify=[out_dir])
    return records[0], out_dir, page


def test_a_claims_page_shows_each_group_and_embeds_the_claims_figure(claims_page):
    record, out_dir, out = claims_page
    page = Page()
    page.feed(out.read_text())
    table = next(t for t in page.tables if t[0][:3] == ["group", "arm", "baseline"])
    rows = [dict(zip(table[0], r, strict=True)) for r in table[1:]]
    assert [(r["group"], r["arm"], r["baseline"]) for r in rows] == [
        ("tuned step h=0.05", "srmala", "mala"),
        ("paper step h=0.1", "srmala", "mala"),
    ]
    for row, c in zip(rows, record["comparisons"], strict=True):
        assert row["statistic"] == "ratio" and row["estimate"] == f"{c['estimate']:.4g}"
        assert row["verdict"] == c["verdict"] == "passed"
    assert 0.55 < record["comparisons"][0]["estimate"] < 0.65 < 0.75 < record["comparisons"][1]["estimate"]
    (figure,) = page.images  # verify wrote it into <out>/<claim>/, not next to report.json
    assert base64.b64decode(figure.split(",", 1)[1]) == (out_dir / "toy-claim" / "ratios.png").read_bytes()
    assert "from the interval's own method" in out.read_text()


def _screenshot(page, shot):
    from PIL import Image

    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1400",
            f"--screenshot={shot}",
            page.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return np.asarray(Image.open(io.BytesIO(shot.read_bytes())).convert("RGB")).astype(int)


@pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium browser (Debian package `chromium`)")
def test_the_claims_page_renders_its_figure_in_chromium(claims_page, tmp_path):
    _, _, out = claims_page
    image = _screenshot(out, tmp_path / "claims.png")
    assert image.shape[:2] == (1400, 1200)
    # the bars of the figure: tab:blue (31, 119, 180) and tab:orange (255, 127, 14) pixels
    blue = (np.abs(image - [31, 119, 180]).sum(axis=2) < 40).sum()
    orange = (np.abs(image - [255, 127, 14]).sum(axis=2) < 40).sum()
    assert blue > 2000 and orange > 2000, (blue, orange)


def test_a_sweep_page_shows_the_pipeline_and_manifest_of_its_first_run(plugin_path, tmp_path):
    from qtest_helpers import run_cli

    from quadriga.report import collect_sweep

    out = tmp_path / "sw"
    proc = run_cli(
        [
            "sweep",
            "toy-pipeline",
            "--seeds",
            "0:2",
            "--grid",
            "stage.draw.num_samples=50,80",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
        site=plugin_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = collect_sweep(out)
    runs = json.loads((out / "runs.json").read_text())
    first = out / "runs" / runs[0]["run_id"]
    assert section["pipeline"].endswith((first / "pipeline.toml").read_text())
    assert "# grid: stage.draw.num_samples = [50, 80]" in section["pipeline"]
    assert "# seeds: 0, 1" in section["pipeline"]
    manifest = json.loads(section["manifest"].split("\n", 1)[1])
    assert manifest == json.loads((first / "manifest.json").read_text())
    facts = dict(section["facts"])
    assert facts["differs across runs"].startswith("only the swept settings and per-run entries differ")
    assert "num_samples" in facts["differs across runs"], facts
    page = Page()
    from quadriga.report import build_report

    text = build_report([out])
    page.feed(text)
    assert "manifest of the first run" in text and "[stage.draw]" in text
    header = ["subject", "num_samples = 50", "num_samples = 80"]
    (table,) = [t for t in page.tables if t[0] == header]
    assert [r[0] for r in table[1:]] == ["draw"]
    text = html.unescape(text)
    assert "n = 2 per cell; intervals: Student t" in text
    assert "(n = 2: one degree of freedom, the interval is very wide)" in text
    # the glossary explains mean_error from the evaluator's metrics_doc
    doc = "mean_error (toy-mean)</dt><dd>absolute error of the sample mean's first coordinate (units of x)"
    assert doc in text.replace('<span class="meta">', "").replace("</span>", "")
    if CHROMIUM is not None:  # the page as a browser draws it: figure, then the per-metric tables
        from PIL import Image

        page_file, shot = tmp_path / "sweep.html", tmp_path / "sweep.png"
        page_file.write_text(build_report([out]), encoding="utf-8")
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1100,2400"]
        subprocess.run(
            [CHROMIUM, *args, f"--screenshot={shot}", page_file.resolve().as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )
        image = np.asarray(Image.open(shot).convert("RGB")).astype(int)
        ink = (image.sum(axis=2) < 600).mean(axis=1)  # share of dark pixels per row
        written = np.flatnonzero(ink > 0.002)
        assert written.size > 300 and written.max() > 1200, (written.size, written.max())


def _err(capsys):
    """What the command printed on stderr, with the line wrapping undone."""
    return " ".join(capsys.readouterr().err.split())


def _fake_run(path, results=None):
    """A minimal run directory: a results.json with one Metrics stage (or ``results`` as given)."""
    path.mkdir(parents=True)
    good = {"pipeline": "p", "seed": 0, "stages": {"e": {"type": "Metrics", "values": {"s/m": 1.0}}}}
    (path / "results.json").write_text(json.dumps(good if results is None else results))
    return path


def test_out_inside_a_run_or_over_a_non_html_file_is_refused_and_nothing_is_written(tmp_path, capsys):
    from quadriga.cli import main

    run_dir = _fake_run(tmp_path / "run")
    before = (run_dir / "results.json").read_bytes()
    assert main(["report", str(run_dir), "--out", str(run_dir / "results.json")]) == 2
    err = _err(capsys)
    assert "option --out" in err and "inside" in err and "quadriga run" not in err
    assert (run_dir / "results.json").read_bytes() == before
    assert main(["report", str(run_dir), "--out", str(run_dir / "new.html")]) == 2  # a new page there too
    assert not (run_dir / "new.html").exists()
    verify_dir = tmp_path / "v"
    verify_dir.mkdir()
    (verify_dir / "report.json").write_text(json.dumps([{"name": "c", "status": "passed"}]))
    assert main(["report", "--verify", str(verify_dir), "--out", str(verify_dir / "report.json")]) == 2
    assert "option --out" in _err(capsys)
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    assert main(["report", str(run_dir), "--out", str(notes)]) == 2
    assert "not an .html page" in _err(capsys) and notes.read_text() == "keep me"
    page = tmp_path / "old.html"
    page.write_text("old")
    assert main(["report", str(run_dir), "--out", str(page)]) == 0  # an earlier page is replaced
    assert "<table" in page.read_text()


def test_an_unwritable_out_names_out_and_gives_no_run_advice(tmp_path, capsys):
    from quadriga.cli import main

    run_dir = _fake_run(tmp_path / "run")
    assert main(["report", str(run_dir), "--out", "/proc/x.html"]) == 2
    err = _err(capsys)
    assert "option --out" in err and "/proc/x.html" in err and "--resume" not in err


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("results.json", {"stages": [1]}, "has 'stages' that is not an object of objects"),
        ("results.json", {"stages": {"a": 1}}, "has 'stages' that is not an object of objects"),
        ("results.json", "{not json", "cannot be read as JSON (JSONDecodeError"),
        ("status.json", [1], "holds list, not an object"),
        ("manifest.json", [1], "holds list, not an object"),
    ],
)
def test_a_damaged_run_file_is_a_config_error_naming_it(tmp_path, capsys, name, content, problem):
    from quadriga.cli import main
    from quadriga.errors import ConfigError
    from quadriga.report import build_report

    run_dir = _fake_run(tmp_path / "run")
    (run_dir / name).write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(ConfigError, match="damaged; re-run") as info:
        build_report([run_dir])
    assert f"'{run_dir / name}' {problem}" in str(info.value) and "expected " in str(info.value)
    assert main(["report", str(run_dir), "--out", str(tmp_path / "r.html")]) == 2
    err = _err(capsys)
    assert name in err.replace(" ", "")  # a long path may be wrapped anywhere
    assert "internal error" not in err and not (tmp_path / "r.html").exists()


def test_a_damaged_verify_report_is_named_with_its_problem(tmp_path, capsys):
    from quadriga.cli import main

    verify_dir = tmp_path / "v"
    verify_dir.mkdir()
    out = str(tmp_path / "r.html")
    (verify_dir / "report.json").write_text("[{oops")
    assert main(["report", "--verify", str(verify_dir), "--out", out]) == 2
    err = _err(capsys)
    assert "report.json' cannot be read as JSON (JSONDecodeError" in err and "nothing to report" not in err
    (verify_dir / "report.json").write_text(json.dumps({"claims": 5}))
    assert main(["report", "--verify", str(verify_dir), "--out", out]) == 2
    err = _err(capsys)
    assert "option --verify" in err and "without a claim name" in err
    assert not (tmp_path / "r.html").exists()
    (verify_dir / "report.json").write_text("[]")
    assert main(["report", "--verify", str(verify_dir), "--out", out]) == 2
    assert "holds no claim records" in _err(capsys)


def test_a_verify_directory_given_positionally_suggests_verify(tmp_path, capsys):
    from quadriga.cli import main

    verify_dir = tmp_path / "v"
    (verify_dir / "20260101T000000Z").mkdir(parents=True)
    (verify_dir / "20260101T000000Z" / "report.json").write_text("[]")
    assert main(["report", str(verify_dir), "--out", str(tmp_path / "r.html")]) == 2
    assert f"passitas`--verify{verify_dir}`" in _err(capsys).replace(" ", "")  # paths may be wrapped


def test_an_unreadable_file_gives_report_advice_not_run_advice(tmp_path, capsys, monkeypatch):
    import quadriga.report
    from quadriga.cli import main

    def unreadable(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "run" / "results.json"))

    monkeypatch.setattr(quadriga.report, "write_report", unreadable)
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "r.html")]) == 1
    err = _err(capsys)
    assert "cannot read a file" in err and "Permission denied" in err
    assert "quadriga report" in err and "--resume" not in err


def test_a_description_contradicted_by_set_says_what_changed(registry, tmp_path):
    """The page shows the saved pipeline.toml: its description names the --set values it predates."""
    from quadriga.api import run
    from quadriga.report import build_report
    from quadriga.rundir import RunDir

    source = tmp_path / "p.toml"
    source.write_text(
        '[pipeline]\nname = "described"\ndescription = "500 draws from a 3-d normal"\n\n'
        '[task.normal]\nuse = "toy-normal"\ndimension = 3\n\n'
        '[stage.draw]\nuse = "toy-iid"\ninputs = { target = "normal" }\nnum_samples = 500\n'
    )
    plain = run(source, out=tmp_path / "plain", registry=registry).dir
    changed = run(
        source, overrides=["stage.draw.num_samples=50"], out=tmp_path / "set", registry=registry
    ).dir
    assert RunDir(plain).read_pipeline()["pipeline"]["description"] == "500 draws from a 3-d normal"
    assert RunDir(changed).read_pipeline()["pipeline"]["description"] == (
        "500 draws from a 3-d normal [changed since: stage.draw.num_samples=50]"
    )
    assert "[changed since: stage.draw.num_samples=50]" in build_report([changed])


def test_a_page_of_several_runs_opens_with_their_summary_across_seeds(registry, tmp_path):
    """``quadriga report runs/P/*``: the runs' summary (n, mean, interval per configuration) first."""
    from quadriga.api import run
    from quadriga.report import build_report
    from quadriga.summary import aggregate, drop_repeated_seeds, load_rows

    dirs = [run("toy-pipeline", seed=s, out=tmp_path / f"s{s}", registry=registry).dir for s in (0, 1, 2)]
    again = run("toy-pipeline", seed=0, out=tmp_path / "again", registry=registry).dir
    text = build_report([*dirs, again])
    page = Page()
    page.feed(text)
    assert page.headings[0].startswith("summary across 4 runs")
    assert "again repeats the seed and settings of s0" in html.unescape(text)  # counted once
    rows = []
    for d in dirs:
        got, _ = load_rows(d)
        rows += [{**r, "source": d.name} for r in got]
    (expected,) = [
        e for e in aggregate(drop_repeated_seeds(rows)[0], ["source"]) if e["metric"] == "draw/mean_error"
    ]
    assert expected["n"] == 3
    table = page.tables[[t[0] for t in page.tables].index(["subject", "toy-pipeline"])]
    assert table[1] == [
        "draw",
        f"{expected['mean']:.4g} [{expected['ci_low']:.4g}, {expected['ci_high']:.4g}]",
    ]
    assert "n = 3 per cell; intervals: Student t" in html.unescape(text)
    assert "quadriga report: run of toy-pipeline" in html.unescape(text)  # the title names the runs
    single = Page()
    single.feed(build_report([dirs[0]]))
    assert not any(h.startswith("summary across") for h in single.headings)  # one run: no summary
