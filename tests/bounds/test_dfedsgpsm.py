"""DFedSGPSM bounds (card dfedsgpsm.md): formulas against hand computations from the LaTeX, conditions, and the
card's testable claims (section 10) that can be checked on the formulas."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dfltheory.bounds import DomainError, get, ids
from dfltheory.papers.dfedsgpsm import theorems as M
from dfltheory.bounds.settings import violations

S = M.S
P = dict(eta=0.001, K=5, T=100, L=2.0, rho=0.05, sigma_l=0.5, sigma_g=0.3, B=1.5, alpha=0.6, C=2.0, q=0.4,
         delta=0.5, f0_minus_fstar=3.0, x0_sq_mean=4.0)


def at(alpha, K):
    """alpha_tilde by its definition, sum_{k=1}^K sum_{s=1}^k alpha^(k-s) (seed L361)."""
    return sum(alpha ** (k - s) for k in range(1, K + 1) for s in range(1, k + 1))


def thm1_hand(p, first="printed", c1="paper", dpow=1, weight="K"):
    """Theorem 1 (seed L132-136) from the LaTeX, with the card 6.6 readings as switches."""
    e, K, T, L, r, sl, sg, B, a, C, q, d, F, x0 = (p[k] for k in ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g",
                                                                  "B", "alpha", "C", "q", "delta",
                                                                  "f0_minus_fstar", "x0_sq_mean"))
    kk = 8 * K if c1 == "paper" else 8 * K * K
    ks = 64 * K if c1 == "paper" else 64 * K * K
    C1 = kk * sl**2 + 64 * K**2 * sg**2 + 32 * K**2 * a**2 / (1 - a) ** 2 * (sl**2 + B**2) + ks * L**2 * r**2
    w = K / (1 - a) if weight == "K" else at(a, K)
    t1 = {"printed": 2 * (1 - a) * F / (T * e * K), "corrected": 2 * F / (T * e * K),
          "alpha_tilde": 2 * F / (T * at(a, K) * e)}[first]
    return (t1 + L * e * w * sl**2 + 3 * e**2 * L**2 / d**dpow * (C1 + 64 * K**2 * B**2)
            + 6 * L**2 * C**2 / (T * (1 - q**2)) * x0 + 6 * L**2 * e**2 * w**2 * C**2 * (B**2 + sl**2) / (1 - q) ** 2
            + 3 * L**2 * r**2)


# ------------------------------------------------------------------------------------------ catalog
def test_registered_ids_and_provenance():
    expected = {"dfedsgpsm.thm1": "SEED", "dfedsgpsm.thm1.corrected": "CORRECTED",
                "dfedsgpsm.thm1.consistent": "CORRECTED", "dfedsgpsm.thm1.alpha_tilde": "SEED",
                "dfedsgpsm.cor1": "SEED", "dfedsgpsm.cor1.exact": "DERIVED", "dfedsgpsm.cor1.corrected": "CORRECTED",
                "dfedsgpsm.cor1.consistent": "CORRECTED", "dfedsgpsm.cor1.abstract": "SEED",
                "dfedsgpsm.lem1": "DERIVED", "dfedsgpsm.lem2": "SEED", "dfedsgpsm.lem3": "SEED",
                "dfedsgpsm.lem3.proof": "CORRECTED", "dfedsgpsm.lem4": "SEED", "dfedsgpsm.lem5": "RECONSTRUCTED",
                "dfedsgpsm.rem1": "SEED", "dfedsgpsm.rem1.sgp": "INTERP"}
    assert set(ids("dfedsgpsm")) == set(expected)
    for i, tag in expected.items():
        thm = get(i)
        assert thm.source.tag == tag and thm.source.seed == M.SEED and thm.source.lines
        assert (thm.variant == "printed") == (thm.variant_of is None)
        for cond in thm.conditions:
            assert cond.source is not None and cond.source.lines
    for i in ("dfedsgpsm.cor1", "dfedsgpsm.cor1.corrected", "dfedsgpsm.cor1.consistent", "dfedsgpsm.cor1.abstract"):
        assert get(i).big_o and set(get(i).schedule) == {"eta", "rho"}
    assert get("dfedsgpsm.cor1.corrected").parent == "dfedsgpsm.thm1.corrected"
    assert get("dfedsgpsm.cor1.consistent").parent == "dfedsgpsm.thm1.consistent"
    assert not get("dfedsgpsm.cor1.exact").big_o


# ------------------------------------------------------------------------------------------ formulas
@pytest.mark.parametrize("tid, kw", [
    ("dfedsgpsm.thm1", {}),
    ("dfedsgpsm.thm1.corrected", {"first": "corrected"}),
    ("dfedsgpsm.thm1.consistent", {"first": "corrected", "c1": "proof", "dpow": 2}),
    ("dfedsgpsm.thm1.alpha_tilde", {"first": "alpha_tilde", "weight": "alpha_tilde"}),
])
def test_theorem1_readings_against_hand_values(tid, kw):
    assert get(tid).evaluate(**P) == pytest.approx(thm1_hand(P, **kw), rel=1e-12)


def test_theorem1_printed_value_and_terms_by_hand():
    # 2(0.4)(3)/(100*0.001*5)=4.8; 2*0.001*5*0.25/0.4=0.00625; C1=40*.25+1600*.09+800*.36/.16*2.5+320*4*.0025
    c1 = 10 + 144 + 4500 + 3.2
    terms = get("dfedsgpsm.thm1").evaluate_terms(**P)
    assert terms["optimization"] == pytest.approx(4.8)
    assert terms["noise"] == pytest.approx(0.00625)
    assert terms["drift"] == pytest.approx(3e-6 * 4 / 0.5 * (c1 + 1600 * 2.25))
    assert terms["consensus_init"] == pytest.approx(6 * 4 * 4 / (100 * 0.84) * 4)
    assert terms["consensus"] == pytest.approx(6 * 4 * 1e-6 * 25 * 4 * 2.5 / (0.16 * 0.36))
    assert terms["sam"] == pytest.approx(3 * 4 * 0.0025)
    assert get("dfedsgpsm.thm1").dominant_term(**P)[0] == "optimization"


def test_corollary1_stated_rate_by_hand():
    e, K, T, L, sl, sg, B, a, C, q, d, F, x0 = (P[k] for k in ("eta", "K", "T", "L", "sigma_l", "sigma_g", "B",
                                                              "alpha", "C", "q", "delta", "f0_minus_fstar",
                                                              "x0_sq_mean"))
    c2 = sl**2 / K + sg**2 + a**2 / (1 - a) ** 2 * (sl**2 + B**2) + 1 / (T * K)
    rest = (sl**2 / (math.sqrt(T) * (1 - a)) + L**2 * C**2 / (T * (1 - q**2)) * x0
            + C**2 * (B**2 + sl**2) / (T * (1 - a) ** 2 * (1 - q) ** 2) + 1 / T)
    vals = {k: v for k, v in P.items() if k not in ("eta", "rho")}
    assert get("dfedsgpsm.cor1").evaluate(**vals) == pytest.approx(L * (1 - a) * F / 10 + c2 / (T * d) + rest)
    assert get("dfedsgpsm.cor1.corrected").evaluate(**vals) == pytest.approx(L * F / 10 + (c2 + B**2) / (T * d) + rest)
    c2c = sl**2 + sg**2 + a**2 / (1 - a) ** 2 * (sl**2 + B**2) + B**2 + 1 / T
    assert get("dfedsgpsm.cor1.consistent").evaluate(**vals) == pytest.approx(L * F / 10 + c2c / (T * d * d) + rest)
    assert get("dfedsgpsm.cor1.abstract").evaluate(T=400) == pytest.approx(0.05)


def test_lemmas_against_hand_values():
    e, K, L, r, sl, sg, B, a, C, q, d = (P[k] for k in ("eta", "K", "L", "rho", "sigma_l", "sigma_g", "B",
                                                        "alpha", "C", "q", "delta"))
    assert get("dfedsgpsm.lem1").evaluate(alpha=0.9, K=20) == pytest.approx(at(0.9, 20), rel=1e-12)
    assert get("dfedsgpsm.lem1").evaluate(**get("dfedsgpsm.lem1").reference) == pytest.approx(
        get("dfedsgpsm.lem1").reference_value, rel=1e-8)
    assert get("dfedsgpsm.lem2").evaluate(eta=e, sigma_l=sl, B=B, alpha=a) == pytest.approx(
        (2 * e**2 * sl**2 + 2 * e**2 * B**2) / (1 - a) ** 2)
    G = 0.7
    base = 64 * K**2 * sg**2 + 32 * K**2 * a**2 / (1 - a) ** 2 * (sl**2 + B**2)
    lem3 = dict(eta=e, K=K, L=L, rho=r, sigma_l=sl, sigma_g=sg, B=B, alpha=a, grad_z_sq_mean=G)
    assert get("dfedsgpsm.lem3").evaluate(**lem3) == pytest.approx(
        (8 * K * sl**2 + base + 64 * K * L**2 * r**2) * e**2 + 64 * K**2 * e**2 * G)
    assert get("dfedsgpsm.lem3.proof").evaluate(**lem3) == pytest.approx(
        (8 * K**2 * sl**2 + base + 64 * K**2 * L**2 * r**2) * e**2 + 64 * K**2 * e**2 * G)
    A = at(a, K)
    assert get("dfedsgpsm.lem4").evaluate(eta=e, K=K, alpha=a, B=B, sigma_l=sl, C=C, q=q, t=3, x0i_sq=2.0) == \
        pytest.approx(2 * C**2 * q**6 * 2.0 + 2 * e**2 * A**2 * C**2 * (B**2 + sl**2) / (1 - q) ** 2)
    C1 = 8 * K * sl**2 + base + 64 * K * L**2 * r**2
    x0 = P["x0_sq_mean"]
    hand5 = (L * e**2 * A**2 * sl**2 / 2 + 3 * A * e**3 * L**2 / (2 * d) * (C1 + 64 * K**2 * B**2)
             + 3 * L**2 * C**2 * q**4 * e * A * x0 + 3 * L**2 * e**3 * A**3 * C**2 * (B**2 + sl**2) / (1 - q) ** 2
             + 1.5 * A * e * L**2 * r**2)
    lem5 = {k: v for k, v in P.items() if k not in ("T", "f0_minus_fstar")}
    assert get("dfedsgpsm.lem5").evaluate(t=2, **lem5) == pytest.approx(hand5, rel=1e-12)


def test_remark1_q_by_hand_and_monotone_in_delta_window():
    rem = get("dfedsgpsm.rem1")
    assert rem.evaluate(a=0.5, Delta=2, Bw=3) == pytest.approx((1 - 0.5**6) ** (1 / 7))
    qs = [rem.evaluate(a=0.3, Delta=d, Bw=b) for d, b in [(1, 1), (2, 1), (3, 1), (2, 2), (4, 2)]]
    assert all(x < y for x, y in zip(qs, qs[1:]))                                   # card 10-15
    sgp = get("dfedsgpsm.rem1.sgp")
    assert sgp.evaluate(n=100, D=11, Delta=4, Bw=1) == pytest.approx((1 - 100 / 11**4) ** 0.2)
    assert sgp.evaluate(n=100, D=11, Delta=4, Bw=1) == pytest.approx(0.9986, abs=1e-4)   # card 5.3
    assert sgp.evaluate(n=100, D=11, Delta=4, Bw=2) > 1 - 1e-7
    assert sgp.check(n=100, D=11, Delta=4, Bw=1).ok
    assert sgp.conditions[0].margin_at(dict(n=100, D=11, Delta=1, Bw=1))[0] < 0   # 100/11 > 1: q void
    with pytest.raises(DomainError, match="not defined"):
        sgp.evaluate(n=100, D=11, Delta=1, Bw=1)


# ------------------------------------------------------------------------------------------ conditions
def _verdicts(tid, **values):
    return {v.text.split(":")[0].split(" (")[0]: v.holds for v in get(tid).check(**values).conditions}


def test_theorem1_conditions_hold_and_fail():
    good = dict(P, eta=0.001, K=5, L=2.0, delta=0.5)           # delta/(8LK) = 0.00625
    assert get("dfedsgpsm.thm1").check(**good).ok
    v = _verdicts("dfedsgpsm.thm1", **dict(good, eta=0.01))     # 0.00625 < 0.01 < 1/(KL) = 0.1, L eta at = 0.044
    assert v["0 < eta_l < delta/(8 L K)"] is False and v["eta_l < 1/(K L), assumed in the descent step"] is True
    assert v["L eta alpha_tilde < 1"] is True
    v = _verdicts("dfedsgpsm.thm1", **dict(good, eta=0.2))
    assert v["eta_l < 1/(K L), assumed in the descent step"] is False and v["L eta alpha_tilde < 1"] is False
    assert _verdicts("dfedsgpsm.thm1", **dict(good, K=1, eta=1e-4))["K >= 2"] is False
    assert _verdicts("dfedsgpsm.thm1", **dict(good, alpha=0.0))["0 < alpha"] is False
    check = get("dfedsgpsm.thm1").check(**dict(good, q=1.0))
    assert check.value == math.inf and check.infinite_reason and [c.holds for c in check.conditions][-1] is False
    with pytest.raises(DomainError, match="alpha"):
        get("dfedsgpsm.thm1").evaluate(**dict(good, alpha=1.0))


def test_descent_condition_not_implied_by_papers_step_size():
    """Card 10-10: eta < 1/(KL) does not give L eta alpha_tilde < 1 for alpha > 0; eta < delta/(8LK) does when
    alpha < 1 - delta/8."""
    K, L = 20, 1.0
    v = _verdicts("dfedsgpsm.thm1", **dict(P, K=K, L=L, alpha=0.9, eta=0.9 / (K * L), delta=1.0))
    assert v["eta_l < 1/(K L), assumed in the descent step"] is True and v["L eta alpha_tilde < 1"] is False
    assert L * 0.9 / (K * L) * at(0.9, K) == pytest.approx(5.44, abs=0.01)
    rng = np.random.default_rng(0)
    for _ in range(200):
        d, K, a = rng.uniform(0.01, 1), int(rng.integers(2, 60)), rng.uniform(0, 0.999)
        eta = rng.uniform(0, 1) * d / (8 * L * K)
        if a < 1 - d / 8:
            assert L * eta * at(a, K) < 1


def test_lemma_corollary_remark_conditions():
    lem3 = dict(eta=0.001, K=5, L=2.0, rho=0.05, sigma_l=0.5, sigma_g=0.3, B=1.5, alpha=0.6, grad_z_sq_mean=1.0,
                delta=0.5)
    assert get("dfedsgpsm.lem3").check(**lem3).ok
    assert not get("dfedsgpsm.lem3").check(**dict(lem3, delta=0.05)).ok             # 0.001 > 0.05/80
    assert get("dfedsgpsm.lem2").check(eta=0.1, sigma_l=1, B=1, alpha=0.5).ok
    assert not get("dfedsgpsm.lem2").check(eta=0.1, sigma_l=1, B=1, alpha=0.0).ok
    lem4 = dict(eta=0.1, K=3, alpha=0.5, B=1, sigma_l=1, C=1, t=1, x0i_sq=1)
    assert get("dfedsgpsm.lem4").check(q=0.9, **lem4).ok and not get("dfedsgpsm.lem4").check(q=1.0, **lem4).ok
    assert get("dfedsgpsm.rem1").check(a=0.5, Delta=1, Bw=1).ok
    cor = {k: v for k, v in P.items() if k not in ("eta", "rho")}
    v = _verdicts("dfedsgpsm.cor1", **dict(cor, c=1.0, delta=0.125, T=4097, alpha=0.5))
    assert v["T > 64 c^2/delta^2"] is True
    v = _verdicts("dfedsgpsm.cor1", **dict(cor, c=1.0, delta=0.125, T=4096, alpha=0.5))
    assert v["T > 64 c^2/delta^2"] is False                                       # 64/0.125^2 = 4096
    assert get("dfedsgpsm.cor1").smallest("T", c=1.0, delta=0.125, K=20, alpha=0.9) == 4097  # 64/0.125^2 = 4096
    # delta = 0.1 is the float 0.1000000000000000055..., for which 64/delta^2 = 6399.99999999999929: T = 6400 holds
    assert get("dfedsgpsm.cor1").smallest("T", c=1.0, delta=0.1, K=20, alpha=0.9) == 6400
    v = _verdicts("dfedsgpsm.cor1", **dict(cor, c=1.0, delta=1.0, T=36, K=20, alpha=0.9))
    assert v["c/sqrt(T) < 1"] is True and v["c alpha_tilde/(K sqrt(T)) < 1"] is False   # 120.94/(20*6) > 1
    assert v["T > 64 c^2/delta^2"] is False
    v = _verdicts("dfedsgpsm.cor1", **dict(cor, c=1.0, delta=1.0, T=37, K=20, alpha=0.9))
    assert v["c alpha_tilde/(K sqrt(T)) < 1"] is True                                   # (120.94/20)^2 = 36.6
    assert get("dfedsgpsm.cor1").smallest("T", c=1.0, delta=1.0, K=20, alpha=0.9) == 65


def test_lemma3_arithmetic_claims():
    """Card 10-11: the two inequalities the Lemma 3 proof rests on, for K = 2..2000."""
    for K in range(2, 2001):
        assert 1 / (2 * K - 1) + 1 / (4 * K) <= 1 / (K - 1)
        assert (1 + 1 / (K - 1)) ** K <= 5
    diff = sp.simplify(get("dfedsgpsm.lem3.proof").bound - get("dfedsgpsm.lem3").bound)
    K, e, sl, L, r = S["K"], S["eta"], S["sigma_l"], S["L"], S["rho"]
    assert sp.simplify(diff - (8 * K**2 - 8 * K) * e**2 * sl**2 - 64 * (K**2 - K) * L**2 * r**2 * e**2) == 0


# ------------------------------------------------------------------------------------------ card claims
@settings(max_examples=60, deadline=None)
@given(st.floats(0.0, 0.99), st.integers(1, 60))
def test_alpha_tilde_closed_form_and_bounds(a, K):
    """Card 10-2: alpha_tilde (closed form) equals the double sum and K <= alpha_tilde < K/(1-alpha)."""
    val = get("dfedsgpsm.lem1").evaluate(alpha=a, K=K)
    assert val == pytest.approx(at(a, K), rel=1e-9)
    assert K * (1 - 1e-12) <= val <= K / (1 - a) * (1 + 1e-12)
    if a > 1e-3 and K >= 2:
        assert K < val < K / (1 - a)


def test_lemma1_identity_on_simulated_momentum():
    """Card 10-1: Algorithm 1 lines 3-13 with arbitrary gradients equals the closed form of eq. (4)."""
    rng = np.random.default_rng(1)
    K, a, e = 7, 0.8, 0.05
    g = rng.normal(size=(K, 4))
    x, v = np.zeros(4), np.zeros(4)
    for k in range(K):
        v = a * v + g[k]
        x = x - e * v
    closed = -e * sum(a ** (k - s) * g[s - 1] for k in range(1, K + 1) for s in range(1, k + 1))
    weights = -e * sum(g[s - 1] * (1 - a ** (K - s + 1)) / (1 - a) for s in range(1, K + 1))
    assert np.allclose(x, closed, atol=1e-13) and np.allclose(x, weights, atol=1e-13)
    assert sum((1 - a ** (K - s + 1)) / (1 - a) for s in range(1, K + 1)) == pytest.approx(
        get("dfedsgpsm.lem1").evaluate(alpha=a, K=K))


def test_printed_first_term_is_below_what_the_proof_gives():
    """Card 10-2 / 11-1: for alpha in (0, 1) the printed 2(1-alpha)F/(T eta K) < 2F/(T alpha_tilde eta) <= 2F/(T eta K),
    i.e. the last step of the proof lowers the bound; the three readings agree at alpha = 0."""
    for a in (0.05, 0.3, 0.6, 0.9, 0.99):
        p = dict(P, alpha=a)
        printed = get("dfedsgpsm.thm1").evaluate_terms(**p)["optimization"]
        tilde = get("dfedsgpsm.thm1.alpha_tilde").evaluate_terms(**p)["optimization"]
        fixed = get("dfedsgpsm.thm1.corrected").evaluate_terms(**p)["optimization"]
        assert printed < tilde <= fixed
        assert get("dfedsgpsm.thm1.alpha_tilde").evaluate(**p) <= get("dfedsgpsm.thm1.corrected").evaluate(**p)
    p0 = dict(P, alpha=0.0)
    assert get("dfedsgpsm.thm1").evaluate(**p0) == pytest.approx(get("dfedsgpsm.thm1.corrected").evaluate(**p0))
    assert get("dfedsgpsm.thm1").evaluate(**p0) == pytest.approx(get("dfedsgpsm.thm1.alpha_tilde").evaluate(**p0))


def test_theorem1_monotonicity_signs():
    """Card 10-3: dC > 0, dq > 0, ddelta < 0, drho > 0, dsigma's, dB, dx0 > 0, dT < 0 on random positive samples."""
    bound = get("dfedsgpsm.thm1").bound
    signs = {"C": 1, "q": 1, "delta": -1, "rho": 1, "sigma_l": 1, "sigma_g": 1, "B": 1, "x0_sq_mean": 1, "T": -1}
    args = [S[n] for n in M.BOUND_VARS]
    rng = np.random.default_rng(2)
    grads = {n: sp.lambdify(args, sp.diff(bound, S[n])) for n in signs}
    for _ in range(50):
        vals = dict(zip(M.BOUND_VARS, rng.uniform(0.01, 3, len(args))))
        vals.update(alpha=rng.uniform(0, 0.95), q=rng.uniform(0, 0.95), delta=rng.uniform(0.01, 1),
                    K=int(rng.integers(2, 30)), T=int(rng.integers(1, 1000)))
        for n, sgn in signs.items():
            assert sgn * grads[n](*[vals[k] for k in M.BOUND_VARS]) > 0, n


