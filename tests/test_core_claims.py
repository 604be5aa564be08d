"""The claims protocol: the verdict policy on constructed cases, reports, records, a pipeline run."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

from quadriga.claims import Claim, Effect, Observations, Scale, Tuning, decide, evaluate_claim
from quadriga.errors import ConfigError

WHY = "the paper claims the direction only"

SCALES = {"smoke": Scale(replicates=3), "paper": Scale(replicates=50)}


def _pair(shift: float, noise: float, n: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.normal(10.0, 2.0, size=n)  # shared across arms (common random numbers)
    return base + shift + rng.normal(0, noise, size=n), base


def _claim(effect: Effect, arms=("method", "baseline"), **kw) -> Claim:
    return Claim(arms=arms, effect=effect, scales=SCALES, experiment=lambda s, d: {}, **kw)


GREATER = Effect(
    quantity="return difference", statistic="difference", relation="greater", value=0.0, why_sign=WHY
)


def test_clear_pass_clear_refute_and_underpowered():
    x, y = _pair(1.0, 0.5)
    passed = decide(GREATER, x, y)
    assert passed["verdict"] == "passed" and passed["low"] > 0 and passed["n"] == 50
    x, y = _pair(-1.0, 0.5)
    refuted = decide(GREATER, x, y)
    assert refuted["verdict"] == "refuted" and refuted["high"] < 0
    x, y = _pair(0.1, 3.0, n=10)
    weak = decide(GREATER, x, y)
    assert weak["verdict"] == "inconclusive" and weak["low"] < 0 < weak["high"]
    # the MDE is (t_0.975 + t_0.8) se with the interval's 9 degrees of freedom, and the replicates
    # needed exceed the 10 we have
    from scipy.stats import t as student_t

    q = student_t.ppf(0.975, 9) + student_t.ppf(0.8, 9)
    assert weak["mde"] == pytest.approx(q * weak["se"], rel=1e-9)
    assert weak["replicates_needed"] > 10
    # with that many replicates of the same effect size the interval no longer straddles 0.1 - 0
    assert passed["replicates_needed"] is None


def test_margin_ratio_and_within():
    x, y = _pair(-0.2, 0.1)  # method 0.2 worse
    nonin = Effect(quantity="d", statistic="difference", relation="greater", value=0.0, tolerance=0.5)
    assert decide(nonin, x, y)["verdict"] == "passed"  # non-inferior within the 0.5 margin
    ratio = Effect(quantity="MSE ratio", statistic="ratio", relation="less", value=1.0, why_sign=WHY)
    assert decide(ratio, 0.6 * y, y)["verdict"] == "passed"
    assert decide(ratio, 1.5 * y, y)["verdict"] == "refuted"
    cov = Effect(quantity="coverage", statistic="mean", relation="within", value=0.9, tolerance=0.02)
    rng = np.random.default_rng(1)
    assert decide(cov, 0.9 + rng.normal(0, 0.01, 200))["verdict"] == "passed"
    assert decide(cov, 0.8 + rng.normal(0, 0.01, 200))["verdict"] == "refuted"
    assert decide(cov, 0.91 + rng.normal(0, 0.05, 20))["verdict"] == "inconclusive"


def test_smoke_scale_never_passes_and_paper_does():
    x, y = _pair(1.0, 0.5)
    claim = _claim(GREATER)
    obs = Observations(values={"method": x, "baseline": y})
    assert evaluate_claim(claim, obs, "smoke")["status"] == "ran"
    paper = evaluate_claim(claim, obs, "paper")
    assert paper["status"] == "passed" and "n=50" in paper["summary"]


def test_a_claim_with_no_comparison_is_never_passed():
    # a benchmark table (observations with numbers only): nothing to decide at any scale
    claim = _claim(GREATER)
    obs = Observations(values={}, numbers={"rms error": 0.12}, table="| a | b |")
    for scale in ("smoke", "paper"):
        record = evaluate_claim(claim, obs, scale)
        assert record["status"] == "ran" and record["comparisons"] == []
        assert "no verdict" in record["summary"] and "within" not in record["summary"]


def test_holm_over_several_baselines_and_groups():
    x, y = _pair(1.0, 0.5)
    # method beats baseline clearly; against "equal" (same values + tiny noise) it cannot win
    rng = np.random.default_rng(3)
    equal = x + rng.normal(0, 0.5, size=50)
    claim = _claim(GREATER, arms=("method", "baseline", "equal"))
    rec = evaluate_claim(claim, Observations(values={"method": x, "baseline": y, "equal": equal}), "paper")
    assert rec["holm"] and rec["status"] == "inconclusive"
    verdicts = {c["baseline"]: c["verdict"] for c in rec["comparisons"]}
    assert verdicts == {"baseline": "passed", "equal": "inconclusive"}
    assert "1 of 2 comparisons passed after Holm" in rec["summary"]
    adj = [c["p_claim_holm"] for c in rec["comparisons"]]
    raw = sorted(c["p_claim"] for c in rec["comparisons"])
    assert max(adj) == pytest.approx(max(raw)) and min(adj) == pytest.approx(2 * min(raw))
    grouped = {"task-a": {"method": x, "baseline": y}, "task-b": {"method": y - 1.0, "baseline": y}}
    rec = evaluate_claim(_claim(GREATER), Observations(values=grouped), "paper")
    assert rec["status"] == "refuted" and [c["group"] for c in rec["comparisons"]] == ["task-a", "task-b"]


def test_tuning_parity_flag():
    claim = _claim(
        GREATER,
        tuning={"method": Tuning(20, "best of 20 learning rates"), "baseline": Tuning(1, "paper default")},
    )
    assert "method tried 20 setting(s)" in claim.tuning_flags()[0]
    assert "not recorded" in _claim(GREATER).tuning_flags()[0]
    same = _claim(GREATER, tuning={"method": Tuning(), "baseline": Tuning()})
    assert same.tuning_flags() == []


def test_declaration_errors():
    with pytest.raises(ConfigError, match="statistic"):
        Effect(quantity="q", statistic="median", relation="greater", value=0, why_sign=WHY)
    with pytest.raises(ConfigError, match="relation"):
        Effect(quantity="q", statistic="mean", relation="above", value=0, why_sign=WHY)
    with pytest.raises(ConfigError, match="tolerance"):
        Effect(quantity="q", statistic="mean", relation="within", value=0)
    with pytest.raises(ConfigError, match="two arms"):
        _claim(GREATER, arms=("method",))
    with pytest.raises(ConfigError, match="exactly one"):
        Claim(arms=("a", "b"), effect=GREATER, scales=SCALES, pipeline="p")
    with pytest.raises(ConfigError, match="replicates"):
        Scale(replicates=1)
    with pytest.raises(ConfigError, match="lack arm"):
        evaluate_claim(_claim(GREATER), Observations(values={"method": [1.0, 2.0]}), "paper")


def test_claim_runs_through_a_registered_pipeline(registry, tmp_path):
    effect = Effect(quantity="|mean error|", statistic="mean", relation="less", value=0.5)
    claim = Claim(
        pipeline="toy-pipeline",
        arms=("draw",),
        metric=("check", "mean_error"),
        effect=effect,
        scales={
            "smoke": Scale(replicates=3, overrides=("stage.draw.num_samples=100",)),
            "paper": SCALES["paper"],
        },
    )
    obs = claim.observations("smoke", tmp_path, registry)
    vals = obs.values["draw"]
    assert len(vals) == 3 and len(set(vals)) == 3  # three replicates with different seeds
    assert all(0 <= v < 0.5 for v in vals)  # N(0, 1) mean of 100 draws: 5 standard errors
    with pytest.raises(ConfigError, match="not a stage"):
        Claim(
            pipeline="toy-pipeline", arms=("nope",), metric=("check", "m"), effect=effect, scales=SCALES
        ).observations("smoke", tmp_path, registry)


def test_verify_report_record_and_last_verdict(registry, tmp_path, monkeypatch):
    import quadriga.claims as qc

    x, y = _pair(1.0, 0.5)
    claim = Claim(
        arms=("method", "baseline"),
        effect=GREATER,
        scales=SCALES,
        experiment=lambda scale, out: Observations(
            values={"method": x, "baseline": y}, numbers={"extra": 1.5}
        ),
        tuning={"method": Tuning(), "baseline": Tuning()},
    )
    spec = next(c for c in registry.claims() if c.name == "toy-claim")
    monkeypatch.setattr(registry, "load_claim", lambda s: claim)
    monkeypatch.setattr(qc.record, "_record_path", lambda target: tmp_path / "claims_record.json")
    records, report = qc.verify(registry, "toy-claim", scale="smoke", out_dir=tmp_path / "s")
    assert records[0]["status"] == "ran" and "ran" in report.read_text()
    records, report = qc.verify(registry, "toy-claim", scale="paper", out_dir=tmp_path / "p", record=True)
    assert records[0]["status"] == "passed"
    text = report.read_text()
    assert (
        "| method | baseline |" in text
        and "Student t (paired differences, df 49)" in text
        and "| extra | 1.5 |" in text
    )
    saved = json.loads((tmp_path / "p" / "report.json").read_text())[0]
    assert saved["comparisons"][0]["n"] == 50
    last = qc.last_verdict(spec)
    assert last["status"] == "passed" and last["n"] == 50 and last["date"] == records[0]["date"]
    with pytest.raises(Exception, match="paper"):
        qc.verify(registry, "toy-claim", scale="smoke", out_dir=tmp_path / "x", record=True)


def test_registered_claim_runs_its_pipeline_and_gives_numbers_at_smoke(registry, tmp_path):
    from quadriga.claims import verify

    records, _ = verify(registry, "toy-claim", scale="smoke", out_dir=tmp_path / "v")
    (comparison,) = records[0]["comparisons"]
    assert records[0]["status"] == "ran" and comparison["n"] == 3
    # three replicates of 200 draws from N(0, 1): each |mean| is a half-normal with sd 1/sqrt(200)
    assert 0 < comparison["estimate"] < 5 / 200**0.5


def test_a_registered_target_that_is_not_a_claim_is_an_error(registry, tmp_path, monkeypatch):
    from quadriga.claims import verify

    monkeypatch.setattr(registry, "load_claim", lambda s: lambda scale, *, out_dir: None)
    records, _ = verify(registry, "toy-claim", scale="smoke", out_dir=tmp_path / "v")
    assert records[0]["status"] == "error" and "register a quadriga.claims.Claim" in records[0]["summary"]


def test_interval_statistic_for_slopes():
    from quadriga.stats import Interval, loglog_slope

    rate = Effect(
        quantity="log-log slope", statistic="interval", relation="within", value=-1.0, tolerance=0.25
    )
    claim = Claim(arms=("sampler",), effect=rate, scales=SCALES, experiment=lambda s, d: {})
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    rng = np.random.default_rng(0)
    y = (x**-1.0)[:, None] * rng.lognormal(0, 0.1, size=(4, 40))
    obs = Observations(intervals={"": loglog_slope(x, y)})
    rec = evaluate_claim(claim, obs, "paper")
    assert rec["status"] == "passed" and rec["comparisons"][0]["se"] > 0
    y_half = (x**-0.5)[:, None] * rng.lognormal(0, 0.1, size=(4, 40))
    obs = Observations(intervals={"": loglog_slope(x, y_half)})
    assert evaluate_claim(claim, obs, "paper")["status"] == "refuted"
    # an interval built by hand (no pivot) is decided on a t pivot from its half-width
    s, lo, hi = loglog_slope(x, y)
    rec = evaluate_claim(
        claim, Observations(intervals={"": Interval(s, lo, hi, 0.95, "by hand", 40)}), "paper"
    )
    assert rec["status"] == "passed"


def test_verify_names_an_installed_distribution_without_claims():
    from types import SimpleNamespace

    import quadriga.claims as qc
    from quadriga.errors import UnknownComponentError

    registry = SimpleNamespace(
        claims=lambda: [], plugins={"toy": SimpleNamespace(distribution="quadriga-toy")}
    )
    with pytest.raises(UnknownComponentError, match="registers no claims"):
        qc.select_claims(registry, "quadriga-toy")
    with pytest.raises(UnknownComponentError, match="no distribution or claim named"):
        qc.select_claims(registry, "quadriga-elsewhere")


_TWO_ARMS = """
[pipeline]
name = "toy-two-arms"
seed = 0

