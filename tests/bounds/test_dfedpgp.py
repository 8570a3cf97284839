"""DFedPGP (seed 003): every formula against hand-computed values, every condition at a point where it holds and
one where it fails, and the card's testable claims (card section 10) that live on the formulas.

Hand computations use plain python floats written from the LaTeX of the seed, independently of the sympy
expressions of ``dfltheory.papers.dfedpgp.theorems``. The theorems are looked up in the module itself (not the global
catalog), so that these tests depend on this paper only.
"""

import math
import random

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dfltheory.papers.dfedpgp import theorems as M
from dfltheory.bounds import settings as settings_mod
from dfltheory.bounds.theorem import TAGS, Theorem

TH = {t.id: t for t in M.THEOREMS}

# A generic point where every step-size condition of Theorem 1 holds (small step sizes).
P = dict(f0_minus_fstar=2.3, T=10**6, K_u=5, K_v=3, L_u=1.5, L_v=0.8, L_uv=0.7, L_vu=0.4, sigma_u=1.1,
         sigma_v=0.9, sigma_g=0.6, C=3.0, q=0.5, delta=0.4, eta_u=1e-4, eta_v=2e-4)


def only(thm: Theorem, values: dict) -> dict:
    return {k: v for k, v in values.items() if k in thm.symbols}


def ev(tid: str, **values) -> float:
    thm = TH[tid]
    return thm.evaluate(**only(thm, values))


# ------------------------------------------------------------------------------------------ hand formulas
def hand_AA(eta_u, K_u, L_u, C, q, plus_one=True):
    f = (K_u + 1) if plus_one else 1
    return 8 * K_u**2 * eta_u**2 * C**2 * f / ((1 - q) ** 2 * K_u - 8 * K_u**2 * eta_u**2 * L_u**2 * C**2 * f)


def hand_eq32_parts(p, corrected=False):
    AA = hand_AA(p["eta_u"], p["K_u"], p["L_u"], p["C"], p["q"])
    eu, ev_, Ku, Kv, Lu, Lv = p["eta_u"], p["eta_v"], p["K_u"], p["K_v"], p["L_u"], p["L_v"]
    brk = 1 + 32 * Ku * Lu**2 * eu**2 / p["delta"] ** 2 * (Lu**2 * AA + 1) + Lu**2 * AA
    coef_u = -eu * Ku / 2 + Ku * Lu**2 * eu / 2 * AA + 5 * Ku * Lu * eu**2 / 2 * brk + p["L_vu"] ** 2 / 2 * AA
    coef_v = -ev_ * Kv + 8 * ev_**2 * Kv**2 * Lv + 8 * ev_**2 * Kv**2
    s = p["sigma_u"] ** 2 + p["sigma_g"] ** 2
    noise_v = 4 * ev_**2 * Kv**2 * (1 if corrected else Lv**2) * p["sigma_v"] ** 2 * (1 + Lv)
    noise_u = (Ku * Lu**2 * eu / 2 * AA + 5 * Ku * Lu * eu**2 / 2 * brk + p["L_vu"] ** 2 / 2 * AA) * s
    return coef_u, coef_v, noise_u, noise_v


def hand_explicit(p, corrected=False):
    coef_u, coef_v, noise_u, noise_v = hand_eq32_parts(p, corrected)
    kappa = min(-coef_u * p["L_u"], -coef_v * p["L_v"])
    return p["f0_minus_fstar"] / (kappa * p["T"]) + (noise_u + noise_v) / kappa


def hand_thm1(p, dup):
    s = p["sigma_u"] ** 2 + p["sigma_g"] ** 2
    T, Ku, Lu, C, q = p["T"], p["K_u"], p["L_u"], p["C"], p["q"]
    r = math.sqrt(T)
    return (p["f0_minus_fstar"] / r + (1 + p["L_v"]) * p["sigma_v"] ** 2 / r
            + s * (C**2 / ((1 - q) ** 2 * Lu * T) + dup / (Ku * Lu * r) + 1 / (Ku * Lu * p["delta"] ** 2 * T**1.5)
                   + C**2 / (Ku * Lu * (1 - q) ** 2 * T**1.5) + p["L_vu"] ** 2 * C**2 / ((1 - q) ** 2 * Lu**2 * r)))


def hand_cor1(p):
    s = p["sigma_u"] ** 2 + p["sigma_g"] ** 2
    T, Ku, Lu, Lv, C = p["T"], p["K_u"], p["L_u"], p["L_v"], p["C"]
    q = 1 - p["omq"] if "omq" in p else p["q"]  # 1 - q given directly keeps precision when q ~ 1
    omq = p.get("omq", 1 - q)
    chi = max(p["L_uv"], p["L_vu"]) / math.sqrt(Lu * Lv)
    s1 = (1 + Lv) * p["sigma_v"] ** 2 + (1 / (Ku * Lu) + Lv * chi**2 * C**2 / (omq**2 * Lu)) * s
    s2 = C**2 / (omq**2 * Lu) * s
    s3 = (1 / (Ku * Lu * p["delta"] ** 2) + C**2 / (omq**2 * Ku * Lu)) * s
    return (p["f0_minus_fstar"] + s1) / math.sqrt(T) + s2 / T + s3 / T**1.5


