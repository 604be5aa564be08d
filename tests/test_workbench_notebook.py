"""The Python path: quadriga.build, quadriga.register, quadriga.load_run and the tidy frame."""

from __future__ import annotations

import math
import subprocess
import sys

import attrs
import pytest
import torch

import quadriga
from quadriga.errors import ConfigError


def test_import_and_the_new_names_stay_light():
    code = (
        "import sys, quadriga; quadriga.build; quadriga.load_run; quadriga.register; quadriga.to_pandas; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_build_checks_parameters_as_a_pipeline_does(registry):
    normal = quadriga.build("target", "toy-normal", mean=2.0, scale=0.5, dimension=3, registry=registry)
    assert (normal.mean, normal.scale, normal.dim) == (2.0, 0.5, 3)
    draws = quadriga.build("sampler", "toy-iid", num_samples=4000, registry=registry)
    samples = draws.sample(normal, generator=torch.Generator().manual_seed(0))
    mean = float(samples.x[:, 0].mean())
    assert abs(mean - 2.0) < 4 * 0.5 / math.sqrt(4000)  # 4 standard errors of the mean
    with pytest.raises(ConfigError, match=r"unknown parameter 'num_sample'.*Did you mean 'num_samples'"):
        quadriga.build("sampler", "toy-iid", num_sample=10, registry=registry)
    with pytest.raises(ConfigError, match=r"key 'scale'"):
        quadriga.build("target", "toy-normal", scale=-1.0, registry=registry)
    with pytest.raises(ConfigError, match=r"unknown kind 'smapler'.*Did you mean 'sampler'"):
        quadriga.build("smapler", "toy-iid", registry=registry)


@attrs.define(kw_only=True)
class Shifted(quadriga.Sampler):
    """Exact draws of a toy-normal target moved by ``shift`` (a component written in a notebook)."""

    shift: float = quadriga.param(1.0, doc="added to every coordinate")
    num_samples: int = quadriga.param(1000, doc="number of draws")

    def sample(self, target, *, generator):
        """``num_samples`` draws of ``target`` plus ``shift``."""
        return quadriga.Samples(x=target.sample(self.num_samples, generator=generator) + self.shift)


def test_a_registered_notebook_class_runs_in_a_pipeline(registry, tmp_path):
    from quadriga.api import run

    quadriga.register("sampler", "shifted", Shifted, summary="moved draws", registry=registry)
    quadriga.register(
        "sampler", "shifted", Shifted, summary="moved draws", tags=("exact-target",), registry=registry
    )  # a re-run cell
    specs = [s for s in registry.components("sampler") if s.name == "shifted"]
    assert [(s.summary, s.tags) for s in specs] == [("moved draws", ("exact-target",))]
    pipeline = {
        "pipeline": {"name": "notebook-demo", "seed": 0},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {
            "moved": {"use": "shifted", "inputs": {"target": "normal"}, "shift": 0.75, "num_samples": 2000},
            "err": {
                "use": "toy-mean",
                "kind": "evaluator",
                "inputs": {"subject": ["moved"], "reference": "normal"},
            },
        },
    }
    result = run(pipeline, out=tmp_path / "nb", registry=registry)
    err = result.results["stages"]["err"]["values"]["moved/mean_error"]
    x0 = result.artifacts["moved"].x[:, 0]
    assert err == pytest.approx(abs(float(x0.mean())))  # closed form: |mean of coordinate 0 - 0|
    assert abs(err - 0.75) < 4 / math.sqrt(2000)
    with pytest.raises(ConfigError, match="attrs class"):
        quadriga.register("sampler", "plain", object, registry=registry)
    with pytest.raises(ConfigError, match=r"quadriga\.Estimator"):
        quadriga.register("estimator", "wrong-kind", Shifted, registry=registry)


def test_load_run_gives_artifacts_a_compact_repr_and_a_tidy_frame(registry, tmp_path):
    from quadriga.api import run

    result = run("toy-pipeline", out=tmp_path / "r", registry=registry)
    loaded = quadriga.load_run(tmp_path / "r")
    text = repr(loaded)
    assert len(text) < 600 and "tensor(" not in text
    assert "draw: Samples from toy-iid (500 x 3 samples)" in text
    assert loaded.pipeline["stage"]["draw"]["num_samples"] == 500 and loaded.manifest["seed"] == 0
    x = loaded.artifacts["draw"].x
    assert torch.equal(x, result.artifacts["draw"].x)
    from quadriga.notebook import compact_repr

    assert compact_repr(loaded.artifacts["draw"]).startswith("Samples(x=Tensor[500, 3] float64")
    df = loaded.to_pandas()
    assert list(df.columns[:9]) == [
        "pipeline",
        "run_id",
        "seed",
        "stage",
        "component",
        "type",
        "subject",
        "metric",
        "value",
    ]
    err = df[(df.stage == "check") & (df.metric == "mean_error")]
    assert err.subject.tolist() == ["draw"]
    assert err.value.iloc[0] == pytest.approx(abs(float(x[:, 0].mean())))
    est = df[(df.stage == "est") & (df.metric == "estimate")].value.iloc[0]
    assert est == pytest.approx(float(x[:, 0].mean()))
    assert df.equals(quadriga.to_pandas(result)) and df.equals(quadriga.to_pandas(tmp_path / "r"))
    with pytest.raises(ConfigError, match="holds runs"):
        quadriga.load_run(tmp_path)
    with pytest.raises(KeyError, match="no stage 'nope'"):
        loaded.artifacts["nope"]


def test_to_pandas_of_a_sweep_has_the_grid_as_columns(plugin_path, tmp_path):
    from qtest_helpers import run_cli

    out = tmp_path / "sw"
    proc = run_cli(
        [
            "sweep",
            "toy-pipeline",
            "--seeds",
            "0:2",
            "--grid",
            "stage.draw.num_samples=50,400",
            "--workers",
            "1",
            "--out",
            str(out),
        ],
        site=plugin_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    df = quadriga.to_pandas(out)
    err = df[df.metric == "mean_error"]
    assert len(err) == 4 and sorted(err["stage.draw.num_samples"].unique()) == [50, 400]
    assert sorted(err.seed.unique()) == [0, 1]


def test_register_refuses_a_name_an_installed_plugin_has(registry):
    owner = next(s for s in registry.components("sampler") if s.name == "toy-iid").distribution
    assert owner
    with pytest.raises(
        ConfigError, match=rf"distribution '{owner}' already has a sampler named 'toy-iid'.*another name"
    ) as info:
        quadriga.register("sampler", "toy-iid", Shifted, registry=registry)
    assert info.value.key == "name"
    draws = quadriga.build("sampler", "toy-iid", num_samples=3, registry=registry)  # still the plugin's
    assert type(draws).__name__ != "Shifted"


def test_build_and_run_refuse_arguments_of_the_wrong_type(registry, tmp_path):
    from quadriga.api import run

    with pytest.raises(ConfigError, match=r"unknown kind None; use one of sampler, learner") as info:
        quadriga.build(None, "toy-iid", registry=registry)
    assert info.value.key == "kind"
    with pytest.raises(ConfigError, match=r"name must be a registered name") as info:
        quadriga.build("sampler", None, registry=registry)
    assert info.value.key == "name"
    pipeline = {
        "pipeline": {"name": "arg-types", "seed": 0},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {"draws": {"use": "toy-iid", "inputs": {"target": "normal"}, "num_samples": 10}},
    }
    for bad in ([1], 5):
        with pytest.raises(ConfigError, match="overrides must") as info:
            run(pipeline, overrides=bad, out=tmp_path / "bad", registry=registry)
        assert info.value.key == "overrides"
    with pytest.raises(ConfigError, match=r"overrides\['stage.draws.num_samples'\] = None has no TOML form"):
        run(pipeline, overrides={"stage.draws.num_samples": None}, out=tmp_path / "bad", registry=registry)
    for bad in ("yes", 2):
        with pytest.raises(ConfigError, match=r"progress must be True, False or None") as info:
            run(pipeline, progress=bad, out=tmp_path / "bad", registry=registry)
        assert info.value.key == "progress"
    assert not (tmp_path / "bad").exists()
    result = run(pipeline, overrides="stage.draws.num_samples=7", out=tmp_path / "one", registry=registry)
    assert result.artifacts["draws"].x.shape == (7, 2)  # a single string is one override
    result = run(pipeline, overrides={"stage.draws.num_samples": 5}, out=tmp_path / "dict", registry=registry)
    assert result.artifacts["draws"].x.shape == (5, 2)  # a dict: one override per key


def test_a_dict_of_overrides_is_written_as_toml_values():
    from quadriga.api import _overrides

    given = {"a.b": 0.1, "a.flag": True, "a.name": 'x"y', "a.inner": {"use": "mala", "n": 1}, "a.l": [1, 2.5]}
    assert _overrides(given) == [
        "a.b=0.1",
        "a.flag=true",
        'a.name="x\\"y"',
        'a.inner={ "use" = "mala", "n" = 1 }',
        "a.l=[1, 2.5]",
    ]


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("results.json", "{garbage", "cannot be read as JSON (JSONDecodeError: Expecting property name"),
        ("results.json", '{"stages": [1]}', "has 'stages' that is not an object of objects"),
        ("results.json", '{"stages": {"a": 1}}', "has 'stages' that is not an object of objects"),
        ("manifest.json", "[1]", "holds list, not an object"),
        ("pipeline.toml", "[stage", "cannot be read as TOML"),
    ],
)
def test_load_run_of_a_damaged_run_is_a_config_error_naming_the_file(tmp_path, name, content, problem):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "results.json").write_text('{"pipeline": "p", "stages": {}}')
    (run_dir / name).write_text(content)
    with pytest.raises(ConfigError) as info:
        quadriga.load_run(run_dir)
    message = str(info.value)
    assert message.startswith("key 'path': ") and f"'{run_dir / name}' {problem}" in message
    assert "re-run the pipeline or restore the file from a copy" in message


