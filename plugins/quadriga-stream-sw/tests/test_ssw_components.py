"""Registered components, the ready pipeline and the claims at smoke scale."""

import math

import pytest
import torch
from quadriga_stream_sw.components import (
    ExactSWEstimator,
    MemoryComparison,
    RelativeError,
    StreamSWEstimator,
    StreamSWEvaluator,
    SubsampleSWEstimator,
)
from quadriga_stream_sw.tasks import TwoSampleStream
from quadriga_stream_sw.wasserstein import exact_sliced, random_projections

from quadriga.artifacts import Estimate, Samples
from quadriga.errors import ConfigError


def _samples(n, shift, seed, d=2):
    gen = torch.Generator().manual_seed(seed)
    return Samples(x=torch.randn(n, d, generator=gen, dtype=torch.float64) + shift)


@pytest.mark.parametrize(
    "cls, kwargs, key",
    [
        (StreamSWEstimator, {"k": 1}, "k"),
        (StreamSWEstimator, {"backend": "kll"}, "backend"),
        (StreamSWEstimator, {"backend": "datasketches", "k": 4}, "k"),
        (StreamSWEstimator, {"p": 0.5}, "p"),
        (StreamSWEstimator, {"num_projections": 0}, "num_projections"),
        (SubsampleSWEstimator, {}, "num_retained"),
        (SubsampleSWEstimator, {"num_retained": 10, "match_k": 10}, "num_retained"),
        (TwoSampleStream, {"preset": "mixtures", "dim": 3}, "dim"),
        (TwoSampleStream, {"preset": "gaussian"}, "preset"),
    ],
)
def test_bad_parameters_fail_when_built(cls, kwargs, key):
    with pytest.raises(ConfigError) as info:
        cls(**kwargs)
    assert info.value.key == key


def test_estimators_on_samples_share_directions_and_match_pot():
    src, tgt = _samples(500, -1.0, 0), _samples(400, 2.0, 1)
    gen = lambda s: torch.Generator().manual_seed(s)  # noqa: E731
    stream = StreamSWEstimator(k=600, batch_size=128).estimate(src, target=tgt, generator=gen(3))
    exact = ExactSWEstimator().estimate(src, target=tgt, generator=gen(3))
    sub = SubsampleSWEstimator(num_retained=1000).estimate(src, target=tgt, generator=gen(3))
    from quadriga.seeding import child_generator

    theta = random_projections(2, 100, child_generator(gen(3), "projections"))
    ref = exact_sliced(src.x, tgt.x, theta)
    assert exact.value == pytest.approx(ref, rel=1e-13)
    assert stream.value == pytest.approx(ref, rel=1e-12)
    assert sub.value == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ConfigError, match="target"):
        StreamSWEstimator().estimate(src, generator=gen(0))
    weighted = Samples(x=src.x, log_weights=torch.zeros(500))
    with pytest.raises(ConfigError, match="weighted"):
        StreamSWEstimator().estimate(weighted, target=tgt, generator=gen(0))


def test_stream_task_is_replayable_and_has_the_right_moments():
    task = TwoSampleStream(preset="gaussians", dim=3, num_samples=6000, batch_size=1000)
    task.prepare(generator=torch.Generator().manual_seed(0))
    first = torch.cat(list(task.stream("source")))
    assert first.shape == (6000, 3) and torch.equal(first, task.split("source")[0])
    assert torch.allclose(first.mean(0), torch.full((3,), -1.0, dtype=torch.float64), atol=0.08)
    tgt = task.split("target")[0]
    assert torch.allclose(tgt.mean(0), torch.full((3,), 2.0, dtype=torch.float64), atol=0.08)
    # closed form for two Gaussians with equal covariance: W_2 on direction theta is |theta^T (m1 - m0)|,
    # so SW_2^2 = E (theta^T 3 1)^2 = 9 |1|^2 / d = 9 for unit directions in any dimension
    est = ExactSWEstimator(num_projections=300).estimate(task, generator=torch.Generator().manual_seed(1))
    assert est.value == pytest.approx(3.0, abs=4 * est.stderr + 0.03)
    mix = TwoSampleStream(preset="mixtures", num_samples=20_000, batch_size=5000)
    mix.prepare(generator=torch.Generator().manual_seed(0))
    assert torch.allclose(
        mix.split("target")[0].mean(0),
        torch.tensor([0.5 * -3 + 0.25 * 2 + 0.25 * 4, 0.5 * 3 - 0.25 * 4], dtype=torch.float64),
        atol=0.06,
    )


def test_evaluator_matches_estimator_and_accepts_a_target():
    src, ref = _samples(300, 0.0, 0), _samples(300, 1.0, 1)
    stage = torch.Generator().manual_seed(5)
    metrics = StreamSWEvaluator(k=400).evaluate({"a": src}, ref, generator=stage)
    from quadriga.seeding import child_generator

    theta = random_projections(2, 100, child_generator(torch.Generator().manual_seed(5), "projections"))
    assert metrics.values["a/stream_sw"] == pytest.approx(exact_sliced(src.x, ref.x, theta), rel=1e-12)

    class Shifted:
        def sample(self, num_samples, *, generator):
            return torch.randn(num_samples, 2, generator=generator, dtype=torch.float64) + 1.0

    big = StreamSWEvaluator(k=100, num_reference_samples=20_000, batch_size=5000)
    out = big.evaluate(_samples(20_000, 0.0, 2), Shifted(), generator=torch.Generator().manual_seed(0)).values
    # SW_2 between N(0, I) and N(1, I) in 2-D: sqrt(|(1, 1)|^2 / 2) = 1
    assert out["subject/stream_sw"] == pytest.approx(1.0, abs=4 * out["subject/stream_sw_stderr"] + 0.02)
    assert out["subject/memory_floats"] < 2 * 100 * 20_000 / 10


