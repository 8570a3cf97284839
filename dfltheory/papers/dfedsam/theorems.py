"""Bounds of DFedSAM and DFedSAM-MGS (seed 001; theorem card ``../shared/spec/dfedsam.md``).

"Improving Model Consistency of Decentralized Federated Learning via Sharpness Aware Minimization and Multiple
Gossip Approaches" (anonymous ICLR-2023 submission). DFedSAM = K local SAM steps, then one gossip step with a fixed
symmetric doubly stochastic W; DFedSAM-MGS = the same with Q gossip steps (W^Q). Every bound below bounds
``min_{1<=t<=T} E||grad f(x_bar^t)||^2`` at the average ``x_bar^t`` of the round-start (post-gossip) models, unless
its ``quantity`` says otherwise.

The main formula, eq. (7) of Theorem 4.1 (seed L124-128, card 6.6)::

    bound = 2 (f(x^1) - f*) / (T den)  +  alpha(K, rho, eta)  +  Phi(lam, m, Q) beta(K, rho, eta, lam)
    den   = eta K - 32 eta^3 K^2 L^2
    Phi   = (lam^Q + 1) / ((1 - lam)^2 m^(2(Q-1)))  +  (lam^Q + 1) / (1 - lam^Q)^2          (eq. (6))

The module-level expressions (``PHI``, ``ALPHA``, ``BETA``, ``C1``, ``C2``, ...) are exported for the empirical
pillar. Variants: ``printed`` is always the paper's formula; ``E2`` reads the Theorem at Q = 1 with the factor of
its own proof; ``proofE2``/``proofE3`` are the appendix's final lines; ``corrected``/``corrected_consensus`` repair
the slips of card 6.9; ``tight`` replaces Phi by the factor a correct Lemma E.3 gives.
"""

from __future__ import annotations

import sympy as sp

from dfltheory.bounds.settings import ExperimentSetting
from dfltheory.bounds.symbols import COMMON, Var
from dfltheory.bounds.theorem import Condition, Source, Theorem

__all__ = ["THEOREMS", "EXPERIMENTS", "PHI", "PHI_TIGHT", "PHI_E2", "DEN", "ALPHA", "BETA", "C1", "C1_E1", "C2",
           "SCHEDULE"]

#: the form of the heterogeneity assumption the theorems' sigma_g bounds (catalog.SIGMA_G_FORMS; card §4)
SIGMA_G_FORM = "mean"
SEED = "001_971acadc811cefdf.txt"
CARD = "dfedsam.md"

# ----------------------------------------------------------------------------------------------- symbols
_V = {n: COMMON[n] for n in ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g", "B", "lam", "m", "Q",
                             "f0_minus_fstar", "beta_h", "c", "r")}
G2_VAR = Var("G2", "mean squared full gradient at the clients' models, (1/m) sum_i E||grad f(x^t(i))||^2 "
             "(Lemma E.1)", low=0, low_open=False, latex=r"\frac1m\sum_i\mathbb{E}\|\nabla f(x^t(i))\|^2")
S_VAR = Var("s", "power of the mixing matrix W (number of gossip steps applied) in Lemma D.1", low=1,
            low_open=False, integer=True)

eta, K, T, L, rho = (_V[n].symbol for n in ("eta", "K", "T", "L", "rho"))
sigma_l, sigma_g, B, lam, m, Q = (_V[n].symbol for n in ("sigma_l", "sigma_g", "B", "lam", "m", "Q"))
f0, beta_h, c, r = (_V[n].symbol for n in ("f0_minus_fstar", "beta_h", "c", "r"))
G2, s = G2_VAR.symbol, S_VAR.symbol

# ----------------------------------------------------------------------------------------------- building blocks
#: common denominator of Theorem 4.1 (seed L124)
DEN = eta * K - 32 * eta**3 * K**2 * L**2
#: the two terms of Phi(lam, m, Q), eq. (6) (seed L120): "slow" (through 1 - lam) and "fast" (through 1 - lam^Q)
PHI_SLOW = (lam**Q + 1) / ((1 - lam) ** 2 * m ** (2 * (Q - 1)))
PHI_FAST = (lam**Q + 1) / (1 - lam**Q) ** 2
PHI = PHI_SLOW + PHI_FAST
#: consensus factor of Lemma E.2 (DFedSAM, Q = 1; seed L377)
PHI_E2 = 1 / (1 - lam) ** 2
#: consensus factor of a correct Lemma E.3 (Lemma D.1 applied to W^Q, ||W^Q|| = 1; card 6.9 item 5)
PHI_TIGHT = 1 / (1 - lam**Q) ** 2
_SIG2 = L**2 * rho**2 + sigma_g**2 + sigma_l**2
_RHO4 = 4 * K**3 * L**2 * rho**4 / (2 * K - 1)
#: alpha(K, rho, eta) of Theorem 4.1 (seed L128), split into its eta-dependent part and its eta-free rho^2 part
ALPHA_DRIFT = eta * L**2 * K**2 / DEN * (_RHO4 * eta**2 + 8 * K * eta**2 * _SIG2)
ALPHA_RHO = eta * L**2 * K**2 / DEN * (2 * K * rho**2 / (2 * K - 1))
ALPHA = ALPHA_DRIFT + ALPHA_RHO
#: beta(K, rho, eta, lam) of Theorem 4.1 (seed L128); it does not depend on lam despite its name
BETA = 64 * eta**5 * K**3 * L**4 / DEN * (_RHO4 + 8 * K * _SIG2 + 8 * K * B**2 + rho**2 / (eta**2 * (2 * K - 1)))
#: C_1 of (22) (seed L527), its unclosed bracket closed at the end (reproduces alpha exactly)
C1 = 2 * K * (_RHO4 * eta**2 + 8 * K * eta**2 * _SIG2 + 2 * K * rho**2 / (2 * K - 1))
#: the constant part of Lemma E.1's bound (seed L341): the rho^2 term sits outside the 2K(...) bracket
C1_E1 = 2 * K * (_RHO4 * eta**2 + 8 * K * eta**2 * _SIG2) + 2 * K * rho**2 / (2 * K - 1)
#: C_2 of Lemmas E.2, E.3 (seed L379)
C2 = 2 * K * (_RHO4 + 8 * K * _SIG2 + 8 * K * B**2) + 2 * K * rho**2 / (eta**2 * (2 * K - 1))
#: the corollaries' schedule (seed L132, L138): eta = O(1/(L sqrt(KT))), rho = O(1/sqrt(T))
SCHEDULE = {"eta": c / (L * sp.sqrt(K * T)), "rho": r / sp.sqrt(T)}