def hand_lemma3_constants(m, D, K_u, Delta, B, d0):
    """(lambda, 1 - q, C upper) of the Lemma 3 proof (seed L525-527), high precision with sympy."""
    E = (K_u + 1) * Delta * B
    lam = 1 - sp.Integer(m) * sp.Integer(D) ** (-E)
    q = lam ** sp.Rational(1, E + 1)
    C = 2 * sp.sqrt(sp.Float(d0, 30)) * sp.Integer(D) ** E / lam ** sp.Rational(E + 2, E + 1)
    return float(lam), float(sp.N(1 - q, 40)), float(sp.N(C, 30))


# ------------------------------------------------------------------------------------------ catalog shape
def test_ids_tags_and_references_are_consistent():
    ids = [t.id for t in M.THEOREMS]
    assert len(ids) == len(set(ids)) == 20
    assert all(i.startswith("dfedpgp.") and t.paper == "dfedpgp" for i, t in TH.items())
    for t in M.THEOREMS:
        assert t.source.tag in TAGS and t.source.seed == M.SEED
        for ref in (t.parent, t.variant_of):
            assert ref is None or ref in TH
        for c in t.conditions:
            assert c.source is not None and c.source.seed == M.SEED
    assert TH["dfedpgp.thm1"].source.tag == "SEED" and TH["dfedpgp.thm1"].big_o
    assert TH["dfedpgp.cor1"].big_o and TH["dfedpgp.rem3"].big_o
    assert TH["dfedpgp.thm1.explicit"].source.tag == "DERIVED" and not TH["dfedpgp.thm1.explicit"].big_o
    assert TH["dfedpgp.lem2.corrected"].source.tag == "CORRECTED"
    assert TH["dfedpgp.eq32.corrected"].source.tag == "CORRECTED"


def test_corollary_carries_parent_and_schedule():
    cor = TH["dfedpgp.cor1"]
    assert cor.parent == "dfedpgp.thm1.explicit_u"
    parent = TH[cor.parent]
    assert set(cor.schedule) == {"eta_u", "eta_v"} <= set(parent.required)
    sub = {cor.symbols[k].symbol: v for k, v in cor.schedule.items()}
    # eta_u = c/(L_u K_u sqrt T), eta_v = c/(L_v K_v sqrt T) at c = 1, L_u = 2, K_u = 4, T = 100
    vals = {M.c: 1, M.L_u: 2, M.K_u: 4, M.L_v: 0.5, M.K_v: 3, M.T: 100}
    assert float(sub[M.eta_u].subs(vals)) == pytest.approx(1 / (2 * 4 * 10))
    assert float(sub[M.eta_v].subs(vals)) == pytest.approx(1 / (0.5 * 3 * 10))
    assert "T" in parent.required and not parent.big_o


def test_no_paper_uses_a_name_that_clashes_with_common():
    from dfltheory.bounds.symbols import COMMON

    for t in M.THEOREMS:
        for v in t.variables:
            if v.name in COMMON:
                assert v is COMMON[v.name] or v == COMMON[v.name]
    names = {v.name for t in M.THEOREMS for v in t.variables}
    assert "B" not in names and "Delta" not in names and "lam" not in names  # B_conn, Delta_diam, lam_ps


# ------------------------------------------------------------------------------------------ lemmas
def test_lemma1_and_its_proof_constants():
    p = dict(eta_v=0.01, K_v=4, G_v0=2.5, sigma_v=0.7, L_v=3.0)
    assert ev("dfedpgp.lem1", **p) == pytest.approx(16 * 0.01**2 * 16 * 2.5 + 8 * 0.01**2 * 16 * 0.49)
    assert ev("dfedpgp.lem1.proof", **p) == pytest.approx(8 * 0.01**2 * 16 * 2.5 + 4 * 0.01**2 * 16 * 0.49)
    # the proof's own chain (A/2)(K_v-1)(1+2/(K_v-1))^{K_v-1} is below the proof-constant version
    A = 4 * 0.01**2 * 0.49 + 2 * 4 * 0.01**2 * 2.5
    chain = A / 2 * 3 * (1 + 2 / 3) ** 3
    assert chain <= ev("dfedpgp.lem1.proof", **p) <= ev("dfedpgp.lem1", **p)


def test_lemma2_printed_and_corrected():
    p = dict(eta_u=0.003, K_u=6, sigma_u=1.2, sigma_g=0.5, G_z=4.0, L_u=1.0, delta=0.5)
    printed = 32 * 6 * 0.003**2 * (1.44 + 0.25 + 4.0)
    assert ev("dfedpgp.lem2", **p) == pytest.approx(printed)
    assert ev("dfedpgp.lem2.corrected", **p) == pytest.approx(5 * printed)  # factor K_u - 1 = 5


def test_lemma2_counterexample_from_K_u_34():
    """Card §10.13: linear losses (constant gradient g, no noise): ||u^{t,K_u-1} - u^t||^2 = (K_u-1)^2 eta^2 g^2."""
    eta, g2 = 1e-3, 1.0
    first_bad = None
    for K in range(2, 60):
        truth = (K - 1) ** 2 * eta**2 * g2
        printed = ev("dfedpgp.lem2", eta_u=eta, K_u=K, sigma_u=0, sigma_g=0, G_z=g2)
        corrected = ev("dfedpgp.lem2.corrected", eta_u=eta, K_u=K, sigma_u=0, sigma_g=0, G_z=g2)
        assert truth <= corrected
        if truth > printed and first_bad is None:
            first_bad = K
    assert first_bad == 34


