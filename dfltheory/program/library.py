"""The baselines' step programs (:mod:`dfltheory.program`), each written once for training, PEP and certificate, and
the building blocks a paper's programs share (``dfltheory/papers/<id>/programs.py`` declare the papers' own).

Each program cites the card of its algorithm; its PEP reading is the one :mod:`dfltheory.pep.problem` documents
(identical start, sigma_l = 0). Names: the PEP models' names (``dpsgd``, ``dfedavg``, ``sgp``, ...).
Hyper-parameters carry the PEP's names: ``Q`` gossip steps, ``rho`` SAM radius, ``alpha`` the local heavy-ball
momentum (a paper's programs add theirs).
"""

from __future__ import annotations

import math

from dfltheory.program.algebra import Metric, Program, Slot

__all__ = ["BASELINES", "MEAN", "MOMENTUM", "PUSH_MEAN", "admm_extrapolation", "admm_gamma", "gossip", "heavy_ball",
           "local_gradient", "parallel_gossip", "push_sum", "sam_queries", "server_average"]


def admm_gamma(eta: float, lam_pen: float, K) -> float:
    """gamma = 1 - (1 - eta/lam_pen)^K (card dfedadmm §5.4, eq. (7)); w^t's coefficient is (1 - gamma)/gamma. With
    local epochs K is the clients' mean step count; where 1 - eta/lam_pen < 0 its power needs an integer K, so K is
    rounded there (a real number, never a complex one). Here, not with the paper's programs, because the PEP's
    problem sizes read it."""
    base = 1.0 - eta / lam_pen
    return 1.0 - base ** (K if base >= 0 else round(K))


def admm_extrapolation(p) -> float:
    """(1 - gamma)/gamma, w^t's coefficient (card dfedadmm §2, §6.1 Lemma 9, seed 004 L593-604); inf at gamma = 0
    (no w^t: eta = 0)."""
    gamma = admm_gamma(p.eta, p.lam_pen, p.K)
    return (1 - gamma) / gamma if gamma else math.inf


def local_gradient(normalized: bool = False):
    """d = the local gradient at z = debias(x): plain (rho = 0) or SAM's, grad f_i(z + rho g/||g||) (card dfedsam §3.1
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


def heavy_ball(normalized: bool = False):
    """v = alpha v + g, step along v, v = 0 at every round start (DFedAvgM, card dfedsam §3.3; DFedSGPSM lines 7-11,
    card dfedsgpsm §3.1); g the :func:`local_gradient`."""
    grad = local_gradient(normalized)

    def direction(ops, s, p):
        s["momentum"] = p.alpha * s["momentum"] + grad(ops, s, p)
        return s["momentum"]

    return direction


def gossip(ops, s, p):
    """X^{t+1} = W^Q Z^t (seed 001 eq. (4), (5))."""
    s["x"] = ops.gossip(s["x"], p.Q)


def parallel_gossip(ops, s, p):
    """Lian et al. 2017 Algorithm 1: X^{t+1} = W X^t + (Z^t - X^t), the gossip of the unmixed models."""
    s["x"] = ops.gossip(ops.anchor, 1) + (s["x"] - ops.anchor)


def push_sum(ops, s, p):
    """x <- P x, w <- P w (card dfedsgpsm §3.1 lines 14-16)."""
    s["x"] = ops.push_sum(s["x"])


def server_average(ops, s, p):
    """x <- sum_{i in S} p_i x_i, sent back to every client (FedAvg's server round with global lr 1; cards dfedsam
    §3.3, dfedcata §3.3)."""
    s["x"] = ops.server_average(s["x"])


def _proximal(ops, s, p):
    """d = g + mu (x - x^t): K steps on f_i + (mu/2)||x - x^t||^2 (FedProx, card dfedcata §3.3)."""
    return local_gradient()(ops, s, p) + p.mu * (s["x"] - ops.anchor)


def _corrected(ops, s, p):
    """d = g - c_i + c (SCAFFOLD, Karimireddy et al. 2020; card dfedcata §3.3)."""
    return local_gradient()(ops, s, p) - s["c_local"] + s["c_global"]


def _control_variates(ops, s, p):
    """Option II: c_i^+ = c_i - c + (x^t - x_K)/(K eta); c_delta = c_i^+ - c_i kept for the server."""
    new = s["c_local"] - s["c_global"] + (ops.anchor - s["x"]) / (ops.K * ops.eta)
    s["c_delta"] = new - s["c_local"]
    s["c_local"] = new


def _scaffold_server(ops, s, p):
    """x <- the participants' mean; c <- c + (1/m) sum_{i in S} (c_i^+ - c_i), sent back to every client."""
    s["x"] = ops.server_average(s["x"])
    s["c_global"] = s["c_global"] + ops.server_sum(s["c_delta"]) / ops.m
    s["c_delta"] = 0 * s["c_delta"]