class _Formatter:
    """IPython's PNG formatter, as far as quadriga uses it (``for_type_by_name``)."""

    def __init__(self) -> None:
        self.by_name: dict[tuple[str, str], object] = {}

    def for_type_by_name(self, module, name, func):
        self.by_name[(module, name)] = func


def _fake_kernel(monkeypatch, *, allow_stdin: bool):
    """A fake ``IPython`` module whose shell looks like a Jupyter kernel's (IPython is optional)."""
    import types

    formatter = _Formatter()
    kernel = types.SimpleNamespace(_allow_stdin=allow_stdin)
    shell_type = type("ZMQInteractiveShell", (), {})
    shell = shell_type()
    shell.kernel = kernel
    shell.display_formatter = types.SimpleNamespace(formatters={"image/png": formatter})
    monkeypatch.setitem(
        sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell, version_info=(9, 0))
    )
    return formatter


def test_a_figure_gets_a_png_view_in_a_kernel_without_pyplot(monkeypatch):
    from matplotlib.figure import Figure

    from quadriga.progress_display import interactive_kernel, show_figures_inline

    formatter = _fake_kernel(monkeypatch, allow_stdin=True)
    fig = Figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [1, 0])
    assert show_figures_inline() is True  # what importing quadriga.api or quadriga.notebook does in a kernel
    png = formatter.by_name[("matplotlib.figure", "Figure")](fig)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert interactive_kernel() is True