def test_lemma3_statement_and_proof_result():
    p = dict(eta_u=0.005, K_u=4, L_u=2.0, C=3.0, q=0.4, sigma_u=1.0, sigma_g=0.5, Du_t=0.8, delta=0.5)
    s = 1.0 + 0.25 + 0.8
    a13 = hand_AA(0.005, 4, 2.0, 3.0, 0.4, plus_one=False)
    a19 = hand_AA(0.005, 4, 2.0, 3.0, 0.4, plus_one=True)
    assert a13 == pytest.approx(8 * 16 * 2.5e-5 * 9 / (0.36 * 4 - 8 * 16 * 2.5e-5 * 4 * 9))
    assert a19 == pytest.approx(8 * 16 * 2.5e-5 * 9 * 5 / (0.36 * 4 - 8 * 16 * 2.5e-5 * 4 * 9 * 5))
    assert TH["dfedpgp.lem3.eq19"].check(**p).ok
    assert ev("dfedpgp.lem3", **p) == pytest.approx(a13 * s)
    assert ev("dfedpgp.lem3.eq19", **p) == pytest.approx(a19 * s)
    assert ev("dfedpgp.lem3.eq19", **p) > 5 * ev("dfedpgp.lem3", **p)  # (K_u+1) = 5 and a smaller denominator


@pytest.mark.parametrize("K_u,Delta,lam,omq,C_up", [
    (1, 3, 0.999943552607, 8.06411e-6, 1.1843e10),  # card §5.8 table
    (1, 4, 0.999999533493, 5.18342e-8, 1.43292e12),
    (5, 3, None, 9.46625e-19, 3.71661e22),
])
def test_lemma3_push_sum_constants_against_card_table(K_u, Delta, lam, omq, C_up):
    """The card's table (§5.8) used d0 = 1.117e7 (ResNet-18 without its head; its §10.6 values use 1.1e7)."""
    lam_h, omq_h, C_h = hand_lemma3_constants(100, 11, K_u, Delta, 1, 1.117e7)
    if lam is not None:
        assert lam_h == pytest.approx(lam, rel=1e-11)
    assert omq_h == pytest.approx(omq, rel=1e-5) and C_h == pytest.approx(C_up, rel=1e-4)
    vals = dict(m=100, D=11, K_u=K_u, Delta_diam=Delta, B_conn=1, d0=1.117e7)
    assert ev("dfedpgp.lem3.C", **vals) == pytest.approx(C_h, rel=1e-9)
    q = ev("dfedpgp.lem3.q", **vals)
    if omq > 1e-12:
        assert 1 - q == pytest.approx(omq_h, rel=1e-6)
    else:  # float64 rounds lambda to 1: q evaluates to exactly 1 (documented)
        assert q == 1.0
    # the cancellation-free 1 - q used by cor1.lemma3_constants keeps full precision
    f = sp.lambdify([M.m, M.D, M.K_u, M.Delta, M.Bc], M.ONE_MINUS_Q_PS, "numpy")
    assert f(100, 11, K_u, Delta, 1) == pytest.approx(omq_h, rel=1e-10)


def test_paper_constants_are_vacuous_for_the_experiments_topology():
    """Card §10.3: 1 - q <= 8e-6 even at K_u = 1 and C^2/(1-q)^2 >= 1e30 (m = 100, D = 11, Delta = 3-4, B = 1)."""
    for Delta in (3, 4):
        _, omq, C = hand_lemma3_constants(100, 11, 1, Delta, 1, 1.1e7)
        assert omq <= 8.1e-6 and C**2 / omq**2 >= 1e30
    # so "C^2 << (1-q)^2 T" fails for every T below ~1e30
    thm = TH["dfedpgp.thm1"]
    t7 = next(c for c in thm.conditions if "C^2 <<" in c.text)
    _, omq, C = hand_lemma3_constants(100, 11, 1, 3, 1, 1.1e7)
    assert t7.margin_at(dict(C=C, q=1 - omq, T=1e29))[0] < 0 < t7.margin_at(dict(C=C, q=1 - omq, T=1e31))[0]


def test_remark2_and_its_sgp_reading():
    # card §5.8: m = 100, D = 11, B = 1: Delta = 2 -> q = 0.55780, 3 -> 0.98066, 4 -> 0.99863
    for Delta, q in ((2, 0.55780), (3, 0.98066), (4, 0.99863)):
        hand = (1 - 100 * 11.0 ** (-Delta)) ** (1 / (Delta + 1))
        assert hand == pytest.approx(q, abs=5e-6)
        assert ev("dfedpgp.rem2.sgp", m=100, D=11, Delta_diam=Delta, B_conn=1) == pytest.approx(hand, rel=1e-12)
        a = 100 ** (1 / Delta) / 11  # the mapping a = m^{1/(Delta B)}/D
        assert ev("dfedpgp.rem2", a=a, Delta_diam=Delta, B_conn=1) == pytest.approx(hand, rel=1e-10)
    # Delta = 1 (complete graph): lambda = 1 - 100/11 = -8.09 < 0, the condition a < 1 fails
    chk = TH["dfedpgp.rem2.sgp"].check(m=100, D=11, Delta_diam=1, B_conn=2)
    assert chk.ok  # B = 2: 100/121 < 1
    cond = TH["dfedpgp.rem2.sgp"].conditions[0]
    assert cond.margin_at(dict(m=100, D=11, Delta_diam=1, B_conn=1))[0] == pytest.approx(1 - 100 / 11)


