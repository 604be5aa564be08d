"""Calibrated intervals: simulated coverage, the p-value / interval invariant, reference values.

Coverage: every method that :func:`quadriga.stats.interval` (and ``loglog_slope``) chooses for a
statistic the claims use, at n in {3, 5, 10, 20, 50}, on normal, lognormal (sigma 0.5, skewness
1.75) and t3 data (designs in :mod:`quadriga.stats.coverage`), fixed seeds. Closed-form methods
use 10000 data sets per cell: Monte-Carlo s.e. 0.0022 at 0.95, so the band 0.925-0.975 is
11 s.e. wide. Coverage below 0.925 (the unsafe side: verdicts more often wrong than stated) fails
outright; above, the bound is 0.975 + 2 s.e., and 0.985 for Yuen's trimmed t at n = 5, which
is conservative there (0.972-0.979: wider than needed, never less safe). Cells the chooser
marks "not calibrated" (t intervals of skewed data at n < 20) are asserted only to stay above
0.90, and the method string is checked to say so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

from quadriga import errors as stats_errors
from quadriga import stats
from quadriga.stats import calibrated as cal
from quadriga.stats.coverage import coverage

NS = (3, 5, 10, 20, 50)
DISTS = ("normal", "lognormal", "t3")
REPS = 10_000
SE = math.sqrt(0.95 * 0.05 / REPS)


def _uncalibrated(design: str, dist: str, n: int) -> bool:
    """Cells the chooser documents as below nominal: t of skewed data at n < SKEWED_BELOW_N."""
    return design in ("mean", "difference") and dist == "lognormal" and n < cal.SKEWED_BELOW_N


@pytest.mark.parametrize(
    "design",
    [
        "mean",
        "difference",
        "unpaired difference",
        "ratio",
        "iqm-difference",
        "loglog slope",
        "loglog slope (k)",
    ],
)
def test_coverage_of_the_chosen_method_is_nominal(design):
    failures = []
    for dist in DISTS:
        for n in NS:
            c = coverage(design, dist, n, reps=REPS, seed=1000 + n)
            low = 0.90 if _uncalibrated(design, dist, n) else 0.925
            # Yuen's trimmed t keeps 3 of 5 values at n = 5 and is conservative there (0.974-0.979)
            high = 0.985 if design == "iqm-difference" and n == 5 else 0.975 + 2 * SE
            if not low <= c <= high:
                failures.append(f"{dist} n={n}: {c:.4f}")
    assert not failures, f"{design}: coverage outside [0.925, 0.975 + 2 s.e.]: {failures}"


def test_bootstrap_t_coverage_where_it_is_calibrated():
    # 1000 data sets, 499 resamples (s.e. 0.0069): the explicit bootstrap-t for robust statistics
    for dist in DISTS:
        c = coverage("iqm-difference", dist, 20, reps=1000, seed=7, method="bootstrap-t", resamples=499)
        assert 0.925 - 2 * 0.0069 <= c <= 0.975 + 2 * 0.0069, (dist, c)


def test_old_bca_undercovers_and_the_new_interval_does_not():
    # the "before": 95% BCa of a paired difference at n = 5 and 10 on normal data
    old = [
        coverage("difference", "normal", n, reps=1000, seed=3, method="BCa", resamples=1000) for n in (5, 10)
    ]
    assert old[0] < 0.86 and old[1] < 0.92
    new = [coverage("difference", "normal", n, reps=REPS, seed=3) for n in (5, 10)]
    assert all(abs(c - 0.95) < 4 * SE for c in new)


def test_method_string_says_where_it_is_not_calibrated():
    rng = np.random.default_rng(4)
    # sample skewness 1.58 > 2 standard errors (1.50 at n = 8) and below the strong limit 2
    ci = stats.interval([0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 6.0])
    assert (
        ci.method
        == "Student t (one sample, df 7); not calibrated: skewed data (sample skewness 1.6) at n < 20"
    )
    assert "not calibrated" not in stats.interval([0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 6.0] * 3).method
    assert "not calibrated" not in stats.interval(rng.lognormal(0, 0.3, size=30)).method
    strong = stats.interval(rng.lognormal(0, 1.0, size=50))
    assert "not calibrated: strongly skewed data" in strong.method
    assert "not calibrated" not in stats.interval(rng.normal(size=8)).method
    boot = stats.interval(rng.normal(size=5), lambda a, axis: np.median(a, axis), resamples=99)
    assert "conservative at n < 10" in boot.method


# ---- the invariant: low > b <=> p(b, greater) < alpha, high < b <=> p(b, less) < alpha ----


def _check_invariant(ci: stats.Interval, points: int = 61) -> None:
    finite = [v for v in (ci.low, ci.high, ci.estimate) if math.isfinite(v)]
    span = max(finite) - min(finite) or 1.0
    grid = np.linspace(min(finite) - 2 * span, max(finite) + 2 * span, points)
    for level in (0.5, 0.8, 0.95, 0.99, 0.9999):
        at = ci.at_level(level)
        alpha = (1 - level) / 2
        for b in grid:
            if min(abs(b - at.low), abs(b - at.high)) < 1e-7 * span:
                continue  # equalities aside
            assert (at.low > b) == (ci.pvalue(b, "greater") < alpha), (ci.method, level, b)
            assert (at.high < b) == (ci.pvalue(b, "less") < alpha), (ci.method, level, b)


def _samples() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    y = rng.lognormal(0, 0.5, size=12)
    return y * rng.lognormal(0.3, 0.6, size=12), y


@pytest.mark.parametrize(
    ("statistic", "kw"),
    [
        ("mean", {}),
        ("difference", {}),
        ("difference", {"paired": False}),
        ("ratio", {}),
        ("ratio", {"method": "log-t"}),
        ("ratio", {"paired": False}),
        ("iqm-difference", {}),
        ("iqm-difference", {"paired": False}),
        ("iqm-difference", {"method": "bootstrap-t", "resamples": 999}),
        ("difference", {"method": "BCa", "resamples": 999}),
        ("mean", {"method": "percentile", "resamples": 999}),
    ],
)
def test_pvalue_and_interval_agree_for_every_method(statistic, kw):
    x, y = _samples()
    ci = stats.interval(x, statistic, None if statistic == "mean" else y, **kw)
    # the explicit bootstrap finds each p-value by bisection on the level: a coarser grid
    _check_invariant(ci, 13 if kw.get("method") in ("BCa", "percentile") else 61)


def test_invariant_for_slopes_fieller_edge_cases_and_hand_built_intervals():
    xs = np.array([10.0, 100.0, 1000.0, 10000.0])
    rng = np.random.default_rng(2)
    _check_invariant(stats.loglog_slope(xs, xs**-0.5 * rng.lognormal(0, 0.1, size=4)))
    _check_invariant(stats.loglog_slope(xs, xs[:, None] ** -1.0 * rng.lognormal(0, 0.3, size=(4, 6))))
    # Fieller with a denominator near 0: unbounded at 95%, bounded at 50%
    x, y = rng.normal(1.0, 1.0, 8), rng.normal(0.6, 1.0, 8)
    ci = stats.interval(x, "ratio", y)
    assert (ci.low, ci.high) == (-math.inf, math.inf) and "unbounded" in ci.method
    _check_invariant(ci)
    # a hand-built (or JSON re-read) interval falls back to a t pivot on se and df
    t_ci = stats.interval(x)
    hand = stats.Interval(**t_ci.as_dict())
    assert hand == t_ci and hand.pvalue(0.3, "greater") == pytest.approx(t_ci.pvalue(0.3, "greater"))
    assert hand.at_level(0.99).low == pytest.approx(t_ci.at_level(0.99).low)
    _check_invariant(hand)
    no_se = stats.Interval(1.0, 0.5, 1.5, 0.95, "by hand", 10)
    _check_invariant(no_se)
    assert no_se.pvalue(1.0, "greater") == pytest.approx(0.5)


def test_skewed_ratio_where_the_old_path_contradicted_its_interval():
    # multiplicative lognormal noise on a paired ratio, n = 10: the old BCa interval lies entirely
    # above 1 while the normal-approximation p-value it was paired with says "not below 0.025"
    rng = np.random.default_rng(24)
    y = rng.lognormal(0, 0.3, 10)
    x = y * rng.lognormal(0.5, 1.0, 10)
    old = stats.bootstrap_ci(x, "ratio", y, paired=True, resamples=2000, rng=0)
    old_p = st.norm.sf((old.estimate - 1.0) / old.se)
    assert old.low > 1.0 and old_p >= 0.025  # the contradiction
    new = stats.interval(x, "ratio", y)
    p = new.pvalue(1.0, "greater")
    assert new.method.startswith("Fieller (paired ratio of means, t df 9)")
    assert (new.low > 1.0) == (p < 0.025)
    assert new.low < 1.0 < new.high and p == pytest.approx(0.0429, abs=5e-4)
    # the same test at the boundary: the paired t-test of mean(x - 1 * y) = 0
    ref = st.ttest_1samp(x - y, 0.0, alternative="greater").pvalue
    assert p == pytest.approx(ref)
    # a Holm-adjusted interval (level 1 - 2 alpha p_raw / p_holm) still agrees with its p
    p_holm = min(1.0, 3 * p)
    wide = new.at_level(1 - 2 * 0.025 * p / p_holm)
    assert wide.low < new.low and (wide.low > 1.0) == (p_holm < 0.025)


# ---- reference values ----


def test_t_intervals_match_scipy():
    x, y = _samples()
    one = stats.interval(x)
    ref = st.ttest_1samp(x, 0.0).confidence_interval(0.95)
    assert (one.low, one.high) == pytest.approx((ref.low, ref.high))
    assert one.pvalue(1.2, "less") == pytest.approx(st.ttest_1samp(x, 1.2, alternative="less").pvalue)
    paired = stats.interval(x, "difference", y)
    ref = st.ttest_rel(x, y).confidence_interval(0.9)
    assert (paired.at_level(0.9).low, paired.at_level(0.9).high) == pytest.approx((ref.low, ref.high))
    assert paired.method == "Student t (paired differences, df 11)" and paired.df == 11
    welch = stats.interval(x, "difference", y[:9], paired=False)
    res = st.ttest_ind(x, y[:9], equal_var=False)
    assert (welch.low, welch.high) == pytest.approx(tuple(res.confidence_interval(0.95)))
    assert welch.df == pytest.approx(res.df)
    assert welch.pvalue(0.0, "greater") == pytest.approx(
        st.ttest_ind(x, y[:9], equal_var=False, alternative="greater").pvalue
    )


def test_yuen_matches_scipy_trimmed_t_and_iqm():
    x, y = _samples()
    ci = stats.interval(x, "iqm-difference", y[:10], paired=False)
    res = st.ttest_ind(x, y[:10], equal_var=False, trim=0.25)
    assert ci.estimate == pytest.approx(st.trim_mean(x, 0.25) - st.trim_mean(y[:10], 0.25))
    assert ci.df == pytest.approx(res.df)
    assert ci.pvalue(0.0, "greater") == pytest.approx(
        st.ttest_ind(x, y[:10], equal_var=False, trim=0.25, alternative="greater").pvalue
    )


def test_fieller_ends_are_where_the_paired_t_test_reaches_alpha():
    x, y = _samples()
    ci = stats.interval(x, "ratio", y)
    assert ci.estimate == pytest.approx(x.mean() / y.mean()) and ci.low < ci.estimate < ci.high
    for b, alt in ((ci.low, "greater"), (ci.high, "less")):
        ref = st.ttest_1samp(x - b * y, 0.0, alternative=alt).pvalue
        assert ref == pytest.approx(0.025, rel=1e-6)
    logt = stats.interval(x, "ratio", y, method="log-t")
    assert logt.scale == "log" and logt.low * logt.high == pytest.approx(ci.estimate**2)


def test_loglog_slope_is_an_interval_that_unpacks():
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    rng = np.random.default_rng(3)
    y = x**-0.7 * rng.lognormal(0, 0.1, 4)
    ci = stats.loglog_slope(x, y)
    fit = st.linregress(np.log(x), np.log(y))
    q = st.t.ppf(0.975, 2)
    slope, low, high = ci
    assert (slope, low, high) == pytest.approx(
        (fit.slope, fit.slope - q * fit.stderr, fit.slope + q * fit.stderr)
    )
    reps = x[:, None] ** -1.0 * rng.lognormal(0, 0.2, (4, 8))
    rep = stats.loglog_slope(x, reps)
    m, s2 = reps.mean(1), reps.var(1, ddof=1)
    lxc = np.log(x) - np.log(x).mean()
    c = lxc / (lxc @ lxc)
    assert rep.se == pytest.approx(math.sqrt(np.sum(c**2 * s2 / (8 * m**2))))
    assert rep.n == 8 and "Welch df" in rep.method and rep.low < -1 < rep.high


def test_yuen_without_spread_in_the_kept_values_is_unbounded():
    # n = 5 trims one value at each end; the three kept values of x agree and y is constant
    ci = stats.interval([0.0, 1.0, 1.0, 1.0, 2.0], "iqm-difference", [0.0] * 5)
    assert ci.estimate == 1.0 and (ci.low, ci.high) == (-math.inf, math.inf)
    assert "no spread" in ci.method and ci.pvalue(0.0, "greater") == 0.5


def test_at_level_reaches_one_and_rejects_nonsense():
    x, y = _samples()
    ci = stats.interval(x, "difference", y)
    assert (ci.at_level(1.0).low, ci.at_level(1.0).high) == (-math.inf, math.inf)
    near = ci.at_level(0.9999)
    ref = st.ttest_rel(x, y).confidence_interval(0.9999)
    assert (near.low, near.high) == pytest.approx((ref.low, ref.high)) and near.level == 0.9999
    with pytest.raises(stats_errors.ConfigError, match="level"):
        ci.at_level(0.0)
    with pytest.raises(stats_errors.ConfigError, match="alternative"):
        ci.pvalue(0.0, "two-sided")
