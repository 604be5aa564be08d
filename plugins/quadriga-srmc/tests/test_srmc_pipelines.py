"""Ready pipelines run through the core, and the claims run at smoke scale."""

import math
from pathlib import Path

import pytest
from quadriga_srmc import claims


def test_srmc_ising_pipeline_runs(tmp_path):
    api = pytest.importorskip("quadriga.api")
    overrides = ["stage.gibbs.num_samples=40", "stage.sr-gibbs.num_steps=40"]
    overrides += [f"stage.{s}.burn_in=10" for s in ("gibbs", "sr-gibbs")]
    overrides += [f"stage.{s}.num_chains=6" for s in ("gibbs", "sr-gibbs")]
    res = api.run("srmc-ising", overrides=overrides, out=tmp_path)
    assert res.status != "failed"
    values = res.artifacts["magnetization"].values
    assert math.isfinite(values["sr-gibbs/mag_mse_ratio"])
    assert 0 < values["gibbs/exact_abs_mag"] < 1


def test_srmc_vs_mala_pipeline_checks(tmp_path):
    pipeline = pytest.importorskip("quadriga.pipeline")
    registry = pytest.importorskip("quadriga.registry").get_registry()
    p = pipeline.load_pipeline("srmc-vs-mala", registry)
    stages = {"mala-gauss", "srmc-gauss[alpha=0.5]", "srmc-gmm[alpha=5.0]", "mse-gauss", "coverage-gmm"}
    assert stages <= set(p.stages)


def test_srmc_vs_mala_mixture_part_has_equal_score_evaluations(tmp_path):
    """The mixture half, shrunk 100x with the pipeline's 3:1 ratio of MALA to SR-MALA transitions."""
    api = pytest.importorskip("quadriga.api")
    from importlib import resources

    import tomllib

    spec = tomllib.loads(resources.files("quadriga_srmc").joinpath("pipelines/srmc-vs-mala.toml").read_text())
    keep = {"mala-gmm", "srmc-gmm", "mse-gmm", "coverage-gmm"}
    spec["task"] = {"gmm": spec["task"]["gmm"]}
    spec["stage"] = {k: v for k, v in spec["stage"].items() if k in keep}
    mala, sr = spec["stage"]["mala-gmm"], spec["stage"]["srmc-gmm"]
    assert mala["num_samples"] + mala["burn_in"] == 3 * (sr["num_steps"] + sr["burn_in"])
    mala.update(num_samples=210, burn_in=90, num_chains=4)
    sr.update(num_steps=70, burn_in=30, num_chains=4, matrix={"alpha": [1.0, 5.0]})
    res = api.run(spec, out=tmp_path)
    assert res.status != "failed"
    sr1, sr5 = "srmc-gmm[alpha=1.0]", "srmc-gmm[alpha=5.0]"
    evals = {k: res.artifacts[k].info["score_evals"] for k in ("mala-gmm", sr1, sr5)}
    assert abs(evals[sr1] / evals["mala-gmm"] - 1) < 0.02, evals
    assert evals[sr5] == evals[sr1]
    cov = res.artifacts["coverage-gmm"].values
    for k in ("mala-gmm", sr1, sr5):
        assert 0.0 <= cov[f"{k}/tv"] <= 1.0
        assert 1.0 <= cov[f"{k}/chain_modes_visited"] <= 4.0


@pytest.mark.parametrize("name", ["variance_reduction", "alpha_scaling", "mode_coverage"])
def test_claims_smoke(name, tmp_path):
    """Smoke scale: numbers with intervals, status 'ran' (never a verdict)."""
    from quadriga.claims import evaluate_claim

    claim = getattr(claims, name)
    obs = claim.observations("smoke", tmp_path)
    rec = evaluate_claim(claim, obs, "smoke")
    assert rec["status"] == "ran"
    for c in rec["comparisons"]:
        assert math.isfinite(c["estimate"]) and c["low"] <= c["estimate"] <= c["high"]
    assert all(math.isfinite(float(v)) for v in obs.numbers.values())
    assert all(Path(f).exists() for f in obs.figures.values())
    if name == "variance_reduction":
        assert [c["group"] for c in rec["comparisons"]] == ["step_size=0.05", "step_size=0.1"]
        assert all(c["n"] == 8 for c in rec["comparisons"])
        assert 0.3 < obs.numbers["step_size=0.05/mala/acceptance"] < 0.9