def test_remark2_neighbour_claim_comes_from_the_diameter_only():
    """Card §10.7: (D, Delta) = (11, 4), (21, 3), (41, 2) give decreasing q; at fixed Delta, q grows with D."""
    qs = [ev("dfedpgp.rem2.sgp", m=100, D=D, Delta_diam=De, B_conn=1) for D, De in ((11, 4), (21, 3), (41, 2))]
    assert qs == pytest.approx([0.99863, 0.99729, 0.9798], abs=5e-5) and qs[0] > qs[1] > qs[2]
    at_fixed = [ev("dfedpgp.rem2.sgp", m=100, D=D, Delta_diam=3, B_conn=1) for D in (11, 21, 41)]
    assert at_fixed[0] < at_fixed[1] < at_fixed[2]


def test_lemma3_q_decreases_with_more_clients():
    """Card §10.8: lambda = 1 - m D^-E, so q falls as m grows (the bound predicts better convergence with more
    clients; Fig. 3b reports the opposite)."""
    qs = [ev("dfedpgp.lem3.q", m=m, D=11, K_u=1, Delta_diam=2, B_conn=1) for m in (5, 20, 100, 200)]
    assert all(a > b for a, b in zip(qs, qs[1:]))


# ------------------------------------------------------------------------------------------ descent (32)
def test_eq32_against_hand_computation():
    p = dict(P, Du_t=0.7, Dv_t=0.3)
    cu, cv, nu, nv = hand_eq32_parts(p)
    assert ev("dfedpgp.eq32", **p) == pytest.approx(cu * 0.7 + cv * 0.3 + nu + nv, rel=1e-12)
    cu, cv, nu, nv_c = hand_eq32_parts(p, corrected=True)
    assert ev("dfedpgp.eq32.corrected", **p) == pytest.approx(cu * 0.7 + cv * 0.3 + nu + nv_c, rel=1e-12)
    assert nv == pytest.approx(nv_c * p["L_v"] ** 2)
    assert cu < 0 and cv < 0  # at small step sizes (32) is a descent inequality


# ------------------------------------------------------------------------------------------ Theorem 1
def test_theorem1_printed_and_appendix_versions():
    assert ev("dfedpgp.thm1", **P) == pytest.approx(hand_thm1(P, dup=2), rel=1e-12)
    assert ev("dfedpgp.thm1.eq33", **P) == pytest.approx(hand_thm1(P, dup=1), rel=1e-12)
    s = P["sigma_u"] ** 2 + P["sigma_g"] ** 2
    diff = ev("dfedpgp.thm1", **P) - ev("dfedpgp.thm1.eq33", **P)
    assert diff == pytest.approx(s / (P["K_u"] * P["L_u"] * math.sqrt(P["T"])))  # the duplicated term


def test_explicit_bound_against_hand_computation():
    assert ev("dfedpgp.thm1.explicit", **P) == pytest.approx(hand_explicit(P), rel=1e-12)
    assert ev("dfedpgp.thm1.explicit_corrected", **P) == pytest.approx(hand_explicit(P, True), rel=1e-12)
    # u-branch: equal to the min-form where the u-descent binds
    cu, cv, _, _ = hand_eq32_parts(P)
    assert -cu * P["L_u"] <= -cv * P["L_v"]
    assert ev("dfedpgp.thm1.explicit_u", **P) == pytest.approx(ev("dfedpgp.thm1.explicit", **P), rel=1e-12)
    assert TH["dfedpgp.thm1.explicit"].check(**only(TH["dfedpgp.thm1.explicit"], P)).ok
    assert TH["dfedpgp.thm1.explicit_u"].check(**only(TH["dfedpgp.thm1.explicit_u"], P)).ok


def test_explicit_bound_is_negative_where_AA_is_negative():
    """Card §6.6 numeric check: K_u = 20, K_v = 4, corollary step sizes with c = 1, C = 6, q = 0.31,
    delta = 0.16, T = 500: 8 K_u (K_u+1) eta_u^2 L_u^2 C^2 = 0.6048 > (1-q)^2 = 0.4761, the bound is -107.4."""
    T = 500
    p = dict(K_u=20, K_v=4, L_u=1, L_v=1, L_vu=0.5, sigma_u=1, sigma_v=1, sigma_g=1, C=6, q=0.31, delta=0.16,
             T=T, f0_minus_fstar=2.3, eta_u=1 / (20 * math.sqrt(T)), eta_v=1 / (4 * math.sqrt(T)))
    assert 8 * 20 * 21 * p["eta_u"] ** 2 * 36 == pytest.approx(0.6048)
    value = ev("dfedpgp.thm1.explicit", **p)
    assert value == pytest.approx(-107.4, abs=0.05) and value == pytest.approx(hand_explicit(p), rel=1e-12)
    verdicts = {v.text.split(":")[0]: v.holds for v in TH["dfedpgp.thm1.explicit"].check(**p).conditions}
    assert verdicts["8 K_u (K_u+1) eta_u^2 L_u^2 C^2 < (1-q)^2"] is False


