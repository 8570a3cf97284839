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
    assert v["verdict"] == S.UNDERPOWERED and v["detectable"] > 0.01
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
    with pytest.raises(ValueError, match="inversions"):
        S.trend_verdict(t, "=", t["p"])
    rejections = 0
    for s in range(200):
        t = S.trend_test(gaps, rng.standard_normal((10, 6)), permutations=500, seed=s)
        rejections += t["p"] < 0.05
    assert rejections / 200 < 0.09
    flat = S.trend_test(gaps, 0.001 * rng.standard_normal((40, 6)), permutations=500)
    assert S.trend_verdict(flat, ">", flat["p"]) == "inconclusive"
    assert S.trend_test([0.3] * 6, planted)["rho"] is None
    with pytest.raises(ValueError, match="seeds >= 2"):
        S.trend_test(gaps, planted[:1])


def test_claim_rule():
    assert S.claim_verdict(["agrees", "agrees"]) == "agrees"
    assert S.claim_verdict(["agrees", "contradicted", "inconclusive"]) == "contradicted"
    assert S.claim_verdict(["agrees", "inconclusive"]) == "inconclusive"
    assert S.claim_verdict(["not testable here"]) == "not testable here"
    assert S.claim_verdict(["not testable here", "agrees"]) == "inconclusive"
    assert S.claim_verdict(["agrees", S.EXCLUDED, S.UNDERPOWERED]) == S.EXCLUDED
    assert S.claim_verdict(["agrees", S.UNDERPOWERED, "not testable here"]) == S.UNDERPOWERED
    assert S.claim_verdict([S.UNDERPOWERED, "inconclusive"]) == "inconclusive"


def test_inconclusive_splits_into_the_papers_effect_excluded_and_underpowered():
    """Issue 34: a '>' pair that is not significant excludes the paper's printed effect e when 'true d >= e' is
    rejected (DFedSAM - DFedAvg +0.13 +- 0.08 against the paper's 8.49), is underpowered when the smallest
    detectable effect exceeds e, and stays inconclusive where the paper printed no effect."""
    rng = np.random.default_rng(3)
    base = 0.86 + 0.02 * rng.standard_normal(10)
    close = base + 0.0013 + 0.0025 * rng.standard_normal(10)
    t = S.pair_test(close, base, ">", pair=True, paper_effect=0.0849)
    assert t["p"] > 0.05 and t["p_excluded"] < 1e-6
    assert S.pair_verdict(t, ">", t["p"], None, 1, p_excluded_adjusted=t["p_excluded"])["verdict"] == S.EXCLUDED
    noisy = base + 0.10 * rng.standard_normal(10)
    t = S.pair_test(noisy, base, ">", pair=True, paper_effect=0.0019)  # SGP - D-PSGD on MNIST: 0.19 points
    v = S.pair_verdict(t, ">", t["p"], None, 1, p_excluded_adjusted=t["p_excluded"])
    assert v["verdict"] == S.UNDERPOWERED and v["detectable"] > 0.0019
    t = S.pair_test(close, base, ">", pair=True)
    assert "p_excluded" not in t and S.pair_verdict(t, ">", t["p"], None, 1)["verdict"] == "inconclusive"


def test_inversions_decide_does_not_follow_the_gap():
    """'Does not follow the gap' agrees when one named inversion is shown, is contradicted when every one is
    reversed, and is inconclusive in between."""
    rng = np.random.default_rng(4)
    low = 0.80 + 0.01 * rng.standard_normal(10)
    above = S.pair_test(low + 0.02, low, ">", pair=True)
    below = S.pair_test(low - 0.02 + 0.001 * rng.standard_normal(10), low, ">", pair=True)
    tie = S.pair_test(low + 0.01 * rng.standard_normal(10), low, ">", pair=True)
    assert S.inversion_test([below, above])["verdict"] == "agrees"
    assert S.inversion_test([below, below])["verdict"] == "contradicted"
    assert S.inversion_test([below, tie])["verdict"] == "inconclusive"
    assert S.inversion_test([])["verdict"] == "not testable here"


def test_study_wide_correction_keeps_only_calls_below_its_level():
    assert S.study_verdict("agrees", 0.01) == "agrees" and S.study_verdict("contradicted", 0.2) == "inconclusive"
    assert S.study_verdict("agrees", None) == "inconclusive" and S.study_verdict(S.UNDERPOWERED, 0.9) == S.UNDERPOWERED
    eq = {"relation": "=", "verdict": "contradicted", "p": 0.9, "p_beyond": 0.001}
    assert S.deciding_p(eq) == 0.001 and S.deciding_p({"verdict": "agrees", "p_value": 0.02}) == 0.02


def test_study_wide_correction_judges_the_papers_effect_excluded_by_its_own_test():
    """'Paper's effect excluded' is a rejection too: its deciding p is the one-sided p of 'true d >= e' (not the
    two-sided t-test's), it stands only where that survives the study-wide Holm, and an excluded that does not
    falls back to underpowered (detectable effect above the paper's) or inconclusive."""
    excl = {"relation": ">", "verdict": S.EXCLUDED, "p": 0.64, "p_excluded": 1e-9, "paper_effect": 0.08,
            "detectable": 0.01}
    assert S.deciding_p(excl) == 1e-9 and S.EXCLUDED in S.DECIDED
    assert S.deciding_p({**excl, "verdict": "inconclusive"}) == 0.64  # the t-test where nothing was excluded
    assert S.study_verdict(S.EXCLUDED, 0.01, part=excl) == S.EXCLUDED
    assert S.study_verdict(S.EXCLUDED, 0.2, part=excl) == "inconclusive"
    assert S.study_verdict(S.EXCLUDED, 0.2, part={**excl, "detectable": 0.1}) == S.UNDERPOWERED
    assert S.study_verdict(S.EXCLUDED, None, part=excl) == "inconclusive"
    # a planted run: one excluded part (p_excluded 0.0007) survives Holm over 40 tests, not over 100
    a, b = np.array([1.0, 1.1, 0.9, 1.05, 0.95]), np.array([1.0, 1.08, 0.93, 1.02, 0.97])
    t = S.pair_test(a, b, ">", pair=True, paper_effect=0.09)
    assert 0.05 / 100 < t["p_excluded"] < 0.05 / 40 and t["p"] == 1.0
    v = S.pair_verdict(t, ">", t["p"], None, 1, p_excluded_adjusted=t["p_excluded"])
    part = {**t, **v, "relation": ">"}
    assert part["verdict"] == S.EXCLUDED
    adjusted = S.holm([S.deciding_p(part)] + [0.5] * 39)
    assert S.study_verdict(part["verdict"], adjusted[0], part=part) == S.EXCLUDED
    adjusted = S.holm([S.deciding_p(part)] + [0.5] * 99)  # 100 tests: 100 * p_excluded > 0.05
    assert S.study_verdict(part["verdict"], adjusted[0], part=part) == "inconclusive"  # detectable < 0.09


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
