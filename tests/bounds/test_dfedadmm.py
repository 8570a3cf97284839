"""DFedADMM / DFedADMM-SAM bounds (seed 004, card dfedadmm.md): formulas against hand computations from the
LaTeX, each condition's verdict on both sides, and the card's testable claims (§10)."""

import functools
import math

import numpy as np
import pytest
import sympy as sp

from dfltheory.bounds import get, ids
from dfltheory.papers.dfedadmm import theorems as M
from dfltheory.bounds.settings import violations

# A point where every condition of Theorem 1 holds: eta <= 1/(96 K L) = 0.00208, K >= lam/eta = 4, eta <= lam.
P = dict(eta=1e-3, K=5, T=1000, L=1.0, rho=0.1, sigma_l=1.0, sigma_g=0.5, B=2.0, psi=0.9, lam_pen=0.004,
         f0_minus_fstar=2.3)


def thm1_by_hand(eta, K, T, L, rho, sigma_l, sigma_g, B, psi, lam_pen, f0_minus_fstar, sam="printed"):
    """Theorem 1 (seed L155) term by term, in plain floats."""
    lam, D = lam_pen, f0_minus_fstar
    kappa = 0.5 - 1152 * L**2 * eta**2 * K**2
    s = sigma_l**2 + B**2
    terms = [
        D / (lam * kappa * T),
        96 * L**2 * eta**2 * K**2 / kappa * (3 * sigma_g**2 + 2 * sigma_l**2 + B**2),
        3 * lam**2 * L**2 * (1 + 384 * L**2 * eta**2 * K**2) / kappa * s,
        L * lam / (2 * kappa) * s,
        96 * eta**2 * K**2 * L**2 * (1 + 192 * L**2 * eta**2 * K**2) * (3 * sigma_g**2 + 2 * sigma_l**2 + 4 * B**2)
        / (kappa * (1 - psi) ** 2),
        6 * lam**2 * L**2 * (1 + 192 * L**2 * eta**2 * K**2) * s / (kappa * (1 - psi) ** 2),
    ]
    sam_term = {"printed": 6 * rho**2 * lam * L**2 / kappa * s, "divided": 6 * rho**2 * L**2 / kappa * s,
                "normalized": 6 * rho**2 * L**2 / kappa, "none": 0.0}[sam]
    return sum(terms) + sam_term


def gamma_by_hand(eta, lam, K):
    return 1 - (1 - eta / lam) ** K


# ------------------------------------------------------------------------------------------------ catalog
EXPECTED = {
    "dfedadmm.lem1": "SEED", "dfedadmm.lem2": "SEED", "dfedadmm.lem3": "SEED", "dfedadmm.lem4": "SEED",
    "dfedadmm.lem5": "SEED", "dfedadmm.lem6": "SEED", "dfedadmm.lem7": "SEED", "dfedadmm.lem8": "SEED",
    "dfedadmm.lem9": "SEED", "dfedadmm.lem10": "SEED", "dfedadmm.eq22": "SEED", "dfedadmm.eq23": "SEED",
    "dfedadmm.thm1": "SEED", "dfedadmm.thm1.dfedadmm": "SEED", "dfedadmm.thm1.corrected": "CORRECTED",
    "dfedadmm.thm1.normalized": "CORRECTED", "dfedadmm.cor1": "SEED", "dfedadmm.cor1.dfedadmm": "SEED",
    "dfedadmm.cor1.abstract": "SEED", "dfedadmm.cor1.dfedadmm.abstract": "SEED", "dfedadmm.cor1.derived": "DERIVED",
    "dfedadmm.cor1.corrected": "DERIVED", "dfedadmm.rem1": "SEED", "dfedadmm.rem1.sam": "SEED",
}


def test_catalog_registers_every_entry_with_its_tag():
    assert set(ids("dfedadmm")) == set(EXPECTED)
    for i, tag in EXPECTED.items():
        thm = get(i)
        assert thm.source.tag == tag, i
        assert thm.source.seed == "004_28e3243d83990b76.txt" and thm.source.card
    assert all(get(i).variant == "printed" for i in ("dfedadmm.thm1", "dfedadmm.cor1"))
    assert get("dfedadmm.thm1.corrected").variant_of == "dfedadmm.thm1"