def test_corollary1_reference_values_and_K_u_trend():
    """Card §10.6 at fixed C = 6, q = 0.31: 2.2955, 2.2405, 2.2222, 2.2075 for K_u = 1, 2, 3, 5."""
    cor = TH["dfedpgp.cor1"]
    assert cor.evaluate(**cor.reference) == pytest.approx(cor.reference_value, abs=5e-5)
    for K_u, ref in ((1, 2.2955), (2, 2.2405), (3, 2.2222), (5, 2.2075)):
        p = dict(cor.reference, K_u=K_u)
        assert cor.evaluate(**p) == pytest.approx(ref, abs=5e-5)
        assert cor.evaluate(**p) == pytest.approx(hand_cor1(p), rel=1e-12)
    assert ev("dfedpgp.cor1", **P) == pytest.approx(hand_cor1(P), rel=1e-12)


def test_corollary1_with_lemma3_constants_grows_explosively_in_K_u():
    """Card §10.6: with Lemma 3's C and q (m = 100, D = 11, Delta = 3, B = 1, d0 = 1.1e7): 5.64e28, 3.60e41,
    1.91e54, 4.01e79 for K_u = 1, 2, 3, 5 -- Remark 1's 'more local steps help' fails."""
    cor = TH["dfedpgp.cor1.lemma3_constants"]
    vals = []
    for K_u, ref in ((1, 5.64e28), (2, 3.60e41), (3, 1.91e54), (5, 4.01e79)):
        p = dict(cor.reference, K_u=K_u)
        _, omq, Cup = hand_lemma3_constants(100, 11, K_u, 3, 1, 1.1e7)
        v = cor.evaluate(**p)
        assert v == pytest.approx(ref, rel=5e-3)
        assert v == pytest.approx(hand_cor1(dict(p, C=Cup, omq=omq)), rel=1e-8)
        vals.append(v)
    assert all(a < b for a, b in zip(vals, vals[1:]))


def test_remark3_rate():
    assert ev("dfedpgp.rem3", T=400) == pytest.approx(0.05)


# ------------------------------------------------------------------------------------------ conditions
def _cond(tid, start):
    return next(c for c in TH[tid].conditions if c.text.startswith(start))


CONDITION_CASES = [
    # (theorem, text prefix, values where it holds, values where it fails)
    ("dfedpgp.thm1", "eta_u < delta/(4 sqrt(2 L_u K_u))",
     dict(eta_u=0.0790, delta=1, L_u=1, K_u=5), dict(eta_u=0.0791, delta=1, L_u=1, K_u=5)),  # 1/(4 sqrt 10)=.07906
    ("dfedpgp.thm1", "eta_u < delta/(4 sqrt(2) K_u L_u)",
     dict(eta_u=0.0353, delta=1, L_u=1, K_u=5), dict(eta_u=0.0354, delta=1, L_u=1, K_u=5)),  # 1/(20 sqrt 2)=.035355
    ("dfedpgp.thm1", "eta_u < delta/(8 L_u K_u)",
     dict(eta_u=0.0249, delta=1, L_u=1, K_u=5), dict(eta_u=0.025, delta=1, L_u=1, K_u=5)),
    ("dfedpgp.thm1", "eta_v <= 1/(2 K_v L_v)",
     dict(eta_v=0.125, K_v=4, L_v=1), dict(eta_v=0.126, K_v=4, L_v=1)),
    ("dfedpgp.thm1", "8 K_u (K_u+1) eta_u^2 L_u^2 C^2 < (1-q)^2",  # 8*20*21*eta^2*36 vs 0.4761
     dict(K_u=20, eta_u=0.0019, L_u=1, C=6, q=0.31), dict(K_u=20, eta_u=0.0020, L_u=1, C=6, q=0.31)),
    ("dfedpgp.lem3", "8 K_u eta_u^2 L_u^2 C^2 < (1-q)^2",
     dict(K_u=2, eta_u=0.1, L_u=1, C=1, q=0.5), dict(K_u=2, eta_u=0.2, L_u=1, C=1, q=0.5)),  # .16 / .64 vs .25
    ("dfedpgp.thm1", "eta_v K_v < 1/(8 (L_v+1))",
     dict(eta_v=0.015, K_v=4, L_v=1), dict(eta_v=0.016, K_v=4, L_v=1)),  # 1/16 = 0.0625
    ("dfedpgp.thm1", "C^2 << (1-q)^2 T", dict(C=6, q=0.31, T=76), dict(C=6, q=0.31, T=75)),  # 36/.4761 = 75.6
    ("dfedpgp.thm1", "K_u >= 2", dict(K_u=2), dict(K_u=1)),
    ("dfedpgp.thm1", "K_v >= 2", dict(K_v=2), dict(K_v=1)),
    ("dfedpgp.lem3.q", "m D^-((K_u+1) Delta B) < 1",
     dict(m=100, D=11, K_u=1, Delta_diam=1, B_conn=1), dict(m=200, D=11, K_u=1, Delta_diam=1, B_conn=1)),  # 121
    ("dfedpgp.rem2", "a < 1", dict(a=0.99), dict(a=1.0)),
    ("dfedpgp.thm1.explicit_u", "eta_u (8 L_vu^2 C^2",  # 8*.25*36*21/.4761 + 5 = 3180.8 -> eta < 3.1439e-4
     dict(eta_u=3.14e-4, L_vu=0.5, C=6, K_u=20, q=0.31, L_u=1), dict(eta_u=3.15e-4, L_vu=0.5, C=6, K_u=20, q=0.31,
                                                                     L_u=1)),
    ("dfedpgp.thm1.explicit_u", "eta_u K_u L_u/2 <= -coef_v L_v",  # rhs = (0.1 - 0.16) ... choose eta_v small
     dict(eta_u=0.001, K_u=10, L_u=1, eta_v=0.01, K_v=1, L_v=1), dict(eta_u=0.002, K_u=10, L_u=1, eta_v=0.01, K_v=1,
                                                                      L_v=1)),
]


