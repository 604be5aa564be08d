"""The claims at smoke scale: they run the registered pipeline and report numbers, not verdicts."""

from __future__ import annotations

from quadriga_lame.claims import NO_WORSE, NON_IID

from quadriga.claims import evaluate_claim, shared_runs
from quadriga.registry import Registry


def test_claims_smoke(tmp_path):
    reg = Registry(use_env=False)
    with shared_runs():  # both claims read one run of the pipeline
        no_worse = NO_WORSE.observations("smoke", tmp_path / "a", reg)
        non_iid = NON_IID.observations("smoke", tmp_path / "b", reg)
    assert set(no_worse.values) == {"iid", "class-sorted"}
    for group in no_worse.values.values():
        assert all(len(v) == 2 and all(0 <= a <= 1 for a in v) for v in group.values())
    rec = evaluate_claim(NO_WORSE, no_worse, "smoke")
    assert rec["status"] == "ran" and len(rec["comparisons"]) == 2
    # the non-i.i.d. claim reads the same replicates: LAME's values agree between the two claims
    assert non_iid.values["class-sorted"]["lame"] == no_worse.values["class-sorted"]["lame"]
    rec = evaluate_claim(NON_IID, non_iid, "smoke")
    assert rec["status"] == "ran" and rec["comparisons"][0]["n"] == 2
    # TENT with batch statistics on single-class batches: far below the non-adapted model
    assert non_iid.numbers["class-sorted/tent"] < non_iid.numbers["class-sorted/source"] - 0.2
