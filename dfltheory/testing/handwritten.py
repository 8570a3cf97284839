"""The hand-written algorithms: the TEST ORACLE of the program-derived algorithm table, never a training path.

Before issue 35 item 2 each algorithm below was built from the hand-written rules of
:mod:`dfltheory.empirical.rules` and :mod:`dfltheory.empirical.communication`; the table
(:mod:`dfltheory.empirical.algorithms`, ``dfltheory/papers/<id>/algorithms.py``) now derives them from their step
programs (:mod:`dfltheory.program`). Here they stay, written as they were, so that ``tests/empirical/test_program.py``
can hold the derived rounds equal to these to 1e-12 in float64. :data:`ORACLES` maps an algorithm's name to its
hand-written factory ``hp -> Algorithm`` (the same hyper-parameters, read with the same defaults).
"""

from __future__ import annotations

from dataclasses import replace

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, clip_rule, decay_rule, extras

__all__ = ["ORACLES", "admm_aux", "make"]


def admm_aux(lam_pen: float):
    """w^t = x_bar^t + ((1 - gamma)/gamma)(x_bar^t - x_bar^{t-1}), gamma = 1 - (1 - eta/lam_pen)^K.

    Card dfedadmm §2 and §6.1 (Lemma 9, seed 004 L593-604). With local epochs K is the clients' mean step count;
    where 1 - eta/lam_pen < 0 (lam_pen < eta) its power needs an integer K, so K is rounded there.
    """

    def aux(xbar, xbar_prev, cstate, lr, K):
        base = 1.0 - lr / lam_pen
        gamma = 1.0 - base ** (K if base >= 0 else round(K))
        if gamma == 0:
            return {}
        return {"w": xbar + (1.0 - gamma) / gamma * (xbar - xbar_prev)}

    return aux


def dpsgd(hp):
    """Lian et al. 2017 Algorithm 1: mixing and one SGD step in parallel from x^t (parallel_gossip)."""
    return Algorithm("dpsgd", R.sgd(*extras(hp)), C.parallel_gossip(), K=1)


def dpsgd_atc(hp):
    """One SGD step, then gossip of the stepped models (card dfedsam §3.3)."""
    return Algorithm("dpsgd-atc", R.sgd(*extras(hp)), C.gossip(), K=1)


def dfedavg(hp):
    """K local SGD steps, then x_i^{t+1} = sum_l w_il x_{l,K}^t (card dfedadmm §3.3)."""
    return Algorithm("dfedavg", R.sgd(*extras(hp)), C.gossip())


def dfedavgm(hp):
    """DFedAvg with local heavy-ball momentum, reset every round (card dfedsam §3.3, §8)."""
    return Algorithm("dfedavgm", R.sgd(R.momentum(hp.get("momentum", 0.9)), *extras(hp)), C.gossip(),
                     params={"momentum": hp.get("momentum", 0.9)})


def sgp(hp):
    """SGP (card dfedsgpsm §3.3): one SGD step on x with the gradient at z = x/w, push-sum."""
    return Algorithm("sgp", R.sgd(*extras(hp)), C.push_sum(), K=1, stochastic="column")


def dfedsam(hp):
    """seed 001 eq. (3), (4): K SAM steps, one gossip step."""
    rho = hp.get("rho", 0.01)
    return Algorithm("dfedsam", R.chain(R.sam(rho), *extras(hp)), C.gossip(), params={"rho": rho})


def dfedsam_mgs(hp):
    """seed 001 eq. (5), (14): K SAM steps, Q gossip steps (a fresh W per step with ``fresh_gossip``)."""
    rho, Q = hp.get("rho", 0.01), hp.get("Q", 4)
    return Algorithm("dfedsam-mgs", R.chain(R.sam(rho), *extras(hp)),
                     C.multi_gossip(Q, fresh=hp.get("fresh_gossip", False)), params={"rho": rho, "Q": Q})