def test_no_spectral_lam_symbol_anywhere():
    """The paper's lambda is the penalty (lam_pen); the spectral constant is psi, never COMMON 'lam'."""
    for i in EXPECTED:
        assert "lam" not in get(i).symbols, i
    assert "psi" in get("dfedadmm.thm1").required and "lam_pen" in get("dfedadmm.thm1").required


def test_theorem1_quantity_is_on_the_auxiliary_sequence():
    q = get("dfedadmm.thm1").quantity
    assert "w^t" in q and "average over t" in q and "not x_bar^t" in q


# ------------------------------------------------------------------------------------------------ Theorem 1
def test_theorem1_against_hand_computation():
    assert get("dfedadmm.thm1").evaluate(**P) == pytest.approx(thm1_by_hand(**P), rel=1e-12)
    assert get("dfedadmm.thm1.corrected").evaluate(**P) == pytest.approx(thm1_by_hand(**P, sam="divided"), rel=1e-12)
    assert get("dfedadmm.thm1.normalized").evaluate(**P) == pytest.approx(thm1_by_hand(**P, sam="normalized"),
                                                                          rel=1e-12)
    no_rho = {k: v for k, v in P.items() if k != "rho"}
    assert get("dfedadmm.thm1.dfedadmm").evaluate(**no_rho) == pytest.approx(thm1_by_hand(**P, sam="none"), rel=1e-12)


def test_theorem1_terms_and_sam_variants():
    printed = get("dfedadmm.thm1").evaluate_terms(**P)["sam"]
    divided = get("dfedadmm.thm1.corrected").evaluate_terms(**P)["sam"]
    normalized = get("dfedadmm.thm1.normalized").evaluate_terms(**P)["sam"]
    assert divided == pytest.approx(printed / P["lam_pen"])  # the spurious lambda
    assert normalized == pytest.approx(divided / (P["sigma_l"] ** 2 + P["B"] ** 2))
    kappa = 0.5 - 1152 * (1e-3 * 5) ** 2
    assert printed == pytest.approx(6 * 0.01 * 0.004 * 5.0 / kappa)


def test_rho_zero_reduces_to_dfedadmm():
    """Seed L157: 'by setting rho = 0, we obtain the convergence theorem for DFedADMM'."""
    no_rho = {k: v for k, v in P.items() if k != "rho"}
    assert get("dfedadmm.thm1").evaluate(**{**P, "rho": 0.0}) == pytest.approx(
        get("dfedadmm.thm1.dfedadmm").evaluate(**no_rho), rel=1e-14)
    assert get("dfedadmm.thm1").evaluate(**P) > get("dfedadmm.thm1.dfedadmm").evaluate(**no_rho)


def test_main_text_equals_appendix_form():
    """Card §10.1: seed L155 equals seed L678 (two psi-terms written as 6L^2(1+192..) C_2/(kappa (1-psi)^2))."""
    s = M._S
    eta, K, T, L, rho, sl, sg, B, psi, lam, D = (s[k] for k in ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g",
                                                               "B", "psi", "lam_pen", "f0_minus_fstar"))
    kappa = sp.Rational(1, 2) - 1152 * L**2 * eta**2 * K**2
    C2 = 16 * eta**2 * K**2 * (3 * sg**2 + 2 * sl**2 + 4 * B**2) + lam**2 * (sl**2 + B**2)
    appendix = (D / (lam * kappa * T) + 96 * L**2 * eta**2 * K**2 / kappa * (3 * sg**2 + 2 * sl**2 + B**2)
                + 3 * lam**2 * L**2 * (1 + 384 * L**2 * eta**2 * K**2) / kappa * (sl**2 + B**2)
                + L * lam / (2 * kappa) * (sl**2 + B**2)
                + 6 * L**2 * (1 + 192 * L**2 * eta**2 * K**2) / kappa * C2 / (1 - psi) ** 2
                + 6 * rho**2 * lam * L**2 / kappa * (sl**2 + B**2))
    assert sp.simplify(get("dfedadmm.thm1").bound - appendix) == 0


def test_theorem1_increasing_in_psi_and_infinite_at_one():
    thm = get("dfedadmm.thm1")
    psis = np.array([0.0, 0.5, 0.9, 0.99, 0.999])
    vals = thm.evaluate(**{**P, "psi": psis})
    assert np.all(np.diff(vals) > 0)
    consensus = [sum(v for k, v in thm.evaluate_terms(**{**P, "psi": p}).items() if k.startswith("consensus"))
                 for p in psis]
    assert np.allclose(np.array(consensus) * (1 - psis) ** 2, consensus[0])  # exactly (1 - psi)^-2
    assert consensus[0] > 0  # at psi = 0 the consensus terms do not vanish (card §10.2)
    assert thm.check(**{**P, "psi": 1.0}).value == math.inf