@pytest.mark.parametrize("tid,start,good,bad", CONDITION_CASES, ids=[c[1][:24] for c in CONDITION_CASES])
def test_each_condition_holds_and_fails(tid, start, good, bad):
    cond = _cond(tid, start)
    m_good, m_bad = cond.margin_at(good)[0], cond.margin_at(bad)[0]
    assert (m_good > 0 if cond.strict else m_good >= 0)
    assert (m_bad <= 0 if cond.strict else m_bad < 0)


def test_u_descent_condition_T5():
    """coef_u < 0 holds at small eta_u and fails at large eta_u (with AA > 0); hand-checked through coef_u."""
    cond = _cond("dfedpgp.thm1", "coefficient of E[Delta_ubar^t]")
    base = dict(K_u=5, L_u=1.0, L_vu=0.5, C=2.0, q=0.5, delta=0.5)
    for eta, holds in ((1e-4, True), (3e-3, True), (6e-3, False)):
        cu = hand_eq32_parts(dict(P, **base, eta_u=eta))[0]
        assert hand_AA(eta, 5, 1.0, 2.0, 0.5) > 0 and (cu < 0) is holds
        assert (cond.margin_at(dict(base, eta_u=eta))[0] > 0) is holds


def test_theorem_step_size_conditions_are_ordered():
    """T2 (Lemma 2, 8) is stricter than T1' (Lemma 3, 4 sqrt 2); printed T1 is looser than T1' iff K_u L_u > 1."""
    t1, t1p, t2 = (_cond("dfedpgp.thm1", s) for s in ("eta_u < delta/(4 sqrt(2 L_u", "eta_u < delta/(4 sqrt(2) K_u",
                                                      "eta_u < delta/(8 L_u"))
    for K_u, L_u in ((2, 1.0), (20, 0.1), (5, 3.0)):
        v = dict(delta=0.5, K_u=K_u, L_u=L_u, eta_u=0)
        th1, th1p, th2 = (c.margin_at(v)[0] for c in (t1, t1p, t2))  # margins at eta = 0 are the thresholds
        assert th2 < th1p and th2 == pytest.approx(0.5 / (8 * K_u * L_u))
        assert (th1 > th1p) is (K_u * L_u > 1)


# ------------------------------------------------------------------------------------------ card §10 claims
def _numeric_partial(thm, name, point, h=1e-6):
    up, down = dict(point), dict(point)
    up[name] = point[name] * (1 + h)
    down[name] = point[name] * (1 - h)
    return (thm.evaluate(**up) - thm.evaluate(**down)) / (2 * h * point[name])


@pytest.mark.parametrize("tid", ["dfedpgp.thm1", "dfedpgp.thm1.eq33", "dfedpgp.cor1"])
def test_monotonicity_of_theorem_and_corollary(tid):
    """Card §10.5: increasing in C, q, sigma's, L_vu, F1 - F*; decreasing in delta, K_u, T."""
    thm = TH[tid]
    rng = random.Random(3)
    for _ in range(20):
        pt = dict(f0_minus_fstar=rng.uniform(0.1, 5), T=rng.randint(10, 10**5), K_u=rng.randint(1, 30),
                  L_u=rng.uniform(0.1, 5), L_v=rng.uniform(0.1, 5), L_uv=rng.uniform(0.01, 2),
                  L_vu=rng.uniform(0.01, 2), sigma_u=rng.uniform(0.1, 2), sigma_v=rng.uniform(0.1, 2),
                  sigma_g=rng.uniform(0.1, 2), C=rng.uniform(0.5, 10), q=rng.uniform(0.05, 0.95),
                  delta=rng.uniform(0.05, 1))
        pt = only(thm, pt)
        for name in ("C", "q", "sigma_u", "sigma_v", "sigma_g", "f0_minus_fstar"):
            assert _numeric_partial(thm, name, pt) > 0, name
        assert _numeric_partial(thm, "delta", pt) < 0
        assert thm.evaluate(**dict(pt, T=pt["T"] + 1)) < thm.evaluate(**pt)
        assert thm.evaluate(**dict(pt, K_u=pt["K_u"] + 1)) < thm.evaluate(**pt)
        if tid != "dfedpgp.cor1" or pt["L_vu"] > pt["L_uv"]:
            assert _numeric_partial(thm, "L_vu", pt) > 0
    # symbolic sign of d/dC, d/ddelta for thm1: every term is a monomial, so the signs are exact
    w = sp.Symbol("one_minus_q", positive=True)  # q < 1: write q = 1 - w so that sympy knows (1-q)^2 > 0
    b = thm.bound.subs(M.q, 1 - w)
    assert all(sp.sign(term.diff(M.C)) in (0, 1) for term in sp.Add.make_args(sp.expand(b)))
    assert all(sp.sign(term.diff(M.delta)) in (0, -1) for term in sp.Add.make_args(sp.expand(b)))


