"""Ready pipelines run through the core, and the claims run at smoke scale."""

import math

import pytest

from quadriga_srmc import claims


def test_srmc_ising_pipeline_runs(tmp_path):
    api = pytest.importorskip("quadriga.api")
    overrides = [f"stage.{s}.{k}={v}" for s, k in (("gibbs", "num_samples"), ("sr-gibbs", "num_steps"),
                                                   ("sr-gibbs-a4", "num_steps")) for v in (40,)]
    overrides += [f"stage.{s}.burn_in=10" for s in ("gibbs", "sr-gibbs", "sr-gibbs-a4")]
    overrides += [f"stage.{s}.num_chains=6" for s in ("gibbs", "sr-gibbs", "sr-gibbs-a4")]
    res = api.run("srmc-ising", overrides=overrides, out=tmp_path)
    assert res.status != "failed"
    values = res.artifacts["magnetization"].values
    assert math.isfinite(values["sr-gibbs/mag_mse_ratio"])
    assert 0 < values["gibbs/exact_abs_mag"] < 1


def test_srmc_vs_mala_pipeline_checks(tmp_path):
    pipeline = pytest.importorskip("quadriga.pipeline")
    registry = pytest.importorskip("quadriga.registry").get_registry()
    p = pipeline.load_pipeline("srmc-vs-mala", registry)
    assert {"mala-gauss", "sr05-gauss", "sr5-gmm", "mse-gauss"} <= set(p.stages)


@pytest.mark.parametrize("name", ["variance_reduction", "alpha_scaling", "mode_coverage"])
def test_claims_smoke(name, tmp_path):
    result = getattr(claims, name)("smoke", out_dir=tmp_path)
    assert result.passed, result.summary
    assert all(math.isfinite(float(v)) for v in result.numbers.values())
    assert all((tmp_path / f).exists() for f in result.figures.values())
