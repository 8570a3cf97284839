"""The algorithms as step programs (:mod:`dfltheory.program`), each written once for training, PEP and certificate.

Each program cites the card of its algorithm; its PEP reading is the one :mod:`dfltheory.pep.problem` documents
(identical start, sigma_l = 0). Names: the PEP models' names (``dpsgd``, ``dfedavg``, ``dfedsam-unnormalized``,
``dfedadmm``, ``dfedcata-a``, ``sgp``, ``dfedsgpm``, ...) and the engine's torch-only ones whose local step is not
a linear combination (``dfedsam``, ``dfedadmm-sam``, ``dfedsgpsm``: SAM's normalised ascent, declared by
``ops.normalize``; their ``-unnormalized`` programs are the PEP-able relaxations). Hyper-parameters carry the PEP's
names: ``Q`` gossip steps, ``rho`` SAM radius, ``lam_pen`` penalty (DFedADMM's lambda, DFedCata's lam_pen),
``beta`` DFedCata's extrapolation, ``alpha`` the local heavy-ball momentum.
"""

from __future__ import annotations

import math

from dfltheory.program import PROGRAMS, Metric, Program, Slot, register_program

__all__ = ["BUILT_IN", "admm_gamma"]


def admm_gamma(eta: float, lam_pen: float, K) -> float:
    """gamma = 1 - (1 - eta/lam_pen)^K (card dfedadmm §5.4, eq. (7)); w^t's coefficient is (1 - gamma)/gamma. With
    local epochs K is the clients' mean step count; where 1 - eta/lam_pen < 0 its power needs an integer K, so K is
    rounded there (a real number, never a complex one)."""
    base = 1.0 - eta / lam_pen
    return 1.0 - base ** (K if base >= 0 else round(K))


def admm_extrapolation(p) -> float:
    """(1 - gamma)/gamma, w^t's coefficient (card dfedadmm §2, §6.1 Lemma 9, seed 004 L593-604); inf at gamma = 0
    (no w^t: eta = 0)."""
    gamma = admm_gamma(p.eta, p.lam_pen, p.K)
    return (1 - gamma) / gamma if gamma else math.inf


def _oracle(normalized: bool):
    """The local gradient at z = debias(x): plain (rho = 0) or SAM's, grad f_i(z + rho g/||g||) (card dfedsam §3.1
    eq. (3), the engine's ``rules.sam``) or, unnormalised, grad f_i(z + rho g) (the step DFedADMM-SAM's and
    DFedSGPSM's proofs bound; the PEP's ``-unnormalized`` variants)."""

    def grad(ops, s, p):
        z = ops.debias(s["x"])
        g = ops.grad(z)
        if not p.get("rho"):
            return g
        ascent = ops.normalize(g) if normalized else g
        return ops.grad(z + p.rho * ascent)

    return grad


def _plain(normalized=False):
    """d = the local gradient (DFedAvg, D-PSGD, SGP; DFedSAM's with ``normalized``)."""
    return _oracle(normalized)


def _momentum(normalized=False):
    """v = alpha v + g, step along v, v = 0 at every round start (DFedAvgM, card dfedsam §3.3; DFedSGPSM lines 7-11,
    card dfedsgpsm §3.1)."""
    grad = _oracle(normalized)

    def direction(ops, s, p):
        s["momentum"] = p.alpha * s["momentum"] + grad(ops, s, p)
        return s["momentum"]

    return direction


def _admm(normalized=False):
    """eq. (6): d = g - ghat_i^{t-1} + (x - x_i^t)/lam (seed 004 Algorithm 1, card dfedadmm §3.2)."""
    grad = _oracle(normalized)
    return lambda ops, s, p: grad(ops, s, p) - s["dual"] + (s["x"] - ops.anchor) / p.lam_pen


def _admm_end(ops, s, p):
    """lines 15-16: ghat_i^t = ghat_i^{t-1} - (x_K - x_i^t)/lam; the message x_K - lam ghat_i^{t-1} (OLD dual)."""
    old = s["dual"]
    s["dual"] = old - (s["x"] - ops.anchor) / p.lam_pen
    s["x"] = s["x"] - p.lam_pen * old


