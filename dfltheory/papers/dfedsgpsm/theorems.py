"""Bounds of DFedSGPSM, *Asymmetrically Decentralized Federated Learning* (seed 000, card ``dfedsgpsm.md``).

Push-sum (column-stochastic P(t), weights w_i^t, de-biased z = x/w) + SAM + local heavy-ball momentum. Every bound
is on ``(1/T) sum_{t=0}^{T-1} E||grad f(x_bar^t)||^2`` at the plain average ``x_bar^t = (1/n) sum_i x_i^t`` of the
push-sum *numerators*, or on a per-round quantity of the proof chain (Lemmas 1-5).

Topology enters only through the push-sum constants C, q (Assran et al. 2019, Lemma 3) and the weight floor
delta = inf_t min_i w_i^t <= 1 (Taheri et al. 2020, Prop. 2.1); Remark 1 gives q from diameter and window.

The printed Theorem 1 has a slip in its last step (seed L430: ``alpha_tilde < K/(1-alpha)`` used to *upper*-bound
``1/alpha_tilde``); it is the default ``dfedsgpsm.thm1``, the repaired bounds are the variants ``.corrected``,
``.consistent`` and ``.alpha_tilde`` (card section 6.6 (i)-(iii)).
"""

from __future__ import annotations

import sympy as sp

from dfltheory.bounds.settings import ExperimentSetting
from dfltheory.bounds.symbols import COMMON, Var
from dfltheory.bounds.theorem import Condition, Source, Theorem

__all__ = ["THEOREMS", "EXPERIMENTS", "alpha_tilde", "C1_PAPER", "C1_PROOF"]

#: the form of the heterogeneity assumption the theorems' sigma_g bounds (catalog.SIGMA_G_FORMS; card §4)
SIGMA_G_FORM = "client"
SEED = "000_400dae44e45eec48.txt"
CARD = "dfedsgpsm.md"
ASSUMPTIONS = ("A1 B-bounded strong connectivity", "A2 L-smooth", "A3 unbiased, variance sigma_l^2",
               "A4 heterogeneity sigma_g^2", "A5 ||grad f_i|| <= B")


def _src(lines, equation="", card="", tag="SEED") -> Source:
    return Source(SEED, lines, equation, card, tag)


# ----------------------------------------------------------------------------------------------- symbols
_names = ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g", "B", "alpha", "C", "q", "delta", "f0_minus_fstar",
          "c", "r", "n")
V = {k: COMMON[k] for k in _names}
V["x0_sq_mean"] = Var("x0_sq_mean", "mean squared norm of the initial models (1/n) sum_i ||x_i^0||^2",
                      low=0, low_open=False, latex=r"\frac1n\sum_i\|x_i^0\|^2")
V["x0i_sq"] = Var("x0i_sq", "squared norm ||x_i^0||^2 of client i's initial model", low=0, low_open=False,
                  latex=r"\|x_i^0\|^2")
V["grad_z_sq_mean"] = Var("grad_z_sq_mean", "(1/n) sum_i E||grad f(z_i^t)||^2 at the de-biased round-start models",
                          low=0, low_open=False)
V["t"] = Var("t", "communication-round index t", low=0, low_open=False, integer=True)
V["a"] = Var("a", "constant a < 1 of Remark 1 (q = (1 - a^(Delta Bw))^(1/(Delta Bw + 1)))", low=0, high=1,
             topology_key="a")
V["Delta"] = Var("Delta", "diameter of the (window-union) communication digraph", low=1, low_open=False,
                 integer=True, topology_key="Delta", latex=r"\Delta")
V["Bw"] = Var("Bw", "connectivity window calB of Assumption 1 (not the gradient bound B)", low=1, low_open=False,
              integer=True, topology_key="B", latex=r"\mathcal{B}")
V["D"] = Var("D", "maximum out-degree, self included (max non-zeros per column of P(t))", low=1, low_open=False,
             integer=True, topology_key="D")

S = {k: v.symbol for k, v in V.items()}
eta, K, T, L, rho = S["eta"], S["K"], S["T"], S["L"], S["rho"]
sl, sg, B, alpha = S["sigma_l"], S["sigma_g"], S["B"], S["alpha"]
C, q, delta, F, x0 = S["C"], S["q"], S["delta"], S["f0_minus_fstar"], S["x0_sq_mean"]
c, r = S["c"], S["r"]