def test_momentum_in_the_bound():
    """Card 10-4: printed bound has an interior minimiser in alpha (first term decreases, others increase); in the
    corrected reading every term is non-decreasing in alpha, so no benefit from momentum at fixed eta."""
    alphas = np.linspace(0.0, 0.99, 100)
    p = dict(P, eta=1e-4, T=200, C=0.5, q=0.2)
    printed = get("dfedsgpsm.thm1").evaluate(**dict(p, alpha=alphas))
    i = int(np.argmin(printed))
    assert 0 < i < len(alphas) - 1
    t_printed = {n: sp.diff(e, S["alpha"]) for n, e in get("dfedsgpsm.thm1").terms.items()}
    t_fixed = {n: sp.diff(e, S["alpha"]) for n, e in get("dfedsgpsm.thm1.corrected").terms.items()}
    assert sp.simplify(t_printed["optimization"]) == -2 * S["f0_minus_fstar"] / (S["T"] * S["eta"] * S["K"])
    subs = {S[k]: v for k, v in P.items() if k != "alpha"}
    for a in (0.1, 0.5, 0.9):
        for n, d in t_fixed.items():
            assert float(d.subs(subs).subs(S["alpha"], a)) >= 0, n
    corrected = get("dfedsgpsm.thm1.corrected").evaluate(**dict(p, alpha=alphas))
    assert np.all(np.diff(corrected) >= 0)
    tilde = get("dfedsgpsm.thm1.alpha_tilde").evaluate(**dict(p, alpha=alphas))   # exact alpha_tilde: benefit kept
    assert 0 < int(np.argmin(tilde)) < len(alphas) - 1 and tilde.min() < tilde[0]


