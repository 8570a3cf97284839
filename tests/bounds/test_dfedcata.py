"""DFedCata (seed 002) bounds: hand-computed values, conditions, and the card's testable claims (card §10).

Hand values are computed with plain floats from the LaTeX of the card (§6.3(a), §6.3(d), §6.5), independently of
the sympy expressions in dfltheory/papers/dfedcata/theorems.py.
"""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dfltheory.bounds import DomainError, get, ids
from dfltheory.papers.dfedcata.theorems import EXPERIMENTS, T0_STAR, effective_step, kappa_lambda
from dfltheory.bounds.settings import violations

# ------------------------------------------------------------------------------------------- hand formulas


def eta_t_hand(eta, lam_pen, K):
    a = 1.0 - eta * lam_pen
    return sum(eta * a**k for k in range(K))  # eta * sum_{k<K} (1 - eta lam_pen)^k


def thm1_hand(eta, K, T, L, m, sigma_l, D, beta, lam_pen, G, Delta0, Xi=0.0):
    """Card §6.3(a), term by term."""
    et = eta_t_hand(eta, lam_pen, K)
    b1 = 1.0 - beta
    return (8 * b1 * D / (et * T)
            + 48 * L**2 * beta**4 * Delta0 / (b1**3 * T)
            + 48 * L**2 * beta**4 * et**2 * (4 * sigma_l**2 + 16 * G**2 + 16 * L**2 * Xi) / b1**4
            + 24 * L**2 * Xi + 32 * L**2 * eta**2 * K * sigma_l**2 + 128 * L**2 * eta**2 * K**2 * G**2
            + 8 * L * et * sigma_l**2 / (b1 * m))


def cor1_hand(c, K, T, L, m, sigma_l, D, beta, G, Delta0, Xi=0.0):
    """Card §6.3(d) with eta = c/(L K sqrt T) and theta = 1."""
    b1, rT = 1.0 - beta, math.sqrt(T)
    return (8 * b1 * L * D / (c * rT) + 8 * c * sigma_l**2 / (b1 * m * rT)
            + (48 * L**2 * beta**4 * Delta0 / b1**3
               + 48 * c**2 * beta**4 * (4 * sigma_l**2 + 16 * G**2 + 16 * L**2 * Xi) / b1**4
               + 32 * c**2 * sigma_l**2 / K + 128 * c**2 * G**2) / T
            + 24 * L**2 * Xi)


def eps_gen_hand(c, L, S, G, Gamma, U, T, K):
    cl = c * L
    return (1 + 1 / cl) / S * (2 * c * G**2 * Gamma) ** (1 / (cl + 1)) * (U * T * K) ** (cl / (cl + 1))


def eps_t0_hand(t0, c, L, S, G, Gamma, U, T, K):
    return t0 * K * U / S + 2 * G**2 * Gamma / (L * S) * (T / t0) ** (c * L)


P1 = dict(eta=0.002, K=5, T=500, L=2.0, m=100, sigma_l=1.5, f0_minus_fstar=2.3, beta=0.5, lam_pen=0.05,
          G_het=0.7, Delta0=0.4)
P2 = dict(eta=0.01, K=20, T=1000, L=0.3, m=10, sigma_l=0.2, f0_minus_fstar=10.0, beta=0.9, lam_pen=3.0,
          G_het=2.0, Delta0=0.0)


def _hand(p, **over):
    q = {**p, **over}
    return thm1_hand(q["eta"], q["K"], q["T"], q["L"], q["m"], q["sigma_l"], q["f0_minus_fstar"], q["beta"],
                     q["lam_pen"], q["G_het"], q["Delta0"], q.get("Xi", 0.0))


# ------------------------------------------------------------------------------------------- catalog


def test_ids_tags_and_links():
    got = set(ids("dfedcata"))
    want = {"dfedcata.thm1", "dfedcata.thm1.consensus", "dfedcata.thm1.A", "dfedcata.thm1.invpen",
            "dfedcata.thm1.novr", "dfedcata.cor1", "dfedcata.cor1.consensus", "dfedcata.cor1.A",
            "dfedcata.cor1.bigO", "dfedcata.rem1", "dfedcata.thm2.t0", "dfedcata.thm2", "dfedcata.thm2.placeholder",
            "dfedcata.lem2", "dfedcata.lem3", "dfedcata.lem5", "dfedcata.lem7", "dfedcata.lem10", "dfedcata.lem11",
            "dfedcata.lem12", "dfedcata.lem13", "dfedcata.lem14", "dfedcata.lem16"}
    assert got == want
    # nothing of this paper is SEED: every formula is lost in the seed
    assert {get(i).source.tag for i in got} <= {"RECONSTRUCTED", "DERIVED", "INTERP"}
    assert get("dfedcata.thm1").source.tag == "RECONSTRUCTED" and get("dfedcata.thm1").variant == "printed"
    assert get("dfedcata.thm1.A").source.tag == "INTERP" and get("dfedcata.thm1.A").variant_of == "dfedcata.thm1"
    for i in got:
        t = get(i)
        if t.kind == "corollary":
            assert t.parent is not None and set(t.schedule) == {"eta"}
        if t.variant != "printed":
            assert t.variant_of is not None, i
        assert t.source.seed.startswith("002_")