def _src(lines: str, equation: str = "", card: str = "", tag: str = "SEED") -> Source:
    return Source(SEED, lines, equation, f"{CARD} {card}".strip(), tag)


def _vars(*names: str, extra: tuple[Var, ...] = ()) -> tuple[Var, ...]:
    return tuple(_V[n] for n in names) + extra


_ALL = ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g", "B", "lam", "m", "Q", "f0_minus_fstar")
_ALL_E2 = tuple(n for n in _ALL if n not in ("m", "Q"))
_COR = ("f0_minus_fstar", "K", "T", "L", "beta_h", "sigma_l", "sigma_g", "B", "lam", "eta", "rho", "c", "r")
_ASSUMPTIONS = ("Assumption 1 (L-smooth f_i)", "Assumption 2 (sigma_l, sigma_g bounded variance)",
                "Assumption 3 (||grad f_i|| <= B)", "Definition 1 (fixed symmetric W, 0 <= lam < 1)",
                "identical initialisation X^0 = 0 (used by Lemmas E.2/E.3, seed L403)",
                "K large enough (Lemmas E.2/E.3, no threshold given)")
_MIN_T = "min_{1<=t<=T} E||grad f(x_bar^t)||^2, x_bar^t = (1/m) sum_i x^t(i) the average round-start model"

# ----------------------------------------------------------------------------------------------- conditions
_ETA_10 = Condition(eta <= 1 / (10 * K * L), "0 < eta <= 1/(10KL) (Theorem 4.1's step-size condition)",
                    _src("L118", "Theorem 4.1", "6.6 (c)1"))
_ETA_4 = Condition(eta <= 1 / (4 * K * L), "eta <= 1/(4KL) (Lemma D.3, used through Lemma E.1; implied by "
                   "eta <= 1/(10KL))", _src("L323", "Lemma D.3", "6.6 (c)3"))
_DEN_POS = Condition(DEN > 0, "eta K - 32 eta^3 K^2 L^2 > 0: the bound is positive and finite (implied by "
                     "eta <= 1/(10KL))", _src("L124", "eq. (7)", "6.6 (c)2", "DERIVED"), origin="derived",
                     why="keeps the bound's denominator positive; implied by the paper's eta <= 1/(10KL), so it never changes a verdict")
_THM_CONDS = (_ETA_10, _DEN_POS, _ETA_4)
_T_LARGE = Condition(T >= 100 * c**2 * K, "T >= 100 c^2 K: the schedule eta = c/(L sqrt(KT)) meets "
                     "eta <= 1/(10KL) (the proof also asks for it, seed L544)",
                     _src("L544", "Corollary 4.1.1 proof", "10 item 12", "DERIVED"), origin="paper")
_SIGMA_BETA = Condition(sigma_g <= beta_h, "sigma_g <= beta (Definition 2 / Assumption 2: sigma_g^2 <= beta^2); "
                        "the corollaries replace sigma_g by beta", _src("L112, L552", "Definition 2", "4"))
_Q_GT_1 = Condition(Q > 1, "Q > 1 (DFedSAM-MGS; Corollary 4.1.2 and proof E.3)", _src("L138, L335", "", "6.8"))


def _thm(id_, title, terms, variables, source, conditions=_THM_CONDS, **kw) -> Theorem:
    kw.setdefault("quantity", _MIN_T)
    kw.setdefault("assumptions", _ASSUMPTIONS)
    return Theorem(id=id_, paper="dfedsam", kind=kw.pop("kind", "theorem"), title=title, terms=terms,
                   variables=variables, source=source, conditions=conditions, **kw)


# ----------------------------------------------------------------------------------------------- Theorem 4.1
_REF_THM = dict(eta=0.001, K=20, T=1000, L=1, rho=0.01, sigma_l=1, sigma_g=1, B=1, lam=0.733333, m=100,
                f0_minus_fstar=2.3)
_OPT = 2 * f0 / (T * DEN)

THM41 = _thm(
    "dfedsam.thm4.1", "Theorem 4.1, eq. (7): convergence of DFedSAM (Q = 1) or DFedSAM-MGS (Q >= 1), as printed",
    {"optimization": _OPT, "drift": ALPHA_DRIFT, "sam_radius": ALPHA_RHO, "topology": PHI * BETA},
    _vars(*_ALL), _src("L118-128", "eq. (6), (7)", "6.6"),
    reference={**_REF_THM, "Q": 4}, reference_value=0.2386358532,
    notes="Printed bound (f(x^1) read as f(x_bar^1)). drift + sam_radius = alpha(K, rho, eta); topology = "
          "Phi(lam, m, Q) beta(K, rho, eta, lam). sam_radius does not vanish as eta -> 0: the floor is "
          "2 K^2 L^2 rho^2/(2K-1) (it bounds the distance of the perturbed point y + delta). At Q = 1 Phi = "
          "2(1+lam)/(1-lam)^2, 2(1+lam) times the 1/(1-lam)^2 of the DFedSAM proof (Lemma E.2): see variant E2. "
          "The Theorem's alpha lacks the factor 2 of the final division that its beta carries (64 = 2*32); see "
          "the corrected variants. Card reference at Q = 1: 0.2392069530.",
)