def test_non_vanishing_floor_as_T_grows():
    """Card 10-5: T -> oo leaves noise + drift + consensus + 3 L^2 rho^2; with rho = 0.1 the SAM floor is 0.03 L^2."""
    thm = get("dfedsgpsm.thm1")
    floor = sp.limit(thm.bound, S["T"], sp.oo)
    expected = sum(thm.terms[k] for k in ("noise", "drift", "consensus", "sam"))
    assert sp.simplify(floor - expected) == 0
    assert float(thm.terms["sam"].subs({S["rho"]: sp.Rational(1, 10), S["L"]: 1})) == pytest.approx(0.03)


CARD_COR1_EXACT = "(2*L*(1-alpha)*f0_minus_fstar/(c*sqrt(T)) + c*sigma_l**2/((1-alpha)*sqrt(T)) \
  + 3*c**2/(T*delta)*(8*sigma_l**2/K + 64*sigma_g**2 + 32*alpha**2/(1-alpha)**2*(sigma_l**2 + B**2) \
                          + 64*r**2/(K*T) + 64*B**2) \
  + 6*L**2*C**2/(T*(1-q**2))*x0_sq_mean + 6*c**2*C**2*(B**2 + sigma_l**2)/(T*(1-alpha)**2*(1-q)**2) \
  + 3*r**2/T)"