[task.normal]
use = "toy-normal"
dimension = 3

[stage.draw]
use = "toy-iid"
inputs = { target = "normal" }
num_samples = 100

[stage.draw2]
use = "toy-iid"
inputs = { target = "normal" }
num_samples = 400

[stage.check]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = ["draw", "draw2"], reference = "normal" }
"""


def _two_claims(path):
    """Two claims on one pipeline reading different arms; both repeat both samplers."""
    mean = Effect(quantity="|mean error|", statistic="mean", relation="less", value=0.5)
    diff = Effect(
        quantity="error difference", statistic="difference", relation="less", value=0.0, why_sign=WHY
    )
    common = dict(pipeline=str(path), metric=("check", "mean_error"), scales=SCALES)
    first = Claim(arms=("draw",), repeat_stages=("draw2",), effect=mean, **common)
    second = Claim(arms=("draw2", "draw"), effect=diff, **common)
    return first, second


def test_claims_on_one_pipeline_and_scale_share_one_run(registry, tmp_path, monkeypatch):
    from types import SimpleNamespace

    import quadriga.api
    from quadriga.claims import shared_runs, verify

    path = tmp_path / "two.toml"
    path.write_text(_TWO_ARMS)
    first, second = _two_claims(path)
    calls = []
    real_run = quadriga.api.run
    monkeypatch.setattr(quadriga.api, "run", lambda *a, **k: calls.append(k["out"]) or real_run(*a, **k))
    # outside a shared block every claim runs its pipeline
    apart = [
        c.observations("smoke", tmp_path / f"apart-{i}", registry) for i, c in enumerate((first, second))
    ]
    assert len(calls) == 2
    calls.clear()
    with shared_runs() as cache:
        together = [
            c.observations("smoke", tmp_path / f"shared-{i}", registry) for i, c in enumerate((first, second))
        ]
        assert len(cache) == 1
    assert len(calls) == 1 and calls[0] == tmp_path / "shared-0" / "run"
    assert (tmp_path / "shared-1" / "shared-run.txt").read_text().strip() == str(
        tmp_path / "shared-0" / "run"
    )
    assert not cache  # emptied when the block ends
    # the shared run gives the numbers the separate runs gave (same pipeline, same seed)
    assert together[0].values == apart[0].values and together[1].values == apart[1].values
    assert len(together[1].values["draw2"]) == 3 and together[1].values["draw"] == together[0].values["draw"]
    # 400 draws per replicate estimate the mean better than 100 (3 replicates: numbers only)
    assert np.mean(together[1].values["draw2"]) < np.mean(together[1].values["draw"])

    # verify opens the block around every claim it runs: two claims, one run
    specs = [
        SimpleNamespace(name=n, distribution="quadriga-toy", plugin="toy", summary=n, paper="", target="x:y")
        for n in ("first", "second")
    ]
    targets = {"first": first, "second": second}
    monkeypatch.setattr(registry, "claims", lambda: specs)
    monkeypatch.setattr(registry, "load_claim", lambda spec: targets[spec.name])
    calls.clear()
    records, _ = verify(registry, "quadriga-toy", scale="smoke", out_dir=tmp_path / "v")
    assert [r["status"] for r in records] == ["ran", "ran"] and len(calls) == 1
    assert records[0]["observations"][""]["draw"] == apart[0].values["draw"]


def test_run_pipeline_takes_a_pipeline_by_name_and_shares_it(registry, tmp_path, monkeypatch):
    """A claim whose observation is read from a pipeline as written (no repeat) names it."""
    import quadriga.api
    from quadriga.claims import run_pipeline, shared_runs

    path = tmp_path / "two.toml"
    path.write_text(_TWO_ARMS)
    calls = []
    real_run = quadriga.api.run
    monkeypatch.setattr(quadriga.api, "run", lambda *a, **k: calls.append(k["out"]) or real_run(*a, **k))
    with shared_runs():
        first = run_pipeline(str(path), seed=3, out=tmp_path / "a", registry=registry)
        again = run_pipeline(str(path), seed=3, out=tmp_path / "b", registry=registry)
    assert again is first and calls == [tmp_path / "a"]
    assert (tmp_path / "shared-run.txt").read_text().strip() == str(tmp_path / "a")
    values = first.results["stages"]["check"]["values"]
    alone = run_pipeline(str(path), seed=3, out=tmp_path / "c", registry=registry)  # outside: runs again
    assert len(calls) == 2 and alone.results["stages"]["check"]["values"] == values


def test_claim_names_a_repeat_stage_that_is_not_in_the_pipeline(registry, tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(_TWO_ARMS)
    mean = Effect(quantity="|mean error|", statistic="mean", relation="less", value=0.5)
    claim = Claim(
        pipeline=str(path),
        arms=("draw",),
        repeat_stages=("draw3",),
        metric=("check", "mean_error"),
        effect=mean,
        scales=SCALES,
    )
    with pytest.raises(ConfigError, match=r"repeat_stages names 'draw3'.*draw2"):
        claim.observations("smoke", tmp_path, registry)


_THREE_ARMS = (
    _TWO_ARMS.replace('name = "toy-two-arms"', 'name = "toy-three-arms"').replace(
        'subject = ["draw", "draw2"]', 'subject = ["draw", "draw3", "draw2"]'
    )
    + """
