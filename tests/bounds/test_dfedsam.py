"""Tests of the DFedSAM / DFedSAM-MGS bounds (seed 001, card ../shared/spec/dfedsam.md).

Formulas are checked against plain-float transcriptions of the LaTeX written here independently of the sympy
module, against the card's reference values (6.6 (f), 5.4) and against the card's testable claims (section 10).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dfltheory.papers.dfedsam import theorems as d
from dfltheory.bounds.settings import violations
from dfltheory.bounds.symbols import DomainError

BY_ID = {t.id: t for t in d.THEOREMS}
REF = dict(eta=0.001, K=20, T=1000, L=1.0, rho=0.01, sigma_l=1.0, sigma_g=1.0, B=1.0, lam=0.733333, m=100, Q=4,
           f0_minus_fstar=2.3)


# ------------------------------------------------------------------------- plain-float transcriptions of the paper
def phi(lam, m, Q):
    """eq. (6)."""
    return (lam**Q + 1) / ((1 - lam) ** 2 * m ** (2 * (Q - 1))) + (lam**Q + 1) / (1 - lam**Q) ** 2


def c2(K, L, eta, rho, sl, sg, B):
    """C_2 of Lemma E.2 (seed L379)."""
    return 2 * K * (4 * K**3 * L**2 * rho**4 / (2 * K - 1) + 8 * K * (L**2 * rho**2 + sg**2 + sl**2) + 8 * K * B**2) \
        + 2 * K * rho**2 / (eta**2 * (2 * K - 1))


def c1(K, L, eta, rho, sl, sg):
    """C_1 of (22) (seed L527), bracket closed at the end."""
    return 2 * K * (4 * K**3 * L**2 * eta**2 * rho**4 / (2 * K - 1) + 8 * K * eta**2 * (L**2 * rho**2 + sg**2 + sl**2)
                    + 2 * K * rho**2 / (2 * K - 1))


def thm41(eta, K, T, L, rho, sigma_l, sigma_g, B, lam, m, Q, f0_minus_fstar, factor=None):
    """eq. (7) with alpha, beta of seed L128; ``factor`` replaces Phi."""
    den = eta * K - 32 * eta**3 * K**2 * L**2
    alpha = eta * L**2 * K**2 / den * (4 * K**3 * L**2 * eta**2 * rho**4 / (2 * K - 1)
                                       + 8 * K * eta**2 * (L**2 * rho**2 + sigma_g**2 + sigma_l**2)
                                       + 2 * K * rho**2 / (2 * K - 1))
    beta = 64 * eta**5 * K**3 * L**4 / den * (4 * K**3 * L**2 * rho**4 / (2 * K - 1)
                                              + 8 * K * (L**2 * rho**2 + sigma_g**2 + sigma_l**2) + 8 * K * B**2
                                              + rho**2 / (eta**2 * (2 * K - 1)))
    fac = phi(lam, m, Q) if factor is None else factor
    return 2 * f0_minus_fstar / (T * den) + alpha + fac * beta


def proof_final(eta, K, T, L, rho, sigma_l, sigma_g, B, f0_minus_fstar, factor):
    """Seed L542 / L618: (2f - 2f*)/(T den) + (eta L^2 K C1/2 + 16 C2 eta^5 K^2 L^4 factor)/den."""
    den = eta * K - 32 * eta**3 * K**2 * L**2
    cc1, cc2 = c1(K, L, eta, rho, sigma_l, sigma_g), c2(K, L, eta, rho, sigma_l, sigma_g, B)
    return 2 * f0_minus_fstar / (T * den) + (eta * L**2 * K * cc1 / 2 + 16 * cc2 * eta**5 * K**2 * L**4 * factor) / den


def repaired(eta, K, T, L, rho, sigma_l, sigma_g, B, lam, m, Q, f0_minus_fstar, consensus):
    """Telescoped descent with card 6.9 items 1-3 repaired (and item 4 when ``consensus``), written out by hand.

    per round: -(eta K/2) g + a (eta L^2 K/2) [C1_E1 + 16 K^2 eta^2 G2] + b (eta L^2 K/2) C2 eta^2 Phi
               + (L/2) eta^2 K^2 B^2,  G2 <= 2 L^2 C2 eta^2 Phi + 2 g;  (a, b) = (1, 0) or (2, 2).
    """
    a, b = (2, 2) if consensus else (1, 0)
    sig = L**2 * rho**2 + sigma_g**2 + sigma_l**2
    c1_e1 = 2 * K * (4 * K**3 * L**2 * eta**2 * rho**4 / (2 * K - 1) + 8 * K * eta**2 * sig) + 2 * K * rho**2 / (2 * K - 1)
    cons = c2(K, L, eta, rho, sigma_l, sigma_g, B) * eta**2 * phi(lam, m, Q)
    g_coef = eta * K / 2 - a * eta * L**2 * K / 2 * 16 * K**2 * eta**2 * 2          # coefficient of -g
    rest = a * eta * L**2 * K / 2 * (c1_e1 + 16 * K**2 * eta**2 * 2 * L**2 * cons) + b * eta * L**2 * K / 2 * cons \
        + L / 2 * eta**2 * K**2 * B**2
    return (f0_minus_fstar / T + rest) / g_coef


def at(thm, values):
    return thm.evaluate(**{k: v for k, v in values.items() if k in thm.symbols})


# ------------------------------------------------------------------------- catalog structure
EXPECTED_IDS = {
    "dfedsam.thm4.1", "dfedsam.thm4.1.E2", "dfedsam.thm4.1.proofE2", "dfedsam.thm4.1.proofE3",
    "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus", "dfedsam.thm4.1.tight",
    "dfedsam.cor4.1.1", "dfedsam.cor4.1.1.anyrho", "dfedsam.cor4.1.1.derived", "dfedsam.cor4.1.1.abstract",
    "dfedsam.cor4.1.2", "dfedsam.cor4.1.2.anyrho", "dfedsam.cor4.1.2.derived", "dfedsam.cor4.1.2.abstract",
    "dfedsam.rem1", "dfedsam.eq6", "dfedsam.eq6.tight", "dfedsam.lemD.1", "dfedsam.lemD.2", "dfedsam.lemD.3",
    "dfedsam.lemD.3.as_used", "dfedsam.lemE.1", "dfedsam.lemE.2", "dfedsam.lemE.3", "dfedsam.lemE.3.tight",
}


def test_ids_references_and_provenance():
    assert set(BY_ID) == EXPECTED_IDS and len(d.THEOREMS) == len(EXPECTED_IDS)
    for t in d.THEOREMS:
        assert t.paper == "dfedsam" and t.source.seed == d.SEED
        for ref in (t.parent, t.variant_of):
            assert ref is None or ref in BY_ID, (t.id, ref)
        assert (t.variant == "printed") == (t.variant_of is None), t.id
        if t.kind == "corollary":
            assert t.parent and "eta" in t.schedule
    tags = {t.id: t.source.tag for t in d.THEOREMS}
    assert tags["dfedsam.thm4.1"] == "SEED" and tags["dfedsam.thm4.1.E2"] == "INTERP"
    assert {tags[i] for i in ("dfedsam.thm4.1.corrected", "dfedsam.thm4.1.corrected_consensus",
                              "dfedsam.thm4.1.tight", "dfedsam.lemE.3.tight", "dfedsam.eq6.tight")} == {"CORRECTED"}
    assert {tags[i] for i in ("dfedsam.cor4.1.1.derived", "dfedsam.cor4.1.2.derived")} == {"DERIVED"}
    assert BY_ID["dfedsam.cor4.1.1"].big_o and not BY_ID["dfedsam.cor4.1.1.derived"].big_o


# ------------------------------------------------------------------------- reference values (card 6.6 (f))
@pytest.mark.parametrize("tid", sorted(t.id for t in d.THEOREMS if t.reference_value is not None))
def test_card_reference_values(tid):
    t = BY_ID[tid]
    assert t.evaluate(**t.reference) == pytest.approx(t.reference_value, rel=1e-9)


def test_card_reference_values_by_hand():
    assert thm41(**REF) == pytest.approx(0.2386358532, rel=1e-9)
    assert thm41(**{**REF, "Q": 1}) == pytest.approx(0.2392069530, rel=1e-9)
    assert d.THM41.evaluate(**{**REF, "Q": 1}) == pytest.approx(0.2392069530, rel=1e-9)
    K, T, lam = 20, 1000, 0.733333
    cor411 = 2.3 / math.sqrt(K * T) + K * 2 / T + K / (T**2 * (1 - lam) ** 2) + K**1.5 / T**2 \
        + 1 / (T**2 * (1 - lam) ** 2) + K * 2 / (T**2 * (1 - lam) ** 2)
    assert cor411 == pytest.approx(0.0572107090, rel=1e-9)
    cor412 = 2.3 / math.sqrt(K * T) + K * 2 / T + K**1.5 / T**2 + phi(lam, 100, 4) * (1 + K * 3) / T**2
    assert cor412 == pytest.approx(0.0565085534, rel=1e-9)


# ------------------------------------------------------------------------- every formula against a hand transcription
POINTS = [REF, {**REF, "Q": 1}, dict(eta=0.003, K=5, T=50, L=2.0, rho=0.2, sigma_l=0.5, sigma_g=2.0, B=3.0, lam=0.5,
                                     m=7, Q=2, f0_minus_fstar=10.0)]


@pytest.mark.parametrize("p", POINTS)
def test_theorem41_family_by_hand(p):
    e2 = dict(p, factor=1 / (1 - p["lam"]) ** 2)
    short = {k: p[k] for k in ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g", "B", "f0_minus_fstar")}
    assert at(d.THM41, p) == pytest.approx(thm41(**p), rel=1e-11)
    assert at(d.THM41_E2, p) == pytest.approx(thm41(**e2), rel=1e-11)
    assert at(d.THM41_TIGHT, p) == pytest.approx(thm41(**dict(p, factor=1 / (1 - p["lam"] ** p["Q"]) ** 2)), rel=1e-11)
    assert at(d.THM41_PROOF_E2, p) == pytest.approx(proof_final(**short, factor=e2["factor"]), rel=1e-11)
    assert at(d.THM41_PROOF_E3, p) == pytest.approx(proof_final(**short, factor=phi(p["lam"], p["m"], p["Q"])), rel=1e-11)
    assert at(d.THM41_CORRECTED, p) == pytest.approx(repaired(**p, consensus=False), rel=1e-11)
    assert at(d.THM41_CORRECTED_CONSENSUS, p) == pytest.approx(repaired(**p, consensus=True), rel=1e-11)


@settings(max_examples=60, deadline=None)
@given(eta=st.floats(1e-5, 1e-2), K=st.integers(1, 50), T=st.integers(1, 10**5), L=st.floats(0.01, 5),
       rho=st.floats(1e-6, 1), lam=st.floats(0, 0.999), m=st.integers(1, 300), Q=st.integers(1, 8))
def test_theorem41_matches_hand_everywhere(eta, K, T, L, rho, lam, m, Q):
    p = dict(eta=eta, K=K, T=T, L=L, rho=rho, sigma_l=0.7, sigma_g=1.3, B=2.0, lam=lam, m=m, Q=Q, f0_minus_fstar=1.0)
    if eta * K - 32 * eta**3 * K**2 * L**2 <= 1e-12:
        return
    assert d.THM41.evaluate(**p) == pytest.approx(thm41(**p), rel=1e-9)


def test_corollaries_and_remark_by_hand():
    p = dict(f0_minus_fstar=3.0, K=8, T=500, L=1.5, beta_h=1.2, sigma_l=0.4, sigma_g=1.0, B=2.0, lam=0.9, rho=0.05,
             m=20, Q=3, c=0.5, r=2.0)
    K, T, L, be, sl, sg, B, lam, rho, m, Q, c, r, f0 = (p[k] for k in ("K", "T", "L", "beta_h", "sigma_l", "sigma_g", "B",
                                                                       "lam", "rho", "m", "Q", "c", "r", "f0_minus_fstar"))
    g = (1 - lam) ** 2
    ph = phi(lam, m, Q)
    hand = {
        "dfedsam.cor4.1.1": f0 / math.sqrt(K * T) + K * (be**2 + sl**2) / T + K * B**2 / (T**2 * g) + K**1.5 * L**4 / T**2
        + L**2 / (T**2 * g) + K * (be**2 + sl**2) / (T**2 * g),
        "dfedsam.cor4.1.2": f0 / math.sqrt(K * T) + K * (be**2 + sl**2) / T + K**1.5 * L**4 / T**2
        + ph * (L**2 + K * (be**2 + sl**2 + B**2)) / T**2,
        "dfedsam.cor4.1.1.anyrho": f0 / math.sqrt(K * T) + K**1.5 * L**2 * rho**4 / T + K * (L**4 * rho**2 + sg**2 + sl**2) / T
        + L**2 * rho**2 / (T * g) + K * B**2 / (T**2 * g) + K**2 * L**2 * rho**4 / (T**2 * g)
        + K * (L**2 * rho**2 + sg**2 + sl**2) / (T**2 * g),
        "dfedsam.cor4.1.2.anyrho": f0 / math.sqrt(K * T) + K**1.5 * L**2 * rho**4 / T + K * (L**4 * rho**2 + be**2 + sl**2) / T
        + ph * (L**2 * rho**2 / T + K**2 * L**2 * rho**4 / T**2 + K * (L**2 * rho**2 + be**2 + sl**2 + B**2) / T**2),
        "dfedsam.cor4.1.1.abstract": 1 / T + 1 / (T**2 * g),
        "dfedsam.cor4.1.2.abstract": 1 / T + (lam**Q + 1) / (T**2 * (1 - lam**Q) ** 2),
        "dfedsam.rem1": 1 / math.sqrt(T) + (sg**2 + B**2) / math.sqrt(T) + (sg**2 + B**2) / (g * T**1.5),
    }
    for fac, tid in ((1 / g, "dfedsam.cor4.1.1.derived"), (ph, "dfedsam.cor4.1.2.derived")):
        hand[tid] = 2 * L * f0 / (c * math.sqrt(K * T)) + 8 * K * c**2 * (sg**2 + sl**2) / T \
            + 2 * K**2 * L**2 * r**2 / ((2 * K - 1) * T) \
            + fac * (512 * K * c**4 * (B**2 + sg**2 + sl**2) + 64 * K * c**2 * L**2 * r**2 / (2 * K - 1)) / T**2
    for tid, val in hand.items():
        assert at(BY_ID[tid], p) == pytest.approx(val, rel=1e-11), tid


def test_lemmas_and_phi_by_hand():
    K, L, eta, rho, sl, sg, B, lam, m, Q, G2, s, be = 6, 2.0, 0.01, 0.1, 0.3, 0.8, 1.5, 0.8, 12, 3, 4.0, 7, 1.1
    p = dict(K=K, L=L, eta=eta, rho=rho, sigma_l=sl, sigma_g=sg, B=B, lam=lam, m=m, Q=Q, G2=G2, s=s, beta_h=be)
    e1 = 2 * K * (4 * K**3 * L**2 * eta**2 * rho**4 / (2 * K - 1) + 8 * K * eta**2 * (L**2 * rho**2 + sg**2 + sl**2)
                  + 8 * K * eta**2 * G2) + 2 * K * rho**2 / (2 * K - 1)
    cc2 = c2(K, L, eta, rho, sl, sg, B)
    hand = {
        "dfedsam.lemD.1": lam**s, "dfedsam.lemD.2": 3 * sg**2 + 6 * L**2 * rho**2,
        "dfedsam.lemD.3": 2 * K**2 * be**2 * eta**2 * rho**2, "dfedsam.lemD.3.as_used": 2 * K**2 * L**2 * eta**2 * rho**4,
        "dfedsam.lemE.1": e1, "dfedsam.lemE.2": cc2 * eta**2 / (1 - lam) ** 2,
        "dfedsam.lemE.3": cc2 * eta**2 * phi(lam, m, Q), "dfedsam.lemE.3.tight": cc2 * eta**2 / (1 - lam**Q) ** 2,
        "dfedsam.eq6": phi(lam, m, Q), "dfedsam.eq6.tight": 1 / (1 - lam**Q) ** 2,
    }
    for tid, val in hand.items():
        assert at(BY_ID[tid], p) == pytest.approx(val, rel=1e-12), tid
    # Lemma E.2 as printed in matrix form (seed L425): E||X - PX||^2 <= m C2 eta^2/(1-lam)^2
    assert m * at(BY_ID["dfedsam.lemE.2"], p) == pytest.approx(m * cc2 * eta**2 / (1 - lam) ** 2, rel=1e-12)


def test_domain_and_infinite_ends():
    assert d.THM41.evaluate(**{**REF, "lam": 1.0}) == math.inf
    with pytest.raises(DomainError):
        d.THM41.evaluate(**{**REF, "lam": 1.5})
    with pytest.raises(DomainError):
        d.THM41.evaluate(**{**REF, "Q": 0})


# ------------------------------------------------------------------------- conditions
# relation -> (values where it holds, values where it fails); every condition of the module must be listed
COND_CASES = {
    "eta <= 1/(10*K*L)": ({"eta": 0.005, "K": 20, "L": 1}, {"eta": 0.0051, "K": 20, "L": 1}),
    "eta <= 1/(4*K*L)": ({"eta": 0.0125, "K": 20, "L": 1}, {"eta": 0.013, "K": 20, "L": 1}),
    "-32*K**2*L**2*eta**3 + K*eta > 0": ({"eta": 0.039, "K": 20, "L": 1}, {"eta": 0.04, "K": 20, "L": 1}),
    "-32*K**3*L**2*eta**3 + K*eta > 0": ({"eta": 0.0088, "K": 20, "L": 1}, {"eta": 0.0089, "K": 20, "L": 1}),
    "-64*K**3*L**2*eta**3 + K*eta > 0": ({"eta": 0.0062, "K": 20, "L": 1}, {"eta": 0.0063, "K": 20, "L": 1}),
    "T >= 100*K*c**2": ({"T": 2000, "K": 20, "c": 1}, {"T": 1999, "K": 20, "c": 1}),
    "sigma_g <= beta_h": ({"sigma_g": 1, "beta_h": 1}, {"sigma_g": 1, "beta_h": 0.9}),
    "Q > 1": ({"Q": 2}, {"Q": 1}),
}


def test_every_condition_holds_and_fails_where_expected():
    seen = set()
    for t in d.THEOREMS:
        for cond in t.conditions:
            rel = sp.sstr(cond.relation)
            assert rel in COND_CASES, f"{t.id}: untested condition {rel}"
            seen.add(rel)
            good, bad = COND_CASES[rel]
            for vals, expected in ((good, True), (bad, False)):
                margin, _ = cond.margin_at(vals)
                assert (margin > 0 if cond.strict else margin >= 0) is expected, (t.id, rel, vals)
    assert seen == set(COND_CASES)


def test_check_reports_violated_condition():
    ok = d.THM41.check(**{**REF, "eta": 0.004})
    assert ok.ok and not ok.violated
    bad = d.THM41.check(**{**REF, "eta": 0.006})
    assert [v.relation for v in bad.violated] == ["eta <= 1/(10*K*L)"]
    assert d.THM41.largest("eta", K=20, L=1) == pytest.approx(0.005)
    assert d.COR412.smallest("T", K=20, c=1, sigma_g=1, beta_h=1, Q=4) == 2000


def test_implied_conditions_follow_from_the_step_size_condition():
    """eta <= 1/(10KL) implies every denominator condition (32/100 < 1, 64/100 < 1) and eta <= 1/(4KL)."""
    for K in (1, 5, 20, 200):
        for L in (0.1, 1.0, 30.0):
            vals = {"eta": 1 / (10 * K * L), "K": K, "L": L}
            for t in (d.THM41, d.THM41_CORRECTED, d.THM41_CORRECTED_CONSENSUS):
                assert all(c.margin_at(vals)[0] > (0 if c.strict else -1e-15) for c in t.conditions), (t.id, K, L)


def test_bound_is_negative_beyond_the_denominator_condition():
    assert d.THM41.evaluate(**{**REF, "eta": 0.05}) < 0


# ------------------------------------------------------------------------- card section 10 claims on Phi
lam_s, m_s, Q_s = d.lam, d.m, d.Q


def test_phi_identities():
    assert sp.simplify(d.PHI.subs(Q_s, 1) - 2 * (1 + lam_s) / (1 - lam_s) ** 2) == 0
    assert sp.simplify(d.PHI.subs(lam_s, 0) - (1 + m_s ** (-2 * (Q_s - 1)))) == 0
    assert sp.simplify(sp.limit(d.PHI.subs(Q_s, 3), m_s, sp.oo) - (1 + lam_s**3) / (1 - lam_s**3) ** 2) == 0
    assert abs(d.PHI.subs({lam_s: sp.Rational(99, 100), m_s: 2, Q_s: 5000}).evalf(30) - 1) < 1e-12   # Q -> oo
    assert phi(0.0, 100, 1) == 2.0                                      # Phi(0, m, 1) = 2, not 1


def test_phi_monotone_and_bounded_below():
    lam = np.linspace(0, 0.999, 200)[:, None, None]
    m = np.arange(2, 201)[None, :, None].astype(float)
    Q = np.arange(1, 11)[None, None, :].astype(float)
    P = phi(lam, m, Q)
    assert np.all(np.diff(P, axis=0) >= 0) and np.all(np.diff(P[40:], axis=0) > 0)   # strict once lam^Q > eps
    assert np.all(np.diff(P, axis=1) <= 1e-12 * P[:, 1:, :])
    assert np.all(np.diff(P, axis=2) <= 1e-12 * P[:, :, 1:])
    assert np.allclose(P[:, :, 0], P[:, :1, 0])                         # Q = 1: independent of m
    lower = (1 + lam**Q) / (1 - lam**Q) ** 2
    assert np.all(P >= lower) and np.all(lower >= 1 / (1 - lam**Q) ** 2)
    assert np.allclose(d.EQ6.evaluate(lam=lam, m=m, Q=Q), P, rtol=1e-12)


def test_phi_near_lambda_one():
    for mm, qq in ((10, 3), (100, 2), (5, 1)):
        lim = sp.limit(((1 - lam_s) ** 2 * d.PHI).subs({m_s: mm, Q_s: qq}), lam_s, 1)
        assert lim == sp.Rational(2, mm ** (2 * (qq - 1))) + sp.Rational(2, qq**2)


@pytest.mark.parametrize("lam,m,vals", [
    (0.0, 100, (2.0, 1.0001, 1.0, 1.0)), (0.5, 100, (12.0, 2.222722, 1.469388, 1.208889)),
    (0.9, 100, (380.0, 50.156604, 23.542709, 14.003036)), (0.99, 100, (39800.0, 5002.106359, 2233.520956, 1262.721904)),
    (0.0, 10, (2.0, 1.01, 1.0001, 1.000001)), (0.5, 10, (12.0, 2.272222, 1.469838, 1.208893)),
    (0.9, 10, (380.0, 51.948504, 23.559998, 14.003202)), (0.99, 10, (39800.0, 5198.136259, 2235.491058, 1262.74151)),
])
def test_phi_card_table(lam, m, vals):
    """Card 5.4, generic values of Phi(lam, m, Q) for Q = 1..4."""
    got = [d.EQ6.evaluate(lam=lam, m=m, Q=q) for q in (1, 2, 3, 4)]
    assert got == pytest.approx(list(vals), rel=2e-7)


def test_phi_ratios_and_remark2_thresholds_on_reference_topologies():
    """Card 10 items 3-4: Phi(Q=4)/Phi(Q=1) at m = 100, and the Q that Phi <= 2 (m large) needs."""
    lams = {"ring": 0.998684, "grid": 0.979470, "torus": 0.923607, "exponential": 0.733333, "full": 0.0}
    ratios = {"ring": 0.0313, "grid": 0.0322, "exponential": 0.0523, "full": 0.5}
    for name, want in ratios.items():
        assert phi(lams[name], 100, 4) / phi(lams[name], 100, 1) == pytest.approx(want, abs=6e-5)
    x = sp.nsolve((1 + sp.Symbol("x")) / (1 - sp.Symbol("x")) ** 2 - 2, 0.2)
    assert float(x) == pytest.approx((5 - math.sqrt(17)) / 4, rel=1e-12)
    need = {name: math.ceil(math.log((5 - math.sqrt(17)) / 4) / math.log(lams[name]))
            for name in ("ring", "grid", "torus", "exponential")}
    assert need == {"ring": 1153, "grid": 74, "torus": 20, "exponential": 5}
    assert all(q > 4 for q in need.values())                            # the experiments' Q = 4 is below all


def _ring(n):
    W = np.zeros((n, n))
    for i in range(n):
        for j in (i - 1, i, i + 1):
            W[i, j % n] = 1 / 3
    return W


def test_lemma_d1_tight_and_tight_e3_factor():
    """Card 10 items 5-6 on the 30-ring with weights 1/3: ||W^s - P|| = lam^s; ||W^Q|| = ||P|| = 1;
    sum_s ||W^{Qs} - P|| <= 1/(1 - lam^Q) <= sqrt(Phi)."""
    n = 30
    W, P = _ring(n), np.full((n, n), 1 / n)
    norm = lambda A: np.abs(np.linalg.eigvalsh(A)).max()               # spectral norm of a symmetric matrix
    lam = sorted(abs(np.linalg.eigvalsh(W)))[-2]
    assert lam == pytest.approx((1 + 2 * math.cos(2 * math.pi / n)) / 3, rel=1e-12)
    powers = [np.eye(n)]
    for _ in range(200):
        powers.append(powers[-1] @ W)
    for s in range(1, 41):
        assert norm(powers[s] - P) == pytest.approx(d.LEM_D1.evaluate(lam=lam, s=s), rel=1e-8)
    for Q in (1, 2, 4):
        assert norm(powers[Q]) == pytest.approx(1.0) and norm(P) == pytest.approx(1.0)
        total = sum(norm(powers[Q * k] - P) for k in range(200 // Q + 1))
        assert total <= 1 / (1 - lam**Q) <= math.sqrt(phi(lam, n, Q))


# ------------------------------------------------------------------------- card section 10 claims on Theorem 4.1
def test_theorem41_monotonicity():
    base = d.THM41.evaluate(**REF)
    for name, up in (("lam", 0.8), ("sigma_l", 2.0), ("sigma_g", 2.0), ("B", 2.0), ("rho", 0.02)):
        assert d.THM41.evaluate(**{**REF, name: up}) > base, name
    assert d.THM41.evaluate(**{**REF, "T": 2000}) < base
    assert d.THM41.evaluate(**{**REF, "Q": 2, "m": 4}) < d.THM41.evaluate(**{**REF, "Q": 2, "m": 3})
    assert d.THM41.evaluate(**{**REF, "Q": 1, "m": 200}) == pytest.approx(d.THM41.evaluate(**{**REF, "Q": 1}), rel=1e-14)
    vals = [d.THM41.evaluate(**{**REF, "Q": q}) for q in range(1, 9)]
    assert all(b <= a for a, b in zip(vals, vals[1:]))


def test_theorem41_minimised_at_rho_zero_and_its_floor():
    """Card 10 items 8-9: d bound/d rho > 0; with fixed rho and eta -> 0 the bound tends to 2K^2L^2rho^2/(2K-1)."""
    dr = sp.diff(d.THM41.bound, d.rho)
    f = sp.lambdify(sorted(dr.free_symbols, key=str), dr)
    names = [str(x) for x in sorted(dr.free_symbols, key=str)]
    for rho in (1e-4, 0.01, 0.5):
        assert f(*[{**REF, "rho": rho}[n] for n in names]) > 0
    K, L, rho = d.K, d.L, d.rho
    assert sp.simplify(sp.limit(d.ALPHA, d.eta, 0) - 2 * K**2 * L**2 * rho**2 / (2 * K - 1)) == 0
    assert sp.limit(d.BETA, d.eta, 0) == 0
    assert 2 * 20**2 * 0.01**2 / 39 == pytest.approx(2.05e-3, rel=1e-3)
    tiny = {**REF, "eta": 1e-9, "T": 10**30}
    assert d.THM41.evaluate(**tiny) == pytest.approx(2 * 20**2 * 0.01**2 / 39, rel=1e-6)


def test_printed_theorem_against_its_proof():
    """alpha = eta L^2 K C1/(2 den) with C1's bracket closed at the end; beta = 2 * 16 C2 eta^5 K^2 L^4/den; so the
    Theorem's topology term is twice the proof's (L618) and 4(1+lam) times the DFedSAM proof's (L542) at Q = 1."""
    e, K, L = d.eta, d.K, d.L
    assert sp.simplify(d.ALPHA - e * L**2 * K * d.C1 / (2 * d.DEN)) == 0
    assert sp.simplify(d.BETA - 32 * d.C2 * e**5 * K**2 * L**4 / d.DEN) == 0
    p = {**REF, "Q": 1}
    t41 = d.THM41.evaluate_terms(**p)["topology"]
    short = {k: v for k, v in p.items() if k not in ("m", "Q")}
    assert t41 / d.THM41_E2.evaluate_terms(**short)["topology"] == pytest.approx(2 * (1 + REF["lam"]), rel=1e-12)
    e2_terms = d.THM41_PROOF_E2.evaluate_terms(**short)
    assert t41 / e2_terms["topology"] == pytest.approx(4 * (1 + REF["lam"]), rel=1e-12)
    assert d.THM41.evaluate_terms(**REF)["topology"] == pytest.approx(
        2 * d.THM41_PROOF_E3.evaluate_terms(**REF)["topology"], rel=1e-12)
    # Lemma E.1's bracket: its rho^2 term 2K rho^2/(2K-1) is 2K times smaller than the one in the Theorem's C_1
    assert sp.simplify((d.C1 - d.C1_E1) - 2 * K * d.rho**2) == 0