def test_no_client_count_and_topology_only_through_L_vu_at_leading_order():
    """Card §10.9-10.10: m appears nowhere; with L_vu = 0 the sqrt(T)-coefficient has no C or q."""
    for tid in ("dfedpgp.thm1", "dfedpgp.thm1.eq33", "dfedpgp.cor1"):
        assert M.m not in TH[tid].bound.free_symbols
    lead = sp.limit(TH["dfedpgp.thm1.eq33"].bound * sp.sqrt(M.T), M.T, sp.oo)
    assert M.C in lead.free_symbols and M.q in lead.free_symbols
    lead0 = sp.limit(TH["dfedpgp.thm1.eq33"].bound.subs(M.L_vu, 0) * sp.sqrt(M.T), M.T, sp.oo)
    assert not ({M.C, M.q} & lead0.free_symbols)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.1, 5), st.floats(0.1, 5), st.floats(0, 3), st.floats(0, 3), st.floats(0.05, 0.95),
       st.integers(10, 10**6), st.integers(1, 40))
def test_corollary_dominates_theorem(L_u, L_v, L_uv, L_vu, q, T, K_u):
    """Card §10.11: cor1 >= thm1 (33), because L_vu^2/L_u^2 <= chi^2 L_v/L_u (Assumption 2)."""
    p = dict(P, L_u=L_u, L_v=L_v, L_uv=L_uv, L_vu=L_vu, q=q, T=T, K_u=K_u)
    assert ev("dfedpgp.cor1", **p) >= ev("dfedpgp.thm1.eq33", **p) * (1 - 1e-12)
    if L_uv <= L_vu:  # chi = L_vu/sqrt(L_u L_v): then they coincide
        assert ev("dfedpgp.cor1", **p) == pytest.approx(ev("dfedpgp.thm1.eq33", **p), rel=1e-10)


def test_explicit_bound_rate_at_corollary_step_sizes():
    """Card §10.12: at eta_u = 1/(L_u K_u sqrt T), eta_v = 1/(L_v K_v sqrt T) the log-log slope of the explicit
    bound tends to -1/2; its sqrt(T)-coefficient is 2(F1-F*)/c + 8c(1+L_v)sigma_v^2 + 5c S/(K_u L_u)
    + 8c(K_u+1) L_vu^2 C^2 S/(K_u L_u^2 (1-q)^2) (hand expansion, S = sigma_u^2 + sigma_g^2)."""
    thm = TH["dfedpgp.thm1.explicit"]
    base = dict(K_u=20, K_v=4, L_u=1.0, L_v=1.0, L_vu=0.5, sigma_u=1, sigma_v=1, sigma_g=1, C=6, q=0.31,
                delta=0.16, f0_minus_fstar=2.3)
    c = 1.0

    def at(T):
        return thm.evaluate(**base, T=T, eta_u=c / (20 * math.sqrt(T)), eta_v=c / (4 * math.sqrt(T)))

    T1, T2 = 1e10, 1e12
    slope = math.log(at(T2) / at(T1)) / math.log(T2 / T1)
    assert slope == pytest.approx(-0.5, abs=1e-3)
    S = 2.0
    coef = 2 * 2.3 / c + 8 * c * 2 * 1 + 5 * c * S / 20 + 8 * c * 21 * 0.25 * 36 * S / (20 * 0.69**2)
    assert at(1e14) * 1e7 == pytest.approx(coef, rel=1e-3)
    # Corollary 1 (constants 1) has the same T-shape: its sqrt(T) coefficient is a different constant
    cor = TH["dfedpgp.cor1"]
    ratio = [at(T) / cor.evaluate(**only(cor, dict(base, T=T, L_uv=0.5))) for T in (1e12, 1e14)]
    assert ratio[0] == pytest.approx(ratio[1], rel=1e-3)


def test_corrected_v_noise_changes_the_leading_term_by_L_v_squared():
    thm, corr = TH["dfedpgp.thm1.explicit"], TH["dfedpgp.thm1.explicit_corrected"]
    p = only(thm, dict(P, L_v=3.0))
    a, b = thm.evaluate_terms(**p), corr.evaluate_terms(**p)
    assert a["personal_noise"] == pytest.approx(9 * b["personal_noise"])
    assert a["optimization"] == pytest.approx(b["optimization"])


