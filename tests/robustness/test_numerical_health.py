"""Nothing finishes "ok" with nonsense: stuck chains and exploding losses fail the stage or warn,
naming the stage and the quantity, and the finding is kept in results.json."""

from __future__ import annotations

import json
import math

import pytest
import torch
from robust_helpers import assert_clean

from quadriga import health
from quadriga.artifacts import Fitted, Samples

RWM = """\
[pipeline]
name = "health"

[task.g]
use = "gaussian"
dim = 2

[stage.m]
use = "rwm"
inputs = {{ target = "g" }}
num_samples = 500
burn_in = 0
step_size = {step}

[stage.e]
use = "energy-distance"
inputs = {{ subject = ["m"], reference = "g" }}
"""


def test_chains_that_never_moved_fail_the_stage_and_are_not_scored(cli, tmp_path):
    (tmp_path / "p.toml").write_text(RWM.format(step=1e6))
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert_clean(o, 1, "stage 'm' failed", "acceptance_rate", "never moved", "Lower step_size")
    status = json.loads((tmp_path / "r" / "status.json").read_text())
    assert status["status"] == "failed" and status["stages"]["m"]["status"] == "failed"
    assert "e" not in status["stages"] or status["stages"]["e"]["status"] != "finished"


def test_chains_whose_steps_are_too_small_to_move_fail_even_when_every_proposal_is_accepted(cli, tmp_path):
    (tmp_path / "p.toml").write_text(RWM.format(step=1e-300))
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert_clean(o, 1, "stage 'm' failed", "never moved", "of the proposals were accepted")
    status = json.loads((tmp_path / "r" / "status.json").read_text())
    assert status["status"] == "failed" and status["stages"]["m"]["status"] == "failed"
    x = torch.ones(2, 20, 3)
    found = health.samples({"transitions": 20, "acceptance_rate": 1.0}, x)
    assert [(h.level, h.quantity) for h in found] == [("failed", "chains")]
    found = health.samples({"transitions": 20, "acceptance_rate": 0.005}, x)  # no low-rate warning too
    assert [(h.level, h.quantity) for h in found] == [("failed", "chains")]


def test_barely_moving_chains_warn_once_and_the_warning_is_recorded(cli, tmp_path):
    (tmp_path / "p.toml").write_text(RWM.format(step=30.0))
    o = cli("run", "p.toml", "--out", "r", "--quiet")
    assert o.rc == 0, o.text
    lines = [line for line in o.out.splitlines() if line.startswith("warning: stage 'm'")]
    assert len(lines) == 1 and "acceptance_rate" in lines[0], o.out
    saved = json.loads((tmp_path / "r" / "results.json").read_text())["stages"]["m"]
    rate = saved["info"]["acceptance_rate"]
    assert 0 < rate < health.LOW_ACCEPTANCE
    assert saved["health"] == [
        {"level": "warning", "quantity": "acceptance_rate", "message": saved["health"][0]["message"]}
    ]


def _fitted(loss):
    return Fitted(model=None, history={"loss": list(loss)}, info={})


@pytest.mark.parametrize(
    ("loss", "level"),
    [
        ([1.0] * 10 + [0.5] * 10, None),  # decreasing: fine
        ([1.0] * 10 + [5e3] * 10, "warning"),  # 5e3 x: suspect
        ([1.0] * 10 + [1e9] * 10, "failed"),  # 1e9 x: diverged
        ([1.0] * 19 + [math.nan], "failed"),
        ([-1.0] * 10 + [1e9] * 10, None),  # crosses zero: no growth factor
        ([1.0] * 5 + [1e9] * 4, None),  # too short to judge
        ([5.2] + [5e29] * 29, "failed"),  # exploded at its second step (GDC at learning rate 1e30)
        ([1.0, 8e3, 9e3] + [5e3] * 27, None),  # a 5e3-fold jump inside the first tenth: not judged
        ([3.0, 1.0, 2.0] + [1.5] * 27, None),  # a noisy start that settles: fine
        # a residual met at initialisation that settles at 0.002 (FlowRL's flow balance): no growth
        ([2.08e-32] * 10 + [2.36e-3] * 10, None),
        ([1e-6] * 10 + [5.0] * 10, "warning"),  # from below the floor: measured from LOSS_FLOOR
        ([1e-6] * 10 + [1e6] * 10, "failed"),
        # exploded before its first log (learning rate 1e3), then fell: no growth, but absurd
        ([1.0e25, 3e23, 1e22] + [6.8e20] * 17, "warning"),
        ([2e12] * 20, "warning"),  # at LOSS_HUGE from the start
        ([9e11] * 20, None),  # below it, flat: fine
    ],
)
def test_loss_growth_thresholds(loss, level):
    found = _fitted(loss).health()
    assert [h.level for h in found] == ([level] if level else [])
    if level:
        assert found[0].quantity == "loss"


def test_samples_health_rules_at_their_boundaries():
    x = torch.zeros(3, 20, 2)
    stuck = Samples(x=x.reshape(-1, 2), chains=x, info={})
    assert [h.quantity for h in stuck.health()] == ["chains"]
    moving = torch.randn(3, 20, 2, generator=torch.Generator().manual_seed(0))
    assert Samples(x=moving.reshape(-1, 2), chains=moving, info={}).health() == []
    ok = {"transitions": 100, "acceptance_rate": health.LOW_ACCEPTANCE}
    assert health.samples(ok, None) == []
    assert health.samples({**ok, "acceptance_rate": 0.0}, None)[0].level == "failed"
    assert health.samples({"transitions": 5, "acceptance_rate": 0.0}, None) == []  # too few to judge