def _vars(*names) -> tuple[Var, ...]:
    return tuple(V[n] for n in names)


BOUND_VARS = ("eta", "K", "T", "L", "rho", "sigma_l", "sigma_g", "B", "alpha", "C", "q", "delta",
              "f0_minus_fstar", "x0_sq_mean")

#: alpha_tilde = sum_{k=1}^K sum_{s=1}^k alpha^(k-s) in closed form (card section 2, DERIVED); K <= it < K/(1-alpha).
alpha_tilde = (K - alpha * (1 - alpha**K) / (1 - alpha)) / (1 - alpha)

#: C_1 as printed (seed L136, L327) and as the proof's summation yields (seed L352, card section 6.3).
C1_PAPER = (8 * K * sl**2 + 64 * K**2 * sg**2 + 32 * K**2 * alpha**2 / (1 - alpha) ** 2 * (sl**2 + B**2)
            + 64 * K * L**2 * rho**2)
C1_PROOF = (8 * K**2 * sl**2 + 64 * K**2 * sg**2 + 32 * K**2 * alpha**2 / (1 - alpha) ** 2 * (sl**2 + B**2)
            + 64 * K**2 * L**2 * rho**2)

AVG = "(1/T) sum_{t=0}^{T-1} E||grad f(x_bar^t)||^2, x_bar^t = (1/n) sum_i x_i^t (average over rounds, numerators)"

# ----------------------------------------------------------------------------------------------- conditions
_lr = Condition(sp.StrictLessThan(eta, delta / (8 * L * K)), "0 < eta_l < delta/(8 L K) (Theorem 1, Lemma 3)",
                _src("L132, L323", "Theorem 1", "6.6(c)"))
_lr_proof = Condition(sp.StrictLessThan(eta, 1 / (K * L)), "eta_l < 1/(K L), assumed in the descent step",
                      _src("L409", "proof of Lemma 5", "6.5, 11-6"))
_descent = Condition(sp.StrictLessThan(L * eta * alpha_tilde, 1),
                     "L eta alpha_tilde < 1: what 'alpha_tilde eta - L eta^2 alpha_tilde^2 > 0' really needs",
                     _src("L409", "proof of Lemma 5", "6.5, 11-6", "DERIVED"), origin="derived",
                     why="the descent step of Lemma 5's proof (seed L409) needs alpha_tilde eta - L eta^2 alpha_tilde^2 > 0, which the paper's eta_l < delta/(8LK) does not give")
_alpha_pos = Condition(sp.StrictGreaterThan(alpha, 0, evaluate=False), "0 < alpha (Lemma 2)",
                       _src("L315", "Lemma 2", "6.2(c)"))
_alpha_lt1 = Condition(sp.StrictLessThan(alpha, 1), "alpha < 1 (Lemma 2)", _src("L315", "Lemma 2", "6.2(c)"))
_K2 = Condition(sp.GreaterThan(K, 2), "K >= 2: Lemma 3 uses 1/(K-1) and (1 + 1/(K-1))^K <= 5",
                _src("L344-355", "proof of Lemma 3", "6.3(c)", "DERIVED"), origin="derived",
                why="Lemma 3's proof divides by K - 1 (seed L344-355); the paper states no lower bound on K")
_q1 = Condition(sp.StrictLessThan(q, 1), "q in [0, 1) (Theorem 1; (0, 1) in Lemmas 4-5)",
                _src("L132, L361", "Theorem 1", "6.6(c), 11-9"))

THM1_CONDITIONS = (_lr, _lr_proof, _descent, _alpha_pos, _alpha_lt1, _K2, _q1)
COR1_CONDITIONS = (
    Condition(sp.StrictGreaterThan(T, 64 * c**2 / delta**2),
              "T > 64 c^2/delta^2: eta < delta/(8LK) under eta = c/(L K sqrt(T))",
              _src("L132, L140", "Theorem 1 + Corollary 1", "6.7(c)", "DERIVED"), origin="paper"),
    Condition(sp.StrictLessThan(c / sp.sqrt(T), 1), "c/sqrt(T) < 1: eta < 1/(KL) under the schedule",
              _src("L409, L140", "proof of Lemma 5 + Corollary 1", "6.7(c)", "DERIVED"), origin="paper"),
    Condition(sp.StrictLessThan(c * alpha_tilde / (K * sp.sqrt(T)), 1),
              "c alpha_tilde/(K sqrt(T)) < 1: descent positivity under the schedule",
              _src("L409, L140", "proof of Lemma 5 + Corollary 1", "6.7(c)", "DERIVED"), origin="derived",
              why="the derived descent condition L eta alpha_tilde < 1 under the schedule"),
    _alpha_lt1, _K2, _q1,
)