def test_relative_error_evaluator():
    m = RelativeError().evaluate(
        {"s": Estimate(value=2.2, info={"retained_per_projection": 10})},
        Estimate(value=2.0),
        generator=torch.Generator().manual_seed(0),
    )
    assert m.values["s/relative_error"] == pytest.approx(0.1)
    assert m.values["s/retained_per_projection"] == 10
    with pytest.raises(ConfigError):
        RelativeError().evaluate(
            {"s": Estimate(value=1.0)}, Estimate(value=0.0), generator=torch.Generator().manual_seed(0)
        )


def test_ready_pipeline_runs_and_stream_beats_subsample(tmp_path):
    api = pytest.importorskip("quadriga.api")
    overrides = [f"task.{t}.num_samples=3000" for t in ("gaussians", "mixtures")]
    result = api.run("stream-sw-gaussians", overrides=overrides, out=tmp_path)
    assert result.status == "finished"
    for suffix in ("g", "m"):
        stream, sub = [], []
        for i in range(5):  # replicate i of the three estimators shares its seed, hence its directions
            values = result.artifacts[f"errors_{suffix}[{i}]"].values
            assert (
                values[f"stream_{suffix}[{i}]/retained_per_projection"]
                == values[f"sub_{suffix}[{i}]/retained_per_projection"]
            )
            stream.append(values[f"stream_{suffix}[{i}]/relative_error"])
            sub.append(values[f"sub_{suffix}[{i}]/relative_error"])
        assert sum(stream) < sum(sub)  # mean over the 5 paired replicates


def test_memory_comparison_rows():
    """sw-memory-comparison: one row per (preset, k, replicate, arm); the rows' means are the values,
    and a row's errors are those of the three estimators on the replicate's stream and seed."""
    from quadriga.seeding import child_generator, derive_seed, make_generator

    ks, reps, L = [10, 20], 3, 10
    ev = MemoryComparison(num_samples=300, batch_size=100, ks=ks, num_projections=L, num_replicates=reps)
    gen = torch.Generator().manual_seed(7)
    out = ev.evaluate(generator=gen)
    rows = out.tables["errors"]
    assert len(rows) == 2 * len(ks) * reps * 2
    for preset in ("gaussians", "mixtures"):
        for k in ks:
            sel = [r for r in rows if r["preset"] == preset and r["k"] == k]
            assert {r["retained"] for r in sel} == {out.values[f"{preset}/k={k}/retained"]}
            for arm in ("stream-sw", "subsample"):
                errs = [r["relative_error"] for r in sel if r["subject"] == arm]
                assert sorted(r["replicate"] for r in sel if r["subject"] == arm) == list(range(reps))
                assert sum(errs) / reps == pytest.approx(out.values[f"{preset}/k={k}/{arm}/relative_error"])
    # replicate 1 of the mixtures at k = 20, recomputed from its stream and its estimators' seed
    task = TwoSampleStream(preset="mixtures", num_samples=300, batch_size=100)
    task.prepare(generator=child_generator(gen, "data/mixtures/1"))
    seed = derive_seed(int(gen.initial_seed()), "estimators/1")
    theta = random_projections(2, L, child_generator(make_generator(seed), "projections"))
    exact = exact_sliced(task.split("source")[0], task.split("target")[0], theta, 2.0)
    got = {
        r["subject"]: r for r in rows if r["preset"] == "mixtures" and r["k"] == 20 and r["replicate"] == 1
    }
    assert got["stream-sw"]["exact"] == pytest.approx(exact, rel=1e-12)
    st = StreamSWEstimator(num_projections=L, k=20).estimate(task, generator=make_generator(seed)).value
    sub = (
        SubsampleSWEstimator(num_projections=L, match_k=20)
        .estimate(task, generator=make_generator(seed))
        .value
    )
    assert got["stream-sw"]["relative_error"] == pytest.approx(abs(st - exact) / exact, rel=1e-12)
    assert got["subsample"]["relative_error"] == pytest.approx(abs(sub - exact) / exact, rel=1e-12)
    assert got["subsample"]["retained"] == got["stream-sw"]["retained"] < 300


def test_claims_at_smoke_scale(tmp_path):
    """Smoke scale: paired ratios per preset and k, slopes per preset, status 'ran'."""
    from quadriga_stream_sw.claims import beats_subsample, flat_in_n

    from quadriga.claims import evaluate_claim

    rec = evaluate_claim(beats_subsample, beats_subsample.observations("smoke", tmp_path), "smoke")
    assert rec["status"] == "ran" and not rec["holm"]  # smoke scale: no p-values to adjust
    assert next(tmp_path.rglob("error_vs_memory.png")).stat().st_size > 1000
    groups = {c["group"]: c for c in rec["comparisons"]}
    assert set(groups) == {f"preset={p},k={k}" for p in ("gaussians", "mixtures") for k in (10, 50)}
    assert all(0 < c["estimate"] < 1 and c["n"] == 2 for c in groups.values())
    flat = evaluate_claim(flat_in_n, flat_in_n.observations("smoke", tmp_path), "smoke")
    assert [c["group"] for c in flat["comparisons"]] == ["gaussians", "mixtures"]
    assert all(math.isfinite(c["estimate"]) and c["low"] <= c["high"] for c in flat["comparisons"])
