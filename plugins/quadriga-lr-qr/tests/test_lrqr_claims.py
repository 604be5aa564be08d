"""The claims at smoke scale: they run and return finite numbers, a table and a figure."""

from __future__ import annotations

import math

from quadriga_lr_qr.claims import METHODS, synthetic_shift_claim


def test_synthetic_claim_smoke(tmp_path):
    res = synthetic_shift_claim("smoke", out_dir=tmp_path)
    assert res.passed
    methods = [m for m in METHODS if f"2.0/{m}/coverage" in res.numbers]
    assert {"split", "weighted-exact", "lr-qr"} <= set(methods)
    for m in methods:
        assert 0.0 <= res.numbers[f"2.0/{m}/coverage"] <= 1.0
        assert math.isfinite(res.numbers[f"2.0/{m}/width"])
    assert (tmp_path / "coverage_vs_delta.png").exists() and "| 2.0 | lr-qr |" in res.table