def _scheduled(thm_id, T, K, psi, c=1.0, c_lam=1.0, r=1.0, L=1.0, **rest):
    thm = get(thm_id)
    vals = dict(sigma_l=1.0, sigma_g=0.5, B=2.0, f0_minus_fstar=2.3, L=L, T=T, K=K, psi=psi,
                eta=c / (L * K * np.sqrt(T)), lam_pen=c_lam / (L * np.sqrt(K * T)), **rest)
    if "rho" in thm.symbols:
        vals["rho"] = r / np.sqrt(T)
    return thm.evaluate(**vals)


def test_topology_independence_for_large_T():
    """Card §10.3: under the Corollary's schedule the psi-terms are O(1/T), the ratio tends to 1."""
    gaps = [abs(_scheduled("dfedadmm.thm1", T, 5, 0.9) / _scheduled("dfedadmm.thm1", T, 5, 0.1) - 1)
            for T in (1e8, 1e12, 1e16)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3


def test_hidden_sqrt_K_in_the_corollary():
    """Card §10.5: under the schedule the first term is L sqrt(K) D/(c_lam kappa sqrt(T)); the bound grows with K."""
    Ks = [1, 10, 100, 1000, 10000]
    vals = [_scheduled("dfedadmm.thm1", 1e6, k, 0.5) for k in Ks]
    assert all(b > a for a, b in zip(vals[1:], vals[2:]))
    opt = get("dfedadmm.thm1").evaluate_terms(sigma_l=1, sigma_g=0.5, B=2, f0_minus_fstar=2.3, L=2.0, T=1e6,
                                              K=100, psi=0.5, rho=1e-3, eta=1 / (2.0 * 100 * 1e3),
                                              lam_pen=1 / (2.0 * math.sqrt(100 * 1e6)))["optimization"]
    kappa = 0.5 - 1152 / 1e6
    assert opt == pytest.approx(2.0 * 10 * 2.3 / (kappa * 1e3))


def test_sam_term_orders_under_the_schedule():
    """Card §10.6: printed SAM term O(L/(T^1.5 K^0.5)); consistently divided it is 6 r^2 L^2 (s^2+B^2)/(kappa T)."""
    T, K, L, r = 1e8, 4, 2.0, 0.5
    kw = dict(sigma_l=1, sigma_g=0.5, B=2, f0_minus_fstar=2.3, L=L, T=T, K=K, psi=0.5, rho=r / math.sqrt(T),
              eta=1 / (L * K * math.sqrt(T)), lam_pen=1 / (L * math.sqrt(K * T)))
    kappa = 0.5 - 1152 / T
    printed = get("dfedadmm.thm1").evaluate_terms(**kw)["sam"]
    divided = get("dfedadmm.thm1.corrected").evaluate_terms(**kw)["sam"]
    assert printed == pytest.approx(6 * L * r**2 * 5 / (kappa * math.sqrt(K) * T**1.5))
    assert divided == pytest.approx(6 * r**2 * L**2 * 5 / (kappa * T))


# ------------------------------------------------------------------------------------------------ conditions
def _verdicts(thm_id, **values):
    return {v.text: v.holds for v in get(thm_id).check(**values).conditions}


def test_all_theorem1_conditions_hold_at_the_reference_point():
    assert get("dfedadmm.thm1").check(**P).ok


@pytest.mark.parametrize("text_start, bad", [
    ("eta_l <= 1/(96 K L)", {"eta": 0.0021, "lam_pen": 0.004}),            # 1/(96*5) = 0.002083
    ("eta_l <= 2 lambda", {"eta": 1e-3, "lam_pen": 4.9e-4, "K": 5}),
    ("K >= lambda/eta_l", {"eta": 1e-3, "lam_pen": 0.006}),                 # lam/eta = 6 > K = 5
    ("kappa = 1/2", {"eta": 0.0042}),                                       # 1/(48 K L) = 0.004167
    ("0 < eta_l < 1/(6 L K)", {"eta": 0.034}),                              # 1/30 = 0.0333
    ("lambda <= 1/(96 L)", {"lam_pen": 0.0105, "eta": 0.0021}),            # 1/96 = 0.0104
    ("eta_l <= lambda", {"eta": 1e-3, "lam_pen": 9e-4}),
])
def test_each_theorem1_condition_fails_where_it_should(text_start, bad):
    good = _verdicts("dfedadmm.thm1", **P)
    failed = _verdicts("dfedadmm.thm1", **{**P, **bad})
    [key] = [k for k in good if k.startswith(text_start)]
    assert good[key] is True and failed[key] is False


def test_admissible_step_sizes_and_smoothness():
    """lam/K <= eta <= min(1/(96KL), lam, ...): at K = 5, L = 1, lam = 0.004 that is [0.0008, 1/480]."""
    thm = get("dfedadmm.thm1")
    assert thm.smallest("eta", K=5, L=1, lam_pen=0.004) == pytest.approx(0.0008)
    assert thm.largest("eta", K=5, L=1, lam_pen=0.004) == pytest.approx(1 / 480)
    assert thm.largest("L", K=5, eta=0.1, lam_pen=0.1) == pytest.approx(1 / 48)  # the paper's setting


def test_kappa_range():
    """Card §10.4: eta = 1/(96KL) gives kappa = 3/8; kappa > 1/4 iff eta < sqrt(2)/(96KL)."""
    eta, K, L = M._S["eta"], M._S["K"], M._S["L"]
    assert sp.simplify(M.KAPPA.subs(eta, 1 / (96 * K * L))) == sp.Rational(3, 8)
    assert sp.simplify(M.KAPPA.subs(eta, sp.sqrt(2) / (96 * K * L))) == sp.Rational(1, 4)
    assert M.KAPPA.subs({eta: 0.99 * math.sqrt(2) / 96, K: 1, L: 1}) > 0.25


def test_gamma_range_and_reference_values():
    """Card §10.7: gamma in (0,1] iff eta <= lam; (0.1, 0.05, 5) -> 2 and (0.1, 0.05, 4) -> 0."""
    lem2 = get("dfedadmm.lem2")
    assert lem2.evaluate(**lem2.reference) == pytest.approx(lem2.reference_value) == pytest.approx(2.0)
    assert lem2.evaluate(eta=0.1, lam_pen=0.05, K=4) == pytest.approx(0.0, abs=1e-15)
    for eta, lam, K in [(0.03, 0.1, 4), (0.1, 0.1, 5), (0.01, 0.2, 7)]:
        g = lem2.evaluate(eta=eta, lam_pen=lam, K=K)
        assert g == pytest.approx(gamma_by_hand(eta, lam, K)) and 0 < g <= 1
    # the paper's 'gamma < 1 when eta_l <= 2 lambda' is false: eta = 1.5 lam, K = 3 gives gamma > 1
    assert gamma_by_hand(0.15, 0.1, 3) > 1
    # Lemma 4's printed 0 < gamma < 1 fails at the paper's eta = lam (gamma = 1); the derived eta <= lam holds
    v = _verdicts("dfedadmm.lem4", sigma_l=1, B=1, eta=0.1, lam_pen=0.1, K=5)
    assert v["gamma < 1 ('we use the fact 0 < gamma < 1')"] is False
    assert [h for t, h in v.items() if t.startswith("eta_l <= lambda")] == [True]
    v = _verdicts("dfedadmm.lem4", sigma_l=1, B=1, eta=0.1, lam_pen=0.05, K=4)
    assert [h for t, h in v.items() if t.startswith("gamma > 0")] == [False]


def test_gamma_sum_identity_and_algorithm_identities():
    """Lemma 2 / 3 (card §3.2 (i), (ii)): sum_k gamma_k = gamma, and K local steps of eq. (6) give
    x_K - x_0 = -lam sum_k gamma_k g_k + gamma lam ghat and ghat_new = (1-gamma) ghat + sum_k gamma_k g_k."""
    for k_val in range(1, 7):
        total = sum(M.gamma_k(k).subs(M._S["K"], k_val) for k in range(k_val))
        assert sp.simplify(total - M.GAMMA.subs(M._S["K"], k_val)) == 0
    rng = np.random.default_rng(0)
    eta, lam, K = 0.03, 0.1, 4
    x0, ghat, grads = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(K, 3))
    x = x0.copy()
    for k in range(K):
        x = x - eta * (grads[k] - ghat + (x - x0) / lam)
    gk = np.array([float(M.gamma_k(k).subs({M._S["eta"]: eta, M._S["lam_pen"]: lam, M._S["K"]: K}))
                   for k in range(K)])
    g = gamma_by_hand(eta, lam, K)
    assert np.allclose(x - x0, -lam * gk @ grads + g * lam * ghat)
    ghat_new = ghat - (x - x0) / lam
    assert np.allclose(ghat_new, (1 - g) * ghat + gk @ grads)
    assert get("dfedadmm.lem3").evaluate(eta=eta, lam_pen=lam, K=K) == pytest.approx(g)


