"""The claims' tests with stated power (issue 22, dfltheory.verify.stats): Welch and Holm against scipy and their
definitions, the false-positive rate and the power at the stated detectable effect by simulation, TOST, the
permutation trend test, and the claim-level rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from dfltheory.verify import stats as S


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=12), st.lists(st.floats(-5, 5), min_size=2, max_size=12))
@settings(max_examples=60, deadline=None)
def test_welch_is_scipys_unequal_variance_t_test(a, b):
    if np.std(a) < 1e-6 or np.std(b) < 1e-6:  # no spread: the degenerate branch, tested below
        return
    w = S.welch(a, b)
    ref = sps.ttest_ind(a, b, equal_var=False)
    assert w["p"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
    assert w["difference"] == pytest.approx(np.mean(a) - np.mean(b))


def test_welch_without_spread_and_bad_input():
    assert S.welch([1, 1], [1, 1])["p"] == 1.0 and S.welch([1, 1], [2, 2])["p"] == 0.0
    with pytest.raises(ValueError, match="at least two finite values"):
        S.welch([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least two finite values"):
        S.welch([1.0, float("nan")], [1.0, 2.0])


def test_holm_step_down():
    assert S.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert S.holm([0.5]) == [0.5] and S.holm([0.9, 0.9]) == [1.0, 1.0]


def test_false_positive_rate_and_power_at_the_stated_detectable_effect():
    """Under the null a '>' pair is called (agrees or contradicted) about 5 % of the time; with a true difference
    equal to the detectable effect computed from the true spread it agrees about 80 % of the time."""
    rng = np.random.default_rng(0)
    n, sims = 10, 3000
    calls = 0
    for _ in range(sims):
        t = S.pair_test(rng.normal(0, 1, n), rng.normal(0, 1, n), ">")
        calls += S.pair_verdict(t, ">", t["p"], None, 1)["verdict"] != "inconclusive"
    assert 0.035 < calls / sims < 0.065
    mde = S.detectable(np.sqrt(2 / n), 2 * n - 2, S.ALPHA)
    hits = 0
    for _ in range(sims):
        t = S.pair_test(rng.normal(mde, 1, n), rng.normal(0, 1, n), ">")
        hits += S.pair_verdict(t, ">", t["p"], None, 1)["verdict"] == "agrees"
    assert 0.75 < hits / sims < 0.85


def test_tost_shows_equivalence_and_a_difference_beyond_the_margin():
    rng = np.random.default_rng(1)
    a = 0.90 + 0.002 * rng.standard_normal(10)
    t = S.pair_test(a, a[::-1] + 0.001, "=", margin=0.01)
    assert S.pair_verdict(t, "=", t["p"], t["p_beyond"], 1)["verdict"] == "agrees"
    t = S.pair_test(a, a - 0.05, "=", margin=0.01)
    assert S.pair_verdict(t, "=", t["p"], t["p_beyond"], 1)["verdict"] == "contradicted"
    noisy = 0.9 + 0.05 * rng.standard_normal(10)
    t = S.pair_test(noisy, a, "=", margin=0.01)
    v = S.pair_verdict(t, "=", t["p"], t["p_beyond"], 1)
    assert v["verdict"] == "inconclusive" and v["detectable"] > 0.01
    with pytest.raises(ValueError, match="margin > 0"):
        S.pair_test(a, a, "=")


def test_smaller_is_better_flips_the_sign_and_the_verdict():
    low, high = [1.0, 1.1, 0.9, 1.0], [2.0, 2.1, 1.9, 2.0]
    t = S.pair_test(low, high, ">", sign=-1)
    assert t["difference"] < 0 and t["signed"] > 0
    assert S.pair_verdict(t, ">", t["p"], None, 1)["verdict"] == "agrees"


def test_trend_permutation_test_finds_a_planted_trend_and_keeps_its_level():
    rng = np.random.default_rng(2)
    gaps = [0.01, 0.05, 0.2, 0.5, 0.8, 1.0]
    planted = np.arange(6)[None, :] * 0.5 + rng.standard_normal((10, 6))
    t = S.trend_test(gaps, planted, permutations=4000)
    assert t["rho"] > 0.5 and t["p"] < 0.01 and S.trend_verdict(t, ">", t["p"]) == "agrees"
    assert S.trend_verdict(t, "=", t["p"]) == "contradicted"
    rejections = 0
    for s in range(200):
        t = S.trend_test(gaps, rng.standard_normal((10, 6)), permutations=500, seed=s)
        rejections += t["p"] < 0.05
    assert rejections / 200 < 0.09
    flat = S.trend_test(gaps, 0.001 * rng.standard_normal((40, 6)), permutations=500)
    assert S.trend_verdict(flat, "=", flat["p"]) == "agrees"  # no trend, interval inside (-0.5, 0.5)
    assert S.trend_test([0.3] * 6, planted)["rho"] is None
    with pytest.raises(ValueError, match="seeds >= 2"):
        S.trend_test(gaps, planted[:1])


def test_claim_rule():
    assert S.claim_verdict(["agrees", "agrees"]) == "agrees"
    assert S.claim_verdict(["agrees", "contradicted", "inconclusive"]) == "contradicted"
    assert S.claim_verdict(["agrees", "inconclusive"]) == "inconclusive"
    assert S.claim_verdict(["not testable here"]) == "not testable here"
    assert S.claim_verdict(["not testable here", "agrees"]) == "inconclusive"


def test_paired_test_is_the_t_test_of_the_differences_and_keeps_its_level():
    rng = np.random.default_rng(3)
    problem = rng.normal(0, 5, 10)  # a large spread between problems, shared by both arms
    a, b = problem + rng.normal(0.5, 0.1, 10), problem + rng.normal(0, 0.1, 10)
    t = S.pair_test(a, b, ">", pair=True)
    ref = sps.ttest_rel(a, b)
    assert t["p"] == pytest.approx(ref.pvalue, rel=1e-9) and t["test"] == "paired t, two-sided"
    assert S.pair_verdict(t, ">", t["p"], None, 1)["verdict"] == "agrees"
    w = S.pair_test(a, b, ">")  # unpaired, the problems' spread hides the difference
    assert S.pair_verdict(w, ">", w["p"], None, 1)["verdict"] == "inconclusive"
    calls = 0
    for _ in range(2000):
        p = rng.normal(0, 5, 10)
        t = S.pair_test(p + rng.normal(0, 1, 10), p + rng.normal(0, 1, 10), ">", pair=True)
        calls += t["p"] < S.ALPHA
    assert 0.03 < calls / 2000 < 0.07
    with pytest.raises(ValueError, match="as many values"):
        S.paired([1.0, 2.0, 3.0], [1.0, 2.0])