def test_spectral_lambda_and_penalty_are_distinct_symbols():
    thm = get("dfedcata.thm1")
    assert thm.symbols["lam_pen"].symbol != get("dfedcata.thm2.placeholder").symbols["lam"].symbol
    assert thm.symbols["lam_pen"].topology_key is None
    assert get("dfedcata.thm2.placeholder").symbols["lam"].topology_key == "lambda"


# ------------------------------------------------------------------------------------------- Theorem 1


@pytest.mark.parametrize("p", [P1, P2])
def test_thm1_against_hand(p):
    assert get("dfedcata.thm1").evaluate(**p) == pytest.approx(_hand(p), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(eta=st.floats(1e-5, 0.5), K=st.integers(1, 50), lam_pen=st.floats(1e-3, 1.9), beta=st.floats(0, 0.99),
       Xi=st.floats(0, 2), m=st.integers(1, 1000))
def test_thm1_consensus_matches_hand_everywhere(eta, K, lam_pen, beta, Xi, m):
    lam_pen = min(lam_pen, 0.999 / eta)  # C1 keeps eta_t > 0
    p = dict(P1, eta=eta, K=K, lam_pen=lam_pen, beta=beta, m=m)
    # the closed form 1-(1-eta lam_pen)^K cancels: relative accuracy ~ 1e-16/(eta lam_pen) >= 1e-8 here
    assert get("dfedcata.thm1.consensus").evaluate(**p, Xi=Xi) == pytest.approx(_hand(p, Xi=Xi), rel=1e-6)


@pytest.mark.parametrize("p", [P1, P2])
def test_thm1_consensus_against_hand(p):
    assert get("dfedcata.thm1.consensus").evaluate(**p, Xi=0.3) == pytest.approx(_hand(p, Xi=0.3), rel=1e-12)
    assert get("dfedcata.thm1.consensus").evaluate(**p, Xi=0.0) == pytest.approx(_hand(p), rel=1e-12)


def test_thm1_A_is_beta_zero_and_has_no_beta():
    thm = get("dfedcata.thm1.A")
    assert "beta" not in thm.required and "beta" not in thm.condition_symbols
    q = {k: v for k, v in P1.items() if k not in ("beta", "Delta0")}
    assert thm.evaluate(**q, Xi=0.2) == pytest.approx(_hand(P1, beta=0.0, Xi=0.2), rel=1e-12)


def test_thm1_novr_drops_the_m():
    q = {k: v for k, v in P1.items() if k != "m"}
    assert get("dfedcata.thm1.novr").evaluate(**q) == pytest.approx(_hand(P1, m=1), rel=1e-12)


def test_thm1_invpen_is_the_reciprocal_penalty():
    q = {k: v for k, v in P2.items() if k != "lam_pen"}
    val = get("dfedcata.thm1.invpen").evaluate(**q, lam_pen_inv=1 / P2["lam_pen"])
    assert val == pytest.approx(_hand(P2), rel=1e-12)


def test_thm1_terms_are_named_and_dominant():
    terms = get("dfedcata.thm1").evaluate_terms(**P1)
    assert set(terms) == {"optimization", "initial_velocity", "momentum", "local_drift", "noise"}
    et = eta_t_hand(P1["eta"], P1["lam_pen"], P1["K"])
    assert terms["optimization"] == pytest.approx(8 * 0.5 * 2.3 / (et * 500))
    assert get("dfedcata.thm1").dominant_term(**P1)[0] == "optimization"


def test_lam_pen_zero_is_outside_the_domain_and_its_limit_is_eta_K():
    with pytest.raises(DomainError, match="lam_pen"):
        get("dfedcata.thm1").evaluate(**{**P1, "lam_pen": 0.0})
    assert effective_step(0.1, 0.0, 20) == pytest.approx(2.0)
    e, lp, K = sp.symbols("e l K", positive=True)
    assert sp.limit((1 - (1 - e * lp) ** 20) / lp, lp, 0) == 20 * e


# ------------------------------------------------------------------------------------------- conditions

GOOD_T1 = dict(P1, eta=1e-3, K=5, L=1.0, lam_pen=0.05, beta=0.5, B_het=1.0)
BAD_T1 = {  # condition index -> values where (at least) that condition fails
    0: dict(eta=0.1, lam_pen=20.0),            # eta lam_pen = 2
    1: dict(eta=0.1),                          # 2 sqrt2 * 0.1*5*1 = 1.41 > 1
    2: dict(eta=0.03, B_het=1.0),              # 8*0.03*5 = 1.2 > 1 (C2: 0.42 ok)
    3: dict(eta=0.03, B_het=0.0, beta=0.8),    # 2*eta_t ~ 0.30 > 0.2
    4: dict(eta=0.02, B_het=0.0, beta=0.6),    # 4 sqrt2 *0.36*eta_t(~0.0995)=0.203 > 0.16; C4 0.199 <= 0.4
    5: dict(eta=0.002, B_het=3.0, beta=0.6),   # 16 sqrt3*0.36*3*0.00999=0.598 > 0.16
}


def _verdicts(thm_id, values):
    return [v.holds for v in get(thm_id).check(**values).conditions]


@pytest.mark.parametrize("thm_id", ["dfedcata.thm1", "dfedcata.thm1.consensus", "dfedcata.thm1.novr"])
def test_thm1_conditions_hold_and_fail(thm_id):
    thm = get(thm_id)
    base = {k: v for k, v in GOOD_T1.items() if k in thm.symbols}
    if "Xi" in thm.symbols:
        base["Xi"] = 0.1
    assert _verdicts(thm_id, base) == [True] * 6
    for i, over in BAD_T1.items():
        assert _verdicts(thm_id, {**base, **over})[i] is False, (thm_id, i)


def test_thm1_A_conditions():
    base = {k: v for k, v in GOOD_T1.items() if k not in ("beta", "Delta0")} | {"Xi": 0.0}
    assert _verdicts("dfedcata.thm1.A", base) == [True] * 4
    assert _verdicts("dfedcata.thm1.A", {**base, "eta": 0.1})[1] is False
    # C4 at beta = 0: 2 L eta_t <= 1 fails at eta = 0.12 (eta_t ~ 0.6)
    assert _verdicts("dfedcata.thm1.A", {**base, "eta": 0.12, "lam_pen": 0.05})[3] is False


def test_thm1_invpen_condition_c1():
    q = {k: v for k, v in GOOD_T1.items() if k != "lam_pen"}
    assert _verdicts("dfedcata.thm1.invpen", {**q, "lam_pen_inv": 20.0})[0] is True
    assert _verdicts("dfedcata.thm1.invpen", {**q, "lam_pen_inv": 5e-4})[0] is False  # eta = 1e-3 > lambda


GOOD_COR = dict(c=1.0, K=20, T=10**6, L=1.0, m=100, sigma_l=1.0, f0_minus_fstar=1.0, beta=0.5, lam_pen=0.05,
                G_het=1.0, Delta0=0.0, B_het=1.0)
BAD_COR = {0: dict(lam_pen=1e6, T=100), 1: dict(c=400.0), 2: dict(B_het=200.0), 3: dict(beta=0.99, T=30000),
           4: dict(beta=0.9, T=10**5), 5: dict(beta=0.9, T=10**6, B_het=1.0)}


def test_cor1_conditions_hold_and_fail():
    assert _verdicts("dfedcata.cor1", GOOD_COR) == [True] * 6
    for i, over in BAD_COR.items():
        assert _verdicts("dfedcata.cor1", {**GOOD_COR, **over})[i] is False, i


def test_cor1_A_conditions():
    base = {k: v for k, v in GOOD_COR.items() if k not in ("beta", "Delta0")} | {"Xi": 0.0}
    assert _verdicts("dfedcata.cor1.A", base) == [True] * 4
    assert _verdicts("dfedcata.cor1.A", {**base, "T": 3})[3] is False  # 3 < 4 c^2


def test_thm2_conditions():
    base = dict(K=5, U=1.0, S=500, G_lip=1.0, Gamma_lam=2.0, L=1.0, T=100, c=0.3)
    assert _verdicts("dfedcata.thm2", base) == [True, True]
    assert _verdicts("dfedcata.thm2", {**base, "c": 0.36}) == [False, True]  # 2 sqrt2 * 0.36 = 1.018
    assert _verdicts("dfedcata.thm2.t0", {**base, "t0": 50.0}) == [True, True]
    assert _verdicts("dfedcata.thm2.t0", {**base, "t0": 150.0}) == [True, False]


def test_thm2_needs_the_optimal_t0_inside_the_horizon():
    """Issue 11 §1.2: past t0* > T, eq. (3) is below every value of the first display for t0 = 1..T."""
    v = dict(G_lip=5, Gamma_lam=2562, K=1, L=1, S=1e6, T=100, U=0.5, c=0.3)
    thm2, first = get("dfedcata.thm2"), get("dfedcata.thm2.t0")
    best = first.evaluate(t0=np.arange(1, 101), **v).min()
    assert thm2.evaluate(**v) < best  # 0.0359 against 0.128: no bound ...
    res = thm2.check(**v)
    assert not res.ok and not res.is_bound and res.dominant_term is None  # ... and the check says so
    big = {**v, "T": 1e6}
    t0 = thm2.check(**big)
    assert t0.ok and first.evaluate(t0=np.arange(1, 10**6 + 1), **big).min() >= thm2.evaluate(**big) * (1 - 1e-9)
    assert not get("dfedcata.thm2.placeholder").check(kappa_lam=1000.0, lam=0.9, **{k: x for k, x in v.items()
                                                                                     if k != "Gamma_lam"}).ok


@pytest.mark.parametrize("thm_id", ["dfedcata.lem2", "dfedcata.lem3", "dfedcata.lem5"])
def test_lemma_penalty_conditions(thm_id):
    thm = get(thm_id)
    vals = dict(eta=0.1, lam_pen=0.05, K=20, k_step=3, g2_sum=1.0, beta=0.5, Delta0=1.0, gbar2_sum=1.0)
    vals = {k: v for k, v in vals.items() if k in thm.symbols}
    assert _verdicts(thm_id, vals) == [True]
    assert _verdicts(thm_id, {**vals, "lam_pen": 10.0}) == [False]


def test_lem10_condition():
    vals = dict(t0=10.0, K=5, U=1.0, S=100, G_lip=1.0, dist=0.5, T=100)
    assert _verdicts("dfedcata.lem10", vals) == [True]
    assert _verdicts("dfedcata.lem10", {**vals, "T": 5}) == [False]


# ------------------------------------------------------------------------------------------- lemmas


def test_lem2_reference_value_and_gamma_range():
    thm = get("dfedcata.lem2")
    hand = (1 - 0.995**20) / 0.05
    assert thm.evaluate(**thm.reference) == pytest.approx(hand, rel=1e-12)
    assert thm.evaluate(**thm.reference) == pytest.approx(thm.reference_value, abs=5e-4)  # card: 1.908
    for eta, lp, K in [(0.1, 0.05, 20), (0.5, 1.9, 7), (1e-3, 900.0, 3)]:
        gamma = lp * thm.evaluate(eta=eta, lam_pen=lp, K=K)
        assert 0 < gamma < 1
        assert thm.evaluate(eta=eta, lam_pen=lp, K=K) <= eta * K


def test_lem2_closed_form_matches_prox_sgd_steps():
    """Card §10.8: K prox-SGD steps with recorded gradients = -eta sum (1 - eta lam)^{K-1-k} g_k."""
    rng = np.random.default_rng(0)
    eta, lp, K, d = 0.1, 0.05, 20, 7
    y = rng.normal(size=d)
    g = rng.normal(size=(K, d))
    x = y.copy()
    for k in range(K):
        x = x - eta * (g[k] + lp * (x - y))
    closed = -eta * sum((1 - eta * lp) ** (K - 1 - k) * g[k] for k in range(K))
    np.testing.assert_allclose(x - y, closed, rtol=1e-12, atol=1e-14)
    # same mass as the effective step: with equal gradients, the move is eta_t * g
    x = y.copy()
    for _ in range(K):
        x = x - eta * (g[0] + lp * (x - y))
    np.testing.assert_allclose(x - y, -get("dfedcata.lem2").evaluate(eta=eta, lam_pen=lp, K=K) * g[0], rtol=1e-12)


def test_small_lemmas_against_hand():
    assert get("dfedcata.lem3").evaluate(eta=0.1, k_step=4, g2_sum=3.0) == pytest.approx(0.01 * 4 * 3.0)
    et = eta_t_hand(0.1, 0.05, 20)
    assert get("dfedcata.lem5").evaluate(beta=0.9, Delta0=2.0, eta=0.1, lam_pen=0.05, K=20, gbar2_sum=0.5) \
        == pytest.approx(0.9 * 2.0 / 0.1 + et**2 * 0.5 / 0.01)
    assert get("dfedcata.lem7").evaluate(sigma_l=2.0, grad2=3.0) == pytest.approx(7.0)
    assert get("dfedcata.lem10").evaluate(t0=10.0, K=5, U=2.0, S=100, G_lip=3.0, dist=0.5) == pytest.approx(1.0 + 1.5)
    assert get("dfedcata.lem11").evaluate(eta=0.1, L=2.0, delta_k=3.0) == pytest.approx(3.6)
    assert get("dfedcata.lem12").evaluate(eta=0.1, G_lip=2.0, delta_k=3.0) == pytest.approx(3.4)
    assert get("dfedcata.lem13").evaluate(beta=0.9, agg_gap=1.0, own_gap=2.0) == pytest.approx(1.9 + 1.8)
    assert get("dfedcata.lem14").evaluate(eta=0.1, L=2.0, S=10, G_lip=3.0, delta_k=1.0) \
        == pytest.approx(1 + 0.9 * 0.2 + 0.06)
    assert get("dfedcata.lem16").evaluate(kappa_lam=6.339, t_round=10) == pytest.approx(0.6339)


# card §5 table; 0.932 / 0.937 / 0.979 are rounded labels of the card's unrounded lambdas (see docs)
KAPPA_CARD = {0.0: 1.000, 0.3: 1.720, 0.5: 2.667, 0.641: 4.068, 0.656: 4.282, 0.75: 6.339, 0.9369: 32.30,
              0.9987: 2562.0}


@pytest.mark.parametrize("lam,kappa", sorted(KAPPA_CARD.items()))
def test_kappa_lambda_card_table(lam, kappa):
    assert kappa_lambda(lam) == pytest.approx(kappa, rel=2e-3)


def test_kappa_lambda_is_the_smallest_lemma16_constant_and_monotone():
    lam = 0.75
    kap = kappa_lambda(lam)
    a = 0.0
    for t in range(1, 2000):
        a = lam * a + 1 / t
        assert a <= kap / t + 1e-12  # Lemma 16 holds with this constant
    grid = [0.0, 0.2, 0.5, 0.7, 0.9, 0.95]
    vals = [kappa_lambda(x) for x in grid]
    assert all(b > a for a, b in zip(vals, vals[1:]))  # card §10.11: strictly increasing
    assert all(v >= 1 / (1 - x) - 1e-12 for x, v in zip(grid, vals))
    with pytest.raises(ValueError, match="lam"):
        kappa_lambda(1.0)


# ------------------------------------------------------------------------------------------- corollary


@pytest.mark.parametrize("beta", [0.0, 0.5, 0.9])
def test_cor1_against_hand(beta):
    p = dict(c=0.7, K=10, T=2000, L=1.5, m=50, sigma_l=1.2, f0_minus_fstar=3.0, beta=beta, G_het=0.4, Delta0=0.2)
    assert get("dfedcata.cor1").evaluate(**p) == pytest.approx(
        cor1_hand(0.7, 10, 2000, 1.5, 50, 1.2, 3.0, beta, 0.4, 0.2), rel=1e-12)
    assert get("dfedcata.cor1.consensus").evaluate(**p, Xi=0.01) == pytest.approx(
        cor1_hand(0.7, 10, 2000, 1.5, 50, 1.2, 3.0, beta, 0.4, 0.2, Xi=0.01), rel=1e-12)


def _parent_at_schedule(T, lam_pen=0.05, beta=0.5):
    c, K, L = 0.8, 10, 2.0
    eta = c / (L * K * math.sqrt(T))
    return thm1_hand(eta, K, T, L, 20, 1.0, 1.5, beta, lam_pen, 0.6, 0.3)


def test_cor1_is_the_leading_form_of_the_parent():
    cor = get("dfedcata.cor1")
    vals = dict(c=0.8, K=10, L=2.0, m=20, sigma_l=1.0, f0_minus_fstar=1.5, beta=0.5, G_het=0.6, Delta0=0.3)
    ratios = [_parent_at_schedule(T) / cor.evaluate(**vals, T=T) for T in (1e4, 1e8, 1e12)]
    assert abs(ratios[-1] - 1) < 1e-5 and abs(ratios[0] - 1) > abs(ratios[-1] - 1)
    # theta <= 1 makes the parent's optimization term larger at finite T: the ratio approaches 1 from above
    assert all(r > 1 for r in ratios)
    # exact in the lam_pen -> 0 limit
    assert _parent_at_schedule(1e4, lam_pen=1e-12) / cor.evaluate(**vals, T=1e4) == pytest.approx(1, rel=1e-9)


def test_cor1_term_by_term_limits_symbolic():
    cor, par = get("dfedcata.cor1"), get("dfedcata.thm1")
    sub = {par.symbols[k].symbol: v for k, v in cor.schedule.items()}
    T = par.symbols["T"].symbol
    for name in ("optimization", "noise"):
        assert sp.limit(par.terms[name].subs(sub) / cor.terms[name], T, sp.oo) == 1


def test_heterogeneity_enters_at_order_one_over_T():
    """Card §10.2: T d(bound)/d(G^2) -> 128 c^2 + 768 c^2 beta^4/(1-beta)^4 under the schedule."""
    cor = get("dfedcata.cor1")
    G, T, c, beta = (cor.symbols[k].symbol for k in ("G_het", "T", "c", "beta"))
    g2 = sp.Symbol("g2", positive=True)
    coef = sp.simplify(T * sp.diff(cor.bound.subs(G, sp.sqrt(g2)), g2))
    assert sp.simplify(coef - (128 * c**2 + 768 * c**2 * beta**4 / (1 - beta) ** 4)) == 0
    # the parent agrees numerically at large T: finite difference in G^2
    Tn = 1e10
    c_, K, L = 1.0, 10, 1.0
    eta = c_ / (L * K * math.sqrt(Tn))
    f = lambda Gh: thm1_hand(eta, K, Tn, L, 10, 1.0, 1.0, 0.5, 0.05, Gh, 0.0)  # noqa: E731
    slope = (f(2.0) - f(1.0)) / 3.0
    assert Tn * slope == pytest.approx(128 + 768 * 0.5**4 / 0.5**4, rel=1e-4)


def test_cor1_needs_huge_T_for_large_beta():
    """Card §10.5: T >= 32 beta^4/(1-beta)^4 = 2.1e5 at beta = 0.9 and 3.1e9 at beta = 0.99."""
    cor = get("dfedcata.cor1")
    for beta in (0.9, 0.99):
        hand = 32 * beta**4 / (1 - beta) ** 4
        got = cor.smallest("T", c=1, beta=beta, B_het=0, K=20, L=1, lam_pen=0.05)
        assert got == pytest.approx(math.ceil(hand), abs=1)
    assert 2.0e5 < 32 * 0.9**4 / 0.1**4 < 2.2e5 and 3.0e9 < 32 * 0.99**4 / 0.01**4 < 3.2e9


def test_cor1_bigO_shape():
    thm = get("dfedcata.cor1.bigO")
    assert thm.big_o and thm.parent == "dfedcata.thm1"
    v = thm.evaluate(T=100, L=1, m=10, sigma_l=1, f0_minus_fstar=1, beta=0.5, G_het=1)
    assert v == pytest.approx(0.5 / 10 + 1 / (0.5 * 10 * 10) + 2 / (0.5**4 * 100))
    assert get("dfedcata.rem1").evaluate(T=400) == pytest.approx(0.05)


# ------------------------------------------------------------------------------------------- Remark 1 claims


def test_remark1_beta_tightens_the_leading_term_but_not_the_full_bound():
    """Card §10.1: 8(1-beta)D/(eta_t T) decreases in beta; the whole bound has an interior minimizer."""
    thm = get("dfedcata.thm1")
    beta = thm.symbols["beta"].symbol
    lead = thm.terms["optimization"]
    assert sp.simplify(sp.diff(lead, beta) + lead / (1 - beta)) == 0  # d/dbeta = -lead/(1-beta) < 0
    p = dict(eta=1e-3, K=20, T=500, L=1.0, m=100, sigma_l=1.0, f0_minus_fstar=2.0, lam_pen=0.05, G_het=1.0,
             Delta0=0.0)
    betas = np.linspace(0, 0.99, 199)
    vals = thm.evaluate(**p, beta=betas)
    i = int(np.argmin(vals))
    assert 0 < i < len(betas) - 1  # interior minimum: not monotone in beta
    assert vals[-1] > vals[0]  # at beta = 0.99 the (1-beta)^-4 terms dominate


def test_remark1_K_has_an_interior_optimum():
    thm = get("dfedcata.thm1")
    p = dict(eta=1e-3, T=500, L=1.0, m=100, sigma_l=1.0, f0_minus_fstar=2.0, beta=0.5, lam_pen=0.05, G_het=1.0,
             Delta0=0.0)
    Ks = np.arange(1, 200)
    vals = thm.evaluate(**p, K=Ks)
    assert 0 < int(np.argmin(vals)) < len(Ks) - 1


def test_remark1_large_m_never_hurts():
    """Remark 1 says a large m slows convergence; in every reading here m only helps or is absent."""
    for thm_id in ("dfedcata.thm1", "dfedcata.thm1.consensus", "dfedcata.cor1"):
        thm = get(thm_id)
        m = thm.symbols["m"].symbol
        # m enters only through the noise term's 1/m: m * d(bound)/dm = -noise < 0
        assert sp.simplify(m * sp.diff(thm.bound, m) + thm.terms["noise"]) == 0
        assert thm.evaluate_terms(**{k: v for k, v in {**P1, **GOOD_COR, "Xi": 0.1}.items()
                                     if k in thm.required})["noise"] > 0
    assert "m" not in get("dfedcata.thm1.novr").required


def test_remark1_delta0_vanishes_and_no_spectral_term():
    thm = get("dfedcata.thm1")
    assert thm.evaluate_terms(**{**P1, "Delta0": 0.0})["initial_velocity"] == 0.0
    for thm_id in ("dfedcata.thm1", "dfedcata.cor1", "dfedcata.thm1.A"):
        assert "lam" not in get(thm_id).required  # card §10.3: no spectral term
    assert "Xi" in get("dfedcata.thm1.consensus").required


# ------------------------------------------------------------------------------------------- Nesterov readings


def _doubly_stochastic(m, rng):
    P = np.eye(m)
    W = sum(w * P[rng.permutation(m)] for w in (0.4, 0.3, 0.3))
    return (W + W.T) / 2


def test_reading_A_leaves_the_mean_unchanged():
    """Card §10.6: mean(((1+beta)W - beta I) X) = mean(X) for doubly stochastic W."""
    rng = np.random.default_rng(1)
    W = _doubly_stochastic(12, rng)
    X = rng.normal(size=(12, 5))
    for beta in (0.2, 0.9, 0.99):
        Y = ((1 + beta) * W - beta * np.eye(12)) @ X
        np.testing.assert_allclose(Y.mean(0), X.mean(0), atol=1e-12)


def test_reading_B_auxiliary_sequence_is_plain_sgd():
    """Card §10.7 / Lemma 6: p^{t+1} - p^t = -eta_t g_bar^t/(1-beta) for the consecutive reading."""
    rng = np.random.default_rng(2)
    beta, eta_t, d = 0.7, 0.3, 4
    xs = [np.zeros(d), np.zeros(d)]  # x_bar^{-1} = x_bar^0
    gs = rng.normal(size=(30, d))
    for g in gs:
        xs.append(xs[-1] + beta * (xs[-1] - xs[-2]) - eta_t * g)
    p = [xs[i] + beta / (1 - beta) * (xs[i] - xs[i - 1]) for i in range(1, len(xs))]
    for t in range(len(gs)):
        np.testing.assert_allclose(p[t + 1] - p[t], -eta_t / (1 - beta) * gs[t], atol=1e-12)


# ------------------------------------------------------------------------------------------- Theorem 2


def test_thm2_against_hand_and_t0_star():
    vals = dict(K=5, U=2.0, S=500, G_lip=1.3, Gamma_lam=3.0, L=1.0, T=500, c=0.3)
    hand = eps_gen_hand(0.3, 1.0, 500, 1.3, 3.0, 2.0, 500, 5)
    assert get("dfedcata.thm2").evaluate(**vals) == pytest.approx(hand, rel=1e-12)
    t0s = (2 * 0.3 * 1.3**2 * 3.0 * 500**0.3 / (5 * 2.0)) ** (1 / 1.3)
    assert float(T0_STAR.subs({get("dfedcata.thm2").symbols[k].symbol: v for k, v in vals.items()})) \
        == pytest.approx(t0s, rel=1e-12)
    t0 = get("dfedcata.thm2.t0")
    assert t0.evaluate(**vals, t0=t0s) == pytest.approx(hand, rel=1e-10)  # t0* attains eq. (3)
    assert t0.evaluate(**vals, t0=7.0) == pytest.approx(eps_t0_hand(7.0, 0.3, 1.0, 500, 1.3, 3.0, 2.0, 500, 5))
    grid = np.linspace(0.2 * t0s, 5 * t0s, 400)
    assert np.all(t0.evaluate(**vals, t0=grid) >= hand * (1 - 1e-12))  # and it is the minimum


def test_thm2_hardt_limit():
    """Card §10.10: Gamma = 1, K = 1, U = 1 gives Hardt et al. Thm 3.12 with n - 1 -> S."""
    thm = get("dfedcata.thm2")
    s = {k: thm.symbols[k].symbol for k in ("c", "L", "S", "G_lip", "T", "K", "U", "Gamma_lam")}
    c, L, S, G, T = s["c"], s["L"], s["S"], s["G_lip"], s["T"]
    hardt = (1 + 1 / (L * c)) / S * (2 * c * G**2) ** (1 / (L * c + 1)) * T ** (L * c / (L * c + 1))
    red = thm.bound.subs({s["Gamma_lam"]: 1, s["K"]: 1, s["U"]: 1})
    assert sp.simplify(red - hardt) == 0


def test_thm2_monotonicity():
    thm = get("dfedcata.thm2")
    base = dict(K=5, U=1.0, S=500, G_lip=1.0, Gamma_lam=2.0, L=1.0, T=500, c=0.3)
    for name, up in (("K", True), ("T", True), ("U", True), ("Gamma_lam", True), ("S", False)):
        lo, hi = thm.evaluate(**base), thm.evaluate(**{**base, name: base[name] * 2})
        assert (hi > lo) if up else (hi < lo), name


def test_thm2_placeholder_increases_with_lambda():
    """Card §10.11: every Gamma built from kappa_lambda grows with lambda, against Remark 2."""
    thm = get("dfedcata.thm2.placeholder")
    base = dict(K=5, U=1.0, S=500, G_lip=1.0, L=1.0, T=500, c=0.3)
    lams = [0.0, 0.3, 0.641, 0.75, 0.9369, 0.9987]
    vals = [thm.evaluate(**base, lam=x, kappa_lam=kappa_lambda(x)) for x in lams]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    assert thm.evaluate(**base, lam=0.0, kappa_lam=1.0) == pytest.approx(
        eps_gen_hand(0.3, 1.0, 500, 1.0, 2.0, 1.0, 500, 5))  # Gamma = 1 + (1 + 0)*1 = 2
    assert math.isinf(thm.evaluate(**base, lam=1.0, kappa_lam=1.0))


# ------------------------------------------------------------------------------------------- experiments


def test_experiment_settings_are_valid():
    for s in EXPERIMENTS:
        thm = get(s.theorem)
        assert set(s.values) <= set(thm.symbols), s.id
        assert s.paper == "dfedcata" and s.free == ("L",)


def _violated_for(setting_id, text_prefix, **constants):
    s = next(x for x in EXPERIMENTS if x.id == setting_id)
    return next(v for v in violations(s, "L", **constants) if v["text"].startswith(text_prefix))


def test_paper_settings_violate_the_conditions():
    """Card §10.4: at eta = 0.1, K = 20, beta = 0.9: C2 needs L <= 0.177 and C4 needs L <= 0.026."""
    c2 = _violated_for("dfedcata.exp.cifar10", "C2")
    assert c2["violated_for"] == "L in (0.1768, inf)"
    assert 1 / (2 * math.sqrt(2) * 0.1 * 20) == pytest.approx(0.17678, rel=1e-4)
    c4 = _violated_for("dfedcata.exp.cifar10", "C4")
    assert c4["violated_for"] == "L in (0.02621, inf)"
    assert 0.1 / (2 * eta_t_hand(0.1, 0.05, 20)) == pytest.approx(0.026208, rel=1e-4)
    # reading A (the code's): C4 at beta = 0 is ten times looser
    assert _violated_for("dfedcata.exp.cifar10.A", "C4")["violated_for"] == "L in (0.2621, inf)"
    # C3 needs B_het; with B = 1 it bounds L by 1/(8 eta K B) = 0.0625
    assert _violated_for("dfedcata.exp.cifar10", "C3", B_het=1)["violated_for"] == "L in (0.0625, inf)"
    assert _violated_for("dfedcata.exp.cifar10", "C3")["holds"] is None
    # the corollary at T = 500 is outside its validity region for every L at beta = 0.9
    c5 = _violated_for("dfedcata.exp.cor1.beta0.9", "C5")
    assert c5["holds"] is False and c5["violated_for"] == "all L"
    # Theorem 2 with c matched to the first lr (c = 2): L <= 1/(2 sqrt2 * 2)
    assert _violated_for("dfedcata.exp.thm2", "eta_{1,0}")["violated_for"] == "L in (0.1768, inf)"