def test_a_kernel_nobody_watches_gets_one_summary_line(monkeypatch):
    from quadriga.progress_display import JupyterProgress, SummaryLine, interactive_kernel, progress_display

    _fake_kernel(monkeypatch, allow_stdin=False)  # how nbclient, papermill and nbconvert send cells
    assert interactive_kernel() is False
    assert isinstance(progress_display(None, "run demo"), SummaryLine)
    with progress_display(False) as display:
        assert display is None
    _fake_kernel(monkeypatch, allow_stdin=True)  # JupyterLab, Notebook, VS Code
    with progress_display(None) as display:
        assert isinstance(display, JupyterProgress)


def test_the_summary_line_counts_the_stages_and_the_time():
    from quadriga.progress_display import SummaryLine

    now, written = [100.0], []
    summary = SummaryLine("run demo", write=written.append, clock=lambda: now[0])
    with summary as display:
        for stage, seconds in (("draw", 60.0), ("fit", 125.0)):
            with display(stage) as on_update:
                on_update(1, 2, None)
                now[0] += seconds
    assert written == ["run demo: 2 stages in 3 min 05 s"]  # 185 s
    written.clear()
    stopped = SummaryLine("run demo", write=written.append, clock=lambda: now[0])
    with pytest.raises(RuntimeError), stopped as d:
        with d("draw"):
            now[0] += 4
        with d("fit"):
            now[0] += 37
            raise RuntimeError("diverged")
    assert written == ["run demo: stopped in stage 'fit' after 1 of 2 stages, 41 s"]


NOTEBOOK_PIPELINE = {
    "pipeline": {"name": "notebook-demo", "seed": 0},
    "task": {"normal": {"use": "gaussian", "dim": 2}},
    "stage": {
        "mala": {"use": "mala", "inputs": {"target": "normal"}, "num_samples": 200, "burn_in": 50},
        "energy": {"use": "energy-distance", "inputs": {"subject": ["mala"], "reference": "normal"}},
    },
}


def test_an_executed_notebook_stores_the_figure_and_one_progress_line(tmp_path):
    """nbclient runs a real kernel: no pyplot import, figures as PNG, no progress snapshots but one
    summary line for the run."""
    import re

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    out = tmp_path / "run"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import sys, quadriga\n"
            f"r = quadriga.api.run({NOTEBOOK_PIPELINE!r}, out={str(out)!r})\n"
            "print(r.status, 'matplotlib.pyplot' in sys.modules)"
        ),
        nbformat.v4.new_code_cell("next(iter(r.artifacts['energy'].figures.values()))"),
    ]
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    run_cell, figure_cell = nb.cells
    assert {o["output_type"] for o in run_cell.outputs} == {"stream"}  # no display_data: no bars
    assert {o["name"] for o in run_cell.outputs} == {"stdout"}
    lines = "".join(o["text"] for o in run_cell.outputs).splitlines()
    assert len(lines) == 2 and lines[1] == "finished False", lines
    assert re.fullmatch(r"run notebook-demo: 2 stages in (\d+ min )?\d+ s", lines[0]), lines
    (shown,) = figure_cell.outputs
    import base64

    assert base64.b64decode(shown["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
