"""The claims at smoke scale: the registered pipeline runs with repeated arms; numbers, status 'ran'."""

from __future__ import annotations

import math

from quadriga_minto.claims import PIPELINE, auc_claim

from quadriga.claims import evaluate_claim


def test_smoke_auc_claim_runs_the_pipeline_with_paired_replicates(tmp_path):
    assert PIPELINE == "acrobot-minto"
    obs = auc_claim.observations("smoke", tmp_path)
    assert set(obs.values) == {"minto", "dqn"} and all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(auc_claim, obs, "smoke")
    assert rec["status"] == "ran"
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and c["baseline"] == "dqn"
    # at 1200 Acrobot steps every episode may hit the -500 cap: then both arms are constant and the
    # interval method says so ("no interval: all 2 values equal"); otherwise the paired bootstrap
    diffs = {a - b for a, b in zip(obs.values["minto"], obs.values["dqn"], strict=True)}
    assert ("values equal" in c["method"]) if len(diffs) == 1 else ("paired" in c["method"])
    assert c["low"] <= c["estimate"] <= c["high"]
    # Acrobot-v1 pays -1 per step and cuts episodes at 500 steps: the AUC is a return level in [-500, 0]
    assert all(-500.0 <= v <= 0.0 for v in obs.values["dqn"] + obs.values["minto"])
    assert math.isfinite(rec["numbers"]["auc_ratio_minto_over_dqn"])
    # on Acrobot-v1 the minimum binds in most replay rows (0.75-0.85 in 4k-step runs)
    binds = rec["numbers"]["minto/min_binds_fraction"]
    assert 0.3 < binds <= 1.0
    assert rec["numbers"]["dqn-online/replicates"] == 2


def test_both_pipelines_use_the_tuned_online_learning_rate():
    from importlib.resources import files

    import tomllib
    from quadriga_minto.claims import ONLINE_LR_GRID, overestimation_claim

    best = max(ONLINE_LR_GRID, key=ONLINE_LR_GRID.get)
    assert best == 2.5e-4
    for name in ("cartpole-minto", "acrobot-minto"):
        text = (files("quadriga_minto") / "pipelines" / f"{name}.toml").read_text()
        assert tomllib.loads(text)["stage"]["dqn-online"]["learning_rate"] == best
    for claim in (auc_claim, overestimation_claim):
        assert claim.tuning["dqn-online"].settings_tried == len(ONLINE_LR_GRID) == 4
        assert not claim.tuning_flags()  # the compared arms (minto, dqn) have equal budgets