# ----------------------------------------------------------------------------------------------- Theorem 1
def _thm1_terms(first, C1, delta_power, weight) -> dict:
    """The six terms of Theorem 1. ``first``: the optimisation term; ``weight``: what multiplies eta in the noise
    and consensus terms (K/(1-alpha) as printed, alpha_tilde before the last step); ``delta_power``: 1 as printed,
    2 as Lemma 3's proof has it."""
    return {
        "optimization": first,
        "noise": L * eta * weight * sl**2,
        "drift": 3 * eta**2 * L**2 / delta**delta_power * (C1 + 64 * K**2 * B**2),
        "consensus_init": 6 * L**2 * C**2 / (T * (1 - q**2)) * x0,
        "consensus": 6 * L**2 * eta**2 * weight**2 * C**2 * (B**2 + sl**2) / (1 - q) ** 2,
        "sam": 3 * L**2 * rho**2,
    }


_THM1_TITLE = "Theorem 1: non-convex convergence of DFedSGPSM on time-varying directed graphs"
_K_OVER = K / (1 - alpha)

THM1 = Theorem(
    id="dfedsgpsm.thm1", paper="dfedsgpsm", kind="theorem", title=_THM1_TITLE, quantity=AVG,
    terms=_thm1_terms(2 * (1 - alpha) * F / (T * eta * K), C1_PAPER, 1, _K_OVER),
    variables=_vars(*BOUND_VARS),
    source=_src("L132-136 (proof L377-434)", "Theorem 1", "6.6(a)(b)"),
    conditions=THM1_CONDITIONS, assumptions=ASSUMPTIONS,
    notes="Printed bound. Its first term 2(1-alpha)F/(T eta K) comes from replacing 1/alpha_tilde by (1-alpha)/K "
          "with alpha_tilde < K/(1-alpha) (seed L430): the wrong direction, since alpha_tilde >= K; the valid term is "
          "2F/(T eta K) (variant .corrected). sigma_l (stochastic-gradient variance) is never defined: Assumption 3 "
          "prints sigma_g for it (card 11-2). No condition on rho is given ('proper values of rho'); with fixed rho "
          "and eta the bound has the non-vanishing floor noise + drift + consensus + 3 L^2 rho^2. The experiments "
          "run the printed algorithm with eta = 0.1, alpha = 0.9/0.1, rho = 0.1 (EXPERIMENTS).",
)

THM1_CORRECTED = Theorem(
    id="dfedsgpsm.thm1.corrected", paper="dfedsgpsm", kind="theorem", title=_THM1_TITLE + " (first term repaired)",
    quantity=AVG, terms=_thm1_terms(2 * F / (T * eta * K), C1_PAPER, 1, _K_OVER),
    variables=_vars(*BOUND_VARS),
    source=_src("L425-434", "Theorem 1, last step", "6.6(b)(i), 11-1", "CORRECTED"),
    conditions=THM1_CONDITIONS, assumptions=ASSUMPTIONS, variant="corrected", variant_of="dfedsgpsm.thm1",
    notes="Reading (i): 1/alpha_tilde <= 1/K (alpha_tilde >= K), so the optimisation term is 2F/(T eta K), larger "
          "than the printed one by 1/(1-alpha) (x10 at alpha = 0.9). Every term is now non-decreasing in alpha: this "
          "reading predicts no benefit from momentum at fixed eta (reading (iii), .alpha_tilde, still does).",
)

