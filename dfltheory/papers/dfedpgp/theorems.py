"""Bounds of DFedPGP (seed 003: *Decentralized Directed Collaboration for Personalized Federated Learning*).

DFedPGP runs push-sum on the shared part ``u`` (column-stochastic mixing P^t, push-sum weights mu_i^t >= delta,
de-biased iterates z_i = u_i / mu_i) and local SGD on the personal part ``v``; per round K_v steps on v (rate
eta_v), then K_u steps on u (rate eta_u). Every stationarity bound controls the round average

    (1/T) sum_{t=1}^T ( E||grad_u F(ubar^t, V^{t+1})||^2 / L_u + (1/m) sum_i E||grad_v F_i(u_i^t, v_i^t)||^2 / L_v ),

ubar^t = (1/m) sum_i u_i^t being the mean of the *biased* shared parameters. The paper states Theorem 1 and
Corollary 1 only as O(.) (encoded with constants 1, ``big_o=True``); the explicit bound ``dfedpgp.thm1.explicit``
is built from the paper's one-round descent (32) (card section 6.5, tag DERIVED). The topology enters through the
push-sum constants C, q (Lemma 3; SGP's Lemma 3) and the minimum push-sum weight delta; C and q are also
available as the paper's own formulas in m, D, Delta, B (``dfedpgp.lem3.q``, ``dfedpgp.lem3.C``, Remark 2).

Source: ``/work/shared/seeds/003_0a764f7817a5f6ca.txt``; theorem card ``/work/shared/spec/dfedpgp.md``.
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from dfltheory.bounds.settings import ExperimentSetting
from dfltheory.bounds.symbols import COMMON, Var
from dfltheory.bounds.theorem import Condition, Source, Theorem

__all__ = ["THEOREMS", "EXPERIMENTS"]

#: the form of the heterogeneity assumption the theorems' sigma_g bounds (catalog.SIGMA_G_FORMS; card §4)
SIGMA_G_FORM = "personal"
#: the theorems' C and q are the paper's own push-sum lemma's, E = (K_u + 1) Delta B (Lemma 3, seed L525-527; card
#: §5.6): the keys of dfltheory.topology.analyze's report that hold them
PUSHSUM_KEYS = {"q": "q_pgp", "C": "C_pgp"}
SEED = "003_0a764f7817a5f6ca.txt"


def _src(lines: str, equation: str = "", card: str = "", tag: str = "SEED") -> Source:
    return Source(SEED, lines, equation, f"dfedpgp.md {card}".strip(), tag)


# ---------------------------------------------------------------------------------------------- symbols
def _nonneg(name, meaning, **kw) -> Var:
    return Var(name, meaning, low=0, low_open=False, **kw)


V_eta_u = Var("eta_u", "learning rate of the shared part u", latex=r"\eta_u")
V_eta_v = Var("eta_v", "learning rate of the personal part v", latex=r"\eta_v")
V_K_u = Var("K_u", "local SGD steps on the shared part u per round", low=1, low_open=False, integer=True)
V_K_v = Var("K_v", "local SGD steps on the personal part v per round", low=1, low_open=False, integer=True)
V_L_u = Var("L_u", "Lipschitz constant of grad_u F_i in u (Assumption 2)")
V_L_v = Var("L_v", "Lipschitz constant of grad_v F_i in v (Assumption 2)")
V_L_uv = _nonneg("L_uv", "Lipschitz constant of grad_u F_i in v (Assumption 2)")
V_L_vu = _nonneg("L_vu", "Lipschitz constant of grad_v F_i in u (Assumption 2)")
V_sigma_u = _nonneg("sigma_u", "standard deviation of the stochastic u-gradient (Assumption 3)", latex=r"\sigma_u")
V_sigma_v = _nonneg("sigma_v", "standard deviation of the stochastic v-gradient (Assumption 3)", latex=r"\sigma_v")
V_Du = _nonneg("Du_t", "E[Delta_ubar^t] = E||grad_u F(ubar^t, V^{t+1})||^2 at round t")
V_Dv = _nonneg("Dv_t", "E[Delta_v^t] = (1/m) sum_i E||grad_v F_i(u_i^t, v_i^t)||^2 at round t")
V_G_v0 = _nonneg("G_v0", "E||grad_v F_i(z_i^t, v_i^t)||^2, personal gradient at the start of the round (Lemma 1)")
V_G_z = _nonneg("G_z", "(1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2, u-gradient at the de-biased points (Lemma 2)")
V_D = Var("D", "push-sum weight constant: every nonzero mixing weight p_ij^t >= 1/D (SGP's D; undefined in the seed)",
          low=1, low_open=False, topology_key="D")
V_Delta = Var("Delta_diam", "directed diameter of the union graph of every connectivity window (Remark 2)",
              low=1, low_open=False, integer=True, topology_key="Delta", latex=r"\Delta")
V_Bc = Var("B_conn", "window B of B-bounded strong connectivity (Assumption 1)", low=1, low_open=False,
           integer=True, topology_key="B", latex=r"\mathcal{B}")
V_a = Var("a", "connectivity constant a of Remark 2 (the paper requires a < 1)", topology_key="a")
V_d0 = Var("d0", "dimension of the shared part u", low=1, low_open=False, integer=True, latex="d")

eta_u, eta_v, K_u, K_v = (v.symbol for v in (V_eta_u, V_eta_v, V_K_u, V_K_v))
L_u, L_v, L_uv, L_vu = (v.symbol for v in (V_L_u, V_L_v, V_L_uv, V_L_vu))
sigma_u, sigma_v, Du, Dv, G_v0, G_z = (v.symbol for v in (V_sigma_u, V_sigma_v, V_Du, V_Dv, V_G_v0, V_G_z))
D, Delta, Bc, a, d0 = (v.symbol for v in (V_D, V_Delta, V_Bc, V_a, V_d0))
T, m, C, q, delta, sigma_g, F0, c = (COMMON[k].symbol for k in
                                     ("T", "m", "C", "q", "delta", "sigma_g", "f0_minus_fstar", "c"))

S_u = sigma_u**2 + sigma_g**2  # the u-noise that every u-term multiplies
R = sp.sqrt(T)
T32 = T ** sp.Rational(3, 2)

# ---------------------------------------------------------------------------------------------- expressions
#: chi of Assumption 2 (seed L115): relative cross-sensitivity.
chi = sp.Max(L_uv, L_vu) / sp.sqrt(L_u * L_v)
#: Lemma 3 as stated, eq. (13) (seed L522), without the (K_u + 1) factors of its proof.
AA13 = 8 * K_u**2 * eta_u**2 * C**2 / ((1 - q) ** 2 * K_u - 8 * K_u**2 * eta_u**2 * L_u**2 * C**2)
#: AA of seed L590 = the result (19) of Lemma 3's proof (seed L556); used in the descent chain (24)-(32).
AA = 8 * K_u**2 * eta_u**2 * C**2 * (K_u + 1) / ((1 - q) ** 2 * K_u - 8 * K_u**2 * L_u**2 * eta_u**2 * C**2 * (K_u + 1))
#: The bracket of (26)/(32).
BRK = 1 + 32 * K_u * L_u**2 * eta_u**2 / delta**2 * (L_u**2 * AA + 1) + L_u**2 * AA
COEF_U = -eta_u * K_u / 2 + K_u * L_u**2 * eta_u / 2 * AA + 5 * K_u * L_u * eta_u**2 / 2 * BRK + L_vu**2 / 2 * AA
COEF_V = -eta_v * K_v + 8 * eta_v**2 * K_v**2 * L_v + 8 * eta_v**2 * K_v**2
NOISE_V_PRINTED = 4 * eta_v**2 * K_v**2 * L_v**2 * sigma_v**2 * (1 + L_v)  # (31)/(32), seed L632/L639
NOISE_V_CORR = 4 * eta_v**2 * K_v**2 * sigma_v**2 * (1 + L_v)  # from (28) + (29): no L_v^2 (card section 6.4)
NOISE_U_CONSENSUS = (K_u * L_u**2 * eta_u / 2 + L_vu**2 / 2) * AA * S_u
NOISE_U_LOCAL = 5 * K_u * L_u * eta_u**2 / 2 * BRK * S_u

#: Push-sum constants of Lemma 3's proof (seed L525-527): exponent (K_u+1) Delta B, n -> m, d -> d0.
E_EXP = (K_u + 1) * Delta * Bc
LAM_PS = 1 - m * D ** (-E_EXP)
Q_PS = LAM_PS ** (1 / (E_EXP + 1))
#: 1 - q of Lemma 3 written as -expm1(log1p(-m D^-E)/(E+1)): exact, and finite in floating point where
#: 1 - m D^-E rounds to 1 (E >~ 15, card section 5.8).
ONE_MINUS_Q_PS = -expm1(log1p(-m * D ** (-E_EXP)) / (E_EXP + 1))
C_PS = 2 * sp.sqrt(d0) * D**E_EXP / LAM_PS ** ((E_EXP + 2) / (E_EXP + 1))

#: Corollary 1's step sizes (seed L142, L643), the O(.) constant taken as the common schedule constant c.
SCHEDULE = {"eta_u": c / (L_u * K_u * R), "eta_v": c / (L_v * K_v * R)}

# ---------------------------------------------------------------------------------------------- conditions
_T1 = Condition(eta_u < delta / (4 * sp.sqrt(2 * L_u * K_u)),
                "eta_u < delta/(4 sqrt(2 L_u K_u)), Theorem 1 as printed (square root over 2 L_u K_u)",
                _src("L131", "Theorem 1", "§6.6 T1"))
_T1P = Condition(eta_u < delta / (4 * sp.sqrt(2) * K_u * L_u),
                 "eta_u < delta/(4 sqrt(2) K_u L_u), the step-size condition Lemma 3's proof uses",
                 _src("L554", "Lemma 3 proof", "§6.6 T1'"))
_T2 = Condition(eta_u < delta / (8 * L_u * K_u),
                "eta_u < delta/(8 L_u K_u), Lemma 2's condition (stricter than Theorem 1's)",
                _src("L509", "Lemma 2 proof", "§6.2 (c), §6.6 T2"))
_T3 = Condition(eta_v <= 1 / (2 * K_v * L_v), "eta_v <= 1/(2 K_v L_v), Lemma 1's condition",
                _src("L478", "Lemma 1", "§6.1 (c), §6.6 T3"))
_T4 = Condition(8 * K_u * (K_u + 1) * eta_u**2 * L_u**2 * C**2 < (1 - q) ** 2,
                "8 K_u (K_u+1) eta_u^2 L_u^2 C^2 < (1-q)^2: denominator of AA (19) positive, AA finite and > 0",
                _src("L556, L590", "(19), AA", "§6.3 (c), §6.6 T4", "DERIVED"), origin="derived",
                why="keeps AA of (19) finite and positive; the paper does not state it")
_T4_13 = Condition(8 * K_u * eta_u**2 * L_u**2 * C**2 < (1 - q) ** 2,
                   "8 K_u eta_u^2 L_u^2 C^2 < (1-q)^2: denominator of (13) positive",
                   _src("L522", "(13)", "§6.3 (c)", "DERIVED"), origin="derived",
                   why="keeps the denominator of (13) positive; the paper does not state it")
_T5 = Condition(COEF_U < 0, "coefficient of E[Delta_ubar^t] in (32) negative (u-descent)",
                _src("L638", "(32)", "§6.4 (c), §6.6 T5", "DERIVED"), origin="derived",
                why="(32) is a descent inequality only when this coefficient is negative (card §6.4); the paper does not state it")
_T6 = Condition(eta_v * K_v < 1 / (8 * (L_v + 1)),
                "eta_v K_v < 1/(8 (L_v+1)): coefficient of E[Delta_v^t] in (32) negative (v-descent)",
                _src("L639", "(32)", "§6.4 (c), §6.6 T6", "DERIVED"), origin="derived",
                why="(32) is a descent inequality only when the coefficient of E[Delta_v^t] is negative (card §6.4); the paper does not state it")
_T7 = Condition(C**2 < (1 - q) ** 2 * T,
                "C^2 << (1-q)^2 T, read as C^2 < (1-q)^2 T (the paper's informal '<<' is stronger)",
                _src("L643", "before (33)", "§6.6 T7, §11 A14", "INTERP"))
_KU2 = Condition(K_u >= 2, "K_u >= 2: Lemma 2 divides by K_u - 1",
                 _src("L511-518", "(12)", "§6.2 (c), §6.6 T9", "DERIVED"), origin="derived",
                 why="Lemma 2's proof divides by K_u - 1 (card §6.2); the paper states no lower bound")
_KV2 = Condition(K_v >= 2, "K_v >= 2: Lemma 1 divides by K_v - 1",
                 _src("L484-490", "(8)-(9)", "§6.1 (c), §6.6 T9", "DERIVED"), origin="derived",
                 why="Lemma 1's proof divides by K_v - 1 (card §6.1); the paper states no lower bound")
_T5_FIRST = Condition(eta_u * (8 * L_vu**2 * C**2 * (K_u + 1) / (1 - q) ** 2 + 5 * L_u) < 1,
                      "eta_u (8 L_vu^2 C^2 (K_u+1)/(1-q)^2 + 5 L_u) < 1: necessary for coef_u < 0 when AA > 0 "
                      "(AA >= 8 K_u eta_u^2 C^2 (K_u+1)/(1-q)^2 and the other terms of coef_u are >= 0)",
                      _src("L638", "(32)", "§6.6 (c) T5 at leading order", "DERIVED"), origin="derived",
                      why="necessary for the u-descent coefficient to be negative")
_U_BINDS = Condition(eta_u * K_u * L_u / 2 <= (eta_v * K_v - 8 * eta_v**2 * K_v**2 * (L_v + 1)) * L_v,
                     "eta_u K_u L_u/2 <= -coef_v L_v: sufficient (given AA >= 0) for -coef_u L_u <= -coef_v L_v, "
                     "i.e. for kappa = -coef_u L_u",
                     _src("L638-639", "(32)", "§6.5", "DERIVED"), origin="derived",
                     why="makes kappa = -coef_u L_u in the explicit form")
_LAM_POS = Condition(m * D ** (-E_EXP) < 1,
                     "m D^-((K_u+1) Delta B) < 1: lambda = 1 - m D^-((K_u+1) Delta B) of Lemma 3 positive",
                     _src("L525", "Lemma 3 proof", "§5.6", "DERIVED"), origin="derived",
                     why="the cited lemma's lambda must be positive for q to be a rate; the paper does not say so")

_LEMMA_CONDS = (_T2, _T1P, _T4, _T3, _KU2, _KV2)  # what (32) needs: Lemmas 1-3
_THEOREM_CONDS = (_T1, _T1P, _T2, _T3, _T4, _T5, _T6, _T7, _KU2, _KV2)
_EXPLICIT_CONDS = (_T1P, _T2, _T3, _T4, _T5, _T6, _KU2, _KV2)

ASSUMPTIONS = ("Assumption 1 (B-bounded strong connectivity)", "Assumption 2 (smoothness L_u, L_v, L_uv, L_vu)",
               "Assumption 3 (bounded variance sigma_u, sigma_v)", "Assumption 4 (partial gradient diversity sigma_g)",
               "column-stochastic P^t and mu_i^t >= delta > 0", "||u_i^0|| = 0 (seed L554)")

QUANTITY = ("(1/T) sum_{t=1}^T ( E||grad_u F(ubar^t, V^{t+1})||^2 / L_u + (1/m) sum_i E||grad_v F_i(u_i^t, v_i^t)||^2"
            " / L_v ): average over rounds, ubar^t = mean of the biased u_i^t (not the de-biased z_i^t)")

_V_THM = (COMMON["f0_minus_fstar"], COMMON["T"], V_K_u, V_K_v, V_L_u, V_L_v, V_L_vu, V_sigma_u, V_sigma_v,
          COMMON["sigma_g"], COMMON["C"], COMMON["q"], COMMON["delta"], V_eta_u, V_eta_v)
_V_PS = (COMMON["m"], V_D, V_Delta, V_Bc, V_d0)


def _thm1_terms(dup: int) -> dict[str, sp.Expr]:
    """Eq. (3) (dup = 2: the term 1/(K_u L_u sqrt T) printed twice) or eq. (33) (dup = 1)."""
    return {
        "optimization": F0 / R,
        "personal_noise": (1 + L_v) * sigma_v**2 / R,
        "consensus": S_u * C**2 / ((1 - q) ** 2 * L_u * T),
        "local_noise": S_u * dup / (K_u * L_u * R),
        "debias": S_u / (K_u * L_u * delta**2 * T32),
        "consensus_high_order": S_u * C**2 / (K_u * L_u * (1 - q) ** 2 * T32),
        "coupling_topology": S_u * L_vu**2 * C**2 / ((1 - q) ** 2 * L_u**2 * R),
    }


def _cor1_terms() -> dict[str, sp.Expr]:
    """Eq. (4)-(5): (F1 - F* + sigma_1^2)/sqrt T + sigma_2^2/T + sigma_3^2/T^{3/2}, split by origin."""
    return {
        "optimization": F0 / R,
        "personal_noise": (1 + L_v) * sigma_v**2 / R,
        "local_noise": S_u / (K_u * L_u * R),
        "coupling_topology": S_u * L_v * chi**2 * C**2 / ((1 - q) ** 2 * L_u * R),
        "consensus": S_u * C**2 / ((1 - q) ** 2 * L_u * T),
        "debias": S_u / (K_u * L_u * delta**2 * T32),
        "consensus_high_order": S_u * C**2 / ((1 - q) ** 2 * K_u * L_u * T32),
    }


def _explicit_terms(noise_v: sp.Expr, kappa: sp.Expr = sp.Min(-COEF_U * L_u, -COEF_V * L_v)) -> dict[str, sp.Expr]:
    """Sum of (32) over t = 1..T, telescoped, divided by kappa = min(-coef_u L_u, -coef_v L_v) (card section 6.5)."""
    return {
        "optimization": F0 / (kappa * T),
        "consensus": NOISE_U_CONSENSUS / kappa,
        "local_drift": NOISE_U_LOCAL / kappa,
        "personal_noise": noise_v / kappa,
    }


# ---------------------------------------------------------------------------------------------- the catalog
THEOREMS: tuple[Theorem, ...] = (
    # ------------------------------------------------------------------ Lemma 1
    Theorem(
        id="dfedpgp.lem1", paper="dfedpgp", kind="lemma",
        title="Lemma 1: local drift of the personal part v after K_v - 1 SGD steps",
        quantity="E||v^{K_v-1} - v^0||^2 (one client, one round; the proof's (29) applies it to v^{K_v} - v^0)",
        terms={"gradient": 16 * eta_v**2 * K_v**2 * G_v0, "noise": 8 * eta_v**2 * K_v**2 * sigma_v**2},
        variables=(V_eta_v, V_K_v, V_L_v, V_G_v0, V_sigma_v),
        source=_src("L478-496", "(8)-(9)", "§6.1"),
        conditions=(_T3, _KV2),
        assumptions=("Assumption 2", "Assumption 3"),
        notes="Off by one step: bounds v^{K_v-1} - v^0 but (29) uses it for v^{K_v} - v^0 (card §11 A12).",
    ),
    Theorem(
        id="dfedpgp.lem1.proof", paper="dfedpgp", kind="lemma",
        title="Lemma 1 with the constants its proof actually gives, 4A(K_v-1) <= 4 A K_v",
        quantity="E||v^{K_v-1} - v^0||^2 (one client, one round)",
        terms={"gradient": 8 * eta_v**2 * K_v**2 * G_v0, "noise": 4 * eta_v**2 * K_v**2 * sigma_v**2},
        variables=(V_eta_v, V_K_v, V_L_v, V_G_v0, V_sigma_v),
        source=_src("L486-490", "(9)", "§6.1 Notes", "DERIVED"),
        conditions=(_T3, _KV2), assumptions=("Assumption 2", "Assumption 3"),
        variant="proof constants", variant_of="dfedpgp.lem1",
        notes="(A/2)(K_v-1)(1+2/(K_v-1))^{K_v-1} <= (e^2/2) A (K_v-1) < 4 A K_v with A = K_v eta_v^2 sigma_v^2 "
              "+ 2 K_v eta_v^2 G_v0; the printed constants are 2x looser but valid.",
    ),
    # ------------------------------------------------------------------ Lemma 2
    Theorem(
        id="dfedpgp.lem2", paper="dfedpgp", kind="lemma",
        title="Lemma 2: local drift of the shared part u (as printed)",
        quantity="(1/m) sum_i E||u_i^{t,k} - u_i^t||^2 for every k in 0..K_u-1",
        terms={"noise": 32 * K_u * eta_u**2 * S_u, "gradient": 32 * K_u * eta_u**2 * G_z},
        variables=(V_eta_u, V_K_u, V_L_u, COMMON["delta"], V_sigma_u, COMMON["sigma_g"], V_G_z),
        source=_src("L498-518", "(12)", "§6.2"),
        conditions=(_T2, _KU2), assumptions=("Assumption 2", "Assumption 3", "Assumption 4"),
        notes="Drops a factor (K_u - 1) in the last step (L514-515): false for K_u >= 34 (linear losses: "
              "(K_u-1)^2 > 32 K_u). L513 also repeats 8 K_u eta_u^2 sigma_g^2. See dfedpgp.lem2.corrected.",
    ),
    Theorem(
        id="dfedpgp.lem2.corrected", paper="dfedpgp", kind="lemma",
        title="Lemma 2 with the factor (K_u - 1) its unrolling produces",
        quantity="(1/m) sum_i E||u_i^{t,k} - u_i^t||^2 for every k in 0..K_u-1",
        terms={"noise": 32 * K_u * (K_u - 1) * eta_u**2 * S_u, "gradient": 32 * K_u * (K_u - 1) * eta_u**2 * G_z},
        variables=(V_eta_u, V_K_u, V_L_u, COMMON["delta"], V_sigma_u, COMMON["sigma_g"], V_G_z),
        source=_src("L514-515", "(12)", "§6.2 (b), §11 A7", "CORRECTED"),
        conditions=(_T2, _KU2), assumptions=("Assumption 2", "Assumption 3", "Assumption 4"),
        variant="corrected", variant_of="dfedpgp.lem2",
        notes="(K_u-1)((1+1/(K_u-1))^{K_u} - 1) * 8 K_u eta_u^2 (...) <= 32 K_u (K_u-1) eta_u^2 (...).",
    ),
    # ------------------------------------------------------------------ Lemma 3
    Theorem(
        id="dfedpgp.lem3", paper="dfedpgp", kind="lemma",
        title="Lemma 3: consensus error of the de-biased shared part (statement (13))",
        quantity="(1/m) sum_i E||ubar^t - z_i^t||^2 at round t",
        terms={"noise": AA13 * S_u, "gradient": AA13 * Du},
        variables=(V_eta_u, V_K_u, V_L_u, COMMON["C"], COMMON["q"], COMMON["delta"], V_sigma_u,
                   COMMON["sigma_g"], V_Du),
        source=_src("L520-522", "(13)", "§6.3 (a)"),
        conditions=(_T1P, _T4_13), assumptions=("Assumption 1", "column-stochastic P^t", "||u_i^0|| = 0 (seed L554)"),
        notes="The statement lacks the (K_u+1) factors of the proof's result (19) = AA, which the descent chain "
              "uses (dfedpgp.lem3.eq19). (17) also lacks the factor 2 of (a+b)^2 <= 2a^2 + 2b^2 (card §6.3).",
    ),
    Theorem(
        id="dfedpgp.lem3.eq19", paper="dfedpgp", kind="lemma",
        title="Lemma 3 as its proof ends, eq. (19) = AA (sigma_u^2 + sigma_g^2 + E[Delta_ubar^t])",
        quantity="E||ubar^t - z_i^t||^2 at round t (each client)",
        terms={"noise": AA * S_u, "gradient": AA * Du},
        variables=(V_eta_u, V_K_u, V_L_u, COMMON["C"], COMMON["q"], COMMON["delta"], V_sigma_u,
                   COMMON["sigma_g"], V_Du),
        source=_src("L554-556, L590", "(19)", "§6.3 (a)"),
        conditions=(_T1P, _T4), assumptions=("Assumption 1", "column-stochastic P^t", "||u_i^0|| = 0 (seed L554)"),
        variant="proof result (19)", variant_of="dfedpgp.lem3",
        notes="This AA is what (24)-(32) and therefore every bound below use.",
    ),
    Theorem(
        id="dfedpgp.lem3.q", paper="dfedpgp", kind="lemma",
        title="Lemma 3's push-sum rate q = lambda^{1/((K_u+1) Delta B + 1)}, lambda = 1 - m D^-((K_u+1) Delta B)",
        quantity="q, the push-sum geometric rate (an equality, not a bound)",
        terms={"q": Q_PS},
        variables=(V_K_u,) + _V_PS[:4],
        source=_src("L525", "Lemma 3 proof", "§5.6"),
        conditions=(_LAM_POS,), assumptions=("Assumption 1",),
        variant="push-sum constant",
        notes="SGP's overlap-delay formula with tau := K_u (unjustified, card §11 A6); n of the seed read as m. "
              "In float64 1 - m D^-E rounds to 1 for E >~ 15 and q evaluates to 1.0 exactly; "
              "dfedpgp.cor1.lemma3_constants carries 1 - q in a cancellation-free form.",
    ),
    Theorem(
        id="dfedpgp.lem3.C", paper="dfedpgp", kind="lemma",
        title="Lemma 3's push-sum constant C < 2 sqrt(d) D^E / lambda^{(E+2)/(E+1)}, E = (K_u+1) Delta B",
        quantity="C, the push-sum consensus constant (upper bound)",
        terms={"C": C_PS},
        variables=(V_K_u,) + _V_PS,
        source=_src("L525-527", "Lemma 3 proof", "§5.6"),
        conditions=(_LAM_POS,), assumptions=("Assumption 1",),
        variant="push-sum constant",
        notes="d = dimension of the shared part (d0 ~ 1.1e7 for the paper's ResNet-18). D is never defined in "
              "the seed; read as SGP's minimum-weight constant (every nonzero p_ij^t >= 1/D).",
    ),
    # ------------------------------------------------------------------ one-round descent (32)
    Theorem(
        id="dfedpgp.eq32", paper="dfedpgp", kind="lemma",
        title="One-round descent (32) of F along (ubar^t, V^t)",
        quantity="E[F(ubar^{t+1}, V^{t+1}) - F(ubar^t, V^t)] at round t (may be negative)",
        terms={"u_descent": COEF_U * Du, "v_descent": COEF_V * Dv, "personal_noise": NOISE_V_PRINTED,
               "consensus": NOISE_U_CONSENSUS, "local_drift": NOISE_U_LOCAL},
        variables=tuple(v for v in _V_THM if v.name not in ("f0_minus_fstar", "T")) + (V_Du, V_Dv),
        source=_src("L637-641", "(32)", "§6.4"),
        conditions=_LEMMA_CONDS, assumptions=ASSUMPTIONS,
        notes="The v-noise 4 eta_v^2 K_v^2 L_v^2 sigma_v^2 (1+L_v) carries a spurious L_v^2 (from (31); (28)+(29) "
              "give no L_v^2): see dfedpgp.eq32.corrected. (26) prints its first term without the minus sign.",
    ),
    Theorem(
        id="dfedpgp.eq32.corrected", paper="dfedpgp", kind="lemma",
        title="One-round descent (32) with the v-noise of (28)+(29), 4 eta_v^2 K_v^2 sigma_v^2 (1+L_v)",
        quantity="E[F(ubar^{t+1}, V^{t+1}) - F(ubar^t, V^t)] at round t (may be negative)",
        terms={"u_descent": COEF_U * Du, "v_descent": COEF_V * Dv, "personal_noise": NOISE_V_CORR,
               "consensus": NOISE_U_CONSENSUS, "local_drift": NOISE_U_LOCAL},
        variables=tuple(v for v in _V_THM if v.name not in ("f0_minus_fstar", "T")) + (V_Du, V_Dv),
        source=_src("L632, L639", "(31)-(32)", "§6.4 (b), §11 A8", "CORRECTED"),
        conditions=_LEMMA_CONDS, assumptions=ASSUMPTIONS,
        variant="corrected v-noise", variant_of="dfedpgp.eq32",
        notes="Repairs only (31)'s L_v^2; Lemma 2's lost factor (K_u-1) and (17)'s lost factor 2 remain inside AA "
              "and the bracket.",
    ),
    # ------------------------------------------------------------------ Theorem 1
    Theorem(
        id="dfedpgp.thm1", paper="dfedpgp", kind="theorem",
        title="Theorem 1: convergence of DFedPGP, eq. (3) as printed (O(.), one term duplicated)",
        quantity=QUANTITY,
        terms=_thm1_terms(dup=2),
        variables=_V_THM,
        source=_src("L131-138", "(3)", "§6.6"),
        conditions=_THEOREM_CONDS, assumptions=ASSUMPTIONS, big_o=True,
        notes="Printed as O(.) with no eta on the right: it is already stated at Corollary 1's step sizes "
              "eta_u ~ 1/(L_u K_u sqrt T), eta_v ~ 1/(L_v K_v sqrt T) (fixed at L643). The term "
              "(sigma_u^2+sigma_g^2)/(K_u L_u sqrt T) is printed twice (here 'local_noise' with factor 2); "
              "the appendix's (33) has it once (dfedpgp.thm1.eq33). 'Assumptions 1-5' but only four exist.",
    ),
    Theorem(
        id="dfedpgp.thm1.eq33", paper="dfedpgp", kind="theorem",
        title="Theorem 1 as the appendix's eq. (33) (the duplicated term once)",
        quantity=QUANTITY,
        terms=_thm1_terms(dup=1),
        variables=_V_THM,
        source=_src("L643-645", "(33)", "§6.6 (a)"),
        conditions=_THEOREM_CONDS, assumptions=ASSUMPTIONS, big_o=True,
        variant="appendix (33)", variant_of="dfedpgp.thm1",
    ),
    Theorem(
        id="dfedpgp.thm1.explicit", paper="dfedpgp", kind="theorem",
        title="Explicit averaged bound from (32): (F1-F*)/(kappa T) + (noise_u + noise_v)/kappa",
        quantity=QUANTITY,
        terms=_explicit_terms(NOISE_V_PRINTED),
        variables=_V_THM,
        source=_src("L637-645", "(32) summed over t = 1..T", "§6.5", "DERIVED"),
        conditions=_EXPLICIT_CONDS, assumptions=ASSUMPTIONS,
        variant="explicit from (32)", variant_of="dfedpgp.thm1",
        notes="kappa = min(-coef_u L_u, -coef_v L_v) with coef_u, coef_v the coefficients of E[Delta_ubar^t], "
              "E[Delta_v^t] in (32). Meaningful only where T4 (AA > 0), T5 and T6 (kappa > 0) hold; elsewhere it "
              "can be negative (card §6.6: -107.4 at K_u=20, T=500, C=6, q=0.31). Inherits the proof's slips "
              "(Lemma 2's factor K_u-1, (17)'s factor 2, (31)'s L_v^2).",
    ),
    Theorem(
        id="dfedpgp.thm1.explicit_corrected", paper="dfedpgp", kind="theorem",
        title="Explicit averaged bound from (32) with the corrected v-noise of (31)",
        quantity=QUANTITY,
        terms=_explicit_terms(NOISE_V_CORR),
        variables=_V_THM,
        source=_src("L632, L637-645", "(31)-(32)", "§6.5, §11 A8", "CORRECTED"),
        conditions=_EXPLICIT_CONDS, assumptions=ASSUMPTIONS,
        variant="explicit, corrected v-noise", variant_of="dfedpgp.thm1.explicit",
        notes="At Corollary 1's step sizes the personal-noise term becomes (1+L_v) sigma_v^2/(L_v^2 sqrt T) "
              "instead of the printed (1+L_v) sigma_v^2/sqrt T.",
    ),
    Theorem(
        id="dfedpgp.thm1.explicit_u", paper="dfedpgp", kind="theorem",
        title="Explicit averaged bound from (32) where the u-descent is the slower one: kappa = -coef_u L_u",
        quantity=QUANTITY,
        terms=_explicit_terms(NOISE_V_PRINTED, -COEF_U * L_u),
        variables=_V_THM,
        source=_src("L637-645", "(32) summed over t = 1..T", "§6.5", "DERIVED"),
        conditions=(_T1P, _T2, _T3, _T4, _T5, _T5_FIRST, _T6, _U_BINDS, _KU2, _KV2), assumptions=ASSUMPTIONS,
        variant="explicit, u-branch of kappa", variant_of="dfedpgp.thm1.explicit",
        notes="Equals dfedpgp.thm1.explicit wherever -coef_u L_u <= -coef_v L_v, which at Corollary 1's step "
              "sizes (one constant c for both) holds for every large T (kappa_u ~ c/(2 sqrt T) < kappa_v ~ "
              "c/sqrt T). Written without min() so that the rate verifier can expand it; Corollary 1's parent. "
              "Valid only where coef_u < 0 (T5 of dfedpgp.thm1.explicit), which is among its conditions; the "
              "rate verifier solves only T5's first-order necessary form for T (T5 itself has degree >= 5 in "
              "1/sqrt T; sympy.solve does not finish). Without T5 the value is negative at admissible-looking "
              "points: dfltheory verify measured -959 at T = 25 under Corollary 1's schedule (k-out graph, "
              "measured C = 2.51, q = 0.597, K_u = K_v = 2), where T5 fails and every other condition holds.",
    ),
    # ------------------------------------------------------------------ Corollary 1
    Theorem(
        id="dfedpgp.cor1", paper="dfedpgp", kind="corollary",
        title="Corollary 1: rate of DFedPGP at eta_u = O(1/(L_u K_u sqrt T)), eta_v = O(1/(L_v K_v sqrt T))",
        quantity=QUANTITY,
        terms=_cor1_terms(),
        variables=_V_THM + (V_L_uv, COMMON["c"]),
        source=_src("L142-155, L648-659", "(4)-(5), (34)", "§6.7"),
        conditions=_THEOREM_CONDS, assumptions=ASSUMPTIONS, big_o=True,
        parent="dfedpgp.thm1.explicit_u", schedule=SCHEDULE,
        reference={"f0_minus_fstar": 2.3, "T": 500, "K_u": 1, "L_u": 1, "L_v": 1, "L_uv": 0.5, "L_vu": 0.5,
                   "sigma_u": 1, "sigma_v": 1, "sigma_g": 1, "C": 6, "q": 0.31, "delta": 0.16},
        reference_value=2.2955,
        notes="(F1-F*+sigma_1^2)/sqrt T + sigma_2^2/T + sigma_3^2/T^{3/2} with sigma_1..3 of (5). Parent is the "
              "explicit bound from (32) (the printed Theorem 1 has no eta to substitute). It equals Theorem 1 "
              "(33) with L_vu^2 replaced by chi^2 L_u L_v >= L_vu^2, so cor1 >= thm1.eq33. Deriving it from (32) "
              "gives 1/(K_u^2 L_u delta^2 T^{3/2}) for the delta-term (the printed one is looser by K_u), and a "
              "C^4 L_vu^2/(1-q)^4 T^{-3/2} term that the paper drops via C^2 << (1-q)^2 T.",
    ),
    Theorem(
        id="dfedpgp.cor1.lemma3_constants", paper="dfedpgp", kind="corollary",
        title="Corollary 1 with C and q given by Lemma 3's own formulas (exponent (K_u+1) Delta B)",
        quantity=QUANTITY,
        terms={k: e.subs({C: C_PS, q: 1 - ONE_MINUS_Q_PS}) for k, e in _cor1_terms().items()},
        variables=tuple(v for v in _V_THM if v.name not in ("C", "q")) + (V_L_uv,) + _V_PS,
        source=_src("L142-155, L525-527", "(4)-(5) with Lemma 3's C, q", "§5.6, §10.6", "DERIVED"),
        conditions=(_LAM_POS, _KU2, _KV2), assumptions=ASSUMPTIONS, big_o=True,
        variant="Lemma-3 constants", variant_of="dfedpgp.cor1",
        reference={"f0_minus_fstar": 2.3, "T": 500, "K_u": 1, "K_v": 2, "L_u": 1, "L_v": 1, "L_uv": 0.5,
                   "L_vu": 0.5, "sigma_u": 1, "sigma_v": 1, "sigma_g": 1, "delta": 0.16, "m": 100, "D": 11,
                   "Delta_diam": 3, "B_conn": 1, "d0": 1.1e7},
        reference_value=5.64e28,
        notes="C taken at its upper bound. Shows Remark 1's 'more local steps K_u accelerate convergence' fails "
              "once C, q depend on K_u: 5.64e28, 3.60e41, 1.91e54, 4.01e79 for K_u = 1, 2, 3, 5 (m=100, D=11, "
              "Delta=3, B=1, d0=1.1e7) against 2.2955, 2.2405, 2.2222, 2.2075 at fixed C=6, q=0.31.",
    ),
    # ------------------------------------------------------------------ Remarks
    Theorem(
        id="dfedpgp.rem2", paper="dfedpgp", kind="remark",
        title="Remark 2: q = (1 - a^{Delta B})^{1/(Delta B + 1)}",
        quantity="q, the push-sum geometric rate (an equality, not a bound)",
        terms={"q": (1 - a ** (Delta * Bc)) ** (1 / (Delta * Bc + 1))},
        variables=(V_a, V_Delta, V_Bc),
        source=_src("L159", "Remark 2", "§5.7"),
        conditions=(Condition(a < 1, "a < 1 (Remark 2)", _src("L159", "Remark 2", "§5.7")),),
        assumptions=("Assumption 1",), variant="push-sum constant",
        notes="Drops the (K_u+1) of Lemma 3's proof. Equals SGP's tau = 0 formula with a = m^{1/(Delta B)}/D "
              "(dfedpgp.rem2.sgp).",
    ),
    Theorem(
        id="dfedpgp.rem2.sgp", paper="dfedpgp", kind="remark",
        title="Remark 2 with a = m^{1/(Delta B)}/D: q = (1 - m D^{-Delta B})^{1/(Delta B + 1)} (SGP, tau = 0)",
        quantity="q, the push-sum geometric rate (an equality, not a bound)",
        terms={"q": (1 - m * D ** (-Delta * Bc)) ** (1 / (Delta * Bc + 1))},
        variables=_V_PS[:4],
        source=_src("L159, L525", "Remark 2 / Lemma 3 proof", "§5.7", "INTERP"),
        conditions=(Condition(m * D ** (-Delta * Bc) < 1, "a < 1, i.e. m < D^{Delta B} (lambda > 0)",
                              _src("L159", "Remark 2", "§5.7", "DERIVED"), origin="derived",
                              why="the cited lemma's lambda must be positive; the paper does not say so"),),
        assumptions=("Assumption 1",), variant="SGP constants", variant_of="dfedpgp.rem2",
        notes="Invalid for well-connected graphs: m=100, D=11, Delta=1 gives a = 100/11 > 1 (lambda = -8.09).",
    ),
    Theorem(
        id="dfedpgp.rem3", paper="dfedpgp", kind="remark",
        title="Remark 3 and abstract: DFedPGP converges at rate O(1/sqrt T)",
        quantity=QUANTITY,
        terms={"rate": 1 / R},
        variables=(COMMON["T"],),
        source=_src("L13, L33, L177", "Remark 3; abstract", "§6.8"),
        big_o=True, variant="rate only", variant_of="dfedpgp.cor1",
        notes="The abstract (L13) and Remark 3 state the same leading rate as Corollary 1; Remark 3 adds that the "
              "1/T and T^{-3/2} terms can be neglected when L_u is large.",
    ),
)

# ---------------------------------------------------------------------------------------------- experiments
_TOPOLOGY = ("time-varying directed random pull graph, m = 100, each client pulls from 10 random in-neighbours "
             "and itself with weight 1/11 (row-stochastic eq. (6), so mu_i^t = 1 and delta = 1)")
_EXP_NOTE = ("K_u, K_v converted from epochs (5 on u, 1 on v) to SGD steps with ~{n} samples per client and batch "
             "128 ({b} minibatches per epoch) [DERIVED]. eta_v is never stated; taken equal to eta_u [INTERP]. "
             "delta = 1 because the experiments' row-stochastic rule keeps mu_i^t = 1 (card §5.1); C, q of the "
             "theory do not apply to that rule (the mean ubar is not preserved; card §11 A2). Momentum 0.9 and "
             "weight decay, used in every run, are absent from the theory. m = 100 clients.")

EXPERIMENTS: tuple[ExperimentSetting, ...] = (
    ExperimentSetting(
        id="dfedpgp.exp.cifar", paper="dfedpgp", theorem="dfedpgp.thm1",
        description="CIFAR-10/100 main runs: eta_u = 0.1, 5 epochs on u, 1 on v, 500 rounds, batch 128",
        values={"eta_u": 0.1, "eta_v": 0.1, "K_u": 20, "K_v": 4, "T": 500, "delta": 1.0},
        source=_src("L189, L463-472", "Implementation details; Table 8", "§8"),
        topology=_TOPOLOGY, notes=_EXP_NOTE.format(n=500, b=4), free=("L_u", "L_v"),
    ),
    ExperimentSetting(
        id="dfedpgp.exp.cifar.epochs", paper="dfedpgp", theorem="dfedpgp.thm1",
        description="CIFAR-10/100 main runs with K read literally as the epoch counts (K_u = 5, K_v = 1)",
        values={"eta_u": 0.1, "eta_v": 0.1, "K_u": 5, "K_v": 1, "T": 500, "delta": 1.0},
        source=_src("L189, L463-472", "Implementation details; Table 8 'Local Interval' 5", "§8", "INTERP"),
        topology=_TOPOLOGY, notes="Reading 'local interval 5' and '1 epoch' as K_u = 5, K_v = 1; K_v = 1 then "
                                  "violates Lemma 1's K_v >= 2 outright.", free=("L_u", "L_v"),
    ),
    ExperimentSetting(
        id="dfedpgp.exp.cifar.lr_grid_min", paper="dfedpgp", theorem="dfedpgp.thm1",
        description="CIFAR-10/100 with the smallest learning rate of the grid, eta = 0.01",
        values={"eta_u": 0.01, "eta_v": 0.01, "K_u": 20, "K_v": 4, "T": 500, "delta": 1.0},
        source=_src("L463-472", "Table 8 'Local Learning Rate' [0.01, 0.1, 0.5, 1]", "§8"),
        topology=_TOPOLOGY, notes=_EXP_NOTE.format(n=500, b=4), free=("L_u", "L_v"),
    ),
    ExperimentSetting(
        id="dfedpgp.exp.tinyimagenet", paper="dfedpgp", theorem="dfedpgp.thm1",
        description="Tiny-ImageNet: eta_u = 0.1, 5 epochs on u, 1 on v, 300 rounds (C.2; Table 8 says 500)",
        values={"eta_u": 0.1, "eta_v": 0.1, "K_u": 40, "K_v": 8, "T": 300, "delta": 1.0},
        source=_src("L403, L463-472", "Appendix C.2; Table 8", "§8"),
        topology=_TOPOLOGY, notes=_EXP_NOTE.format(n=1000, b=8), free=("L_u", "L_v"),
    ),
)


def register() -> None:
    """The paper and its theorems into the catalog, through the function a user's plugin calls."""
    from dfltheory.bounds.catalog import register_paper
    from dfltheory.papers.dfedpgp import PAPER, TITLE

    register_paper(PAPER, TITLE, THEOREMS, experiments=EXPERIMENTS, sigma_g_form=SIGMA_G_FORM,
                   topology_keys=PUSHSUM_KEYS, origin=__name__)