def test_corollary1_exact_substitution_and_rate():
    """Card 10-6, 10-7: schedule into Theorem 1 gives the card's cor1_exact, Theta(T^-1/2) with limit
    2L(1-alpha)F/c + c sigma_l^2/(1-alpha); topology terms are O(1/T); C_2 misses 192 c^2 B^2/(T delta)."""
    exact = get("dfedsgpsm.cor1.exact").bound
    card = sp.sympify(CARD_COR1_EXACT, locals={k: v for k, v in S.items()})
    assert sp.simplify(exact - card) == 0
    cor = get("dfedsgpsm.cor1")
    sub = get(cor.parent).bound.subs({S[k]: v for k, v in cor.schedule.items()})
    assert sp.simplify(sub - exact) == 0
    a, L, F, c, sl = S["alpha"], S["L"], S["f0_minus_fstar"], S["c"], S["sigma_l"]
    lim = sp.limit(sp.sqrt(S["T"]) * exact, S["T"], sp.oo)
    assert sp.simplify(lim - (2 * L * (1 - a) * F / c + c * sl**2 / (1 - a))) == 0
    for name in ("consensus_init", "consensus", "drift"):
        term = get("dfedsgpsm.cor1.exact").terms[name]
        lim_t = sp.limit(S["T"] * term, S["T"], sp.oo)
        assert S["T"] not in lim_t.free_symbols and not lim_t.has(sp.oo) and lim_t != 0
    drift = get("dfedsgpsm.cor1.exact").terms["drift"] * S["T"] * S["delta"]
    b2 = sp.diff(drift, S["B"], 2) / 2                        # coefficient of B^2 in the 1/(T delta) group
    assert sp.simplify(b2 - 3 * c**2 * (32 * a**2 / (1 - a) ** 2 + 64)) == 0     # the 192 c^2 B^2 C_2 drops
    c2_b = sp.expand(M.C2_PAPER).coeff(S["B"], 2)
    assert sp.simplify(c2_b - S["alpha"] ** 2 / (1 - S["alpha"]) ** 2) == 0      # B^2 only via the momentum part
    # Remark 2: the SAM piece of the drift is 192 c^2 r^2/(K T^2 delta), i.e. O(1/(T^2 K delta))
    assert sp.simplify(sp.diff(drift, S["r"], 2) / 2 - 192 * c**2 / (S["K"] * S["T"])) == 0