THM41_E2 = _thm(
    "dfedsam.thm4.1.E2", "Theorem 4.1 for DFedSAM (Q = 1) with the consensus factor 1/(1-lam)^2 of Lemma E.2",
    {"optimization": _OPT, "drift": ALPHA_DRIFT, "sam_radius": ALPHA_RHO, "topology": PHI_E2 * BETA},
    _vars(*_ALL_E2), _src("L118-128, L377, L542", "eq. (7) with Lemma E.2", "5.3, 6.6 (b), 11 item 1", "INTERP"),
    variant="E2", variant_of="dfedsam.thm4.1",
    notes="Reading of Theorem 4.1 at Q = 1 with the factor its own DFedSAM proof gives (1/(1-lam)^2 instead of "
          "Phi(lam, m, 1) = 2(1+lam)/(1-lam)^2, which is 2x to 4x larger). alpha and beta as printed in the "
          "Theorem. Corollary 4.1.1 (DFedSAM) uses this factor. The experiments' DFedSAM runs (Q = 1) fall here.",
)

_PROOF_OPT = (2 * f0) / (T * DEN)  # printed as (2 f(x_bar^1) - 2 f*)/(T den)
THM41_PROOF_E2 = _thm(
    "dfedsam.thm4.1.proofE2", "Final line of proof E.2 (DFedSAM), as printed",
    {"optimization": _PROOF_OPT, "drift_and_radius": (eta * L**2 * K * C1 / 2) / DEN,
     "topology": (16 * C2 * eta**5 * K**2 * L**4 / (1 - lam) ** 2) / DEN},
    _vars(*_ALL_E2), _src("L542", "proof E.2, after (24)", "6.5"),
    variant="proofE2", variant_of="dfedsam.thm4.1",
    notes="Equals alpha + beta/(2(1-lam)^2): half the Theorem's beta (the appendix drops the factor 2 of the "
          "final division on both fractions; the Theorem restores it on beta only) and Lemma E.2's 1/(1-lam)^2. "
          "Its topology term is 4(1+lam) times smaller than the Theorem's at Q = 1.",
)

THM41_PROOF_E3 = _thm(
    "dfedsam.thm4.1.proofE3", "Final line of proof E.3 (DFedSAM-MGS), as printed",
    {"optimization": _PROOF_OPT, "drift_and_radius": (eta * L**2 * K * C1 / 2) / DEN,
     "topology": (16 * C2 * eta**5 * K**2 * L**4 * PHI) / DEN},
    _vars(*_ALL), _src("L618", "proof E.3, after (32)", "6.5"),
    variant="proofE3", variant_of="dfedsam.thm4.1",
    notes="Equals alpha + Phi beta/2: the Theorem's topology term is twice the one its proof prints.",
)


def _repaired(a: int, consensus: bool) -> dict[str, sp.Expr]:
    """Terms of the telescoped descent with the slips of card 6.9 items 1-3 repaired.

    Per round, E f(x_bar^{t+1}) <= E f(x_bar^t) - (eta K/2) g^2 + (a eta L^2 K/2) Drift + (b eta L^2 K/2) Cons
    + (L/2) eta^2 K^2 B^2 with Drift <= C1_E1 + 16 K^2 eta^2 G2 (Lemma E.1: the lost factor K restored),
    Cons <= C2 eta^2 Phi (Lemma E.3), G2 <= 2 L^2 Cons + 2 g^2 (23); a = 1, b = 0 is the paper's step (20),
    a = b = 2 keeps the consensus term that (20) drops (||x_bar - y - delta||^2 <= 2 Cons + 2 Drift). Summed and
    divided by T (eta K - 32 a eta^3 K^3 L^2)/2 (the factor 2 applied to every term).
    """
    den = eta * K - 32 * a * eta**3 * K**3 * L**2
    terms = {
        "optimization": 2 * f0 / (T * den),
        "drift": a * eta * L**2 * K * 2 * K * (_RHO4 * eta**2 + 8 * K * eta**2 * _SIG2) / den,
        "sam_radius": a * eta * L**2 * K * 2 * K * rho**2 / ((2 * K - 1) * den),
        "update_norm": L * eta**2 * K**2 * B**2 / den,
        "topology": 32 * a * C2 * eta**5 * K**3 * L**4 * PHI / den,
    }
    if consensus:
        terms["consensus"] = 2 * eta * L**2 * K * C2 * eta**2 * PHI / den
    return terms


def _den_cond(a: int) -> Condition:
    den = eta * K - 32 * a * eta**3 * K**3 * L**2
    return Condition(den > 0, f"eta K - {32 * a} eta^3 K^3 L^2 > 0: the repaired bound is positive and finite "
                     "(implied by eta <= 1/(10KL))", _src("L524, L536", "(22), (24) repaired", "6.9", "DERIVED"), origin="derived",
                     why="keeps the repaired bound's denominator positive; implied by the paper's eta <= 1/(10KL)")


