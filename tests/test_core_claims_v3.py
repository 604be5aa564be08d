"""Claims protocol 3: margins, consistent verdicts, plans, preconditions, fragility, freshness."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

from quadriga.claims import (
    Claim,
    Effect,
    Observations,
    Plan,
    Precondition,
    Scale,
    decide,
    evaluate_claim,
)
from quadriga.errors import ConfigError

SCALES = {"smoke": Scale(replicates=3), "paper": Scale(replicates=20)}
WHY = "the paper claims only that the method is better, without a size"


def _claim(effect: Effect, arms=("method", "baseline"), experiment=None, **kw) -> Claim:
    return Claim(arms=arms, effect=effect, scales=SCALES, experiment=experiment or (lambda s, d: {}), **kw)


# ------------------------------------------------------------------ margins
def test_sign_only_rules_are_refused_unless_the_sign_is_the_claim():
    for statistic, relation, value in [
        ("difference", "greater", 0.0),
        ("ratio", "less", 1.0),
        ("mean", "less", 0.0),
        ("interval", "less", 0.0),
    ]:
        with pytest.raises(ConfigError, match="sign-only") as err:
            Effect(quantity="q", statistic=statistic, relation=relation, value=value)
        assert err.value.key == "why_sign"
        assert Effect(
            quantity="q", statistic=statistic, relation=relation, value=value, why_sign=WHY
        ).sign_only
    # a margin is a claim with a size: no reason needed
    assert not Effect(quantity="q", statistic="ratio", relation="less", value=0.8).sign_only
    assert not Effect(quantity="q", statistic="difference", relation="greater", value=0.05).sign_only
    # a non-inferiority slack moves the boundary off the neutral value
    assert not Effect(
        quantity="q", statistic="difference", relation="greater", value=0.0, tolerance=0.1
    ).sign_only
    assert not Effect(quantity="q", statistic="mean", relation="within", value=0.0, tolerance=0.1).sign_only


def test_a_margin_changes_the_verdict_a_sign_rule_would_give():
    rng = np.random.default_rng(3)
    y = rng.normal(10, 1, 30)
    x = y + 0.2 + rng.normal(0, 0.1, 30)  # better by 0.2, clearly
    sign = Effect(quantity="d", statistic="difference", relation="greater", value=0.0, why_sign=WHY)
    margin = Effect(quantity="d", statistic="difference", relation="greater", value=0.5)
    assert decide(sign, x, y)["verdict"] == "passed"
    assert decide(margin, x, y)["verdict"] == "refuted"  # 0.2 is not the claimed 0.5


# ------------------------------------------------------------------ consistency
def _consistent(effect: Effect, c: dict, holm: bool) -> None:
    """The verdict agrees with the interval it prints (the Holm interval when adjusted)."""
    lo_key, hi_key = ("low_holm", "high_holm") if holm else ("low", "high")
    low, high = c[lo_key], c[hi_key]
    lo_b, hi_b = effect.bounds
    if effect.relation == "greater":
        on_side, off_side = low > lo_b, high < lo_b
    elif effect.relation == "less":
        on_side, off_side = high < hi_b, low > hi_b
    else:
        on_side, off_side = (lo_b <= low and high <= hi_b), (high < lo_b or low > hi_b)
    assert (c["verdict"] == "passed") == on_side, c
    assert (c["verdict"] == "refuted") == off_side, c


@pytest.mark.parametrize("statistic", ["difference", "ratio", "mean"])
def test_verdicts_never_contradict_their_intervals_with_or_without_holm(statistic):
    rng = np.random.default_rng(11)
    for _ in range(60):
        n = int(rng.choice([3, 5, 10, 20]))
        k = int(rng.choice([1, 3]))  # baselines: 3 gives a Holm family
        x = rng.lognormal(0.0, 0.8, n) * rng.uniform(0.3, 2.0)
        values = {"method": x}
        for b in range(k):
            values[f"b{b}"] = x * rng.lognormal(rng.normal(0.3, 0.3), 0.6, n)
        value = {"ratio": 0.9, "difference": -0.2, "mean": 1.2}[statistic]
        effect = Effect(quantity="q", statistic=statistic, relation="less", value=value)
        claim = _claim(effect, arms=tuple(values))
        rec = evaluate_claim(claim, Observations(values=values), "paper")
        for c in rec["comparisons"]:
            _consistent(effect, c, holm=rec["holm"])
            if rec["holm"]:  # the adjusted interval contains the raw one
                assert c["low_holm"] <= c["low"] + 1e-12 and c["high"] <= c["high_holm"] + 1e-12


def test_skewed_ratio_data_where_bootstrap_and_normal_p_disagreed():
    """On skewed ratios the BCa interval lay above 1 while the normal p said 'inconclusive'.

    Build such a data set with the old pieces (BCa interval, normal p from the bootstrap s.e.), then
    show the protocol's interval and p-value agree on it.
    """
    from scipy.stats import norm

    from quadriga.stats import bootstrap_ci

    alpha = 0.025
    found = None
    for seed in range(400):
        rng = np.random.default_rng(seed)
        y = rng.lognormal(0, 0.3, 8)
        x = y * rng.lognormal(0.5, 1.2, 8)
        old = bootstrap_ci(x, "ratio", y, resamples=2000, rng=0)
        p_old = float(norm.sf((old.estimate - 1.0) / old.se))
        if old.low > 1.0 and p_old >= alpha:
            found = (x, y, old, p_old)
            break
    assert found is not None, "no disagreeing data set found"
    x, y, old, p_old = found
    effect = Effect(quantity="ratio", statistic="ratio", relation="greater", value=1.0, why_sign=WHY)
    new = decide(effect, x, y)
    assert (new["verdict"] == "passed") == (new["p_claim"] < alpha) == (new["low"] > 1.0)
    assert (new["verdict"] == "refuted") == (new["p_refute"] < alpha) == (new["high"] < 1.0)


# ------------------------------------------------------------------ preconditions
def test_a_failed_precondition_makes_the_claim_inconclusive_and_shows_the_diagnostic():
    rng = np.random.default_rng(0)
    y = rng.normal(10, 1, 20)
    values = {"method": y + 2 + rng.normal(0, 0.1, 20), "baseline": y}
    effect = Effect(quantity="d", statistic="difference", relation="greater", value=1.0)
    binds = Precondition.number("binding_fraction", ">=", 0.1, "the constraint binds in 10 % of steps")
    obs = Observations(values=values, numbers={"binding_fraction": 0.02})
    rec = evaluate_claim(_claim(effect, preconditions=(binds,)), obs, "paper")
    assert rec["status"] == "inconclusive"
    assert rec["precondition_failed"] == "the constraint binds in 10 % of steps"
    assert rec["summary"].startswith("inconclusive (precondition: the constraint binds")
    assert rec["preconditions"][0]["diagnostic"] == "binding_fraction = 0.02 (needs >= 0.1)"
    assert all(c["verdict"] == "inconclusive" for c in rec["comparisons"])
    obs.numbers["binding_fraction"] = 0.5
    assert evaluate_claim(_claim(effect, preconditions=(binds,)), obs, "paper")["status"] == "passed"
    # a degenerate baseline (one value throughout) fails Precondition.varies
    dead = Observations(values={"method": values["method"], "baseline": np.full(20, 10.0)})
    rec = evaluate_claim(_claim(effect, preconditions=(Precondition.varies("baseline"),)), dead, "paper")
    assert rec["status"] == "inconclusive" and "one value" in rec["preconditions"][0]["diagnostic"]
    # smoke scale: diagnostics, no verdict
    rec = evaluate_claim(_claim(effect, preconditions=(binds,)), obs, "smoke")
    assert rec["status"] == "ran" and rec["preconditions"][0]["holds"]


def test_a_check_that_raises_fails_its_precondition():
    pre = Precondition("explodes", lambda obs: 1 / 0)
    holds, diagnostic = pre.evaluate(Observations())
    assert not holds and "ZeroDivisionError" in diagnostic


# ------------------------------------------------------------------ plan
def _standardized(n: int, mean: float, sd: float, seed: int) -> np.ndarray:
    z = np.random.default_rng(seed).normal(size=n)
    return mean + sd * (z - z.mean()) / z.std(ddof=1)


def test_plan_pilot_gives_the_noncentral_t_replicates(tmp_path):
    from quadriga.claims.plan import pilot
    from quadriga.stats import replicates_for_power, t_power

    def experiment(scale, out):
        base = _standardized(scale.replicates, 5.0, 1.0, 1)
        diff = _standardized(scale.replicates, 0.3, 1.0, 2)  # paired differences with sd exactly 1
        return {"method": base + diff, "baseline": base}

    effect = Effect(quantity="d", statistic="difference", relation="greater", value=0.1)
    claim = _claim(effect, experiment=experiment, plan=Plan(effect=0.5, pilot_replicates=8))
    out = pilot(claim, tmp_path)
    assert out["pilot_replicates"] == 8 and out["comparisons"][0]["sd"] == pytest.approx(1.0)
    assert out["n_needed"] == replicates_for_power(0.5, 1.0) == 34
    # 34 is the least n with power 0.8 for d = 0.5 (one-sided 0.025): the closed form says so
    assert t_power(0.5, 1.0, 34) >= 0.8 > t_power(0.5, 1.0, 33)
    assert out["enough"] is False and "34 replicates needed, 20 declared: too few" in out["summary"]


# ------------------------------------------------------------------ fragility
def test_fragility_maps_where_the_claim_holds(tmp_path):
    from quadriga.claims.fragility import run_fragility

    def experiment(scale, out):
        noise = 0.0
        for o in scale.overrides:
            if o.startswith("task.data.noise="):
                noise = float(o.split("=", 1)[1])
        base = _standardized(scale.replicates, 5.0, 1.0, 1)
        gain = 1.0 - 10 * noise  # the effect shrinks with label noise and reverses past 0.1
        return {"method": base + gain + _standardized(scale.replicates, 0, 0.2, 2), "baseline": base}

    effect = Effect(quantity="d", statistic="difference", relation="greater", value=0.3)
    claim = _claim(effect, experiment=experiment, fragility={"task.data.noise": [0.0, 0.05, 0.1, 0.2]})
    out = run_fragility(claim, "paper", tmp_path)
    assert [p["status"] for p in out["points"]] == ["passed", "passed", "refuted", "refuted"]
    assert out["holds"] == [{"task.data.noise": 0.0}, {"task.data.noise": 0.05}]
    assert "| task.data.noise | status |" in out["table"]
    assert (tmp_path / "fragility.png").stat().st_size > 5000
    with pytest.raises(ConfigError, match="fragility"):
        _claim(effect, fragility={"task.data.noise": []})


# ------------------------------------------------------------------ freshness
def test_records_go_stale_when_the_source_the_protocol_or_a_library_changes(tmp_path, monkeypatch):
    import sys

    from quadriga.claims.fingerprint import PROTOCOL, fingerprint, staleness

    pkg = tmp_path / "stalepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "claims.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("stalepkg", None)

    class Spec:
        target = "stalepkg.claims:X"
        distribution = "stalepkg"

    fp = fingerprint(Spec, ["numpy"])
    assert fp["protocol"] == PROTOCOL and fp["libraries"]["numpy"] == np.__version__
    record = {"status": "passed", "fingerprint": fp}
    assert staleness(Spec, record) == ""
    assert staleness(Spec, None) == ""
    assert "without a fingerprint" in staleness(Spec, {"status": "passed"})
    assert "protocol 2" in staleness(Spec, {"status": "passed", "fingerprint": {**fp, "protocol": 2}})
    old_lib = {**fp, "libraries": {"numpy": "1.0.0"}}
    assert staleness(Spec, {"status": "passed", "fingerprint": old_lib}) == f"numpy 1.0.0 -> {np.__version__}"
    (pkg / "claims.py").write_text("X = 2  # the algorithm changed\n")
    assert "source changed" in staleness(Spec, record)


def test_verify_plan_fragility_stale_and_json_from_the_command_line(registry, tmp_path, monkeypatch, capsys):
    import quadriga.claims as qc
    from quadriga.cli import main

    def experiment(scale, out):
        base = _standardized(scale.replicates, 5.0, 1.0, 1)
        shift = 1.0 + sum(float(o.split("=")[1]) for o in scale.overrides if o.startswith("x="))
        return {"method": base + shift + _standardized(scale.replicates, 0, 0.5, 2), "baseline": base}

    effect = Effect(quantity="d", statistic="difference", relation="greater", value=0.5)
    plan = Plan(effect=0.5, pilot_replicates=6)
    claim = _claim(effect, experiment=experiment, plan=plan, fragility={"x": [-1.0, 0.0]})
    monkeypatch.setattr(registry, "load_claim", lambda s: claim)
    monkeypatch.setattr("quadriga.cli.verify.registry_for", lambda args: registry)
    record_file = tmp_path / "claims_record.json"
    monkeypatch.setattr(qc.record, "_record_path", lambda target: record_file)
    monkeypatch.chdir(tmp_path)

    assert main(["verify", "toy-claim", "--plan", "--record", "--json", "--out", "plan"]) == 0
    rec = json.loads(capsys.readouterr().out)["records"][0]
    assert rec["status"] == "planned" and rec["pilot"]["n_needed"] <= 20
    assert main(["verify", "toy-claim", "--fragility", "--scale", "paper", "--json", "--out", "frag"]) == 0
    frag = json.loads(capsys.readouterr().out)["records"][0]["fragility"]
    assert [p["status"] for p in frag["points"]] == ["refuted", "passed"]  # shift 0 and 1 against 0.5
    assert main(["verify", "toy-claim", "--scale", "paper", "--record", "--out", "paper"]) == 0
    saved = json.loads(record_file.read_text())["toy-claim"]
    assert saved["fingerprint"]["protocol"] == 3 and saved["effect"]["value"] == 0.5
    assert saved["plan"]["planned_replicates"] == 20 and saved["plan"]["effect"] == 0.5
    assert isinstance(saved["seconds"], float) and 0 <= saved["seconds"] < 600  # the run's wall time
    capsys.readouterr()
    # nothing stale: --stale runs nothing
    assert main(["verify", "--stale", "--json", "--out", "stale"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == []
    # an old record is stale: list marks it, --stale re-runs exactly it
    saved["fingerprint"]["protocol"] = 2
    record_file.write_text(json.dumps({"toy-claim": saved}))
    assert qc.stale_reason(next(c for c in registry.claims() if c.name == "toy-claim"))
    assert main(["verify", "--stale", "--record", "--json", "--out", "stale2"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)["records"]]
    assert names == ["toy-claim"]
    again = json.loads(record_file.read_text())["toy-claim"]
    assert again["fingerprint"]["protocol"] == 3 and again["status"] == "passed"
    assert again["pilot"]["n_needed"] == rec["pilot"]["n_needed"]  # the pilot is kept beside the verdict


# ------------------------------------------------------------------ declarative: group_by and across
_GRID = """
[pipeline]
name = "grid"
seed = 0