def test_asyng_reduction():
    """Card 6.7(e) / 10-18: rho = 0, alpha = 0 in Theorem 1 gives the AsyNG-like bound; all readings with the
    printed constants coincide there; the special case violates Lemma 2's 0 < alpha."""
    e, K, T, L, sl, sg, B, C, q, d, F, x0 = (S[k] for k in ("eta", "K", "T", "L", "sigma_l", "sigma_g", "B", "C", "q",
                                                           "delta", "f0_minus_fstar", "x0_sq_mean"))
    card = (2 * F / (T * e * K) + L * e * K * sl**2 + 3 * e**2 * L**2 * (8 * K * sl**2 + 64 * K**2 * sg**2
            + 64 * K**2 * B**2) / d + 6 * L**2 * C**2 * x0 / (T * (1 - q**2))
            + 6 * L**2 * e**2 * K**2 * C**2 * (B**2 + sl**2) / (1 - q) ** 2)
    zero = {S["rho"]: 0, S["alpha"]: 0}
    for tid in ("dfedsgpsm.thm1", "dfedsgpsm.thm1.corrected", "dfedsgpsm.thm1.alpha_tilde"):
        assert sp.simplify(get(tid).bound.subs(zero) - card) == 0, tid
    assert sp.simplify(get("dfedsgpsm.thm1.consistent").bound.subs(zero) - card) != 0
    # rho = 0 (plain SGD) is inside COMMON['rho']'s domain, so the special case also evaluates numerically
    num = get("dfedsgpsm.thm1").evaluate(**dict(P, rho=0.0, alpha=0.0))
    subs = {S[k]: v for k, v in dict(P, rho=0.0, alpha=0.0).items() if k in S}
    assert num == pytest.approx(float(card.subs(subs)), rel=1e-10)