THM1_CONSISTENT = Theorem(
    id="dfedsgpsm.thm1.consistent", paper="dfedsgpsm", kind="theorem",
    title=_THM1_TITLE + " (proof chain made consistent)", quantity=AVG,
    terms=_thm1_terms(2 * F / (T * eta * K), C1_PROOF, 2, _K_OVER),
    variables=_vars(*BOUND_VARS),
    source=_src("L337, L352, L403, L430", "Lemma 3 proof + Theorem 1", "6.6(b)(ii), 6.3, 11-3, 11-4", "CORRECTED"),
    conditions=THM1_CONDITIONS, assumptions=ASSUMPTIONS, variant="consistent", variant_of="dfedsgpsm.thm1",
    notes="Reading (ii): reading (i) plus what the proof chain actually yields: C_1 with 8K^2 sigma_l^2 and "
          "64K^2 L^2 rho^2 (seed L352 and the sum over j; printed 8K, 64K) and 1/delta^2 in the drift term "
          "(Lemma 3's proof has ||z - z'||^2 <= ||x - x'||^2/delta^2, seed L337; the R1 chain uses 1/delta, L403).",
)

THM1_ALPHA_TILDE = Theorem(
    id="dfedsgpsm.thm1.alpha_tilde", paper="dfedsgpsm", kind="theorem",
    title=_THM1_TITLE + " (before the last substitution, alpha_tilde exact)", quantity=AVG,
    terms=_thm1_terms(2 * F / (T * alpha_tilde * eta), C1_PAPER, 1, alpha_tilde),
    variables=_vars(*BOUND_VARS),
    source=_src("L425-427", "proof of Theorem 1, penultimate display", "6.5, 6.6(b)(iii)"),
    conditions=THM1_CONDITIONS, assumptions=ASSUMPTIONS, variant="alpha_tilde", variant_of="dfedsgpsm.thm1",
    notes="Reading (iii), the tightest valid form: the proof's display before seed L430 with alpha_tilde = "
          "sum_k sum_s alpha^(k-s) in closed form (K - alpha(1-alpha^K)/(1-alpha))/(1-alpha) [closed form DERIVED]. "
          "It equals (1/T) sum_t of Lemma 5 times 2/(alpha_tilde eta) with sum_t q^(2t) <= 1/(1-q^2). Like the "
          "printed bound (and unlike reading (i)) it has an interior minimiser in alpha: at eta = 1e-4, K = 20, "
          "T = 500, L = 1, rho = 0.1, sigma's = B = C = 1, q = 0.5, delta = 0.1, F = 2.3, x0 = 1 it is "
          "alpha* ~ 0.85 (printed: ~ 0.86).",
)

# ----------------------------------------------------------------------------------------------- Corollary 1
SCHEDULE = {"eta": c / (L * K * sp.sqrt(T)), "rho": r / (L * sp.sqrt(T))}
_COR1_SOURCE = _src("L140-144", "Corollary 1", "6.7")
_COR1_TITLE = "Corollary 1: O(1/sqrt(T)) with eta = O(1/(L K sqrt(T))), rho = O(1/(L sqrt(T)))"
_COR1_VARS = _vars(*BOUND_VARS, "c", "r")


def _cor1_terms(first, C2, delta_power) -> dict:
    return {
        "optimization": first,
        "noise": sl**2 / (sp.sqrt(T) * (1 - alpha)),
        "drift": C2 / (T * delta**delta_power),
        "consensus_init": L**2 * C**2 / (T * (1 - q**2)) * x0,
        "consensus": C**2 * (B**2 + sl**2) / (T * (1 - alpha) ** 2 * (1 - q) ** 2),
        "sam": 1 / T,
    }


C2_PAPER = sl**2 / K + sg**2 + alpha**2 / (1 - alpha) ** 2 * (sl**2 + B**2) + 1 / (T * K)

COR1 = Theorem(
    id="dfedsgpsm.cor1", paper="dfedsgpsm", kind="corollary", title=_COR1_TITLE, quantity=AVG,
    terms=_cor1_terms(L * (1 - alpha) * F / sp.sqrt(T), C2_PAPER, 1), variables=_COR1_VARS, source=_COR1_SOURCE,
    conditions=COR1_CONDITIONS, assumptions=ASSUMPTIONS, big_o=True, parent="dfedsgpsm.thm1", schedule=SCHEDULE,
    notes="Stated rate, constants 1. Substituting the schedule into Theorem 1 gives a 1/(T delta) group "
          "3c^2(8 sigma_l^2/K + 64 sigma_g^2 + 32 alpha^2/(1-alpha)^2 (sigma_l^2+B^2) + 64 r^2/(K T) + 64 B^2): the "
          "paper's C_2 omits the B^2 (card 11-5). The (1-alpha) of the first term inherits the slip of Theorem 1. "
          "With c = 1 the theorem's step-size condition needs T > 64/delta^2 (delta ~ 0.1 empirically: T > 6400; "
          "the experiments run 300-500 rounds). eta_l is called 'adaptive' though it is a fixed schedule.",
)

