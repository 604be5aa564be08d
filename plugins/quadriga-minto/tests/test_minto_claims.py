"""The claims at smoke scale: the registered pipeline runs with repeated arms; numbers, status 'ran'."""

from __future__ import annotations

import math

from quadriga_minto.claims import PIPELINE, auc_claim, overestimation_claim

from quadriga.claims import evaluate_claim, shared_runs


def test_smoke_claims_share_one_run_of_the_pipeline_with_paired_replicates(tmp_path):
    assert PIPELINE == "acrobot-minto"
    assert auc_claim.experiment is None and overestimation_claim.experiment is None  # declarative
    with shared_runs():  # as verify does around the claims it runs
        obs = auc_claim.observations("smoke", tmp_path / "auc")
        over = overestimation_claim.observations("smoke", tmp_path / "over")
    assert over.numbers["run"] == obs.numbers["run"]  # the core ran the pipeline once for both
    assert (tmp_path / "over" / "shared-run.txt").read_text().strip() == obs.numbers["run"]
    assert len(over.values["minto"]) == len(over.values["dqn"]) == 2
    assert set(obs.values) == {"minto", "dqn"} and all(len(v) == 2 for v in obs.values.values())
    rec = evaluate_claim(auc_claim, obs, "smoke")
    assert rec["status"] == "ran"
    (c,) = rec["comparisons"]
    assert c["n"] == 2 and c["baseline"] == "dqn"
    assert c["method"] and c["low"] <= c["estimate"] <= c["high"]
    # at 1200 Acrobot steps episodes hit the -500 cap: an arm at the floor in most replicates fails
    # the floor precondition (at paper scale that makes the claim inconclusive)
    floor = next(p for p in rec["preconditions"] if "floor" in p["description"])
    off = {a: sum(v > -500.0 for v in obs.values[a]) / 2 for a in ("minto", "dqn")}
    assert floor["holds"] == (min(off.values()) >= 0.5), floor
    assert "minto above -500" in floor["diagnostic"] and "dqn above -500" in floor["diagnostic"]
    # Acrobot-v1 pays -1 per step and cuts episodes at 500 steps: the AUC is a return level in [-500, 0]
    assert all(-500.0 <= v <= 0.0 for v in obs.values["dqn"] + obs.values["minto"])
    assert math.isfinite(rec["numbers"]["auc_ratio_minto_over_dqn"])
    # on Acrobot-v1 the minimum binds in most replay rows (0.75-0.85 in 4k-step runs)
    binds = rec["numbers"]["minto/min_binds_fraction"]
    assert 0.3 < binds <= 1.0
    assert next(p for p in rec["preconditions"] if "binds" in p["description"])["holds"]
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


def test_floor_precondition_catches_an_arm_stuck_at_the_cap():
    from quadriga_minto.claims import OFF_FLOOR

    from quadriga.claims import Observations

    # the former paper-scale record: MINTO at -500 in every replicate while DQN learned in most
    stuck = Observations(values={"minto": [-500.0] * 10, "dqn": [-500.0, -500.0] + [-420.0] * 8})
    holds, text = OFF_FLOOR.evaluate(stuck)
    assert not holds and "minto above -500 in 0%" in text and "dqn above -500 in 80%" in text
    # both arms reach the goal in half their replicates: the AUC compares learning speeds
    learning = Observations(values={"minto": [-500.0, -480.0, -300.0, -500.0], "dqn": [-410.0, -500.0] * 2})
    assert OFF_FLOOR.evaluate(learning)[0]