[task.normal]
use = "toy-normal"
dimension = 3

[stage.draw]
use = "toy-iid"
inputs = { target = "normal" }
matrix = { num_samples = [100, 400, 1600], sleep = [0.0, 1e-6] }

[stage.check]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["draw[*]"], reference = "normal" }
"""


def test_a_rate_across_a_matrix_key_per_group_declared_not_hand_run(registry, tmp_path):
    """The mean error of n draws of N(0, I) falls as n^-1/2: a per-replicate slope close to -0.5."""
    path = tmp_path / "grid.toml"
    path.write_text(_GRID)  # sleep: a no-op setting standing in for a task or a noise level
    rate = Effect(
        quantity="slope of log mean error against log n",
        statistic="mean",
        relation="within",
        value=-0.5,
        tolerance=0.25,
        label="slope",
    )
    claim = Claim(
        pipeline=str(path),
        arms=("draw",),
        metric=("check", "mean_error"),
        effect=rate,
        scales={"smoke": Scale(replicates=4), "paper": Scale(replicates=12)},
        group_by="sleep",
        across="num_samples",
    )
    obs = claim.observations("paper", tmp_path / "c", registry)
    assert set(obs.values) == {"sleep=0.0", "sleep=1e-06"}  # two groups, each one comparison
    slopes = obs.values["sleep=0.0"]["draw"]
    assert len(slopes) == 12 and -0.8 < np.mean(slopes) < -0.2
    rec = evaluate_claim(claim, obs, "paper")
    assert [c["group"] for c in rec["comparisons"]] == ["sleep=0.0", "sleep=1e-06"] and rec["holm"]
    # a matrix key that is neither grouped nor the axis is named
    free = Claim(
        pipeline=str(path),
        arms=("draw",),
        metric=("check", "mean_error"),
        effect=rate,
        scales=SCALES,
        across="num_samples",
    )
    with pytest.raises(ConfigError, match="sleep of arm 'draw' are neither grouped"):
        free.observations("smoke", tmp_path / "d", registry)
    with pytest.raises(ConfigError, match="both grouped and the slope"):
        Claim(
            pipeline=str(path),
            arms=("draw",),
            metric=("check", "m"),
            effect=rate,
            scales=SCALES,
            group_by="num_samples",
            across="num_samples",
        )


def test_an_interrupted_verify_keeps_the_report_of_the_claims_done(registry, tmp_path, monkeypatch):
    import quadriga.claims as qc

    values = {"method": _standardized(20, 6.0, 1.0, 1), "baseline": _standardized(20, 5.0, 1.0, 2)}
    effect = Effect(quantity="d", statistic="difference", relation="greater", value=0.5)
    done = _claim(effect, experiment=lambda s, d: values)

    def interrupted(scale, out):
        raise KeyboardInterrupt

    spec = next(c for c in registry.claims() if c.name == "toy-claim")
    twice = [spec, attrs.evolve(spec, name="toy-claim-2")]  # the second one is interrupted
    monkeypatch.setattr(registry, "claims", lambda: twice)
    claims = {"toy-claim": done, "toy-claim-2": _claim(effect, experiment=interrupted)}
    monkeypatch.setattr(registry, "load_claim", lambda s: claims[s.name])
    monkeypatch.setattr(qc.record, "_record_path", lambda target: tmp_path / "claims_record.json")
    with pytest.raises(KeyboardInterrupt):
        qc.verify(registry, "quadriga-toy", scale="paper", out_dir=tmp_path / "v", record=True)
    saved = json.loads((tmp_path / "v" / "report.json").read_text())
    assert [(r["name"], r["status"]) for r in saved] == [
        ("toy-claim", "passed"),
        ("toy-claim-2", "interrupted"),
    ]
    assert saved[1]["numbers"] == {} and saved[1]["comparisons"] == []  # no numbers for the interrupted
    report = (tmp_path / "v" / "report.md").read_text()
    assert "| toy-claim-2 | interrupted |" in report and "before 1 of 2 claims finished" in report
    assert json.loads((tmp_path / "claims_record.json").read_text())["toy-claim"]["status"] == "passed"


# ------------------------------------------------------------------ declarative: groups of stage tables
_TASKS = """
[pipeline]
name = "tasks"
seed = 0