COR1_EXACT = Theorem(
    id="dfedsgpsm.cor1.exact", paper="dfedsgpsm", kind="corollary", title=_COR1_TITLE + " (exact substitution)",
    quantity=AVG, terms={k: e.subs({eta: SCHEDULE["eta"], rho: SCHEDULE["rho"]})
                         for k, e in THM1.terms.items()},
    variables=_COR1_VARS, source=_src("L132-144", "Theorem 1 under Corollary 1's schedule", "6.7(b)", "DERIVED"),
    conditions=COR1_CONDITIONS, assumptions=ASSUMPTIONS, variant="exact", variant_of="dfedsgpsm.cor1",
    parent="dfedsgpsm.thm1", schedule=SCHEDULE,
    notes="The printed Theorem 1 with eta = c/(L K sqrt(T)), rho = r/(L sqrt(T)) substituted, every constant kept "
          "(card's cor1_exact). sqrt(T) times it tends to 2L(1-alpha)F/c + c sigma_l^2/(1-alpha).",
)

COR1_CORRECTED = Theorem(
    id="dfedsgpsm.cor1.corrected", paper="dfedsgpsm", kind="corollary",
    title=_COR1_TITLE + " (from the repaired first term, B^2 restored)", quantity=AVG,
    terms=_cor1_terms(L * F / sp.sqrt(T), C2_PAPER + B**2, 1), variables=_COR1_VARS,
    source=_src("L140-144, L430", "Corollary 1", "6.7(b), 11-1, 11-5", "CORRECTED"),
    conditions=COR1_CONDITIONS, assumptions=ASSUMPTIONS, big_o=True, variant="corrected",
    variant_of="dfedsgpsm.cor1", parent="dfedsgpsm.thm1.corrected", schedule=SCHEDULE,
    notes="The rate Theorem 1 (reading (i)) gives under the schedule: no (1-alpha) in the optimisation term and "
          "B^2 in C_2. Still O(1/sqrt(T)).",
)

COR1_CONSISTENT = Theorem(
    id="dfedsgpsm.cor1.consistent", paper="dfedsgpsm", kind="corollary",
    title=_COR1_TITLE + " (from the consistent proof chain)", quantity=AVG,
    terms=_cor1_terms(L * F / sp.sqrt(T), sl**2 + sg**2 + alpha**2 / (1 - alpha) ** 2 * (sl**2 + B**2) + B**2
                      + 1 / T, 2),
    variables=_COR1_VARS, source=_src("L140-144, L337, L352", "Corollary 1", "6.7, 6.6(b)(ii)", "CORRECTED"),
    conditions=COR1_CONDITIONS, assumptions=ASSUMPTIONS, big_o=True, variant="consistent",
    variant_of="dfedsgpsm.cor1", parent="dfedsgpsm.thm1.consistent", schedule=SCHEDULE,
    notes="Reading (ii) under the schedule: the drift group is (sigma_l^2 + sigma_g^2 + alpha^2(sigma_l^2+B^2)"
          "/(1-alpha)^2 + B^2 + 1/T)/(T delta^2): sigma_l^2 loses its 1/K, the SAM piece is 1/(T^2 delta^2) "
          "instead of Remark 2's 1/(T^2 K delta), and delta enters squared.",
)

COR1_ABSTRACT = Theorem(
    id="dfedsgpsm.cor1.abstract", paper="dfedsgpsm", kind="corollary", title="Headline rate O(1/sqrt(T))",
    quantity=AVG, terms={"rate": 1 / sp.sqrt(T)}, variables=_COR1_VARS,
    source=_src("L11, L23, L29, L148", "abstract, introduction, Remark 2", "6.7(d), 6.8"),
    conditions=COR1_CONDITIONS, assumptions=ASSUMPTIONS, big_o=True, variant="abstract",
    variant_of="dfedsgpsm.cor1", parent="dfedsgpsm.thm1", schedule=SCHEDULE,
    notes="The abstract, the contributions list and Remark 2 state O(1/sqrt(T)); Remark 2 adds that "
          "O(1/T + 1/(T^2 K delta)) from SAM is negligible. Agrees with Corollary 1's leading order.",
)