def _dfedadmm(name, rho, hp):
    lam_pen = hp.get("lam_pen", 0.1)
    oracle = R.sam(rho) if rho is not None else R.gradient()
    return Algorithm(name, R.chain(oracle, R.admm_dual(lam_pen), *extras(hp)), C.gossip(),
                     params={"lam_pen": lam_pen, "rho": rho}, aux=admm_aux(lam_pen))


def dfedadmm(hp):
    """Seed 004 Algorithm 1: x <- x - eta(g - ghat + (x - x^t)/lam_pen); ghat, z = x_K - lam_pen ghat_old;
    X^{t+1} = W Z."""
    return _dfedadmm("dfedadmm", None, hp)


def dfedadmm_sam(hp):
    """DFedADMM with the SAM gradient (box lines 10-13)."""
    return _dfedadmm("dfedadmm-sam", hp.get("rho", 0.1), hp)


def dfedsgpsm(hp):
    """Card dfedsgpsm §3.1: K SAM + heavy-ball steps at z = x/w (momentum reset each round), then push-sum."""
    rho, alpha = hp.get("rho", 0.1), hp.get("momentum", 0.9)
    return Algorithm("dfedsgpsm", R.chain(R.sam(rho), R.momentum(alpha), *extras(hp)), C.push_sum(),
                     params={"rho": rho, "momentum": alpha}, stochastic="column")


def dfedsgpsm_s(hp):
    """DFedSGPSM-S (card dfedsgpsm §3.2): DFedSGPSM with P(t) drawn from the clients' losses."""
    return replace(dfedsgpsm(hp), name="dfedsgpsm-s", comm=C.loss_selected_push_sum(), topology="neighbour-selection")


def dfedpgp(hp):
    """DFedPGP (seed 003 Algorithm 1, card dfedpgp §3.1): K_v personal steps, K shared ones, push-sum of u; the
    experiments' optimizer (decay, clipping, momentum per phase, eta_v) as one SGD optimizer per phase."""
    from dfltheory.papers.dfedpgp.algorithms import personal_split

    K_v, lr_v, layers, beta = hp.get("K_v", 1), hp.get("lr_v"), hp.get("personal"), hp.get("momentum", 0.0)
    phases = R.alternating(K_v)
    local = R.chain(R.gradient(), *decay_rule(hp), phases, *clip_rule(hp),
                    *([R.momentum(beta, moving=phases.moving)] if beta else []),
                    *([R.personal_lr(phases, lr_v)] if lr_v is not None else []))
    return Algorithm("dfedpgp", local, C.push_sum(),
                     params={"K_v": K_v, "lr_v": lr_v, "personal": layers, "momentum": beta}, stochastic="column",
                     K_v=K_v, split=personal_split(layers))


def dfedpgp_pull(hp):
    """DFedPGP with its experiments' row-stochastic pull (card dfedpgp §7, §11 A2)."""
    return replace(dfedpgp(hp), name="dfedpgp-pull", stochastic="row")


def _server(hp):
    return C.server_average(hp.get("server_weights"))


def fedavg(hp):
    """Sampled clients run K SGD steps; the server averages them (global lr 1)."""
    return Algorithm("fedavg", R.sgd(*extras(hp)), _server(hp), participation=hp.get("participation", 0.1),
                     decentralized=False)


def fedprox(hp):
    """FedAvg on the local objective f_i(x) + (mu/2)||x - x^t||^2."""
    mu = hp.get("mu", 0.01)
    return Algorithm("fedprox", R.sgd(R.proximal(mu), *extras(hp)), _server(hp),
                     participation=hp.get("participation", 0.1), decentralized=False, params={"mu": mu})


def fedsam(hp):
    """FedAvg with local SAM steps (Qu et al. 2022)."""
    rho = hp.get("rho", 0.1)
    return Algorithm("fedsam", R.chain(R.sam(rho), *extras(hp)), _server(hp),
                     participation=hp.get("participation", 0.1), decentralized=False, params={"rho": rho})