def test_lemma6_bracket_with_the_papers_a_is_false():
    """Card §10.8: a = 2K-1 gives >= 2K(1-eta/lam)^2 (2.5 > 1.25 at K = 5, eta/lam = 0.5); a = 1/(2K-1) works."""
    s = M._S
    K = 5
    pt = {s["eta"]: 0.005, s["lam_pen"]: 0.01, s["L"]: 1.0, s["K"]: K}
    assert float(M.lemma6_bracket(2 * K - 1).subs(pt)) >= 2.5 > 1 + 1 / (K - 1)
    for K in (2, 3, 5, 20):
        for ratio in (0.05, 0.5, 1.0, 1.5, 2.0):
            for L in (0.1, 1.0, 10.0):
                eta = 0.99 / (6 * L * K)
                pt = {s["eta"]: eta, s["lam_pen"]: eta / ratio, s["L"]: L, s["K"]: K}
                assert float(M.lemma6_bracket(sp.Rational(1, 2 * K - 1)).subs(pt)) < 1 + 1 / (K - 1)


def test_the_power_bound_of_lemma6():
    """Card §10.9: (1 + 1/(K-1))^K < 5 for K >= 2, the maximum 4 at K = 2; undefined at K = 1."""
    vals = [(1 + 1 / (K - 1)) ** K for K in range(2, 300)]
    assert max(vals) == vals[0] == 4.0 and all(v < 5 for v in vals)
    assert all(b < a for a, b in zip(vals, vals[1:])) and vals[-1] > math.e