# ----------------------------------------------------------------------------------------------- Lemmas
LEM1 = Theorem(
    id="dfedsgpsm.lem1", paper="dfedsgpsm", kind="lemma",
    title="Lemma 1: closed form of the local phase; total momentum weight alpha_tilde",
    quantity="alpha_tilde = sum_{k=1}^K sum_{s=1}^k alpha^(k-s), the total weight of the local SAM gradients in "
             "x_i^{t+1/2} = x_i^t - eta sum_k sum_s alpha^(k-s) g_{i,s}^t (eq. (4)); an identity, not a bound",
    terms={"momentum_weight": alpha_tilde}, variables=_vars("K", "alpha"),
    source=_src("L297-313, L361", "Lemma 1, eq. (4)", "2, 6.1", "DERIVED"),
    conditions=(_alpha_lt1,),
    reference={"alpha": 0.9, "K": 20}, reference_value=120.9418989,
    notes="Closed form DERIVED; K <= alpha_tilde < K/(1-alpha) for 0 <= alpha < 1 (the paper states only "
          "0 < alpha_tilde < K/(1-alpha), seed L361). Reference value: card 10-10 (alpha_tilde ~ 120.9).",
)

LEM2 = Theorem(
    id="dfedsgpsm.lem2", paper="dfedsgpsm", kind="lemma", title="Lemma 2 (Sun et al. 2022): one local step",
    quantity="E||x_{i,k+1}^t - x_{i,k}^t||^2 for every client i, round t and 0 <= k <= K-1",
    terms={"noise": 2 * eta**2 * sl**2 / (1 - alpha) ** 2, "gradient": 2 * eta**2 * B**2 / (1 - alpha) ** 2},
    variables=_vars("eta", "sigma_l", "B", "alpha"), source=_src("L315-321", "Lemma 2", "6.2"),
    conditions=(_alpha_pos, _alpha_lt1), assumptions=("A3", "A4", "A5"),
    notes="No proof (refers to Sun et al. 2022). Stated under Assumptions 4, 5 but uses the variance sigma_l of "
          "Assumption 3 as well (card 11-11).",
)


def _lem3_terms(C1_noise_K, C1_sam_K) -> dict:
    return {
        "noise": 8 * C1_noise_K * sl**2 * eta**2,
        "heterogeneity": 64 * K**2 * sg**2 * eta**2,
        "momentum": 32 * K**2 * alpha**2 / (1 - alpha) ** 2 * (sl**2 + B**2) * eta**2,
        "sam": 64 * C1_sam_K * L**2 * rho**2 * eta**2,
        "gradient": 64 * K**2 * eta**2 * S["grad_z_sq_mean"],
    }


_LEM3_Q = "(1/n) sum_i E||x_{i,k}^t - x_i^t||^2 (local drift of the numerators) for any round t and 0 <= k <= K"
_LEM3_CONDITIONS = (_lr, _alpha_pos, _alpha_lt1, _K2)
_LEM3_VARS = _vars("eta", "K", "L", "rho", "sigma_l", "sigma_g", "B", "alpha", "delta", "grad_z_sq_mean")

LEM3 = Theorem(
    id="dfedsgpsm.lem3", paper="dfedsgpsm", kind="lemma", title="Lemma 3: local drift, C_1 eta^2 + 64 K^2 eta^2 G",
    quantity=_LEM3_Q, terms=_lem3_terms(K, K), variables=_LEM3_VARS, source=_src("L323-355", "Lemma 3", "6.3"),
    conditions=_LEM3_CONDITIONS, assumptions=ASSUMPTIONS[1:],
    notes="C_1 as printed (8K sigma_l^2, 64K L^2 rho^2). Labelled '[Sun et al. (2022) Lemma 3]' but contains delta "
          "and rho; 'if Assumption 5 holds' though Assumptions 2-4 are used too.",
)

LEM3_PROOF = Theorem(
    id="dfedsgpsm.lem3.proof", paper="dfedsgpsm", kind="lemma", title="Lemma 3 with the C_1 its proof yields",
    quantity=_LEM3_Q, terms=_lem3_terms(K**2, K**2), variables=_LEM3_VARS,
    source=_src("L352-355", "proof of Lemma 3, last line", "6.3(b)", "CORRECTED"),
    conditions=_LEM3_CONDITIONS, assumptions=ASSUMPTIONS[1:], variant="proof", variant_of="dfedsgpsm.lem3",
    notes="C1_proof: the proof's last line has 8K^2 eta^2 sigma_l^2 (seed L352) and summing "
          "(1 + 1/(K-1))^j <= 4K over j multiplies 16 K L^2 rho^2 eta^2 into 64 K^2 L^2 rho^2 eta^2.",
)

