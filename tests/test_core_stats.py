"""quadriga.stats against scipy / arviz on fixed inputs, and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st

from quadriga import stats
from quadriga.errors import ConfigError

WHY = "the paper claims the direction only"


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.normal(1.0, 1.0, size=40)
    y = x - 0.5 + rng.normal(0, 0.3, size=40)
    return x, y


def test_bootstrap_mean_matches_scipy_bca():
    x, _ = _data()
    got = stats.bootstrap_ci(x, "mean", resamples=2000, rng=3)
    ref = st.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(3))
    assert got.estimate == pytest.approx(x.mean())
    assert got.low == pytest.approx(ref.confidence_interval.low)
    assert got.high == pytest.approx(ref.confidence_interval.high)
    assert got.n == 40 and "BCa" in got.method


def test_bootstrap_paired_difference_matches_scipy_and_is_narrower_than_unpaired():
    x, y = _data()
    got = stats.bootstrap_ci(x, "difference", y, paired=True, resamples=2000, rng=1)
    ref = st.bootstrap(
        (x, y),
        lambda a, b, axis: a.mean(axis) - b.mean(axis),
        paired=True,
        n_resamples=2000,
        rng=np.random.default_rng(1),
    )
    assert got.low == pytest.approx(ref.confidence_interval.low)
    assert got.high == pytest.approx(ref.confidence_interval.high)
    unpaired = stats.bootstrap_ci(x, "difference", y, paired=False, resamples=2000, rng=1)
    # pairing removes the shared N(1, 1) component: the paired interval is several times narrower
    assert (got.high - got.low) * 2 < unpaired.high - unpaired.low
    assert got.low < 0.5 < got.high


def test_bootstrap_percentile_ratio_and_constant_data():
    x, y = _data()
    got = stats.bootstrap_ci(y + 5, "ratio", x + 5, method="percentile", resamples=999, rng=0)
    assert got.estimate == pytest.approx((y + 5).mean() / (x + 5).mean())
    assert got.low < got.estimate < got.high and "percentile" in got.method
    const = stats.bootstrap_ci(np.full(10, 2.0))
    assert (const.estimate, const.low, const.high) == (2.0, 2.0, 2.0)


def test_bootstrap_bad_input():
    with pytest.raises(ConfigError, match="statistic"):
        stats.bootstrap_ci([1.0, 2.0], "median-ish")
    with pytest.raises(ConfigError, match="give y"):
        stats.bootstrap_ci([1.0, 2.0], "difference")
    with pytest.raises(ConfigError, match="equal lengths"):
        stats.bootstrap_ci([1.0, 2.0], "difference", [1.0])
    with pytest.raises(ConfigError, match="non-finite"):
        stats.bootstrap_ci([1.0, math.nan])


def test_mean_se_and_batch_means():
    m, se = stats.mean_se([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    # AR(1) with phi = 0.9, unit innovations: the asymptotic variance of the mean is 1/(1-phi)^2 = 100
    rng = np.random.default_rng(0)
    n, phi = 200_000, 0.9
    eps = rng.normal(size=n)
    chain = np.empty(n)
    chain[0] = eps[0] / math.sqrt(1 - phi**2)
    for i in range(1, n):
        chain[i] = phi * chain[i - 1] + eps[i]
    se = stats.batch_means_se(chain)
    assert se == pytest.approx(math.sqrt(100 / n), rel=0.15)
    assert se > 5 * np.std(chain) / math.sqrt(n) / 2  # far above the i.i.d. formula
    with pytest.raises(ConfigError, match="batches"):
        stats.batch_means_se([1.0, 2.0, 3.0])


def test_loglog_slope_exact_and_replicated():
    x = np.array([10.0, 100.0, 1000.0])
    slope, lo, hi = stats.loglog_slope(x, 3 * x**-0.5)
    assert slope == pytest.approx(-0.5) and lo == pytest.approx(-0.5) and hi == pytest.approx(-0.5)
    rng = np.random.default_rng(2)
    y = (x**-1.0)[:, None] * rng.lognormal(0, 0.2, size=(3, 50))
    slope, lo, hi = stats.loglog_slope(x, y)
    assert lo < -1.0 < hi and hi - lo < 0.2
    ref = st.linregress(np.log(x), np.log(y.mean(1))).slope
    assert slope == pytest.approx(ref)
    with pytest.raises(ConfigError, match="positive"):
        stats.loglog_slope(x, -x)


def test_iqm_probability_of_improvement_and_stratified_bootstrap():
    assert stats.iqm(np.arange(1.0, 9.0)) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    rng = np.random.default_rng(5)
    a, b = rng.normal(1, 1, size=(20, 3)), rng.normal(0, 1, size=(20, 3))
    assert stats.iqm(a) == pytest.approx(st.trim_mean(a.ravel(), 0.25))
    u = np.mean([st.mannwhitneyu(a[:, j], b[:, j]).statistic / 400 for j in range(3)])
    assert stats.probability_of_improvement(a, b) == pytest.approx(u)
    assert stats.probability_of_improvement([1.0, 2.0], [1.0, 0.0]) == pytest.approx(0.875)
    ci = stats.stratified_bootstrap_ci(a, resamples=500)
    assert ci.low < ci.estimate < ci.high and ci.n == 20 and "stratified" in ci.method


def test_holm_closed_form_and_power():
    # Holm 1979 worked pattern: sorted 0.01, 0.02, 0.04 x (3, 2, 1) -> 0.03, 0.04, 0.04
    assert stats.holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert stats.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])
    assert stats.min_detectable_effect(1.0) == pytest.approx(1.959964 + 0.841621, rel=1e-5)
    # distance half the MDE -> four times the replicates
    mde = stats.min_detectable_effect(0.1)
    assert stats.replicates_needed(10, 0.1, mde / 2) == 40


def test_ess_matches_arviz_and_guards_stuck_chains():
    import arviz

    rng = np.random.default_rng(0)
    draws = rng.normal(size=(4, 500))
    got = stats.ess(draws)
    assert got["ess"][0] == pytest.approx(float(arviz.ess(draws, method="bulk")))
    tail = stats.ess(draws, method="tail")["ess"][0]
    assert tail == pytest.approx(float(arviz.ess(draws, method="tail")))
    # a chain that never moves: arviz says 2000 of 2000; quadriga counts one draw
    assert float(arviz.ess(np.ones((1, 2000)))) == 2000
    stuck = stats.ess(np.ones((1, 2000)))
    assert stuck["ess"][0] == 1.0 and stuck["stuck_chains"] == 1 and "never moved" in stuck["note"]
    mixed = np.concatenate([draws, np.zeros((1, 500))])
    assert stats.ess(mixed)["ess"][0] == pytest.approx(got["ess"][0] + 1)
    assert stats.mcse(draws)[0] == pytest.approx(float(arviz.mcse(draws, method="mean")))


def test_rhat_matches_arviz_and_warns():
    import arviz

    rng = np.random.default_rng(1)
    good = rng.normal(size=(4, 500))
    assert stats.rhat(good)["rhat"][0] == pytest.approx(float(arviz.rhat(good)))
    bad = good + np.arange(4)[:, None]
    with pytest.warns(UserWarning, match="R-hat"):
        res = stats.rhat(bad)
    assert res["rhat"][0] > 1.5


def test_one_replicate_has_no_interval_and_no_verdict():
    from quadriga.claims import Effect, decide

    ci = stats.bootstrap_ci([0.3], "mean")
    assert ci.n == 1 and math.isnan(ci.low) and math.isnan(ci.high)
    effect = Effect(quantity="x", statistic="mean", relation="greater", value=0.0, why_sign=WHY)
    assert decide(effect, [5.0])["verdict"] == "inconclusive"


def test_tiny_samples_say_what_their_interval_is():
    # all values equal: nothing to resample, the method says so instead of "BCa"
    const = stats.bootstrap_ci([0.0, 0.0, 0.0])
    assert const.method == "no interval: all 3 values equal" == stats.small_sample_note(3, constant=True)
    # two values: every resample is (a, a), (a, b) or (b, b), so the interval cannot leave [a, b]
    two = stats.bootstrap_ci([1.0, 3.0], "mean", method="percentile", resamples=999, rng=0)
    assert 1.0 <= two.low < two.high <= 3.0
    assert stats.small_sample_note(2) == "n = 2: one degree of freedom, the interval is very wide"
    assert stats.small_sample_note(1) == "no interval: n = 1" == stats.bootstrap_ci([0.5]).method
    assert stats.small_sample_note(3) == ""