THM41_CORRECTED = _thm(
    "dfedsam.thm4.1.corrected", "Theorem 4.1 with the bookkeeping slips of its proof repaired (card 6.9 items 1-3)",
    _repaired(1, consensus=False), _vars(*_ALL), _src("L511-542, L598-618", "(20)-(24), (30)-(32)",
                                                      "6.9 items 1-3, 11 items 2-4", "CORRECTED"),
    conditions=(_ETA_10, _ETA_4, _den_cond(1)), variant="corrected", variant_of="dfedsam.thm4.1",
    notes="One variant for the three arithmetic repairs, which all come from the same chain (20)-(24) and have a "
          "unique repair: (1) the factor 2 of the final division applied to every term, with C_1 bracketed as "
          "Lemma E.1 bounds it (the rho^2 term 2K rho^2/(2K-1) outside 2K(...); the Theorem's C_1 has it inside, "
          "2K times larger, so the eta-free floor drops from 2K^2 L^2 rho^2/(2K-1) to 2K L^2 rho^2/(2K-1)); "
          "(2) the lost factor K in (22): (eta L^2 K/2) 2K 8K eta^2 = 8 eta^3 K^3 L^2, so "
          "den = eta K - 32 eta^3 K^3 L^2 and beta gets K^3 -> K^4; (3) the (L/2) eta^2 K^2 B^2 term of (21)-(22) "
          "kept (update_norm; under the corollary schedule it is c B^2 sqrt(K)/sqrt(T), the order of the leading "
          "term). The gap in (20) (item 4) is in corrected_consensus. Phi kept as printed.",
)

THM41_CORRECTED_CONSENSUS = _thm(
    "dfedsam.thm4.1.corrected_consensus",
    "Theorem 4.1 repaired (items 1-3) and with the consensus term that step (20) drops (card 6.9 item 4)",
    _repaired(2, consensus=True), _vars(*_ALL), _src("L505-511", "(20)", "6.9 item 4, 11 item 5", "CORRECTED"),
    conditions=(_ETA_10, _ETA_4, _den_cond(2)), variant="corrected_consensus", variant_of="dfedsam.thm4.1",
    notes="Step (20) replaces grad f(x_bar^t) by grad f(x^t(i)) (seed L367 defines grad f_i(x^t) := "
          "grad f(x^t(i))). Done correctly, ||x_bar - y - delta||^2 <= 2 ||x_bar - x(i)||^2 + 2 ||x(i) - y - delta||^2 "
          "doubles the drift coefficient and adds 2 eta L^2 K C_2 eta^2 Phi/den ~ 2 L^2 C_2 eta^2 Phi. Under the "
          "corollary schedule that is Phi O(1/T), not Phi O(1/T^2): the headline 1/(T^2 (1-lam)^2) rests on the "
          "dropped term (card confidence: medium).",
)

THM41_TIGHT = _thm(
    "dfedsam.thm4.1.tight", "Theorem 4.1 with Phi replaced by 1/(1-lam^Q)^2 (a correct Lemma E.3)",
    {"optimization": _OPT, "drift": ALPHA_DRIFT, "sam_radius": ALPHA_RHO, "topology": PHI_TIGHT * BETA},
    _vars(*(n for n in _ALL if n != "m")), _src("L435-473", "Lemma E.3 redone", "5.3, 6.9 item 5", "CORRECTED"),
    variant="tight", variant_of="dfedsam.thm4.1",
    notes="Lemma D.1 applied to W^Q (||W^{Qs} - P|| <= lam^{Qs}) with ||W^Q|| = 1 gives the consensus factor "
          "1/(1-lam^Q)^2 <= Phi; the m^{2(Q-1)} term of Phi is an artefact of treating ||P|| as 1/m. At Q = 1 it "
          "is Lemma E.2's 1/(1-lam)^2. A tightening, not a repair of a wrong bound: Phi is still an upper bound.",
)

# ----------------------------------------------------------------------------------------------- corollaries
_COR_CONDS = (_T_LARGE, _SIGMA_BETA)
_REF_COR = dict(K=20, T=1000, L=1, sigma_l=1, B=1, lam=0.733333, f0_minus_fstar=2.3, beta_h=1)
_KAPPA = beta_h**2 + sigma_l**2


def _cor(id_, title, terms, variables, source, parent, schedule=SCHEDULE, conditions=_COR_CONDS, **kw):
    kw.setdefault("big_o", True)
    return _thm(id_, title, terms, variables, source, conditions=conditions, kind="corollary", parent=parent,
                schedule=dict(schedule), **kw)


COR411 = _cor(
    "dfedsam.cor4.1.1", "Corollary 4.1.1: rate of DFedSAM with eta = O(1/(L sqrt(KT))), rho = O(1/sqrt(T))",
    {"optimization": f0 / sp.sqrt(K * T), "noise": K * _KAPPA / T, "topology_B": K * B**2 / (T**2 * (1 - lam) ** 2),
     "higher_order": K ** sp.Rational(3, 2) * L**4 / T**2, "topology_L": L**2 / (T**2 * (1 - lam) ** 2),
     "topology_noise": K * _KAPPA / (T**2 * (1 - lam) ** 2)},
    _vars(*_COR), _src("L132-134, L544-554", "Corollary 4.1.1", "6.7"), parent="dfedsam.thm4.1.E2",
    reference=_REF_COR, reference_value=0.0572107090,
    notes="Stated as O(.); terms taken with constants 1. Parent: Theorem 4.1 at Q = 1 with Lemma E.2's factor "
          "(the corollary has 1/(1-lam)^2; thm4.1 itself gives the same orders with 2(1+lam)/(1-lam)^2). The "
          "exact substitution gives no K^{3/2} L^4/T^2 term and an extra 2K^2 L^2 r^2/((2K-1)T) ~ K L^2 r^2/T "
          "(alpha's rho^2 part), absent here; see cor4.1.1.derived. sigma_g replaced by beta (Definition 2, "
          "seed L552). Cites a nonexistent 'Theorem 4.1.1'.",
)