# ------------------------------------------------------------------------------------------------ lemmas
def test_lemma1():
    assert get("dfedadmm.lem1").evaluate(psi=0.9, t=3) == pytest.approx(0.729)


def test_lemmas_4_5_eq22_and_lemma9():
    for i in ("dfedadmm.lem4", "dfedadmm.lem5"):
        assert get(i).evaluate(sigma_l=1.5, B=2.0) == pytest.approx(6.25)
    assert get("dfedadmm.eq22").evaluate(lam_pen=0.1, sigma_l=1.5, B=2.0) == pytest.approx(0.0625)
    assert get("dfedadmm.lem9").evaluate(lam_pen=0.3) == 0.3


@pytest.mark.parametrize("lem", ["dfedadmm.lem6", "dfedadmm.lem7"])
def test_lemmas_6_7(lem):
    eta, K, sg, sl, B, G2 = 0.01, 4, 0.5, 1.0, 2.0, 3.0
    C0 = (3 * sg**2 + sl**2) + 3 * G2 + (sl**2 + B**2)
    assert get(lem).evaluate(eta=eta, K=K, sigma_g=sg, sigma_l=sl, B=B, G2=G2) == pytest.approx(16 * eta**2 * K**2 * C0)
    v = _verdicts(lem, eta=eta, K=K, sigma_g=sg, sigma_l=sl, B=B, G2=G2, L=1.0, lam_pen=0.02)
    assert all(v.values())
    v = _verdicts(lem, eta=eta, K=K, sigma_g=sg, sigma_l=sl, B=B, G2=G2, L=5.0, lam_pen=0.004)
    assert not any(v.values())  # 1/(6LK) = 0.0083 < eta, 2 lam = 0.008 < eta, lam < eta


def test_lemma8():
    eta, K, sg, sl, B, lam, psi = 0.01, 4, 0.5, 1.0, 2.0, 0.05, 0.8
    C2 = 16 * eta**2 * K**2 * (3 * sg**2 + 2 * sl**2 + 4 * B**2) + lam**2 * (sl**2 + B**2)
    val = get("dfedadmm.lem8").evaluate(eta=eta, K=K, sigma_g=sg, sigma_l=sl, B=B, lam_pen=lam, psi=psi)
    assert val == pytest.approx(2 * C2 / (1 - psi) ** 2)


