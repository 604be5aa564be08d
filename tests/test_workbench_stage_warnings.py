"""A component's UserWarning (an R-hat above its threshold) becomes one run warning naming the stage."""

from __future__ import annotations

import re
import warnings

import numpy as np

from quadriga.api import run

# four chains of MALA with a tiny step barely leave their starting points: R-hat far above 1.01
PIPELINE = {
    "pipeline": {"name": "rhat-bad", "seed": 0},
    "task": {"g": {"use": "gaussian", "dim": 2}},
    "stage": {
        "mala": {
            "use": "mala",
            "inputs": {"target": "g"},
            "num_chains": 4,
            "num_samples": 100,
            "burn_in": 0,
            "step_size": 0.001,
        },
        "ess": {"use": "ess", "inputs": {"subject": ["mala"]}},
    },
}


def test_rhat_warning_is_one_line_naming_stage_and_subject(tmp_path, capsys):
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        result = run(PIPELINE, out=tmp_path / "r")
    assert not [w for w in escaped if issubclass(w.category, UserWarning)]  # no raw UserWarning
    rhat = result.artifacts["ess"].values["mala/rhat_max"]
    assert rhat > 1.5  # the chains have not mixed
    assert result.warnings == [f"stage ess: subject mala: R-hat {rhat:.3f} > 1.01: the chains have not mixed"]

    from quadriga.cli import main

    assert main(["run", str(tmp_path / "r" / "pipeline.toml"), "--out", str(tmp_path / "c"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    lines = [line for line in (out + err).splitlines() if "R-hat" in line]
    assert lines == [f"warning: stage ess: subject mala: R-hat {rhat:.3f} > 1.01: the chains have not mixed"]
    assert "UserWarning" not in out + err and "warnings.warn" not in out + err


def test_a_well_mixed_run_has_no_rhat_warning(tmp_path):
    mixing = {"step_size": 0.8, "num_samples": 2000, "burn_in": 200}
    data = {**PIPELINE, "stage": {**PIPELINE["stage"], "mala": {**PIPELINE["stage"]["mala"], **mixing}}}
    result = run(data, out=tmp_path / "r")
    assert result.artifacts["ess"].values["mala/rhat_max"] < 1.01
    assert not [w for w in result.warnings if re.search("R-hat", w)]
    assert np.isfinite(result.artifacts["ess"].values["mala/ess_min"])
