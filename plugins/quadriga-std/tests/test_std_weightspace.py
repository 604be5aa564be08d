"""The weight-space kit: closed forms of the network operations, merges, barriers and the zoo cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from quadriga_std.weightspace.accuracy import NormalizedAccuracy
from quadriga_std.weightspace.barrier import InterpolationBarrier, barrier, interpolation_curve
from quadriga_std.weightspace.merging import TaskArithmetic, WeightAveraging, task_vectors, ties_merge, trunk
from quadriga_std.weightspace.mlp import combine, forward, init_params, interpolate, permute
from quadriga_std.weightspace.zoo import TASKS, MLPZoo, cache_dir

from quadriga.artifacts import Fitted
from quadriga.seeding import make_generator


def _random_perms(sizes, gen):
    return [torch.randperm(h, generator=gen) for h in sizes[1:-1]]


def test_permuted_network_computes_the_same_function():
    gen = make_generator(0)
    sizes = [64, 32, 16, 24, 10]
    params = init_params(sizes, generator=gen)
    x = torch.rand(50, 64, generator=gen)
    moved = permute(params, _random_perms(sizes, gen))
    assert not torch.equal(moved["weights"][1], params["weights"][1])
    torch.testing.assert_close(forward(moved, x), forward(params, x), rtol=1e-6, atol=1e-6)


def test_permute_refuses_wrong_permutations():
    params = init_params([4, 3, 2], generator=make_generator(0))
    with pytest.raises(ValueError, match="one per hidden layer"):
        permute(params, [])
    with pytest.raises(ValueError, match="length"):
        permute(params, [torch.arange(5)])


def test_barrier_closed_forms():
    lam = np.linspace(0, 1, 5)
    assert barrier([1.0, 1.5, 2.0, 2.5, 3.0], lam) == 0.0  # on the line
    assert barrier([0.0, 0.0, 1.0, 0.0, 0.0], lam) == 1.0  # a bump of height 1 at the midpoint
    assert barrier([0.9, 0.9, 0.5, 0.9, 0.9], lam, higher_is_worse=False) == pytest.approx(0.4)
    with pytest.raises(ValueError):
        barrier([0.0, 1.0], [0.2, 1.0])


def test_barrier_of_identical_networks_is_zero_and_the_path_is_exact():
    gen = make_generator(1)
    a = init_params([64, 16, 10], generator=gen)
    x, y = torch.rand(40, 64, generator=gen), torch.randint(0, 10, (40,), generator=gen)
    lam = np.linspace(0, 1, 7)
    loss, acc = interpolation_curve(a, a, x, y, lam)
    assert np.ptp(loss) < 1e-6 and np.ptp(acc) == 0
    assert barrier(loss, lam) < 1e-6
    b = init_params([64, 16, 10], generator=gen)
    mid = interpolate(a, b, 0.25)
    torch.testing.assert_close(mid["weights"][0], 0.75 * a["weights"][0] + 0.25 * b["weights"][0])


def test_averaging_two_copies_returns_the_model():
    a = init_params([8, 6, 3], generator=make_generator(2))
    avg = combine([(0.5, a), (0.5, a)])
    for key in ("weights", "biases"):
        for u, v in zip(avg[key], a[key], strict=True):
            torch.testing.assert_close(u, v)
    base = trunk(a)
    tau = {
        "weights": [torch.ones_like(w) for w in base["weights"]],
        "biases": [torch.ones_like(b) for b in base["biases"]],
    }
    merged = WeightAveraging().merge(base, {"t1": tau, "t2": tau}, 1.0)
    torch.testing.assert_close(merged["weights"][0], base["weights"][0] + 1.0)
    ta = TaskArithmetic().merge(base, {"t1": tau, "t2": tau}, 0.25)
    torch.testing.assert_close(ta["biases"][0], base["biases"][0] + 0.5)


def test_ties_trims_elects_and_takes_the_disjoint_mean():
    def vec(*v):
        return {"weights": [torch.tensor([list(v)])], "biases": [torch.zeros(1)]}

    out = ties_merge({"a": vec(3.0, -1.0, 0.5), "b": vec(1.0, 2.0, -0.5)}, density=1.0)
    # elected signs (+, +, 0): entry 0 mean(3, 1), entry 1 only b's 2 agrees, entry 2 tied at 0
    torch.testing.assert_close(out["weights"][0], torch.tensor([[2.0, 2.0, 0.0]]))
    trimmed = ties_merge({"a": vec(3.0, -1.0, 0.5), "b": vec(1.0, 2.0, -0.5)}, density=0.5)
    # density 0.5 of 4 entries keeps the 2 largest of each: a (3, -1), b (1, 2); signs (+, +)
    torch.testing.assert_close(trimmed["weights"][0], torch.tensor([[2.0, 2.0, 0.0]]))


@pytest.fixture
def zoo(tmp_path, monkeypatch):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path))
    z = MLPZoo(hidden_sizes=[8], num_epochs=2, num_finetune_steps=5, tasks=["parity", "low-digits"])
    z.prepare(generator=make_generator(0))
    return z


def test_zoo_splits_tasks_and_disk_cache(zoo, tmp_path):
    sizes = {k: len(zoo.split(k)[1]) for k in ("train", "validation", "test")}
    assert sum(sizes.values()) == 1797 and sizes["test"] == round(0.25 * 1797)
    x, y = zoo.task_data("low-digits", "test")
    assert set(y.tolist()) <= set(range(5)) and x.shape[1] == 64
    _, yp = zoo.task_data("parity", "train")
    assert torch.equal(yp, zoo.data("train")[1] % 2)
    a = zoo.member(8, 7)
    files = list(cache_dir().glob("*.pt"))
    assert len(files) == 1 and str(cache_dir()).startswith(str(tmp_path))
    fresh = MLPZoo(hidden_sizes=[8], num_epochs=2, num_finetune_steps=5, tasks=["parity", "low-digits"])
    fresh.prepare(generator=make_generator(0))
    again = fresh.member(8, 7)  # read back from disk
    assert all(torch.equal(u, v) for u, v in zip(a["weights"], again["weights"], strict=True))
    assert len(list(cache_dir().glob("*.pt"))) == 1
    b1, b2 = zoo.pair(8, 3)
    assert not torch.equal(b1["weights"][0], b2["weights"][0])


def test_suite_heads_and_task_vectors(zoo):
    suite = zoo.suite(None, 5)
    assert suite.tasks == ("parity", "low-digits")
    assert suite.finetuned["low-digits"]["weights"][-1].shape == (TASKS["low-digits"][3], 8)
    taus = task_vectors(suite)
    assert len(taus["parity"]["weights"]) == 1  # the trunk only
    assert float(taus["parity"]["weights"][0].abs().sum()) > 0


def test_evaluators_on_exact_cases(zoo):
    gen = make_generator(0)
    same = Fitted(model={"a": zoo.member(8, 1), "b": zoo.member(8, 1)})
    metrics = InterpolationBarrier(num_points=5).evaluate({"same": same}, zoo, generator=gen)
    assert metrics.values["same/loss_barrier"] == pytest.approx(0.0, abs=1e-6)
    # task arithmetic on one task with scaling 1 is that task's fine-tune: normalized accuracy 1
    merged = TaskArithmetic(num_tasks=1, scaling_grid=[1.0]).fit(zoo, generator=gen)
    values = NormalizedAccuracy().evaluate({"ta": merged}, zoo, generator=gen).values
    assert values["ta/normalized_accuracy"] == pytest.approx(1.0, abs=1e-12)
    assert merged.info["settings_tried"] == 1 and len(merged.info["tasks"]) == 1