def scaffold(hp):
    """SCAFFOLD with option-II control variates and global lr 1."""
    return Algorithm("scaffold", R.sgd(R.scaffold_correction(), *extras(hp)),
                     C.chain_comm(_server(hp), C.scaffold_control()),
                     participation=hp.get("participation", 0.1), decentralized=False)


def _cata_aux(beta: float, mode: str):
    """p^t = a_bar^t + beta/(1 - beta)(a_bar^t - a_bar^{t-1}) (card dfedcata §2, Lemma 6; mode B); mode A's mean
    recursion has no momentum (card §6.1 L4), so there p^t = a_bar^t. a_bar^t, a_bar^{t-1}: the engine's x_bar^t
    and x_bar^{t-1} (the rule's agg_mean, agg_mean_prev in the synchronous schedule; the trained models' means in
    the sequential one, as the engine's x_bar there)."""

    def aux(xbar, xbar_prev, cstate, lr, K):
        return {"p": xbar + beta / (1 - beta) * (xbar - xbar_prev) if mode == "B" else xbar.clone()}

    return aux


def dfedcata(hp):
    """Card dfedcata §3.1: local x <- x - eta(g + lam_pen (x - y_i) + wd x); aggregation with Nesterov (mode A or B).

    The direction is built as the public code builds it (card §3.2 items 3-4; client/dfedcata.py): the gradient
    of CE + lamb * (-<x, y_i>) is g - lam_pen y_i, clipped with clip_grad_norm_ (eps 1e-6) when ``clip`` is set,
    and SGD's weight decay then adds (lam_pen + wd) x after the clipping. The average is the mean of the rule's
    aggregates a (its agg_mean, taken of the same tensor)."""
    lam_pen, beta, mode = hp.get("lam_pen", 0.05), hp.get("beta", 0.9), hp.get("mode", "A")
    decay = lam_pen + hp.get("weight_decay", 0.0)
    local = R.chain(R.gradient(), R.anchor_pull(lam_pen), *clip_rule(hp, R.TORCH_CLIP_EPS),
                    *([R.weight_decay(decay)] if decay else []))
    return Algorithm("dfedcata", local,
                     C.nesterov_extrapolation(beta, mode), params={"lam_pen": lam_pen, "beta": beta, "mode": mode},
                     x_bar=lambda state, cstate: cstate["agg"].mean(0), aux=_cata_aux(beta, mode))


#: algorithm name -> its hand-written factory (the oracle of the program-derived one)
ORACLES = {"dpsgd": dpsgd, "dpsgd-atc": dpsgd_atc, "dfedavg": dfedavg, "dfedavgm": dfedavgm, "sgp": sgp,
           "dfedsam": dfedsam, "dfedsam-mgs": dfedsam_mgs, "dfedadmm": dfedadmm, "dfedadmm-sam": dfedadmm_sam,
           "dfedsgpsm": dfedsgpsm, "dfedsgpsm-s": dfedsgpsm_s,
           "dfedpgp": dfedpgp, "dfedpgp-pull": dfedpgp_pull, "fedavg": fedavg, "fedprox": fedprox, "fedsam": fedsam,
           "scaffold": scaffold, "dfedcata": dfedcata}


def make(name: str, **hp) -> Algorithm:
    """The hand-written ``name`` at ``hp``, with the ``hyper`` and ``unused`` fields
    :func:`dfltheory.empirical.algorithms.make` gives the table's."""
    from dfltheory.empirical.algorithms import _Reads

    if name not in ORACLES:
        raise ValueError(f"no hand-written oracle of {name!r}; choose one of {', '.join(ORACLES)}")
    given = _Reads({k: v for k, v in hp.items() if v is not None})
    algo = ORACLES[name](given)
    algo.unused = tuple(sorted(set(given) - set(given.read)))
    algo.hyper = dict(given.read)
    return algo