def test_lemma10_and_eq23():
    eta, lam, K, sl, B = 0.02, 0.05, 3, 1.0, 2.0
    g = gamma_by_hand(eta, lam, K)
    aux = 2 * lam**2 * (g - 1) ** 2 * (1 + (g - 1) ** 2 / g**2) * (sl**2 + B**2)
    assert get("dfedadmm.lem10").evaluate(eta=eta, lam_pen=lam, K=K, sigma_l=sl, B=B) == pytest.approx(aux)
    assert get("dfedadmm.lem10").evaluate(eta=0.1, lam_pen=0.1, K=5, sigma_l=sl, B=B) == 0.0  # gamma = 1: w = x_bar
    L, sg, psi, gw = 2.0, 0.5, 0.7, 0.3
    C2 = 16 * eta**2 * K**2 * (3 * sg**2 + 2 * sl**2 + 4 * B**2) + lam**2 * (sl**2 + B**2)
    val = get("dfedadmm.eq23").evaluate(L=L, eta=eta, K=K, sigma_l=sl, sigma_g=sg, B=B, lam_pen=lam, psi=psi,
                                        gradw2=gw)
    assert val == pytest.approx(4 * L**2 * C2 / (1 - psi) ** 2 + 4 * L**2 * aux + 4 * gw)


def test_gamma_factor_bound_used_in_theorem1():
    """Card §6.2: (gamma-1)^2 (1 + (gamma-1)^2/gamma^2) <= 0.1812 < 1/2 on (1 - 1/e, 1]."""
    gs = np.linspace(1 - 1 / math.e + 1e-12, 1, 2001)
    f = (gs - 1) ** 2 * (1 + (gs - 1) ** 2 / gs**2)
    assert f.max() == pytest.approx(0.1812, abs=1e-4) and f.max() < 0.5


# ------------------------------------------------------------------------------------------------ corollary
def test_corollary_carries_schedule_and_stated_terms():
    cor = get("dfedadmm.cor1")
    assert cor.big_o and cor.parent == "dfedadmm.thm1" and set(cor.schedule) == {"eta", "lam_pen", "rho"}
    vals = dict(T=100.0, K=4, L=3.0, sigma_l=1.0, sigma_g=0.5, B=2.0, psi=0.5, f0_minus_fstar=2.0)
    s = 5.0
    by_hand = (2.0 + s / 2) / 10 + (s + 0.25) / (100 * 0.25) + 3.0 * s / (1000 * 2) + s / (100 * 4 * 0.25)
    assert cor.evaluate(**vals) == pytest.approx(by_hand)
    admm = get("dfedadmm.cor1.dfedadmm").evaluate(**vals)
    assert admm == pytest.approx(by_hand - 3.0 * s / (1000 * 2))
    assert get("dfedadmm.cor1.abstract").evaluate(**vals) == pytest.approx(1 / 20 + 1 / (400 * 0.25) + 1 / (1000 * 2))


def test_schedule_reproduces_the_card_substitution():
    """Card §6.4 (b'): the first term is sqrt(K) L D/(c_lam kappa sqrt(T)), the SAM term
    6 L c_lam r^2 s/(sqrt(K) T^1.5 kappa)."""
    thm, cor = get("dfedadmm.thm1"), get("dfedadmm.cor1")
    sub = {M._S[k]: v for k, v in cor.schedule.items()}
    s = M._S
    kappa = sp.Rational(1, 2) - 1152 * s["c"] ** 2 / s["T"]
    opt = thm.terms["optimization"].subs(sub)
    want = sp.sqrt(s["K"]) * s["L"] * s["f0_minus_fstar"] / (s["c_lam"] * kappa * sp.sqrt(s["T"]))
    assert sp.simplify(opt - want) == 0
    sam = thm.terms["sam"].subs(sub)
    want = 6 * s["L"] * s["c_lam"] * s["r"] ** 2 * (s["sigma_l"] ** 2 + s["B"] ** 2) / (
        sp.sqrt(s["K"]) * s["T"] ** sp.Rational(3, 2) * kappa)
    assert sp.simplify(sam - want) == 0