def test_variants_order():
    """tight <= printed; E2 <= printed at Q = 1; the repaired bounds exceed the printed one at the reference."""
    assert at(d.THM41_TIGHT, REF) < d.THM41.evaluate(**REF)
    p1 = {**REF, "Q": 1}
    assert at(d.THM41_E2, p1) < d.THM41.evaluate(**p1)
    assert at(d.THM41_TIGHT, p1) == pytest.approx(at(d.THM41_E2, p1), rel=1e-14)
    assert d.THM41_CORRECTED.evaluate(**REF) > d.THM41.evaluate(**REF)
    assert d.THM41_CORRECTED_CONSENSUS.evaluate(**REF) > d.THM41_CORRECTED.evaluate(**REF)


# ------------------------------------------------------------------------- corollaries under the schedule
def _sub(thm, schedule):
    return {thm.symbols[k].symbol: v for k, v in schedule.items()}


@pytest.mark.parametrize("tid", ["dfedsam.cor4.1.1.derived", "dfedsam.cor4.1.2.derived"])
def test_derived_rates_are_the_leading_terms_of_the_parent(tid):
    """Card 10 item 10: term by term, parent(schedule)/derived -> 1 as T -> oo."""
    cor = BY_ID[tid]
    par = BY_ID[cor.parent]
    sub = _sub(par, cor.schedule)
    for name, e in cor.terms.items():
        ratio = sp.simplify(sp.sympify(par.terms[name]).subs(sub) / e)
        assert sp.simplify(sp.limit(ratio, d.T, sp.oo) - 1) == 0, name