def test_lemma5_sums_to_the_alpha_tilde_bound():
    """Lemma 5 summed over t = 0..T-1, times 2/(T alpha_tilde eta), plus 2F/(T alpha_tilde eta) is the proof's
    display L425-427 up to the q^(2T) tail dropped by sum_t q^(2t) <= 1/(1 - q^2)."""
    T = 7
    p = dict(P, T=T)
    lem5 = get("dfedsgpsm.lem5")
    lvals = {k: v for k, v in p.items() if k not in ("T", "f0_minus_fstar")}
    A = at(p["alpha"], p["K"])
    total = sum(lem5.evaluate(t=t, **lvals) for t in range(T)) * 2 / (T * A * p["eta"])
    total += 2 * p["f0_minus_fstar"] / (T * A * p["eta"])
    tail = 6 * p["L"] ** 2 * p["C"] ** 2 * p["x0_sq_mean"] * p["q"] ** (2 * T) / (T * (1 - p["q"] ** 2))
    assert total == pytest.approx(get("dfedsgpsm.thm1.alpha_tilde").evaluate(**p) - tail, rel=1e-12)


def test_lemma4_decays_to_plateau():
    lem4 = get("dfedsgpsm.lem4")
    vals = dict(eta=0.01, K=5, alpha=0.5, B=1, sigma_l=1, C=2, q=0.6, x0i_sq=3)
    seq = lem4.evaluate(t=np.arange(0, 40), **vals)
    assert np.all(np.diff(seq) < 0)
    assert seq[-1] == pytest.approx(lem4.evaluate_terms(t=0, **vals)["steps"], rel=1e-6)


