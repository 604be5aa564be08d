"""Iso-C and Iso-CTS closed forms, the alignment ratio, and the merging learners on a tiny zoo."""

from __future__ import annotations

import pytest
import torch
from quadriga_iso_merging.iso import IsoC, IsoCTS, alignment_ratios, iso_c_matrix, iso_cts_matrix
from quadriga_std.weightspace.accuracy import NormalizedAccuracy
from quadriga_std.weightspace.zoo import MLPZoo

from quadriga.seeding import make_generator


def test_iso_c_flattens_the_spectrum_of_the_sum():
    d1, d2 = torch.diag(torch.tensor([3.0, 0.0])), torch.diag(torch.tensor([0.0, 1.0]))
    torch.testing.assert_close(iso_c_matrix([d1, d2]), torch.diag(torch.tensor([2.0, 2.0])))
    gen = make_generator(0)
    deltas = [torch.randn(6, 4, generator=gen, dtype=torch.float64) for _ in range(3)]
    out = iso_c_matrix(deltas)
    s = torch.linalg.svdvals(out)
    torch.testing.assert_close(
        s, torch.full((4,), float(torch.linalg.svdvals(sum(deltas)).mean()), dtype=s.dtype)
    )
    # same singular subspaces as the sum: the sum's projector onto its row space is unchanged
    u = torch.linalg.svd(sum(deltas), full_matrices=False)[0]
    torch.testing.assert_close(u @ u.T @ out, out)


def test_iso_cts_keeps_common_and_task_specific_directions():
    d1 = torch.diag(torch.tensor([5.0, 0.0, 0.5, 0.0], dtype=torch.float64))
    d2 = torch.diag(torch.tensor([0.0, 4.0, 0.0, 0.3], dtype=torch.float64))
    # r = 4, k = 2 common (e1, e2), one task direction each (e3 for task 1, e4 for task 2);
    # every kept singular value becomes the mean (5 + 4 + 0.5 + 0.3) / 4 = 2.45
    out = iso_cts_matrix([d1, d2], common_space_fraction=0.5)
    torch.testing.assert_close(out, 2.45 * torch.eye(4, dtype=torch.float64))


def test_alignment_ratio_of_identical_rank_one_tasks_is_one():
    gen = make_generator(1)
    d = torch.outer(torch.randn(5, generator=gen), torch.randn(3, generator=gen))
    tau = {"weights": [d], "biases": [torch.zeros(5)]}
    ratios = alignment_ratios({"a": tau, "b": tau})
    assert ratios == pytest.approx({"a": 1.0, "b": 1.0})
    e, f = torch.eye(5), torch.eye(3)
    big = {"weights": [torch.outer(e[0], f[0])], "biases": [torch.zeros(5)]}
    small = {"weights": [1e-3 * torch.outer(e[1], f[1])], "biases": [torch.zeros(5)]}
    # k = 1 holds 1 - 1e-6 of the energy: the small task lies outside it (ratio 0), the big one inside
    assert alignment_ratios({"a": big, "b": small}) == pytest.approx({"a": 1.0, "b": 0.0})


def test_iso_learners_on_a_tiny_zoo(tmp_path, monkeypatch):
    monkeypatch.setenv("QUADRIGA_CACHE_DIR", str(tmp_path))
    zoo = MLPZoo(
        hidden_sizes=[16], num_epochs=3, num_finetune_steps=30, tasks=["parity", "low-digits", "rotated"]
    )
    zoo.prepare(generator=make_generator(0))
    gen = make_generator(5)
    for learner in (IsoC(scaling_grid=[0.5, 1.0, 2.0]), IsoCTS(scaling_grid=[0.5, 1.0, 2.0])):
        fitted = learner.fit(zoo, generator=make_generator(5))
        assert fitted.info["scaling"] in (0.5, 1.0, 2.0) and fitted.info["settings_tried"] == 3
        values = NormalizedAccuracy().evaluate({"m": fitted}, zoo, generator=gen).values
        assert 0.0 < values["m/normalized_accuracy"] <= 1.5