def test_corrected_bounds_change_the_rate():
    """Under the schedule the restored B^2 term is c B^2 sqrt(K)/sqrt(T) (the leading order) and the kept consensus
    term makes the topology enter at Phi/T, not Phi/T^2."""
    sub = _sub(d.THM41_CORRECTED, d.SCHEDULE)
    T, c, K, B = d.T, d.c, d.K, d.B
    upd = d.THM41_CORRECTED.terms["update_norm"].subs(sub)
    assert sp.simplify(sp.limit(upd * sp.sqrt(T), T, sp.oo) - c * B**2 * sp.sqrt(K)) == 0
    cons = d.THM41_CORRECTED_CONSENSUS.terms["consensus"].subs(sub) / d.PHI
    lim = sp.limit(sp.simplify(cons * T), T, sp.oo)
    sg, sl, L, r = d.sigma_g, d.sigma_l, d.L, d.r
    assert sp.simplify(lim - 4 * K * (8 * c**2 * (2 * K - 1) * (B**2 + sg**2 + sl**2) + L**2 * r**2) / (2 * K - 1)) == 0
    top = d.THM41_CORRECTED.terms["topology"].subs(sub) / d.PHI
    assert sp.limit(sp.simplify(top * T), T, sp.oo) == 0                # still 1/T^2 without the consensus term


