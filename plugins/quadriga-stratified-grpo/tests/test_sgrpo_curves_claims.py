"""training-curves evaluator on synthetic histories, the claims at smoke scale, the ready pipeline."""

import numpy as np
import pytest
import torch
from quadriga_stratified_grpo.curves import TrainingCurves

from quadriga import ConfigError, Fitted


def _fitted(label, returns, calls=None):
    steps = list(range(1, len(returns) + 1))
    return Fitted(
        model=None,
        history={
            "step": steps,
            "mean_return": list(returns),
            "tool_calls": list(calls or [1.0] * len(returns)),
        },
        info={"label": label},
    )


def test_bands_final_return_auc_and_differences():
    subject = {}
    for s, shift in enumerate([0.0, 0.1, 0.2]):
        subject[f"grpo-s{s}"] = _fitted("grpo", np.linspace(0, 1, 10) + shift)
        subject[f"sg-s{s}"] = _fitted(
            "stratified-grpo(alpha=0.5)", np.linspace(0, 1, 10) + shift + 0.5, [0.0] * 10
        )
    metrics = TrainingCurves(final_fraction=0.2).evaluate(subject, generator=torch.Generator().manual_seed(0))
    v = metrics.values
    # last 2 of linspace(0, 1, 10) average 17/18; seed shifts average 0.1
    assert v["grpo/final_return"] == pytest.approx(17 / 18 + 0.1)
    assert v["grpo/auc"] == pytest.approx(0.5 + 0.1)
    assert v["stratified-grpo(alpha=0.5)/final_return_diff"] == pytest.approx(0.5)
    # unpaired bootstrap over 3 seeds per band: the seed shifts 0, 0.1, 0.2 bound the interval
    assert (
        0.5 - 0.2 - 1e-9
        <= v["stratified-grpo(alpha=0.5)/auc_diff_low"]
        < 0.5
        < v["stratified-grpo(alpha=0.5)/auc_diff_high"]
        <= 0.7 + 1e-9
    )
    assert v["grpo/final_return_low"] <= v["grpo/final_return"] <= v["grpo/final_return_high"]
    assert v["grpo/final_return_high"] - v["grpo/final_return_low"] > 0.05
    assert v["stratified-grpo(alpha=0.5)/final_tool_calls"] == 0.0 and v["grpo/num_seeds"] == 3.0
    assert "curves" in metrics.figures and len(metrics.tables["summary"]) == 2


def test_difference_interval_covers_mean_and_is_reproducible():
    rng = np.random.default_rng(0)
    x, y = rng.normal(1.0, 1.0, 40), rng.normal(0.0, 1.0, 40)
    subject = {f"grpo-s{i}": _fitted("grpo", [v] * 4) for i, v in enumerate(y)}
    subject |= {f"sg-s{i}": _fitted("sg", [v] * 4) for i, v in enumerate(x)}

    def run():
        return TrainingCurves().evaluate(subject, generator=torch.Generator().manual_seed(3)).values

    v = run()
    # constant curves: the per-seed AUC is the value itself; the unpaired percentile interval of
    # mean(x) - mean(y) (standard error about sqrt(2 / 40) = 0.22) covers it and excludes 0 and 2
    assert v["sg/auc_diff"] == pytest.approx(x.mean() - y.mean())
    assert 0.0 < v["sg/auc_diff_low"] < v["sg/auc_diff"] < v["sg/auc_diff_high"] < 2.0
    assert 0.6 < v["sg/auc_diff_high"] - v["sg/auc_diff_low"] < 1.2
    assert run() == v


def test_unknown_baseline_and_bad_subject():
    with pytest.raises(ConfigError, match=r"baseline 'grpoo'.*Did you mean 'grpo'"):
        TrainingCurves(baseline="grpoo").evaluate(
            {"grpo-s0": _fitted("grpo", [0.1, 0.2])}, generator=torch.Generator().manual_seed(0)
        )
    with pytest.raises(ConfigError, match="mean_return"):
        TrainingCurves().evaluate(
            {"x": Fitted(model=None, history={})}, generator=torch.Generator().manual_seed(0)
        )


def test_advantage_identity_claim_smoke(tmp_path):
    from quadriga_stratified_grpo.claims import advantage_identities

    from quadriga.claims import evaluate_claim

    obs = advantage_identities.observations("smoke", tmp_path)
    worst = obs.values["identities"]
    assert len(worst) == 200 and max(worst) < 1e-12  # float64 leaves about 1e-15
    assert obs.numbers["strata_checked"] > 100
    assert evaluate_claim(advantage_identities, obs, "smoke")["status"] == "ran"
    # at paper scale the interval on the mean error lies far below the 1e-9 bound
    paper = evaluate_claim(advantage_identities, obs, "paper")
    assert paper["status"] == "passed" and paper["comparisons"][0]["high"] < 1e-12


def test_learning_claim_smoke_runs_the_pipeline(tmp_path):
    from quadriga_stratified_grpo.claims import learning

    from quadriga.claims import evaluate_claim

    assert learning.pipeline == "multihop-sgrpo" and not learning.tuning_flags()
    obs = learning.observations("smoke", tmp_path)
    assert set(obs.values) == {"training return", "greedy return"}
    assert all(len(v["sgrpo"]) == len(v["grpo"]) == 2 for v in obs.values.values())
    # pure SAN is trained in the same run and reported outside the verdict
    est, low, high, n = obs.numbers["alpha=1.0/greedy_minus_grpo"]
    assert n == 2 and low <= est <= high
    assert 0.0 <= obs.numbers["grpo/between_mean"] <= 1.0
    rec = evaluate_claim(learning, obs, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 2
    assert not rec["holm"]  # smoke scale: numbers only, no p-values to adjust
    # the interval method is chosen by quadriga.stats.interval and named (its wording is the core's)
    assert all(c["n"] == 2 and np.isfinite(c["estimate"]) and c["method"] for c in rec["comparisons"])


def test_ready_pipeline_checks():
    from quadriga import api

    for source in ("search-agent-sgrpo", "multihop-sgrpo"):
        text = str(api.check(source))
        for name in ("grpo[9]", "sgrpo[alpha=0.5][9]", "sgrpo[alpha=1.0][0]", "curves"):
            assert name in text