def _cata(ops, s, p):
    """d = g + lam_pen (x - y_i^t): K steps on f_i + (lam_pen/2)||x - y_i^t||^2 (card dfedcata §3.1)."""
    return ops.grad(s["x"]) + p.lam_pen * (s["x"] - ops.anchor)


def _gossip(ops, s, p):
    """X^{t+1} = W^Q Z^t (seed 001 eq. (4), (5))."""
    s["x"] = ops.gossip(s["x"], p.Q)


def _parallel(ops, s, p):
    """Lian et al. 2017 Algorithm 1: X^{t+1} = W X^t + (Z^t - X^t), the gossip of the unmixed models."""
    s["x"] = ops.gossip(ops.anchor, 1) + (s["x"] - ops.anchor)


def _push(ops, s, p):
    """x <- P x, w <- P w (card dfedsgpsm §3.1 lines 14-16)."""
    s["x"] = ops.push_sum(s["x"])


def _cata_a(ops, s, p):
    """a^{t+1} = W^Q x_K, y^{t+1} = a + beta (a - x_K) (reading A, the public code; card dfedcata §3.1)."""
    a = ops.gossip(s["x"], p.Q)
    s["x"] = a + p.beta * (a - s["x"])


def _cata_b(ops, s, p):
    """a^{t+1} = W^Q x_K; the previous aggregate kept (reading B, the proof: y = a + beta (a - a^t))."""
    s["agg_prev"], s["agg"] = s["agg"], ops.gossip(s["x"], p.Q)


def _cata_b_start(ops, s, p):
    return s["agg"] + p.beta * (s["agg"] - s["agg_prev"])


def _sam_queries(p):
    return 2


X_BAR = Metric("min")
DUAL = Slot("dual", init="zero", kind="vector", symbol="ghat")
MOMENTUM = Slot("momentum", init="zero", kind="vector", reset=True)
ADMM_METRIC = Metric("average", extrapolation=admm_extrapolation, name="w",
                     text="w^t = x_bar^t + ((1-gamma)/gamma)(x_bar^t - x_bar^{t-1})")
PUSH_METRIC = Metric("average", text="x_bar^t, the numerators' mean")