def test_corollary_conditions():
    rest = dict(L=1.0, sigma_l=1.0, sigma_g=1.0, B=1.0, psi=0.5, f0_minus_fstar=1.0)
    ok = _verdicts("dfedadmm.cor1", T=10**6, K=4, c=1.0, c_lam=1.0, **rest)
    assert all(ok.values())
    bad = _verdicts("dfedadmm.cor1", T=9000, K=4, c=1.0, c_lam=3.0, **rest)  # T < 96^2; c_lam/c = 3 > sqrt(K) = 2
    assert [t for t, h in bad.items() if h is False] == [t for t in bad if t.startswith(("eta_l <= 1/(96", "K >= "))]
    # c_lam sqrt(K) = 2 < c = 3 <= 2 c_lam sqrt(K) = 4: only eta_l <= lambda fails
    bad = _verdicts("dfedadmm.cor1", T=10**6, K=4, c=3.0, c_lam=1.0, **rest)
    assert [t for t, h in bad.items() if h is False] == [t for t in bad if t.startswith("eta_l <= lambda")]


def test_rate_verifier_finds_the_hidden_sqrt_K():
    from dfltheory.bounds.rates import verify

    def substantive(findings):  # leave out 'constants differ' findings due only to the schedule constant c_lam
        return [f for f in findings if not (f.startswith("constants differ") and "involves c_lam," in f)]

    [dropped] = substantive(verify("dfedadmm.cor1").findings)
    assert dropped.startswith("dropped") and "'optimization'" in dropped and "K^1/2 T^-1/2" in dropped
    assert substantive(verify("dfedadmm.cor1.derived").findings) == []


# ------------------------------------------------------------------------------------------------ experiments
@functools.cache
def _violations(setting_id):
    [s] = [s for s in M.EXPERIMENTS if s.id == setting_id]
    return violations(s, "L")


def _violation(setting_id, text_start):
    [v] = [v for v in _violations(setting_id) if v["text"].startswith(text_start)]
    return v


def test_experiments_violate_the_step_size_condition():
    """Card §10.10: eta_l <= 1/(96KL) needs L <= 1/(9.6 K): 0.02083 (K=5), 0.005208 (K=20), 0.004167 (K=25)."""
    for sid, bound in [("dfedadmm.exp.cifar_sam", 1 / 48), ("dfedadmm.exp.cifar10_sam_steps", 1 / 192),
                       ("dfedadmm.exp.mnist_sam_steps", 1 / 240), ("dfedadmm.exp.cifar_admm", 1 / 48)]:
        v = _violation(sid, "eta_l <= 1/(96 K L)")
        assert v["holds"] is None and v["violated_for"] == f"L in ({bound:.4g}, inf)"
    assert _violation("dfedadmm.exp.cifar_sam", "lambda <= 1/(96 L)")["violated_for"] == "L in (0.1042, inf)"
    assert _violation("dfedadmm.exp.ablation_lam0.2", "lambda <= 1/(96 L)")["violated_for"] == "L in (0.05208, inf)"


def test_experiments_that_break_L_free_conditions():
    assert _violation("dfedadmm.exp.ablation_lam0.05", "eta_l <= lambda")["violated_for"] == "all L"
    assert _violation("dfedadmm.exp.ablation_lam0.05", "eta_l <= 2 lambda")["holds"] is True  # boundary eta = 2 lam
    assert _violation("dfedadmm.exp.ablation_K1_last_round", "K >= lambda/eta_l")["holds"] is False
    assert _violation("dfedadmm.exp.ablation_lam0.5_last_round", "K >= lambda/eta_l")["holds"] is False
    assert _violation("dfedadmm.exp.ablation_lam0.5", "K >= lambda/eta_l")["holds"] is True  # boundary K = lam/eta
    assert _violation("dfedadmm.exp.cifar_sam", "eta_l <= lambda")["holds"] is True  # eta = lam at t = 0
    assert _violation("dfedadmm.exp.cifar_sam_last_round", "K >= lambda/eta_l")["holds"] is True  # 5 >= 2.72


def test_experiment_setting_check_runs_with_constants():
    [s] = [s for s in M.EXPERIMENTS if s.id == "dfedadmm.exp.cifar_sam"]
    res = s.check(L=0.01, sigma_l=1.0, sigma_g=1.0, B=1.0, psi=0.554, f0_minus_fstar=2.3)
    assert res.ok
    assert res.value == pytest.approx(thm1_by_hand(eta=0.1, K=5, T=500, L=0.01, rho=0.1, sigma_l=1.0, sigma_g=1.0,
                                                   B=1.0, psi=0.554, lam_pen=0.1, f0_minus_fstar=2.3))
    assert not s.check(L=1.0, sigma_l=1.0, sigma_g=1.0, B=1.0, psi=0.554, f0_minus_fstar=2.3).ok