COR412 = _cor(
    "dfedsam.cor4.1.2", "Corollary 4.1.2: rate of DFedSAM-MGS (Q > 1) with eta = O(1/(L sqrt(KT))), rho = O(1/sqrt(T))",
    {"optimization": f0 / sp.sqrt(K * T), "noise": K * _KAPPA / T, "higher_order": K ** sp.Rational(3, 2) * L**4 / T**2,
     "topology": PHI * (L**2 + K * (_KAPPA + B**2)) / T**2},
    _vars(*_COR, "m", "Q"), _src("L138-140, L620-626", "Corollary 4.1.2", "6.8"), parent="dfedsam.thm4.1",
    conditions=_COR_CONDS + (_Q_GT_1,), reference={**_REF_COR, "Q": 4, "m": 100}, reference_value=0.0565085534,
    notes="Stated as O(.); constants 1. Same remarks as Corollary 4.1.1 (no K^{3/2} L^4/T^2 term in the exact "
          "substitution; the alpha rho^2 part K L^2 r^2/T is missing). The topology enters at Phi O(1/T^2) only "
          "because step (20) drops the consensus term (see thm4.1.corrected_consensus: Phi O(1/T)).",
)

_ETA_ONLY = {"eta": SCHEDULE["eta"]}
COR411_ANYRHO = _cor(
    "dfedsam.cor4.1.1.anyrho", "Proof of Corollary 4.1.1 before rho is fixed (eta = O(1/(L sqrt(KT))), any rho)",
    {"optimization": f0 / sp.sqrt(K * T), "rho4": K ** sp.Rational(3, 2) * L**2 * rho**4 / T,
     "noise": K * (L**4 * rho**2 + sigma_g**2 + sigma_l**2) / T, "topology_rho": L**2 * rho**2 / (T * (1 - lam) ** 2),
     "topology_B": K * B**2 / (T**2 * (1 - lam) ** 2), "topology_rho4": K**2 * L**2 * rho**4 / (T**2 * (1 - lam) ** 2),
     "topology_noise": K * (L**2 * rho**2 + sigma_g**2 + sigma_l**2) / (T**2 * (1 - lam) ** 2)},
    _vars(*_COR), _src("L544-546", "proof E.2", "6.7"), parent="dfedsam.thm4.1.E2", schedule=_ETA_ONLY,
    conditions=(_T_LARGE,), variant="anyrho", variant_of="dfedsam.cor4.1.1",
    notes="As printed. With rho fixed the parent keeps alpha's eta-free part 2K^2 L^2 rho^2/(2K-1) = O(K L^2 rho^2), "
          "which does not decay in T; the printed K L^4 rho^2/T has L^4 where the algebra gives L^2 and a 1/T "
          "that is not there.",
)

COR412_ANYRHO = _cor(
    "dfedsam.cor4.1.2.anyrho", "Proof of Corollary 4.1.2 before rho is fixed (eta = O(1/(L sqrt(KT))), any rho)",
    {"optimization": f0 / sp.sqrt(K * T), "rho4": K ** sp.Rational(3, 2) * L**2 * rho**4 / T,
     "noise": K * (L**4 * rho**2 + beta_h**2 + sigma_l**2) / T,
     "topology": PHI * (L**2 * rho**2 / T + K**2 * L**2 * rho**4 / T**2
                        + K * (L**2 * rho**2 + beta_h**2 + sigma_l**2 + B**2) / T**2)},
    _vars(*_COR, "m", "Q"), _src("L620-622", "proof E.3", "6.8"), parent="dfedsam.thm4.1", schedule=_ETA_ONLY,
    conditions=(_T_LARGE, _SIGMA_BETA, _Q_GT_1), variant="anyrho", variant_of="dfedsam.cor4.1.2",
    notes="As printed; same L^4 and missing rho-floor remarks as cor4.1.1.anyrho.",
)


def _derived(phi: sp.Expr) -> dict[str, sp.Expr]:
    """Leading terms as T -> oo of Theorem 4.1 (alpha, beta as printed, consensus factor ``phi``) under SCHEDULE
    (card 6.6 (e), re-derived with sympy: each term is asymptotically equal to the substituted one)."""
    return {
        "optimization": 2 * L * f0 / (c * sp.sqrt(K * T)),
        "drift": 8 * K * c**2 * (sigma_g**2 + sigma_l**2) / T,
        "sam_radius": 2 * K**2 * L**2 * r**2 / ((2 * K - 1) * T),
        "topology": phi * (512 * K * c**4 * (B**2 + sigma_g**2 + sigma_l**2) + 64 * K * c**2 * L**2 * r**2 / (2 * K - 1))
        / T**2,
    }


_DERIVED_NOTE = ("Not a bound at every T: the T -> oo leading part of each term of the parent under the schedule "
                 "eta = c/(L sqrt(KT)), rho = r/sqrt(T), constants explicit. Compared with the stated corollary: "
                 "no K^{3/2} L^4/T^2 term (the rho^4 parts are O(1/T^3)); an extra sam_radius ~ K L^2 r^2/T; "
                 "sigma_g where the corollary has beta; the topology term is O(1/T^2) only because (20) drops the "
                 "consensus term.")