def _programs():
    gossip = dict(Q=1)
    return [
        Program("dpsgd", "D-PSGD as Lian et al. 2017 wrote it (Algorithm 1): x^{t+1} = W x^t - eta grad f(x^t), the "
                "gossip and the gradient at the unmixed point in parallel (needs K = 1, Q = 1)",
                _plain(), _parallel, metric=X_BAR, K=1, keeps_start=True),
        Program("dpsgd-atc", "D-PSGD in the adapt-then-combine order: one local gradient step, then one gossip step, "
                "x^{t+1} = W (x^t - eta grad f(x^t)) (DFedAvg with K = Q = 1; needs K = 1, Q = 1)",
                _plain(), _gossip, metric=X_BAR, params=dict(gossip), K=1),
        Program("dfedavg", "DFedAvg: K local gradient steps, then Q gossip steps (Q > 1: DFedAvg-MGS; DFedSAM at "
                "rho = 0)", _plain(), _gossip, metric=X_BAR, params=dict(gossip)),
        Program("dfedavg-mgs", "DFedAvg-MGS: K local gradient steps, then Q gossip steps with W (X^{t+1} = W^Q Z^t)",
                _plain(), _gossip, metric=X_BAR, params=dict(gossip)),
        Program("dfedavgm", "DFedAvgM: K local heavy-ball steps v = alpha v + grad f_i(y), y -= eta v (v reset each "
                "round), then Q gossip steps", _momentum(), _gossip, slots=(Slot("x"), MOMENTUM), metric=X_BAR,
                params=dict(gossip, alpha=0.9)),
        Program("dfedsam", "DFedSAM(-MGS): K SAM steps with the normalised ascent y + rho g/||g|| (not expressible "
                "in a PEP), then Q gossip steps", _plain(True), _gossip, metric=X_BAR,
                params=dict(gossip, rho=0.01), queries=_sam_queries),
        Program("dfedsam-unnormalized", "DFedSAM(-MGS) with the unnormalized ascent step y + rho grad f_i(y) (named "
                "variant; the paper's normalized step rho g/||g|| is not expressible in a PEP)",
                _plain(), _gossip, metric=X_BAR, params=dict(gossip, rho=0.0), queries=2),
        Program("dfedadmm", "DFedADMM: K steps on the augmented Lagrangian with the dual ghat_i, message x_K - "
                "lam_pen ghat_old, then Q gossip steps (needs lam_pen)",
                _admm(), _gossip, slots=(Slot("x"), DUAL), round_end=_admm_end,
                metric=ADMM_METRIC, params=dict(gossip, lam_pen=None)),
        Program("dfedadmm-sam", "DFedADMM-SAM: DFedADMM with the normalised SAM gradient (not expressible in a PEP)",
                _admm(True), _gossip, slots=(Slot("x"), DUAL),
                round_end=_admm_end, metric=ADMM_METRIC, params=dict(gossip, lam_pen=None, rho=0.1),
                queries=_sam_queries),
        Program("dfedadmm-sam-unnormalized", "DFedADMM-SAM with the unnormalized ascent step y + rho grad f_i(y), the "
                "step its proof analyses (the box's normalized step is not expressible in a PEP)",
                _admm(), _gossip, slots=(Slot("x"), DUAL),
                round_end=_admm_end, metric=ADMM_METRIC, params=dict(gossip, lam_pen=None, rho=0.0), queries=2),
        Program("dfedcata-a", "DFedCata reading A (the public code): K steps on f_i + (lam_pen/2)||x - y_i||^2, then "
                "y = a + beta (a - x_K), a = W^Q x_K (needs lam_pen, beta)",
                _cata, _cata_a, slots=(Slot("x", symbol="y"),),
                metric=Metric("average", name="p", text="p^t = a_bar^t (the mean of W x_K)"),
                params=dict(gossip, lam_pen=None, beta=None)),
        Program("dfedcata-b", "DFedCata reading B (the proof): the same local steps, then y = a + beta (a - a_prev), "
                "Catalyst's consecutive extrapolation (needs lam_pen, beta)",
                _cata, _cata_b, slots=(Slot("agg", symbol="a"), Slot("agg_prev", symbol="a_prev")), start=_cata_b_start,
                metric=Metric("average", "agg", extrapolation=lambda p: p.beta / (1 - p.beta), prev="agg_prev",
                              name="p", text="p^t = a_bar^t + beta/(1-beta)(a_bar^t - a_bar^{t-1})"),
                params=dict(gossip, lam_pen=None, beta=None)),
        Program("sgp", "SGP: one local gradient step at the de-biased z = x/w applied to the numerator x, then "
                "push-sum with a column-stochastic P (needs K = 1, alpha = 0)",
                _plain(), _push, metric=PUSH_METRIC, K=1, mixing="push-sum"),
        Program("dfedsgpm", "DFedSGPSM at rho = 0 (DFedSGPM): K heavy-ball steps v = alpha v + grad f_i(x/w), x -= "
                "eta v (v reset each round), then push-sum with P (needs alpha)",
                _momentum(), _push, slots=(Slot("x"), MOMENTUM), metric=PUSH_METRIC, params=dict(alpha=None),
                mixing="push-sum"),
        Program("dfedsgpsm", "DFedSGPSM: K SAM + heavy-ball steps at z = x/w with the normalised ascent (not "
                "expressible in a PEP), then push-sum", _momentum(True), _push, slots=(Slot("x"), MOMENTUM),
                metric=PUSH_METRIC, params=dict(alpha=0.9, rho=0.1), queries=_sam_queries, mixing="push-sum"),
        Program("dfedsgpsm-unnormalized", "DFedSGPSM with the unnormalized ascent z + rho grad f_i(z) (the box's "
                "normalized step is not expressible in a PEP); needs alpha",
                _momentum(), _push, slots=(Slot("x"), MOMENTUM), metric=PUSH_METRIC, params=dict(alpha=None,
                                                                                                   rho=0.0),
                queries=2, mixing="push-sum"),
    ]


#: the built-in programs, by name
BUILT_IN = {p.name: p for p in _programs()}
for _program in BUILT_IN.values():
    register_program(_program, origin=__name__)
PROGRAMS.seal()  # the built-in programs are fixed: a plugin adds programs, it cannot replace one