def test_schedule_meets_step_size_condition_iff_T_large():
    """Card 10 item 12: c/(L sqrt(KT)) <= 1/(10KL) iff T >= 100 c^2 K."""
    eta_s = d.SCHEDULE["eta"].subs(d.T, 100 * d.c**2 * d.K)
    assert sp.simplify(eta_s - 1 / (10 * d.K * d.L)) == 0
    f = sp.lambdify((d.c, d.K, d.T, d.L), d.SCHEDULE["eta"] - 1 / (10 * d.K * d.L))
    assert f(1, 20, 2000, 3.0) == pytest.approx(0, abs=1e-15) and f(1, 20, 1999, 3.0) > 0 and f(1, 20, 2001, 3.0) < 0


def test_remark1_threshold_is_not_derivable():
    """Card 10 item 13: K(b^2+s^2)/(T^2(1-lam)^2) > K(b^2+s^2)/T iff lam > 1 - 1/sqrt(T); at lam = 0, which meets the
    printed lam <= 1 - K^{1/4}/T^{3/2}, the topology term does not dominate."""
    cor = d.COR411
    p = dict(f0_minus_fstar=1.0, K=20, T=1000, L=1.0, beta_h=1.0, sigma_l=1.0, B=1.0)
    thr = 1 - 1 / math.sqrt(1000)
    for lam, dominates in ((thr - 1e-6, False), (thr + 1e-6, True), (0.0, False)):
        t = cor.evaluate_terms(**p, lam=lam)
        assert (t["topology_noise"] > t["noise"]) is dominates
    assert 0.0 <= 1 - 20**0.25 / 1000**1.5