COR411_DERIVED = _cor(
    "dfedsam.cor4.1.1.derived", "Corollary 4.1.1 rate with explicit constants, derived from thm4.1.E2",
    _derived(PHI_E2), _vars(*_COR), _src("L124-134", "eq. (7) under the schedule", "6.6 (e), 10 item 10", "DERIVED"),
    parent="dfedsam.thm4.1.E2", conditions=(_T_LARGE,), big_o=False, variant="derived",
    variant_of="dfedsam.cor4.1.1", notes=_DERIVED_NOTE,
)
COR412_DERIVED = _cor(
    "dfedsam.cor4.1.2.derived", "Corollary 4.1.2 rate with explicit constants, derived from thm4.1",
    _derived(PHI), _vars(*_COR, "m", "Q"), _src("L124-140", "eq. (7) under the schedule", "6.6 (e), 10 item 10",
                                                 "DERIVED"),
    parent="dfedsam.thm4.1", conditions=(_T_LARGE, _Q_GT_1), big_o=False, variant="derived",
    variant_of="dfedsam.cor4.1.2", notes=_DERIVED_NOTE,
)

_ABSTRACT_NOTE = ("The abstract and the contribution list state this rate. It drops the leading "
                  "(f(x_bar^1) - f*)/sqrt(KT) term of the corollary (the true leading order is 1/sqrt(KT)) and all "
                  "problem constants")
COR411_ABSTRACT = _cor(
    "dfedsam.cor4.1.1.abstract", "Abstract's rate for DFedSAM: O(1/T + 1/(T^2 (1-lam)^2))",
    {"noise": 1 / T, "topology": 1 / (T**2 * (1 - lam) ** 2)}, _vars(*_COR), _src("L9, L42", "abstract", "11 item 7"),
    parent="dfedsam.thm4.1.E2", conditions=(_T_LARGE,), variant="abstract", variant_of="dfedsam.cor4.1.1",
    notes=_ABSTRACT_NOTE + ".",
)
COR412_ABSTRACT = _cor(
    "dfedsam.cor4.1.2.abstract", "Abstract's rate for DFedSAM-MGS: O(1/T + (lam^Q + 1)/(T^2 (1-lam^Q)^2))",
    {"noise": 1 / T, "topology": PHI_FAST / T**2}, _vars(*_COR, "m", "Q"), _src("L11, L42", "abstract", "11 item 7"),
    parent="dfedsam.thm4.1", conditions=(_T_LARGE, _Q_GT_1), variant="abstract", variant_of="dfedsam.cor4.1.2",
    notes=_ABSTRACT_NOTE + "; it also keeps only the second term of Phi.",
)

REM1 = _thm(
    "dfedsam.rem1", "Remark 1: the DFedAvg rate of Sun et al. (2022) that DFedSAM is compared with",
    {"optimization": 1 / sp.sqrt(T), "noise": (sigma_g**2 + B**2) / sp.sqrt(T),
     "topology": (sigma_g**2 + B**2) / ((1 - lam) ** 2 * T ** sp.Rational(3, 2))},
    _vars("T", "sigma_g", "B", "lam"), _src("L136", "Remark 1", "6.7"), conditions=(), kind="remark", big_o=True,
    quantity="min_t E||grad f(x_bar^t)||^2 of DFedAvg (Sun et al. 2022), as quoted",
    assumptions=("as in Sun et al. 2022",),
    notes="Quoted rate, O(.). Remark 1 also claims the DFedSAM bound 'is dominated by K(beta^2+sigma_l^2)/"
          "(T^2 (1-lam)^2) as lam <= 1 - K^{1/4}/T^{3/2}'; in Corollary 4.1.1 that term exceeds K(beta^2+sigma_l^2)/T "
          "only when lam > 1 - 1/sqrt(T), so the printed threshold cannot be derived. 'Linear speedup' is claimed "
          "but m does not appear in any bound.",
)

# ----------------------------------------------------------------------------------------------- Phi and lemmas
EQ6 = _thm(
    "dfedsam.eq6", "Phi(lam, m, Q) of eq. (6): the topology factor of DFedSAM-MGS (a definition, not a bound)",
    {"slow": PHI_SLOW, "fast": PHI_FAST}, _vars("lam", "m", "Q"), _src("L118-120, L431, L620", "eq. (6)", "5.3"),
    conditions=(), kind="proposition", assumptions=("Definition 1",),
    quantity="Phi(lam, m, Q); times C_2 eta^2 it bounds the consensus error (Lemma E.3)",
    notes="At Q = 1, Phi = 2(1+lam)/(1-lam)^2, but the DFedSAM proof (Lemma E.2) uses 1/(1-lam)^2: the Theorem at "
          "Q = 1 is up to 4x looser than its proof. Phi(0, m, 1) = 2 (not 1). Phi -> 1 as Q -> oo; "
          "Phi -> (1+lam^Q)/(1-lam^Q)^2 as m -> oo (Q >= 2).",
)
EQ6_TIGHT = _thm(
    "dfedsam.eq6.tight", "The consensus factor 1/(1-lam^Q)^2 of a correct Lemma E.3 (Lemma D.1 applied to W^Q)",
    {"fast": PHI_TIGHT}, _vars("lam", "Q"), _src("L435-473", "Lemma E.3 redone", "5.3, 6.9 item 5", "CORRECTED"),
    conditions=(), kind="proposition", variant="tight", variant_of="dfedsam.eq6", assumptions=("Definition 1",),
    quantity="consensus factor (sum_s ||W^{Qs} - P||)^2 <= 1/(1-lam^Q)^2",
    notes="Phi >= (1+lam^Q)/(1-lam^Q)^2 >= this. Lemma E.3's derivation uses ||P|| = 1/m (in fact 1), "
          "(a+b)^{Q-1} <= a^{Q-1} + b^{Q-1}, lam^{2Q} <= lam^Q and drops a cross term.",
)

