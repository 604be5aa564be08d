"""ground-truth-error on draws whose errors are known: exact draws, constructed chains, a diverged run."""

from __future__ import annotations

import math

import pytest
import scipy.stats
import torch
from quadriga_inference_gym.evaluators import GroundTruthError
from quadriga_inference_gym.targets import EightSchools, IllConditionedGaussian, SyntheticItemResponseTheory

from quadriga.artifacts import Samples
from quadriga.errors import ConfigError


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_independent_draws_have_standardized_error_of_order_one_over_sqrt_n():
    """N independent draws with the ground-truth marginals: z_j ~ N(0, 1/N) independently.

    So N mean_j z_j^2 ~ chi^2_k / k with k = 501 coordinates (item response theory, identity
    transformation): sqrt of it lies in [0.89, 1.11] with probability 0.999. Independent draws have
    bulk ESS about N in every coordinate.
    """
    t = SyntheticItemResponseTheory()
    n_chains, n = 4, 500
    e = torch.randn(n_chains, n, t.dim, generator=_gen(3), dtype=torch.float64)
    x = t.ground_truth_mean + t.ground_truth_std * e
    s = Samples(x=x.reshape(-1, t.dim), chains=x, info={"score_evals": 1000})
    m = GroundTruthError().evaluate({"iid": s}, t, generator=_gen())
    v = m.values
    N = n_chains * n
    assert 0.89 < math.sqrt(N) * v["iid/standardized_error_rms"] < 1.11
    assert 0.75 * N < v["iid/ess_bulk_min"] and v["iid/ess_bulk_median"] < 1.25 * N
    assert v["iid/ess_per_grad"] == pytest.approx(v["iid/ess_bulk_min"] / 1000)
    assert v["iid/sd_rel_error_max"] < 0.15
    # in ground-truth standard errors the same error is sd / (se sqrt(N)) times larger
    ratio = (t.ground_truth_std / t.ground_truth_mean_stderr / math.sqrt(N)).pow(2).mean().sqrt()
    assert v["iid/gt_se_error_rms"] == pytest.approx(float(ratio), rel=0.25)
    assert len(m.info["coordinates"]["iid"]["standardized_error"]) == t.dim


def test_analytic_ground_truth_has_no_standard_error_metric():
    t = IllConditionedGaussian()
    x = t.sample(400, generator=_gen(4)).reshape(4, 100, -1)
    v = GroundTruthError().evaluate(Samples(x=x.reshape(-1, t.dim), chains=x), t, generator=_gen()).values
    assert "subject/gt_se_error_rms" not in v and "subject/standardized_error_rms" in v


def test_errors_in_ground_truth_standard_errors_are_exact_on_constructed_chains():
    """Chains whose mean is m + se exactly (antithetic noise): e_j = 1 and z_j = se_j / sd_j."""
    t = EightSchools()
    m, sd, se = t.ground_truth_mean, t.ground_truth_std, t.ground_truth_mean_stderr
    noise = torch.randn(2, 200, t.dim, generator=_gen(1), dtype=torch.float64) * sd
    chains = m + se + torch.cat([noise, -noise], 0)  # identity bijector and order: x = transform(x)
    s = Samples(x=chains.reshape(-1, t.dim), chains=chains, info={"density_evals": 800})
    v = GroundTruthError().evaluate({"c": s}, t, generator=_gen()).values
    assert v["c/gt_se_error_rms"] == pytest.approx(1.0, rel=1e-9)
    assert v["c/gt_se_error_max"] == pytest.approx(1.0, rel=1e-9)
    assert v["c/standardized_error_max"] == pytest.approx(float((se / sd).max()), rel=1e-9)
    assert v["c/diverged"] == 0.0


def test_replicates_are_summarised_and_a_diverged_run_is_flagged_not_averaged():
    t = EightSchools()
    g = _gen(2)
    subjects = {}
    for i in range(3):
        x = t.ground_truth_mean + t.ground_truth_std * torch.randn(
            4, 100, t.dim, generator=g, dtype=torch.float64
        )
        subjects[f"mala-es[{i}]"] = Samples(x=x.reshape(-1, t.dim), chains=x, info={"density_evals": 400})
    bad = subjects["mala-es[2]"].chains.clone()
    bad[0, 5, 0] = float("inf")
    subjects["mala-es[2]"] = Samples(x=bad.reshape(-1, t.dim), chains=bad, info={"density_evals": 400})
    m = GroundTruthError().evaluate(subjects, t, generator=_gen())
    (row,) = m.tables["configs"]
    assert row["config"] == "mala-es" and row["replicates"] == 3 and row["diverged"] == 1 and row["n"] == 2
    first = [m.values[f"mala-es[{i}]/standardized_error_rms"] for i in range(2)]
    assert row["standardized_error_rms"] == pytest.approx(sum(first) / 2)
    # the Student t interval of a mean of n = 2 (df 1): mean -+ t_0.975,1 * sd / sqrt(2)
    half = scipy.stats.t.ppf(0.975, 1) * abs(first[0] - first[1]) / 2
    assert row["standardized_error_rms_low"] == pytest.approx(sum(first) / 2 - half, rel=1e-9)
    assert row["standardized_error_rms_high"] == pytest.approx(sum(first) / 2 + half, rel=1e-9)
    assert row["interval"].startswith("95% Student t")
    assert m.values["mala-es[2]/diverged"] == 1.0 and "mala-es[2]/standardized_error_rms" not in m.values


def test_a_reference_without_ground_truth_is_refused():
    from quadriga_std.targets.gaussian import Gaussian

    x = torch.zeros(1, 10, 2, dtype=torch.float64)
    with pytest.raises(ConfigError, match="ground truth"):
        GroundTruthError().evaluate(Samples(x=x[0], chains=x), Gaussian(dim=2), generator=_gen())