def test_abstract_rates_drop_the_leading_term():
    p = dict(f0_minus_fstar=1.0, K=20, T=10**6, L=1.0, beta_h=1.0, sigma_l=1.0, B=1.0, lam=0.5, m=100, Q=4)
    for tid in ("dfedsam.cor4.1.1", "dfedsam.cor4.1.2"):
        full, abstract = at(BY_ID[tid], p), at(BY_ID[tid + ".abstract"], p)
        assert full / abstract > 100                                    # 1/sqrt(KT) >> 1/T at large T


# ------------------------------------------------------------------------- experiments
def test_experiment_settings_are_well_formed():
    ids = [e.id for e in d.EXPERIMENTS]
    assert len(ids) == len(set(ids))
    for e in d.EXPERIMENTS:
        assert e.paper == "dfedsam" and e.theorem in BY_ID
        assert set(e.values) <= set(BY_ID[e.theorem].symbols)
        chk = e.check(L=0.06, sigma_l=1.0, sigma_g=1.0, B=1.0, lam=0.9, f0_minus_fstar=1.0)
        assert chk.ok == (10 * e.values["K"] * 0.06 * e.values["eta"] <= 1), e.id
        assert chk.ok == (e.values["K"] == 5)                           # only the K = 5 (epochs) reading holds


def test_experiments_violate_the_step_size_condition():
    """eta = 0.1 with K = 20 steps needs L <= 0.05; with K = 5 (epochs), L <= 0.2 (card 10 item 11)."""
    exp = {e.id: e for e in d.EXPERIMENTS}
    main = violations(exp["dfedsam.exp.table1.mgs"], "L")
    got = {v["relation"]: v["violated_for"] for v in main}
    assert got == {"eta <= 1/(10*K*L)": "L in (0.05, inf)", "-32*K**2*L**2*eta**3 + K*eta > 0": "L in [0.3953, inf)",
                   "eta <= 1/(4*K*L)": "L in (0.125, inf)"}
    epochs = {v["relation"]: v["violated_for"] for v in violations(exp["dfedsam.exp.table1.mgs.epochs"], "L")}
    assert epochs["eta <= 1/(10*K*L)"] == "L in (0.2, inf)"