def test_T4_under_the_schedule_is_a_threshold_on_T():
    """Card §10.15: at the corollary's step sizes T4 <=> T > 8 c^2 (K_u+1) C^2/(K_u (1-q)^2): T > 635 at
    K_u = 20, C = 6, q = 0.31, c = 1."""
    cond = _cond("dfedpgp.thm1", "8 K_u (K_u+1)")
    thr = 8 * 21 * 36 / (20 * 0.69**2)
    assert thr == pytest.approx(635.2, abs=0.1)
    for T, holds in ((thr * 0.999, False), (thr * 1.001, True)):
        v = dict(K_u=20, L_u=2.0, C=6, q=0.31, eta_u=1 / (2.0 * 20 * math.sqrt(T)))
        assert (cond.margin_at(v)[0] > 0) is holds  # L_u cancels


# ------------------------------------------------------------------------------------------ experiments
@pytest.fixture()
def local_get(monkeypatch):
    monkeypatch.setattr(settings_mod, "get", TH.__getitem__)


def _by_relation(out, start):
    return next(c for c in out if c["text"].startswith(start))


def test_experiments_are_tied_to_theorem1_with_free_L_u_and_L_v():
    assert len(M.EXPERIMENTS) == 4
    for s in M.EXPERIMENTS:
        thm = TH[s.theorem]
        assert set(s.values) <= set(thm.symbols) and s.free == ("L_u", "L_v")
        assert all(f in thm.symbols for f in s.free)


def test_violations_of_the_cifar_setting(local_get):
    """Card §10.14: eta_u = 0.1, K_u = 20, delta = 1: T2 needs L_u < 0.0625, T1' L_u < 0.0884, T1 L_u < 0.15625;
    eta_v = 0.1, K_v = 4: T3 needs L_v <= 1.25 and T6 fails for every L_v."""
    s = next(e for e in M.EXPERIMENTS if e.id == "dfedpgp.exp.cifar")
    out = settings_mod.violations(s, "L_u")
    assert _by_relation(out, "eta_u < delta/(8 L_u K_u)")["violated_for"] == "L_u in [0.0625, inf)"
    assert _by_relation(out, "eta_u < delta/(4 sqrt(2) K_u")["violated_for"] == "L_u in [0.08839, inf)"
    assert _by_relation(out, "eta_u < delta/(4 sqrt(2 L_u K_u))")["violated_for"] == "L_u in [0.1562, inf)"
    assert _by_relation(out, "eta_v K_v < 1/(8 (L_v+1))")["violated_for"] == "all L_u"
    assert _by_relation(out, "K_u >= 2")["holds"] is True
    assert _by_relation(out, "8 K_u (K_u+1)")["holds"] is None  # needs C, q
    out_v = settings_mod.violations(s, "L_v")
    assert _by_relation(out_v, "eta_v <= 1/(2 K_v L_v)")["violated_for"] == "L_v in (1.25, inf)"
    # with the card's empirical push-sum constants, T4 needs L_u < 0.0198 (and then u-descent T5 fails)
    out_c = settings_mod.violations(s, "L_u", L_v=1, L_vu=0.5, C=6, q=0.31)
    assert _by_relation(out_c, "8 K_u (K_u+1)")["violated_for"] == "L_u in [0.01984, inf)"
    assert _by_relation(out_c, "coefficient of E[Delta_ubar^t]")["violated_for"] == "L_u in (0, 0.01984]"


def test_violations_of_the_epoch_reading_and_column_stochastic_delta(local_get):
    s = next(e for e in M.EXPERIMENTS if e.id == "dfedpgp.exp.cifar.epochs")
    out = settings_mod.violations(s, "L_u")
    assert _by_relation(out, "K_v >= 2")["violated_for"] == "all L_u"
    assert _by_relation(out, "eta_u < delta/(8 L_u K_u)")["violated_for"] == "L_u in [0.25, inf)"
    # column-stochastic delta ~ 0.16 shrinks the T2 limit linearly (card §10.14)
    main = next(e for e in M.EXPERIMENTS if e.id == "dfedpgp.exp.cifar")
    t2 = _cond(main.theorem, "eta_u < delta/(8 L_u K_u)")
    v = dict(main.values, delta=0.16)
    limit = 0.16 * 0.0625
    assert t2.margin_at(dict(v, L_u=limit * (1 - 1e-9)))[0] > 0 > t2.margin_at(dict(v, L_u=limit * (1 + 1e-9)))[0]


def test_experiment_check_runs_and_reports_failures():
    s = next(e for e in M.EXPERIMENTS if e.id == "dfedpgp.exp.cifar")
    thm = TH[s.theorem]
    chk = thm.check(**s.values, L_u=1.0, L_v=1.0, L_vu=0.5, sigma_u=1, sigma_v=1, sigma_g=1, C=6, q=0.31,
                    f0_minus_fstar=2.3)
    assert not chk.ok and np.isfinite(chk.value)
    failed = {v.text.split(",")[0].split(":")[0] for v in chk.violated}
    assert "eta_u < delta/(8 L_u K_u)" in failed and "eta_v K_v < 1/(8 (L_v+1))" in failed