LEM4 = Theorem(
    id="dfedsgpsm.lem4", paper="dfedsgpsm", kind="lemma", title="Lemma 4: consensus error of the de-biased models",
    quantity="E||z_i^t - x_bar^t||^2 for one client i at round t >= 0",
    terms={"initial": 2 * C**2 * q ** (2 * S["t"]) * S["x0i_sq"],
           "steps": 2 * eta**2 * alpha_tilde**2 * C**2 * (B**2 + sl**2) / (1 - q) ** 2},
    variables=_vars("eta", "K", "alpha", "B", "sigma_l", "C", "q", "t", "x0i_sq"),
    source=_src("L357-375", "Lemma 4", "6.4"), conditions=(_q1,), assumptions=("A1", "A3", "A5"),
    notes="Borrows SGP's Lemma 3 (one SGD step per round) for K momentum+SAM steps and bounds "
          "||eta sum alpha^(k-s) g|| <= eta alpha_tilde sqrt(B^2 + sigma_l^2) pathwise (seed L369).",
)

LEM5 = Theorem(
    id="dfedsgpsm.lem5", paper="dfedsgpsm", kind="lemma", title="Lemma 5: one-round descent (statement lost)",
    quantity="E f(x_bar^{t+1}) - E f(x_bar^t) + (alpha_tilde eta/2) E||grad f(x_bar^t)||^2, one round t",
    terms={
        "noise": L * eta**2 * alpha_tilde**2 * sl**2 / 2,
        "drift": 3 * alpha_tilde * eta**3 * L**2 / (2 * delta) * (C1_PAPER + 64 * K**2 * B**2),
        "consensus_init": 3 * L**2 * C**2 * q ** (2 * S["t"]) * eta * alpha_tilde * x0,
        "consensus": 3 * L**2 * eta**3 * alpha_tilde**3 * C**2 * (B**2 + sl**2) / (1 - q) ** 2,
        "sam": sp.Rational(3, 2) * alpha_tilde * eta * L**2 * rho**2,
    },
    variables=_vars("eta", "K", "L", "rho", "sigma_l", "sigma_g", "B", "alpha", "C", "q", "delta", "t",
                    "x0_sq_mean"),
    source=_src("L377-413", "Lemma 5 (statement empty after 'Then', L377-379)", "6.5", "RECONSTRUCTED"),
    conditions=(_lr, _lr_proof, _descent, _alpha_pos, _alpha_lt1, _K2, _q1), assumptions=ASSUMPTIONS[1:],
    notes="Rebuilt from the proof's one-round inequality (seed L411-413). The R1 bound uses 1/delta (L403) where "
          "Lemma 3's proof has 1/delta^2 (L337). The descent term needs L eta alpha_tilde < 1, which the proof's "
          "'eta < 1/(KL)' does not give for alpha > 0 (e.g. alpha = 0.9, K = 20, eta = 0.9/(KL): "
          "L eta alpha_tilde ~ 5.44).",
)

# ----------------------------------------------------------------------------------------------- Remark 1
_DB = S["Delta"] * S["Bw"]
REM1 = Theorem(
    id="dfedsgpsm.rem1", paper="dfedsgpsm", kind="remark", title="Remark 1: q from diameter and window",
    quantity="push-sum consensus rate q of Lemma 4 / Theorem 1",
    terms={"q": (1 - S["a"] ** _DB) ** (1 / (_DB + 1))}, variables=_vars("a", "Delta", "Bw"),
    source=_src("L146", "Remark 1", "5.3, 6.8"),
    conditions=(Condition(sp.StrictLessThan(S["a"], 1), "a < 1 a constant", _src("L146", "Remark 1", "6.8")),),
    notes="'a < 1 is a constant', never specified; the natural reading a = 1/D (smallest mixing weight) drops "
          "SGP's factor n (variant .sgp). q increases with Delta Bw: better connectivity, smaller q.",
)

