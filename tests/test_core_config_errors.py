"""Ten malformed pipelines: each gives a one-paragraph error naming the place, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from qtest_helpers import run_cli

BAD = Path(__file__).parent / "fixtures" / "bad"

CASES = [
    # (file, extra args, substrings that must appear in the error)
    ("bad_toml.toml", [], ["bad_toml.toml", "invalid TOML", "line"]),
    ("unknown_component.toml", [], ["[stage.draw]", "key 'use'", "unknown", "Did you mean 'toy-iid'"]),
    (
        "misspelled_parameter.toml",
        [],
        ["[stage.draw]", "key 'num_sample'", "Did you mean 'num_samples'", "num_samples: int = 100"],
    ),
    ("wrong_type.toml", [], ["[stage.draw]", "key 'num_samples'", "expected int"]),
    ("missing_input.toml", [], ["[stage.draw]", "missing input 'target'"]),
    ("cycle.toml", [], ["cycle", "a -> b -> a"]),
    ("wrong_artifact_type.toml", [], ["[stage.est]", "inputs.data", "a Target", "accepts Samples"]),
    (
        "good.toml",
        ["--set", "stage.draw.num_smaples=3"],
        ["--set", "[stage.draw]", "num_smaples", "Did you mean 'num_samples'"],
    ),
    ("empty.toml", [], ["empty.toml", "empty"]),
    ("duplicate_stage.toml", [], ["[stage.draw]", "defined twice"]),
]


@pytest.mark.parametrize("name,extra,needles", CASES, ids=[c[0] + (" --set" if c[1] else "") for c in CASES])
def test_malformed_pipeline_is_a_clear_config_error(plugin_path, name, extra, needles):
    proc = run_cli(["run", str(BAD / name), *extra, "--out", str(plugin_path / "out")], site=plugin_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr + proc.stdout
    assert err.startswith("error:")
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    assert not (plugin_path / "out").exists(), "nothing may run when the pipeline is invalid"


def test_the_good_fixture_runs(plugin_path):
    proc = run_cli(["run", str(BAD / "good.toml"), "--out", str(plugin_path / "out")], site=plugin_path)
    assert proc.returncode == 0, proc.stderr
    assert (plugin_path / "out" / "results.json").is_file()


def test_input_types_given_as_strings_are_a_config_error_naming_the_class_and_the_fix(registry, monkeypatch):
    from quadriga_toy.components import ToyMeanError

    from quadriga.api import check
    from quadriga.errors import ConfigError

    monkeypatch.setattr(ToyMeanError, "input_types", {"subject": ("Samples",), "reference": ("Target",)})
    data = {
        "pipeline": {"name": "strings", "seed": 0},
        "task": {"normal": {"use": "toy-normal", "dimension": 2}},
        "stage": {
            "draw": {"use": "toy-iid", "inputs": {"target": "normal"}},
            "check": {
                "use": "toy-mean",
                "kind": "evaluator",
                "inputs": {"subject": "draw", "reference": "normal"},
            },
        },
    }
    with pytest.raises(ConfigError) as info:
        check(data, registry=registry)
    message = str(info.value)
    assert "quadriga_toy.components.ToyMeanError.input_types['subject']" in message
    assert "from quadriga.artifacts import Samples" in message
    assert '{"subject": (Samples,)}' in message