[task.wide]
use = "toy-normal"
dimension = 5

[stage.draw3]
use = "toy-iid"
inputs = { target = "wide" }
num_samples = 50

[stage.check3]
use = "toy-mean"
kind = "evaluator"
inputs = { subject = "draw3", reference = "wide" }
"""
)


def test_a_claim_with_stages_runs_only_those_and_narrows_their_inputs(registry, tmp_path):
    """``stages`` keeps the named stages, the arms and the metric stage; a list input loses the rest."""
    from quadriga.claims.run import keep_stages
    from quadriga.pipeline import read_source

    three, two = tmp_path / "three.toml", tmp_path / "two.toml"
    three.write_text(_THREE_ARMS)
    two.write_text(_TWO_ARMS)
    diff = Effect(
        quantity="error difference", statistic="difference", relation="less", value=0.0, why_sign=WHY
    )
    common = dict(arms=("draw2", "draw"), metric=("check", "mean_error"), effect=diff, scales=SCALES)
    kept = Claim(pipeline=str(three), stages=("check",), **common)
    obs = kept.observations("smoke", tmp_path / "kept", registry)
    ran = json.loads((tmp_path / "kept" / "run" / "results.json").read_text())["stages"]
    assert sorted(ran) == sorted(["check", *(f"{a}[{i}]" for a in ("draw", "draw2") for i in range(3))])
    assert not any(k.startswith("draw3") for k in ran["check"]["values"])  # its subject list was narrowed
    # the same stages of the two-arm pipeline give the same values: seeds follow stage names
    whole = Claim(pipeline=str(two), **common).observations("smoke", tmp_path / "two", registry)
    assert obs.values == whole.values and len(obs.values["draw"]) == 3

    data, _ = read_source(str(three), registry)
    keep_stages(data, ("draw", "draw2", "check"))
    assert list(data["stage"]) == ["draw", "draw2", "check"] and list(data["task"]) == ["normal"]
    assert data["stage"]["check"]["inputs"] == {"subject": ["draw", "draw2"], "reference": "normal"}
    # a single input naming a stage left out cannot be narrowed
    lone = Claim(pipeline=str(three), stages=("check3",), **common)
    with pytest.raises(ConfigError, match="leaves out draw3, which stage 'check3' reads") as err:
        lone.observations("smoke", tmp_path / "lone", registry)
    assert err.value.key == "stages"
    # a name that is not a stage of the pipeline, with the closest one
    bad = Claim(pipeline=str(three), stages=("chek",), **common)
    with pytest.raises(ConfigError, match=r"stages names 'chek'.*check") as err:
        bad.observations("smoke", tmp_path / "bad", registry)
    assert err.value.key == "stages"
    with pytest.raises(ConfigError, match="experiment callable runs its own") as err:
        Claim(arms=("a", "b"), effect=diff, scales=SCALES, experiment=lambda s, d: {}, stages=("check",))
    assert err.value.key == "stages"


def test_claims_keeping_the_same_stages_share_one_run(registry, tmp_path, monkeypatch):
    """Claims on one subset (and its repeats) share a run; observe's arms may be labels, not stages."""
    import quadriga.api
    from quadriga.claims import Observations, read_replicates, shared_runs

    path = tmp_path / "three.toml"
    path.write_text(_THREE_ARMS)
    mean = Effect(quantity="|mean error|", statistic="mean", relation="less", value=0.5)
    diff = Effect(quantity="error gap", statistic="mean", relation="less", value=0.0, why_sign=WHY)

    def gap(result):
        err = read_replicates(result, "check", ("draw", "draw2"), "mean_error")
        return Observations(values={"gap": [a - b for a, b in zip(err["draw"], err["draw2"], strict=True)]})

    common = dict(pipeline=str(path), stages=("check",), scales=SCALES)
    first = Claim(
        arms=("draw",), repeat_stages=("draw2",), metric=("check", "mean_error"), effect=mean, **common
    )
    second = Claim(arms=("gap",), repeat_stages=("draw", "draw2"), observe=gap, effect=diff, **common)
    calls = []
    real_run = quadriga.api.run
    monkeypatch.setattr(quadriga.api, "run", lambda *a, **k: calls.append(k["out"]) or real_run(*a, **k))
    with shared_runs() as cache:
        one = first.observations("smoke", tmp_path / "first", registry)
        two = second.observations("smoke", tmp_path / "second", registry)
        assert len(cache) == 1
    assert calls == [tmp_path / "first" / "run"]
    assert (tmp_path / "second" / "shared-run.txt").exists() and not (tmp_path / "second" / "run").exists()
    ran = json.loads((tmp_path / "first" / "run" / "results.json").read_text())["stages"]
    assert "draw3[0]" not in ran and "check3" not in ran and len(ran) == 7
    assert len(two.values["gap"]) == 3 and two.values["gap"][0] == pytest.approx(
        one.values["draw"][0] - ran["check"]["values"]["draw2[0]/mean_error"]
    )