REM1_SGP = Theorem(
    id="dfedsgpsm.rem1.sgp", paper="dfedsgpsm", kind="remark", title="Remark 1 read with SGP's constants",
    quantity="push-sum consensus rate q of Lemma 4 / Theorem 1",
    terms={"q": (1 - S["n"] * S["D"] ** (-_DB)) ** (1 / (_DB + 1))}, variables=_vars("n", "D", "Delta", "Bw"),
    source=_src("L146, L363", "Remark 1 via Assran et al. 2019 Lemma 3", "5.3, 11-13", "INTERP"),
    conditions=(Condition(sp.StrictLessThan(S["n"] * S["D"] ** (-_DB), 1),
                          "n D^(-Delta Bw) < 1, else SGP's lambda = 1 - n D^(-Delta Bw) <= 0 and q is void",
                          _src("L146", "Remark 1", "5.3", "DERIVED"), origin="derived",
                          why="the cited lemma's lambda = 1 - n D^(-Delta Bw) must be positive for q to be a rate; the paper does not say so"),),
    variant="sgp", variant_of="dfedsgpsm.rem1",
    notes="a^(Delta Bw) = n D^(-Delta Bw), i.e. a = n^(1/(Delta Bw))/D: SGP's lambda = 1 - n D^(-Delta Bw), "
          "q = lambda^(1/(Delta Bw + 1)) (card's recollection of Assran et al. 2019, to verify). For the paper's "
          "topology (n = 100, D = 11, Delta = 4, Bw = 1) q ~ 0.9986 (Bw = 2: q ~ 1 - 5e-8).",
)

THEOREMS = (THM1, THM1_CORRECTED, THM1_CONSISTENT, THM1_ALPHA_TILDE, COR1, COR1_EXACT, COR1_CORRECTED,
            COR1_CONSISTENT, COR1_ABSTRACT, LEM1, LEM2, LEM3, LEM3_PROOF, LEM4, LEM5, REM1, REM1_SGP)

# ----------------------------------------------------------------------------------------------- experiments
_EXP_NOTE = ("delta = 1 is the most favourable weight floor (delta <= 1 always, = 1 only for doubly stochastic "
             "P(t)), so a violation here holds for every topology; the card's simulation of the paper's random "
             "10-out-neighbour digraph gives delta ~ 0.07-0.10 (pass delta=0.1 to violations). K = 5 local epochs x "
             "ceil(per-client samples/128) minibatches. eta = 0.1 is the initial lr (decayed x0.998 per round: "
             "0.037 at t = 500).")


def _setting(key, what, T_, K_, alpha_, lines, notes=_EXP_NOTE) -> ExperimentSetting:
    return ExperimentSetting(
        id=f"dfedsgpsm.exp.{key}", paper="dfedsgpsm", theorem="dfedsgpsm.thm1", description=what,
        values={"eta": 0.1, "K": K_, "T": T_, "alpha": alpha_, "rho": 0.1, "delta": 1.0},
        source=_src(lines, "section 5 / appendix A", "8"),
        topology="time-varying random digraph, n = 100, 10 out-neighbours + self, column-stochastic 1/|N_out|",
        notes=notes)


EXPERIMENTS = (
    _setting("mnist", "MNIST, mnist_2NN, 300 rounds, momentum 0.9", 300, 25, 0.9, "L162, L271-281",
             _EXP_NOTE + " MNIST has 600 samples per client (the paper says 50,000 per dataset, which gives K = 20)."),
    _setting("cifar10", "CIFAR-10, CNN, 500 rounds, momentum 0.9", 500, 20, 0.9, "L162, L271-281"),
    _setting("cifar100", "CIFAR-100, ResNet-18 (GN), 500 rounds, momentum 0.1", 500, 20, 0.1, "L162, L271-281"),
) + tuple(
    _setting(f"fig2a.alpha{a_}", f"CIFAR-10 Dir-0.3 momentum ablation (Fig. 2a), alpha = {a_}", 500, 20, a_,
             "L193-199, L281")
    for a_ in (0.1, 0.3, 0.5, 0.7, 0.9)
)


def register() -> None:
    """The paper and its theorems into the catalog, through the function a user's plugin calls."""
    from dfltheory.bounds.catalog import register_paper
    from dfltheory.papers.dfedsgpsm import PAPER, TITLE

    register_paper(PAPER, TITLE, THEOREMS, experiments=EXPERIMENTS, sigma_g_form=SIGMA_G_FORM,
                   origin=__name__)