def sam_queries(p):
    """SAM's two gradient calls per local step."""
    return 2


#: the models' mean x_bar^t, measured by its minimum over the rounds
MEAN = Metric("min")
#: the local heavy-ball buffer, restarted at 0 every round
MOMENTUM = Slot("momentum", init="zero", kind="vector", reset=True)
#: push-sum's numerators' mean, averaged over the rounds
PUSH_MEAN = Metric("average", text="x_bar^t, the numerators' mean")


def _baselines():
    q = dict(Q=1)
    return [
        Program("dpsgd", "D-PSGD as Lian et al. 2017 wrote it (Algorithm 1): x^{t+1} = W x^t - eta grad f(x^t), the "
                "gossip and the gradient at the unmixed point in parallel (needs K = 1, Q = 1)",
                local_gradient(), parallel_gossip, metric=MEAN, K=1, keeps_start=True),
        Program("dpsgd-atc", "D-PSGD in the adapt-then-combine order: one local gradient step, then one gossip step, "
                "x^{t+1} = W (x^t - eta grad f(x^t)) (DFedAvg with K = Q = 1; needs K = 1, Q = 1)",
                local_gradient(), gossip, metric=MEAN, params=dict(q), K=1),
        Program("dfedavg", "DFedAvg: K local gradient steps, then Q gossip steps (Q > 1: DFedAvg-MGS; DFedSAM at "
                "rho = 0)", local_gradient(), gossip, metric=MEAN, params=dict(q)),
        Program("dfedavg-mgs", "DFedAvg-MGS: K local gradient steps, then Q gossip steps with W (X^{t+1} = W^Q Z^t)",
                local_gradient(), gossip, metric=MEAN, params=dict(q)),
        Program("dfedavgm", "DFedAvgM: K local heavy-ball steps v = alpha v + grad f_i(y), y -= eta v (v reset each "
                "round), then Q gossip steps", heavy_ball(), gossip, slots=(Slot("x"), MOMENTUM), metric=MEAN,
                params=dict(q, alpha=0.9)),
        Program("fedavg", "FedAvg: the round's participants run K local gradient steps, then a server averages them "
                "(global lr 1)", local_gradient(), server_average, metric=MEAN, mixing="server"),
        Program("fedprox", "FedProx: FedAvg with K local steps on f_i + (mu/2)||x - x^t||^2", _proximal,
                server_average, metric=MEAN, params=dict(mu=0.01), mixing="server"),
        Program("fedsam", "FedSAM: FedAvg with K local SAM steps (the normalised ascent y + rho g/||g||; Qu et al. "
                "2022)", local_gradient(True), server_average, metric=MEAN, params=dict(rho=0.1),
                queries=sam_queries, mixing="server"),
        Program("scaffold", "SCAFFOLD (option II control variates, global lr 1): the participants' K steps "
                "corrected by c - c_i, then the server averages the models and updates c",
                _corrected, _scaffold_server, round_end=_control_variates, metric=MEAN, mixing="server",
                slots=(Slot("x"), Slot("c_local", init="zero", kind="vector"),
                       Slot("c_global", init="zero", kind="vector"), Slot("c_delta", init="zero", kind="vector"))),
        Program("sgp", "SGP: one local gradient step at the de-biased z = x/w applied to the numerator x, then "
                "push-sum with a column-stochastic P (needs K = 1, alpha = 0)",
                local_gradient(), push_sum, metric=PUSH_MEAN, K=1, mixing="push-sum"),
    ]


#: the baselines' programs, by name (registered by :data:`dfltheory.program.PROGRAMS` when it is first read)
BASELINES = {p.name: p for p in _baselines()}