# ------------------------------------------------------------------------------------------ experiments
def test_experiment_settings_violate_the_step_size_conditions():
    """Card 10-8, 11-25: with eta = 0.1, K = 20 the paper's lr condition needs L < delta/16 (< 1/16 for every
    topology, < 0.00625 at the empirical delta = 0.1)."""
    exp = {s.id: s for s in M.EXPERIMENTS}
    assert all(get(s.theorem) is get("dfedsgpsm.thm1") for s in M.EXPERIMENTS)
    rows = {r["text"].split(":")[0].split(" (")[0]: r for r in violations(exp["dfedsgpsm.exp.cifar10"], "L")}
    assert rows["0 < eta_l < delta/(8 L K)"]["violated_for"] == "L in [0.0625, inf)"
    assert rows["eta_l < 1/(K L), assumed in the descent step"]["violated_for"] == "L in [0.5, inf)"
    assert rows["L eta alpha_tilde < 1"]["violated_for"] == f"L in [{1 / (0.1 * at(0.9, 20)):.4g}, inf)"
    assert rows["K >= 2"]["holds"] is True and rows["q in [0, 1)"]["missing"] == ["q"]
    rows = {r["text"][:10]: r for r in violations(exp["dfedsgpsm.exp.cifar10"], "L", delta=0.1)}
    assert rows["0 < eta_l "]["violated_for"] == "L in [0.00625, inf)"
    cifar100 = {r["text"][:10]: r for r in violations(exp["dfedsgpsm.exp.cifar100"], "L")}
    assert cifar100["L eta alph"]["violated_for"] == f"L in [{1 / (0.1 * at(0.1, 20)):.4g}, inf)"
    check = exp["dfedsgpsm.exp.cifar10"].check(L=1.0, sigma_l=1, sigma_g=1, B=1, C=1, q=0.5, f0_minus_fstar=2.3,
                                               x0_sq_mean=1)
    assert not check.ok and len(check.violated) == 3