def test_shared_computes_once_per_key_inside_the_block_only():
    from quadriga.claims import shared, shared_runs

    count = []
    assert shared("k", lambda: count.append(1) or len(count)) == 1
    assert shared("k", lambda: count.append(1) or len(count)) == 2  # no block: computed again
    with shared_runs():
        with shared_runs():  # a nested block reuses the outer cache
            assert shared("k", lambda: count.append(1) or len(count)) == 3
        assert shared("k", lambda: count.append(1) or len(count)) == 3
        assert shared("other", lambda: 7) == 7
    assert len(count) == 3


def test_replicate_helpers_read_paired_values_and_name_what_is_missing():
    from quadriga.claims import mean_intervals, replicate_values
    from quadriga.stats import interval

    values = {"a[0]/m": 1.0, "a[1]/m": 3.0, "a[2]/m": 2.0, "b[0]/m": 5.0, "b[2]/m": 4.0}
    assert replicate_values(values, "a", "m") == [1.0, 3.0, 2.0]
    assert replicate_values(values, "a", "m", 2) == [1.0, 3.0]
    with pytest.raises(ConfigError, match=r"no value 'b\[1\]/m' in stage 'ev'"):
        replicate_values(values, "b", "m", 3, stage="ev")
    with pytest.raises(ConfigError, match=r"no value 'c\[0\]/m'"):
        replicate_values(values, "c", "m")
    numbers, table = mean_intervals({"a": {"m": [1.0, 3.0, 2.0, 4.0, 2.5]}})
    ci = interval([1.0, 3.0, 2.0, 4.0, 2.5], "mean")
    assert numbers["a/m"] == pytest.approx(2.5)
    assert (numbers["a/m_low"], numbers["a/m_high"]) == (ci.low, ci.high) and ci.low < 2.5 < ci.high
    assert "| a | m | 2.5 |" in table and table.endswith("| 5 |")