LEM_D1 = _thm(
    "dfedsam.lemD.1", "Lemma D.1 (Lian et al. 2017, Lemma 4): ||W^s - P||_op <= lam^s",
    {"spectral": lam**s}, (_V["lam"], S_VAR), _src("L313-317", "Lemma D.1", "5.2, 6.1"), conditions=(),
    kind="lemma", assumptions=("Definition 1",), quantity="||W^s - P||_op, P = 11^T/m",
    notes="Tight (equality) for symmetric W. The Nedic-Ozdaglar constant C of seed L317 is not used anywhere.",
)
LEM_D2 = _thm(
    "dfedsam.lemD.2", "Lemma D.2 (Qu et al. 2022, Lemma A.5): global variance with perturbation",
    {"heterogeneity": 3 * sigma_g**2, "perturbation": 6 * L**2 * rho**2}, _vars("sigma_g", "L", "rho"),
    _src("L319-321", "Lemma D.2", "6.1, 11 item 14", "INTERP"), conditions=(), kind="lemma",
    assumptions=("Assumption 1", "Assumption 2"), quantity="||grad f_i(x + delta_i) - grad f(x + delta)||^2",
    notes="Printed with sigma_q, read as sigma_g (the only candidate). Not used explicitly in the surviving proofs.",
)
LEM_D3 = _thm(
    "dfedsam.lemD.3", "Lemma D.3 (Qu et al. 2022, Lemma B.1): drift of the SAM perturbation, as printed",
    {"perturbation_drift": 2 * K**2 * beta_h**2 * eta**2 * rho**2}, _vars("K", "beta_h", "eta", "rho", "L"),
    _src("L323-327", "Lemma D.3", "6.1"), conditions=(_ETA_4,), kind="lemma",
    assumptions=("Assumptions 1-2",), quantity="E_delta = (1/m) sum_i E||delta_{i,k} - delta||^2",
    notes="delta = rho grad F(x)/||grad F(x)|| uses an undefined global F. Lemma E.1 uses it as 2K^2 L^2 eta^2 "
          "rho^4 (beta -> L, rho^2 -> rho^4; variant as_used).",
)
LEM_D3_USED = _thm(
    "dfedsam.lemD.3.as_used", "Lemma D.3 as Lemma E.1 uses it: 2 K^2 L^2 eta^2 rho^4",
    {"perturbation_drift": 2 * K**2 * L**2 * eta**2 * rho**4}, _vars("K", "L", "eta", "rho"),
    _src("L357", "proof of Lemma E.1", "6.1, 11 item 14"), conditions=(_ETA_4,), kind="lemma",
    variant="as_used", variant_of="dfedsam.lemD.3", assumptions=("Assumptions 1-2",),
    quantity="E_delta = (1/m) sum_i E||delta_{i,k} - delta||^2",
    notes="Printed in the proof of Lemma E.1 without justification; smaller than Lemma D.3 whenever "
          "L rho < beta. Lemma E.1 (and so Theorem 4.1) inherits this form.",
)
LEM_E1 = _thm(
    "dfedsam.lemE.1", "Lemma E.1, eq. (8): local drift of the perturbed iterate",
    {"drift": 2 * K * (_RHO4 * eta**2 + 8 * K * eta**2 * _SIG2), "gradient": 16 * K**2 * eta**2 * G2,
     "sam_radius": 2 * K * rho**2 / (2 * K - 1)},
    _vars("K", "L", "eta", "rho", "sigma_g", "sigma_l", extra=(G2_VAR,)), _src("L339-342", "eq. (8)", "6.2"),
    conditions=(_ETA_10,), kind="lemma", assumptions=("Assumption 1", "Assumption 2"),
    quantity="(1/m) sum_i E||(y^{t,k}(i) + delta_{i,k}) - x^t(i)||^2, any 0 <= k <= K-1",
    notes="The rho^2 term has no eta: the perturbed point is always ~rho away from x^t(i). The proof sums "
          "(1 + 1/(2K-1))^tau over tau <= K-1 by 2K.",
)

_CONS = "(1/m) sum_i E||x^t(i) - x_bar^t||^2 (printed with x^{t,k}(i); the proof bounds x^t(i)), every t"
_ETA_E = Condition(eta <= 1 / (10 * K * L), "eta <= 1/(10KL): the lemma says 'any eta > 0' but its proof uses "
                   "Lemma E.1, which needs it", _src("L375, L421", "Lemma E.2 proof", "11 item 11", "DERIVED"), origin="derived",
                   why="the lemma says 'any eta > 0', but its proof uses Lemma E.1, which needs eta <= 1/(10KL) (seed L375, L421)")
