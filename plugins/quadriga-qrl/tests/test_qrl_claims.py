"""The pipeline and the claims at smoke scale: numbers, not verdicts; the preconditions read them."""

from __future__ import annotations

from quadriga_qrl.claims import ARMS, QRL, distance_spearman, success_noninferior

from quadriga.claims import evaluate_claim
from quadriga.registry import Registry


def test_claims_smoke_run_the_pipeline_and_report(tmp_path):
    obs = distance_spearman.observations("smoke", tmp_path, Registry(use_env=False))
    assert set(obs.values) == set(ARMS) and all(len(v) == 2 for v in obs.values.values())
    assert all(-1 <= r <= 1 for v in obs.values.values() for r in v)
    # the default maze: 61 cells, pairs drawn among reachable ones at least 1 step apart
    assert 5 <= obs.numbers["mean_bfs_distance"] <= 34
    # 30 updates already order QRL's distances with BFS (smoke runs gave 0.3-0.6)
    assert obs.numbers[f"{QRL}/spearman"] > 0.1
    assert obs.numbers["qrl/final_violation"] == obs.numbers["qrl/final_violation"]  # measured (not NaN)
    rec = evaluate_claim(distance_spearman, obs, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
    # the same run's success rates (the success claim reads them per replicate): fractions
    assert all(0 <= obs.numbers[f"{arm}/success_rate"] <= 1 for arm in ARMS)
    assert success_noninferior.pipeline == distance_spearman.pipeline  # one run serves all three claims