[task.small]
use = "toy-normal"
dimension = 2

[task.large]
use = "toy-normal"
dimension = 6

[stage.few-small]
use = "toy-iid"
inputs = { target = "small" }
num_samples = 50

[stage.many-small]
use = "toy-iid"
inputs = { target = "small" }
num_samples = 800

[stage.few-large]
use = "toy-iid"
inputs = { target = "large" }
num_samples = 50

[stage.many-large]
use = "toy-iid"
inputs = { target = "large" }
num_samples = 800

[stage.check-small]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["few-small[*]", "many-small[*]"], reference = "small" }

[stage.check-large]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["few-large[*]", "many-large[*]"], reference = "large" }
"""


def test_groups_read_each_task_from_its_own_stage_tables(registry, tmp_path):
    """Tasks written as separate stage tables: one comparison per task, read through metric=."""
    from quadriga.claims.run import read_replicates, run_repeated

    path = tmp_path / "tasks.toml"
    path.write_text(_TASKS)
    effect = Effect(quantity="mean error ratio many / few", statistic="ratio", relation="less", value=0.8)
    groups = {t: {"many": f"many-{t}", "few": f"few-{t}"} for t in ("small", "large")}
    claim = Claim(
        pipeline=str(path),
        arms=("many", "few"),
        groups=groups,
        metric=("check-{group}", "mean_error"),
        effect=effect,
        scales={"smoke": Scale(replicates=3), "paper": Scale(replicates=8)},
    )
    obs = claim.observations("paper", tmp_path / "c", registry)
    assert list(obs.values) == ["small", "large"] and set(obs.values["small"]) == {"many", "few"}
    # the same numbers as reading the run by hand (what an experiment= callable did)
    stages = [s for g in groups.values() for s in g.values()]
    result = run_repeated(str(path), claim.scale("paper"), tmp_path / "by-hand", stages=stages)
    for task, arms in groups.items():
        by_hand = read_replicates(result, f"check-{task}", list(arms.values()), "mean_error", 8)
        assert obs.values[task] == {arm: by_hand[stage] for arm, stage in arms.items()}
    # 800 draws have a smaller mean error than 50, in every task
    assert all(np.mean(g["many"]) < np.mean(g["few"]) for g in obs.values.values())
    rec = evaluate_claim(claim, obs, "paper")
    assert [c["group"] for c in rec["comparisons"]] == ["small", "large"] and rec["holm"]
    with pytest.raises(ConfigError, match="no stage table for arm") as err:
        Claim(
            pipeline=str(path),
            arms=("many", "few"),
            groups={"small": {"many": "many-small"}},
            metric=("check-{group}", "mean_error"),
            effect=effect,
            scales=SCALES,
        )
    assert err.value.key == "groups"
    with pytest.raises(ConfigError, match="does not combine"):
        Claim(
            pipeline=str(path),
            arms=("many", "few"),
            groups=groups,
            group_by="x",
            metric=("check-{group}", "mean_error"),
            effect=effect,
            scales=SCALES,
        )


def test_info_puts_the_stale_note_after_the_per_comparison_rows():
    from quadriga.claims.info import claim_lines

    comps = [
        {"arm": "a", "estimate": v, "low": v - 0.5, "high": v + 0.5, "n": 3, "verdict": "passed", "group": g}
        for g, v in (("g1", 1.0), ("g2", 2.0))
    ]
    facts = {
        "name": "x",
        "summary": "s",
        "distribution": "d",
        "problem": "not loaded here",
        "paper": "p",
        "effect": None,
        "last_verdict": {"status": "passed", "date": "2026-12-02", "version": "1", "comparisons": comps},
        "stale": "d's source changed since the record",
    }
    lines = [line for line in claim_lines(facts) if line.startswith(("last verdict", "  "))]
    heads = [line.split(":")[0].strip() for line in lines]
    assert heads[-3:] == ["g1", "g2", "stale"], lines


def test_an_underpowered_plan_is_an_answer_not_a_failure(registry, tmp_path, monkeypatch, capsys):
    """``verify --plan`` exits 0 when the pilot says the declared n is too few (its finding)."""
    from quadriga.cli import main

    def experiment(scale, out):
        base = _standardized(scale.replicates, 5.0, 1.0, 1)
        return {"method": base + 1.0 + _standardized(scale.replicates, 0, 0.5, 2), "baseline": base}

    effect = Effect(quantity="d", statistic="difference", relation="greater", value=0.5)
    claim = _claim(effect, experiment=experiment, plan=Plan(effect=0.01, pilot_replicates=6))
    monkeypatch.setattr(registry, "load_claim", lambda s: claim)
    monkeypatch.setattr("quadriga.cli.verify.registry_for", lambda args: registry)
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "toy-claim", "--plan", "--json", "--out", "plan"]) == 0
    rec = json.loads(capsys.readouterr().out)["records"][0]
    assert rec["status"] == "underpowered" and rec["pilot"]["n_needed"] > 20