LEM_E2 = _thm(
    "dfedsam.lemE.2", "Lemma E.2: consensus error of DFedSAM (Q = 1)",
    {"consensus": C2 * eta**2 * PHI_E2}, _vars("K", "L", "eta", "rho", "sigma_g", "sigma_l", "B", "lam"),
    _src("L375-379", "Lemma E.2", "6.3"), conditions=(_ETA_E,), kind="lemma",
    assumptions=("Assumption 3", "Definition 1", "X^0 = 0", "K large enough"), quantity=_CONS,
    notes="C_2 eta^2 keeps an eta-free 2K rho^2/(2K-1) part: a consensus floor 2K rho^2/((2K-1)(1-lam)^2). "
          "Uses B for stochastic gradients at perturbed points, which Assumption 3 does not cover.",
)
LEM_E3 = _thm(
    "dfedsam.lemE.3", "Lemma E.3: consensus error of DFedSAM-MGS, C_2 eta^2 Phi(lam, m, Q)",
    {"consensus": C2 * eta**2 * PHI}, _vars("K", "L", "eta", "rho", "sigma_g", "sigma_l", "B", "lam", "m", "Q"),
    _src("L429-431, L473", "Lemma E.3", "6.4"), conditions=(_ETA_E,), kind="lemma",
    assumptions=("Assumption 3", "Definition 1", "X^0 = 0", "K large enough"), quantity=_CONS,
    notes="Proved for Q > 1 (seed L335) but also valid (looser than Lemma E.2) at Q = 1.",
)
LEM_E3_TIGHT = _thm(
    "dfedsam.lemE.3.tight", "Lemma E.3 redone: C_2 eta^2 / (1 - lam^Q)^2",
    {"consensus": C2 * eta**2 * PHI_TIGHT}, _vars("K", "L", "eta", "rho", "sigma_g", "sigma_l", "B", "lam", "Q"),
    _src("L435-473", "Lemma E.3 redone", "6.9 item 5, 10 item 6", "CORRECTED"), conditions=(_ETA_E,), kind="lemma",
    variant="tight", variant_of="dfedsam.lemE.3",
    assumptions=("Assumption 3", "Definition 1", "X^0 = 0", "K large enough"), quantity=_CONS,
    notes="Lemma D.1 applied to W^Q and ||W^Q|| = 1 instead of Lemma E.3's steps (card 11 item 6).",
)

THEOREMS = (
    THM41, THM41_E2, THM41_PROOF_E2, THM41_PROOF_E3, THM41_CORRECTED, THM41_CORRECTED_CONSENSUS, THM41_TIGHT,
    COR411, COR411_ANYRHO, COR411_DERIVED, COR411_ABSTRACT,
    COR412, COR412_ANYRHO, COR412_DERIVED, COR412_ABSTRACT,
    REM1, EQ6, EQ6_TIGHT, LEM_D1, LEM_D2, LEM_D3, LEM_D3_USED, LEM_E1, LEM_E2, LEM_E3, LEM_E3_TIGHT,
)

# ----------------------------------------------------------------------------------------------- experiments
_BASE = dict(eta=0.1, K=20, rho=0.01, m=100)
_EXP_NOTE = ("eta = 0.1 is the initial rate (x 0.998 per round; the theory needs a constant eta). K = 20 local "
             "steps = 5 epochs x ceil(500/128) = 4 batches (card 8); K counts epochs in the paper.")


def _exp(id_, description, values, lines, topology=None, notes=_EXP_NOTE) -> ExperimentSetting:
    return ExperimentSetting(id=f"dfedsam.exp.{id_}", paper="dfedsam", theorem="dfedsam.thm4.1",
                             description=description, values={**_BASE, **values},
                             source=_src(lines, "", "8"), topology=topology, notes=notes)


_ALGOS = {"dfedsam": 1, "mgs": 4}
_TOPOLOGIES = ("ring", "grid", "exponential", "full")
EXPERIMENTS = (
    *(_exp(f"table1.{a}", f"Table 1 / Fig. 3 ({a}, Q = {q}): CIFAR-10/100, random time-varying topology "
           "(<= 10 neighbours), T = 1000", {"T": 1000, "Q": q}, "L154, L303, L307", "random",
           _EXP_NOTE + " The random topology is not covered by the theory (no fixed W, no lam).")
      for a, q in _ALGOS.items()),
    _exp("table1.mgs.epochs", "Table 1 (DFedSAM-MGS) reading K as the 5 local epochs literally",
         {"T": 1000, "Q": 4, "K": 5}, "L303", "random", "K = 5 (epochs) instead of 20 steps: the weakest reading."),
    *(_exp(f"table2.{tp}.{a}", f"Table 2 ({a}, Q = {q}): CIFAR-10, {tp} topology, 'Complete', T = 1000",
           {"T": 1000, "Q": q}, "L180-195", tp) for tp in _TOPOLOGIES for a, q in _ALGOS.items()),
    *(_exp(f"table3.{a}", f"Table 3 ({a}): CIFAR-10, exponential, T = 500 (Q of MGS not stated; 4 assumed)",
           {"T": 500, "Q": q}, "L199, L221-227", "exponential") for a, q in _ALGOS.items()),
    *(_exp(f"fig4.{tp}.Q{q}", f"Fig. 4: DFedSAM-MGS with Q = {q}, {tp} topology (which three topologies is lost; "
           "ring/grid/exponential assumed), T = 500", {"T": 500, "Q": q}, "L203-207", tp)
      for tp in _TOPOLOGIES[:3] for q in (1, 2, 3, 4)),
    *(_exp(f"fig5b.m{mm}", f"Fig. 5(b): DFedSAM with m = {mm} clients, exponential, T = 500",
           {"T": 500, "Q": 1, "m": mm}, "L215", "exponential") for mm in (50, 100, 150)),
    *(_exp(f"fig5c.rho{rh:g}", f"Fig. 5(c): DFedSAM with rho = {rh:g}, exponential, T = 500",
           {"T": 500, "Q": 1, "rho": rh}, "L217", "exponential")
      for rh in (0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)),
)


def register() -> None:
    """The paper and its theorems into the catalog, through the function a user's plugin calls."""
    from dfltheory.bounds.catalog import register_paper
    from dfltheory.papers.dfedsam import PAPER, TITLE

    register_paper(PAPER, TITLE, THEOREMS, experiments=EXPERIMENTS, sigma_g_form=SIGMA_G_FORM,
                   origin=__name__)