def test_arms_may_be_matrix_points_of_one_table(registry, tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(
        _TWO_ARMS.replace("num_samples = 100\n", "matrix = { num_samples = [100, 1600] }\n").replace(
            '["draw", "draw2"]', '["draw[*]", "draw2"]'
        )
    )
    diff = Effect(
        quantity="error difference", statistic="difference", relation="less", value=0.0, why_sign=WHY
    )
    claim = Claim(
        pipeline=str(path),
        arms=("draw[num_samples=1600]", "draw[num_samples=100]"),
        metric=("check", "mean_error"),
        effect=diff,
        scales=SCALES,
    )
    obs = claim.observations("smoke", tmp_path / "c", registry)
    big, small = obs.values["draw[num_samples=1600]"], obs.values["draw[num_samples=100]"]
    assert len(big) == len(small) == 3
    # the mean error of N(0, I_3) draws scales as 1/sqrt(n): 4x smaller at 16x the draws
    assert np.mean(big) < np.mean(small) / 2
    with pytest.raises(ConfigError, match="arms names 'drew'"):
        Claim(
            pipeline=str(path),
            arms=("drew[num_samples=100]", "draw2"),
            metric=("check", "m"),
            effect=diff,
            scales=SCALES,
        ).observations("smoke", tmp_path / "d", registry)


def test_markdown_table_formats_floats_and_checks_row_lengths():
    from quadriga.claims import markdown_table

    text = markdown_table(["method", "MMD", "n"], [["root KT", 0.0123456, 64], ["iid", 1.0, 64]])
    assert text.splitlines() == [
        "| method | MMD | n |",
        "|---|---|---|",
        "| root KT | 0.01235 | 64 |",
        "| iid | 1 | 64 |",
    ]
    with pytest.raises(ValueError, match="2 cells, the header 3"):
        markdown_table(["a", "b", "c"], [[1, 2]])


def test_smoke_records_hold_numbers_and_no_verdict_anywhere(registry, tmp_path, monkeypatch):
    import quadriga.claims as qc

    claim = Claim(
        arms=("optcs",),
        effect=Effect(quantity="FDR", statistic="mean", relation="less", value=0.1),
        scales=SCALES,
        experiment=lambda s, d: {"optcs": [0.0, 0.0, 0.0]},
    )
    monkeypatch.setattr(registry, "load_claim", lambda s: claim)
    records, report = qc.verify(registry, "toy-claim", scale="smoke", out_dir=tmp_path / "s")
    (comparison,) = records[0]["comparisons"]
    assert records[0]["status"] == "ran" and comparison["verdict"] == "ran"
    assert comparison["estimate"] == 0.0 and comparison["n"] == 3  # the numbers are kept
    saved = (tmp_path / "s" / "report.json").read_text()
    assert '"passed"' not in saved
    assert "optcs mean 0 (n=3, no interval: all 3 values equal)" in records[0]["summary"]
    text = report.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| optcs |"))
    assert row == "| optcs | - | mean | 0 | - | 3 | no interval: all 3 values equal |"
    assert "p (claim)" not in text and "MDE" not in text.split("## toy-claim")[1].split("Smoke")[0]
    assert "numbers only, not verdicts (no verdict, p-value or MDE" in text


def test_paper_p_values_name_their_method_and_tiny_ones_are_floored(tmp_path):
    from quadriga.claims.report import _write_report
    from quadriga.claims.verdict import format_p

    x, y = _pair(-3.0, 0.2, n=8)  # a large effect on 8 replicates: the normal tail is tiny
    claim = _claim(
        Effect(quantity="TV difference", statistic="difference", relation="less", value=0.0, why_sign=WHY)
    )
    rec = evaluate_claim(claim, Observations(values={"method": x, "baseline": y}), "paper")
    (c,) = rec["comparisons"]
    from scipy.stats import t as student_t

    # the paired t test on 7 degrees of freedom: the same method as the interval
    assert c["p_claim"] == pytest.approx(student_t.sf((0.0 - c["estimate"]) / c["se"], 7))
    assert c["p_claim"] < 1e-4 and "Student t (paired differences, df 7)" in c["p_method"]
    assert format_p(c["p_claim"]) == "< 1e-04" and format_p(0.0312) == "0.0312" and format_p(None) == "-"
    rec.update(name="tv", claim="c", paper="", seconds=0.1)
    path = tmp_path / "report.md"
    _write_report(path, [rec], "tv", "paper")
    text = path.read_text()
    assert "| method | baseline | difference |" in text and "| < 1e-04 |" in text
    assert "it is below (1 - level) / 2 exactly when the interval lies on the claimed side" in text


def test_interval_claims_print_the_statistics_name():
    from quadriga.stats import Interval

    rate = Effect(
        quantity="slope of log variance against log alpha",
        statistic="interval",
        relation="within",
        value=-1.0,
        tolerance=0.25,
    )
    assert rate.statistic_name == "slope" and rate.describe() == "slope within -1 +- 0.25"
    claim = Claim(arms=("srmala",), effect=rate, scales=SCALES, experiment=lambda s, d: {})
    obs = Observations(intervals={"": Interval(-0.369, -0.82, 0.10, 0.95, "percentile bootstrap", 8)})
    rec = evaluate_claim(claim, obs, "smoke")
    assert "srmala slope -0.369 [-0.82, 0.1] (n=8, percentile bootstrap)" in rec["summary"]
    assert "interval -0.369" not in rec["summary"]
    named = Effect(quantity="q", statistic="interval", relation="less", value=1.0, label="exponent")
    assert named.statistic_name == "exponent"


def test_two_replicates_carry_the_range_caveat():
    claim = _claim(
        Effect(quantity="q", statistic="mean", relation="greater", value=0.0, why_sign=WHY), arms=("m",)
    )
    rec = evaluate_claim(claim, Observations(values={"m": [1.0, 3.0]}), "smoke")
    note = "n = 2: one degree of freedom, the interval is very wide"
    assert f"({note})" not in rec["summary"]  # the n=2 caveat goes in the method
    assert f"; {note})" in rec["summary"]
    exact = evaluate_claim(claim, Observations(values={"m": [2.0, 2.0]}), "smoke")
    assert note not in exact["summary"]  # two equal values: a point, not a wide interval


def test_info_claim_shows_effect_replicates_arms_and_last_verdict(registry, monkeypatch, capsys, tmp_path):
    import json as _json

    import quadriga.claims.record as record
    from quadriga.cli import main

    claim = Claim(
        arms=("method", "baseline"),
        effect=Effect(
            quantity="return difference (mean)",
            statistic="difference",
            relation="greater",
            value=0.0,
            tolerance=0.5,
        ),
        scales={"smoke": Scale(replicates=3), "paper": Scale(replicates=40)},
        experiment=lambda s, d: {},
    )
    monkeypatch.setattr(type(registry), "load_claim", lambda self, s: claim)
    monkeypatch.setattr("quadriga.cli.info.registry_for", lambda args: registry)
    path = tmp_path / "claims_record.json"
    path.write_text(
        _json.dumps(
            {
                "toy-claim": {
                    "status": "passed",
                    "estimate": 1.02,
                    "low": 0.8,
                    "high": 1.3,
                    "n": 40,
                    "method": "BCa bootstrap (9999 resamples, paired)",
                    "date": "2026-11-30",
                    "version": "0.1.0",
                    "seconds": 412.5,
                }
            }
        )
    )
    monkeypatch.setattr(record, "_record_path", lambda target: path)
    assert main(["info", "toy-claim", "--kind", "claim"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "effect: return difference (mean)" in out
    assert (
        "claimed: difference > -0.5 (0 with margin 0.5) (statistic difference, relation greater, "
        "value 0, tolerance 0.5)" in out
    )
    assert "arms: method (the method); baselines: baseline" in out
    assert "replicates per arm: smoke 3, paper 40" in out
    last = "last verdict: passed on 2026-11-30 (v0.1.0, a 7 min paper run): estimate 1.02 [0.8, 1.3] (n = 40,"
    assert last in out


def test_verify_help_says_smoke_is_the_default_and_what_each_scale_gives(capsys):
    from quadriga.cli import main

    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "smoke (the default) a few replicates per arm" in text
    assert "no verdict, p-value or MDE: the status is 'ran'" in text
    assert "paper the replicates the claim was designed for: minutes to hours" in text
    assert "verdict: passed, refuted or inconclusive" in text


def test_every_lazy_name_of_the_claims_package_is_exported_by_its_module():
    """``quadriga.claims`` re-exports names lazily: its table must name each where it is exported."""
    import importlib

    import quadriga.claims as package

    assert sorted(package.__all__) == sorted(package._LAZY)  # the lazy table is the export list
    for name, module in package._LAZY.items():
        sub = importlib.import_module(f"quadriga.claims.{module}")
        assert name in sub.__all__, f"quadriga.claims.{module} does not export {name}"
        assert getattr(package, name) is getattr(sub, name)


_ROWS = """
[pipeline]
name = "toy-rows"
seed = 0

[task.normal]
use = "toy-normal"

[stage.a]
use = "toy-iid"
inputs = { target = "normal" }
num_samples = 10

[stage.b]
use = "toy-iid"
inputs = { target = "normal" }
num_samples = 10

[stage.check]
use = "toy-rows"
inputs = { subject = ["a", "b"], reference = "normal" }
values = [1.0, 4.0, 2.0, 8.0, 5.0, 7.0]
num_items = 6
"""

#: the rows of toy-rows at replicates = 4: subject a gets values[i], subject b 2 * values[i] + 1
_A, _B = [1.0, 4.0, 2.0, 8.0], [3.0, 9.0, 5.0, 17.0]
_ROW_SCALES = {"smoke": Scale(replicates=4), "paper": Scale(replicates=4)}


def _rows_claim(path, arms=("a", "b"), effect=None, **rows):
    from quadriga.claims import Rows

    spec = dict(stage="check", table="per_item", column="value", key="item", count="stage.check.num_items")
    spec.update(rows)
    effect = effect or Effect(
        quantity="value a - value b", statistic="difference", relation="less", value=0.0, why_sign=WHY
    )
    return Claim(pipeline=str(path), arms=arms, rows=Rows(**spec), effect=effect, scales=_ROW_SCALES)


def test_rows_claim_reads_one_row_per_item_paired_by_key(registry, tmp_path):
    from scipy import stats

    path = tmp_path / "rows.toml"
    path.write_text(_ROWS)
    claim = _rows_claim(path)
    obs = claim.observations("paper", tmp_path / "c", registry)
    # Scale.replicates = 4 set num_items (the pipeline says 6); b's rows were written in reverse
    # order and are read back in item order, so row i of a and of b is item i
    assert obs.values == {"a": _A, "b": _B}
    # a plan's pilot asks for other replicates: as many rows
    pilot = claim.observations("paper", tmp_path / "pilot", registry, replicates=3)
    assert pilot.values == {"a": _A[:3], "b": _B[:3]}
    (comp,) = evaluate_claim(claim, obs, "paper")["comparisons"]
    diff = np.subtract(_A, _B)  # -(v + 1): -2, -5, -3, -9
    low, high = stats.t.interval(0.95, 3, loc=diff.mean(), scale=stats.sem(diff))
    assert comp["n"] == 4 and comp["estimate"] == pytest.approx(-4.75)
    assert (comp["low"], comp["high"]) == (pytest.approx(low), pytest.approx(high))
    assert "paired differences, df 3" in comp["method"]
    # one arm, statistic mean: the t interval of a's rows
    mean = Effect(quantity="value a", statistic="mean", relation="greater", value=0.0, why_sign=WHY)
    one = _rows_claim(path, arms=("a",), effect=mean)
    (comp,) = evaluate_claim(one, one.observations("paper", tmp_path / "m", registry), "paper")["comparisons"]
    low, high = stats.t.interval(0.95, 3, loc=np.mean(_A), scale=stats.sem(_A))
    assert comp["estimate"] == pytest.approx(3.75) and comp["n"] == 4
    assert (comp["low"], comp["high"]) == (pytest.approx(low), pytest.approx(high))


def test_rows_claims_pair_only_when_the_effect_is_paired(registry, tmp_path):
    from scipy import stats

    path = tmp_path / "rows.toml"
    path.write_text(_ROWS.replace("num_items = 6", "num_items = 6\nkey_offset = 10"))
    with pytest.raises(ConfigError, match="the effect is paired") as err:
        _rows_claim(path).observations("paper", tmp_path / "p", registry)
    assert err.value.key == "rows"
    welch = Effect(
        quantity="value a - value b",
        statistic="difference",
        relation="less",
        value=0.0,
        paired=False,
        why_sign=WHY,
    )
    claim = _rows_claim(path, effect=welch)
    obs = claim.observations("paper", tmp_path / "u", registry)
    assert obs.values == {"a": _A, "b": _B}
    (comp,) = evaluate_claim(claim, obs, "paper")["comparisons"]
    t = stats.ttest_ind(_A, _B, equal_var=False)
    low, high = t.confidence_interval(0.95)
    assert comp["estimate"] == pytest.approx(-4.75) and "Welch" in comp["method"]
    assert (comp["low"], comp["high"]) == (pytest.approx(low), pytest.approx(high))


def test_rows_claims_share_one_run_and_take_numbers_from_observe(registry, tmp_path):
    from quadriga.claims import shared_runs

    path = tmp_path / "rows.toml"
    path.write_text(_ROWS)
    mean = Effect(quantity="value b", statistic="mean", relation="greater", value=0.0, why_sign=WHY)
    first = _rows_claim(path)
    second = attrs.evolve(
        _rows_claim(path, arms=("b",), effect=mean),
        observe=lambda result: Observations(numbers={"rows": result.artifacts["check"].values["rows"]}),
    )
    with shared_runs():
        first.observations("paper", tmp_path / "1", registry)
        obs = second.observations("paper", tmp_path / "2", registry)
    assert (tmp_path / "2" / "shared-run.txt").exists() and not (tmp_path / "2" / "run").exists()
    assert obs.values == {"b": _B} and obs.numbers == {"rows": 8.0}
    talks = attrs.evolve(second, observe=lambda result: {"b": [1.0, 2.0]})
    with pytest.raises(ConfigError, match="numbers, table and figures only") as err:
        talks.observations("paper", tmp_path / "3", registry)
    assert err.value.key == "observe"


def test_rows_declaration_errors_name_the_key(tmp_path):
    from quadriga.claims import Rows

    path = tmp_path / "rows.toml"
    with pytest.raises(ConfigError, match=r"task\.NAME\.PARAM") as err:
        Rows(stage="check", table="per_item", column="value", key="item", count="num_items")
    assert err.value.key == "rows"
    with pytest.raises(ConfigError, match="non-empty") as err:
        Rows(stage="check", table="", column="value", key="item", count="stage.check.num_items")
    assert err.value.key == "rows"
    for extra, word in (
        (dict(metric=("check", "rows")), "metric"),
        (dict(repeat_stages=("a",)), "repeat_stages"),
        (dict(group_by="k"), "group_by"),
    ):
        with pytest.raises(ConfigError, match=f"does not combine with {word}") as err:
            attrs.evolve(_rows_claim(path), **extra)
        assert err.value.key == "rows"
    smoke = Scale(replicates=4, overrides=("stage.check.num_items = 3",))
    scales = {"smoke": smoke, "paper": Scale(replicates=4)}
    with pytest.raises(ConfigError, match=r"scale 'smoke' sets stage\.check\.num_items") as err:
        attrs.evolve(_rows_claim(path), scales=scales)
    assert err.value.key == "rows"
    with pytest.raises(ConfigError, match=r"fragility varies stage\.check\.num_items") as err:
        attrs.evolve(_rows_claim(path), fragility={"stage.check.num_items": [2, 3]})
    assert err.value.key == "rows"


@pytest.mark.parametrize(
    ("change", "arms", "message"),
    [
        (dict(stage="chek"), ("a", "b"), "not a stage of pipeline .* Did you mean 'check'"),
        (dict(count="stage.chek.num_items"), ("a", "b"), "names stage 'chek'.* Did you mean 'check'"),
        (dict(table="per_iterm"), ("a", "b"), "no table 'per_iterm' .* Did you mean 'per_item'"),
        (dict(column="valeu"), ("a", "b"), "no column 'valeu' .* Did you mean 'value'"),
        (dict(key="iten"), ("a", "b"), "no column 'iten' .* Did you mean 'item'"),
        (dict(), ("a", "bb"), "no row whose 'subject' is 'bb' .* Did you mean 'b'"),
        (dict(key="subject"), ("a", "b"), "repeats the 'subject' 'a' among the rows of 'a' \\(4 rows\\)"),
        (dict(count="stage.a.num_samples"), ("a", "b"), "has 6 row\\(s\\) of 'a', not replicates = 4"),
    ],
)
def test_rows_names_what_is_missing_with_the_closest_match(registry, tmp_path, change, arms, message):
    path = tmp_path / "rows.toml"
    path.write_text(_ROWS)
    with pytest.raises(ConfigError, match=message) as err:
        _rows_claim(path, arms=arms, **change).observations("paper", tmp_path / "c", registry)
    assert err.value.key == "rows"


def _table_result(rows):
    """A run result whose stage 'check' holds ``tables["per_item"] = rows``."""
    from types import SimpleNamespace

    return SimpleNamespace(artifacts={"check": SimpleNamespace(tables={"per_item": rows})})


def _read(rows, arms=("a",), replicates=None, paired=True, **change):
    from quadriga.claims import Rows, read_rows

    spec = dict(stage="check", table="per_item", column="value", key="item", count="stage.check.num_items")
    spec.update(change)
    return read_rows(_table_result(rows), Rows(**spec), arms, replicates, paired=paired)


def _arm(keys, values=None, subject="a"):
    values = values if values is not None else [float(i) for i in range(len(keys))]
    return [{"subject": subject, "item": k, "value": v} for k, v in zip(keys, values, strict=True)]


@pytest.mark.parametrize(
    ("keys", "found"),
    [
        ([0, "1", 2], "int (0), str ('1')"),
        ([0, None, 2], "int (0), NoneType (None)"),
        ([{"x": 1}, {"x": 2}], "dict ({'x': 1})"),
        ([1, 1.0], "int (1), float (1.0)"),
        ([True, 1], "bool (True), int (1)"),
    ],
)
def test_rows_keys_of_one_arm_are_of_one_type(keys, found):
    with pytest.raises(ConfigError) as err:
        _read(_arm(keys))
    assert err.value.key == "rows"
    assert err.value.reason == (
        "the 'item' of the rows of 'a' in table 'per_item' of stage 'check' must all be of one type, "
        f"int, float or str; found {found}."
    )
    # NumPy integers are ints
    assert _read(_arm([np.int64(3), 1, 2], [5.0, 6.0, 7.0])) == {"a": [6.0, 7.0, 5.0]}


def test_rows_name_the_repeated_key():
    with pytest.raises(ConfigError) as err:
        _read(_arm([3, 1, 3, 2]))
    assert err.value.reason == (
        "table 'per_item' of stage 'check' repeats the 'item' 3 among the rows of 'a' (2 rows); "
        "the key must name one item per row."
    )
    with pytest.raises(ConfigError, match="repeats the 'item' 'x' among the rows of 'a'"):
        _read(_arm(["x", "y", "x"]))


@pytest.mark.parametrize(
    ("value", "shown"), [(None, "None (NoneType)"), ("abc", "'abc' (str)"), ([4.0], "[4.0] (list)")]
)
def test_rows_refuse_a_value_that_is_not_a_number(value, shown):
    with pytest.raises(ConfigError) as err:
        _read(_arm([0, 1, 2], [1.0, value, 2.0]))
    assert err.value.key == "rows"
    assert err.value.reason == (
        f"the 'value' of the row of 'a' whose 'item' is 1 in table 'per_item' of stage 'check' is {shown}, "
        "not a number."
    )
    # ints, bools and NumPy numbers are numbers
    assert _read(_arm([0, 1, 2], [1, True, np.float32(2.5)])) == {"a": [1.0, 1.0, 2.5]}


def test_rows_match_arms_as_strings():
    table = [{"subject": s, "item": i, "value": float(10 * s + i)} for s in (0, 1) for i in range(3)]
    assert _read(table, arms=("0", "1"), arm="subject") == {"0": [0.0, 1.0, 2.0], "1": [10.0, 11.0, 12.0]}
    with pytest.raises(ConfigError) as err:
        _read(table, arms=("0", "2"))
    assert err.value.reason == (
        "table 'per_item' of stage 'check' has no row whose 'subject' is '2' (has 0, 1)."
    )


@pytest.mark.parametrize(
    ("b_keys", "differ"),
    [
        (["0", "1", "2"], "their types differ: int in 'a', str in 'b'"),
        ([0, 1, 5], "2, 5"),
    ],
)
def test_rows_pairing_says_what_differs(b_keys, differ):
    table = _arm([0, 1, 2]) + _arm(b_keys, subject="b")
    with pytest.raises(ConfigError) as err:
        _read(table, arms=("a", "b"))
    assert err.value.key == "rows"
    assert err.value.reason == (
        f"the effect is paired, but the 'item' of the rows of 'b' and 'a' in table 'per_item' of stage "
        f"'check' differ ({differ}); give every arm the same items or declare Effect(paired=False)."
    )
    assert _read(table, arms=("a", "b"), paired=False) == {"a": [0.0, 1.0, 2.0], "b": [0.0, 1.0, 2.0]}


def test_rows_nan_keys_cannot_be_paired():
    nan = float("nan")
    table = _arm([0.5, nan, 1.5]) + _arm([0.5, nan, 1.5], subject="b")
    with pytest.raises(ConfigError) as err:
        _read(table, arms=("a", "b"))
    assert err.value.reason == (
        "the effect is paired, but 1 row(s) of 'a' in table 'per_item' of stage 'check' have a NaN 'item', "
        "and NaN keys cannot be paired (NaN equals nothing); give every arm the same items or declare "
        "Effect(paired=False)."
    )
    unpaired = _read(table, arms=("a", "b"), paired=False)
    assert sorted(unpaired["a"]) == [0.0, 1.0, 2.0] and sorted(unpaired["b"]) == [0.0, 1.0, 2.0]


def test_rows_refuse_nonfinite_values_by_default_naming_arm_and_keys():
    nan, inf = float("nan"), float("inf")
    values = [1.0, nan, 2.0, inf, nan, nan, nan, nan]
    with pytest.raises(ConfigError) as err:
        _read(_arm(list(range(8)), values) + _arm(list(range(8)), subject="b"), arms=("b", "a"))
    assert err.value.key == "rows"
    assert err.value.reason == (
        "the 'value' of 6 of the 8 rows of 'a' in table 'per_item' of stage 'check' is not finite "
        "('item' 1 (nan), 3 (inf), 4 (nan), 5 (nan), 6 (nan), ...); give Rows(nonfinite=\"drop\") to leave "
        "those items out (counted in the numbers as rows_dropped/a), or fix the stage."
    )
    from quadriga.claims import Rows

    with pytest.raises(ConfigError) as err:
        Rows(
            stage="check",
            table="per_item",
            column="value",
            key="item",
            count="stage.check.num_items",
            nonfinite="dorp",
        )
    assert err.value.key == "rows"
    assert err.value.reason == "Rows.nonfinite must be 'error' or 'drop', got 'dorp'. Did you mean 'drop'?"


def test_rows_drop_counts_rows_before_dropping():
    nan = float("nan")
    table = _arm([0, 1, 2, 3], [1.0, nan, 2.0, 3.0]) + _arm([0, 1, 2, 3], [5.0, 6.0, 7.0, 8.0], subject="b")
    # paired: item 1 leaves both arms; unpaired: only a's row
    assert _read(table, ("a", "b"), 4, nonfinite="drop") == {"a": [1.0, 2.0, 3.0], "b": [5.0, 7.0, 8.0]}
    assert _read(table, ("a", "b"), 4, paired=False, nonfinite="drop") == {
        "a": [1.0, 2.0, 3.0],
        "b": [5.0, 6.0, 7.0, 8.0],
    }
    # the number of rows is checked before any is dropped: 4 rows, not 3
    with pytest.raises(ConfigError, match="has 4 row\\(s\\) of 'a', not replicates = 3"):
        _read(table, ("a", "b"), 3, nonfinite="drop")
    with pytest.raises(ConfigError) as err:
        _read(_arm([0, 1, 2], [nan, 1.0, nan]), ("a",), 3, nonfinite="drop")
    assert err.value.reason == (
        "1 of the 3 rows of 'a' in table 'per_item' of stage 'check' are left once the rows whose 'value' "
        "is not finite (in any arm: the effect is paired) are dropped; an interval needs at least 2."
    )


def test_rows_claim_drops_nonfinite_items_and_reports_how_many(registry, tmp_path):
    from quadriga.claims import Precondition

    path = tmp_path / "rows.toml"
    path.write_text(_ROWS.replace("num_items = 6", 'num_items = 6\nnonfinite = ["a:1", "b:3:inf"]'))
    with pytest.raises(ConfigError) as err:
        _rows_claim(path).observations("paper", tmp_path / "e", registry)
    assert err.value.key == "rows"
    assert "the 'value' of 1 of the 4 rows of 'a' in table 'per_item' of stage 'check' is not finite " in str(
        err.value
    )
    assert "('item' 1 (nan)); give Rows(nonfinite=\"drop\")" in str(err.value)
    claim = _rows_claim(path, nonfinite="drop")
    obs = claim.observations("paper", tmp_path / "d", registry)
    # items 1 (NaN in a) and 3 (inf in b) leave both arms: pairs stay aligned, n = 2 kept rows
    assert obs.values == {"a": [_A[0], _A[2]], "b": [_B[0], _B[2]]}
    assert obs.numbers == {"rows_dropped/a": 2, "rows_dropped/b": 2}
    (comp,) = evaluate_claim(claim, obs, "paper")["comparisons"]
    assert comp["n"] == 2 and comp["estimate"] == pytest.approx(np.mean(np.subtract(_A, _B)[[0, 2]]))
    # a precondition bounds the rows dropped
    strict = attrs.evolve(claim, preconditions=(Precondition.number("rows_dropped/a", "<=", 1, "few NaN"),))
    record = evaluate_claim(strict, obs, "paper")
    assert record["status"] == "inconclusive" and record["precondition_failed"] == "few NaN"
    assert "the rows of table 'per_item' of stage 'check' (column 'value', one per 'item'; " in (
        claim.rows.describe()
    )
    assert claim.rows.describe().endswith("stage.check.num_items = replicates; non-finite values dropped)")
    # observe's numbers come after, and may not take the name of a count
    numbers = attrs.evolve(claim, observe=lambda result: Observations(numbers={"rows": 8.0}))
    assert numbers.observations("paper", tmp_path / "n", registry).numbers == {
        "rows_dropped/a": 2,
        "rows_dropped/b": 2,
        "rows": 8.0,
    }
    clash = attrs.evolve(claim, observe=lambda result: Observations(numbers={"rows_dropped/a": 0}))
    with pytest.raises(ConfigError, match="observe returned rows_dropped/a, which Rows") as err:
        clash.observations("paper", tmp_path / "x", registry)
    assert err.value.key == "observe"


def test_rows_count_errors_say_they_come_from_rows_count(registry, tmp_path):
    path = tmp_path / "rows.toml"
    path.write_text(_ROWS)
    with pytest.raises(ConfigError) as err:
        _rows_claim(path, count="stage.check.num_itemz").observations("paper", tmp_path / "c", registry)
    assert err.value.key == "rows" and "overrides=[...]" not in str(err.value)
    assert str(err.value).startswith(
        "key 'rows': rows.count 'stage.check.num_itemz': unknown parameter 'num_itemz' for ToyRows. "
        "Did you mean 'num_items'?"
    )
    assert str(err.value).endswith("(Rows sets it to Scale.replicates = 4.)")
    with pytest.raises(ConfigError) as err:
        _rows_claim(path).observations(
            "paper", tmp_path / "d", registry, overrides=("stage.check.num_items = 3",)
        )
    assert err.value.key == "rows"
    assert err.value.reason == (
        "the overrides set stage.check.num_items ('stage.check.num_items = 3'), which Rows sets from "
        "Scale.replicates (here 4, the number of rows): give the number of rows as replicates, and drop the "
        "override."
    )
    # an error in another override is the pipeline's, as before
    with pytest.raises(ConfigError, match="unknown parameter 'num_itemz'") as err:
        _rows_claim(path).observations(
            "paper", tmp_path / "e", registry, overrides=("stage.check.num_itemz=3",)
        )
    assert str(err.value).startswith("overrides=[...], [stage.check], key 'num_itemz'")


def test_info_says_where_a_rows_claim_reads_its_replicates(registry, monkeypatch, tmp_path):
    from quadriga.claims.info import claim_facts, claim_lines

    spec = next(c for c in registry.claims() if c.name == "toy-claim")
    monkeypatch.setattr(type(registry), "load_claim", lambda self, s: _rows_claim(tmp_path / "rows.toml"))
    text = " ".join(" ".join(claim_lines(claim_facts(registry, spec))).split())
    assert (
        "replicates are the rows of table 'per_item' of stage 'check' (column 'value', one per 'item'; "
        "stage.check.num_items = replicates)" in text
    )


def test_info_indents_the_continuation_of_a_wrapped_claim_line(registry, monkeypatch, capsys, tmp_path):
    from quadriga.cli import main
    from quadriga.cli.info import hanging_lines

    monkeypatch.delenv("COLUMNS", raising=False)  # the width a terminal without COLUMNS gets: 80
    monkeypatch.setattr(type(registry), "load_claim", lambda self, s: _rows_claim(tmp_path / "rows.toml"))
    monkeypatch.setattr("quadriga.cli.info.registry_for", lambda args: registry)
    assert main(["info", "toy-claim", "--kind", "claim"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 80
    i = lines.index("  replicates are the rows of table 'per_item' of stage 'check' (column 'value',")
    assert lines[i + 1] == "      one per 'item'; stage.check.num_items = replicates)"
    # before: "one per 'item'; ..." at column 0, read as a field of its own; now only fields start there
    starts = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert starts == [
        "claim toy-claim from quadriga-toy",
        "source",
        "effect",
        "arms",
        "replicates per arm",
        "plan",
        "last verdict",
        "run it",
    ]
    assert "      tolerance 0); 95% interval, method chosen from the statistic and n" in lines
    assert hanging_lines("short line") == ["short line"]
    assert hanging_lines("  a b c d", width=5) == ["  a b", "      c", "      d"]
    assert hanging_lines("x" * 12 + " y", width=5) == ["x" * 12, "    y"]  # a long word is kept whole


def test_grouped_rows_make_one_comparison_per_group(tmp_path):
    from scipy import stats

    from quadriga.claims import Observations, Rows, read_row_groups, read_rows

    spec = dict(stage="check", table="per_item", column="value", key="item", count="stage.check.num_items")
    # two shifts, 3 items each, arms a and b; b - a is +1 at shift 0 and -2 at shift 1 (plus item noise)
    a0, b0 = [1.0, 2.0, 4.0], [2.5, 2.9, 5.2]
    a1, b1 = [3.0, 1.0, 0.0], [1.2, -1.1, -1.9]
    table = [
        {"shift": 0, **r} for r in _arm([2, 0, 1], [a0[2], a0[0], a0[1]]) + _arm([0, 1, 2], b0, subject="b")
    ] + [{"shift": 1, **r} for r in _arm([0, 1, 2], a1) + _arm([0, 1, 2], b1, subject="b")]
    rows = Rows(**spec, group="shift")
    values, dropped = read_row_groups(_table_result(table), rows, ("a", "b"), 3)
    assert values == {"shift=0": {"a": a0, "b": b0}, "shift=1": {"a": a1, "b": b1}}
    assert dropped == {"shift=0": {"a": 0, "b": 0}, "shift=1": {"a": 0, "b": 0}}
    # each group is one comparison of the claim's Holm family: paired t intervals within the group
    effect = Effect(quantity="b - a", statistic="difference", relation="greater", value=0.0, why_sign=WHY)
    claim = Claim(pipeline="unused", arms=("b", "a"), rows=rows, effect=effect, scales=_ROW_SCALES)
    comps = evaluate_claim(claim, Observations(values=values), "paper")["comparisons"]
    assert [c["group"] for c in comps] == ["shift=0", "shift=1"]
    for comp, (a, b) in zip(comps, [(a0, b0), (a1, b1)], strict=True):
        d = np.subtract(b, a)
        low, high = stats.t.interval(0.95, 2, loc=d.mean(), scale=stats.sem(d))
        assert comp["n"] == 3 and comp["estimate"] == pytest.approx(d.mean())
        assert (comp["low"], comp["high"]) == (pytest.approx(low), pytest.approx(high))
    # a group short of rows is named; ungrouped readers refuse grouped rows
    with pytest.raises(ConfigError, match=r"\(group shift=1\) has 2 row\(s\) of 'a'") as err:
        read_row_groups(_table_result(table[:-4] + table[-3:]), rows, ("a", "b"), 3)
    assert err.value.key == "rows"
    with pytest.raises(ConfigError, match="read them with read_row_groups"):
        read_rows(_table_result(table), rows, ("a", "b"), 3)
    # one group keeps its label (a smoke scale running one setting); a row lacking the column is named
    assert read_row_groups(_table_result(table[:6]), rows, ("a", "b"), 3)[0] == {
        "shift=0": {"a": a0, "b": b0}
    }
    one = evaluate_claim(claim, Observations(values={"shift=0": {"a": a0, "b": b0}}), "paper")
    assert [c["group"] for c in one["comparisons"]] == ["shift=0"]
    with pytest.raises(ConfigError, match="has no group column 'shift'"):
        read_row_groups(_table_result([{k: v for k, v in table[0].items() if k != "shift"}]), rows, ("a",))
    # the group cannot be the key, arm or value column, name a column twice, or come unordered
    with pytest.raises(ConfigError) as err:
        Rows(**spec, group=("item",))
    assert err.value.key == "rows" and "per 'shift'" in rows.describe()
    assert (
        err.value.reason == "Rows.group names 'item' (the key column); group by another column of the table."
    )
    for bad, says in [
        (["shift", "shift"], "names a column twice"),
        ({"shift", "k"}, "a column name or a list of them"),
        ({"shift": 1}, "a column name or a list of them"),
        (None, "a column name or a list of them"),
        (b"shift", "a column name or a list of them"),
        ([""], "non-empty strings"),
    ]:
        with pytest.raises(ConfigError, match=says) as err:
            Rows(**spec, group=bad)
        assert err.value.key == "rows"
    assert Rows(**spec, group=["shift", "k"]).group == ("shift", "k")
