"""The algorithms of DFedCata (K steps on the Moreau envelope, Nesterov extrapolation at aggregation): each a local
rule composed with a communication rule, read like the paper's pseudocode (the table of
:mod:`dfltheory.empirical.algorithms` lists them with their sources)."""

from __future__ import annotations

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, clip_rule


def _cata_aux(beta: float, mode: str):
    """p^t = a_bar^t + beta/(1 - beta)(a_bar^t - a_bar^{t-1}) (card dfedcata §2, Lemma 6; mode B).

    Mode A's mean recursion has no momentum (card §6.1 L4), so there p^t = a_bar^t.
    """

    def aux(xbar, xbar_prev, cstate, lr, K):
        a, a_prev = cstate["agg_mean"], cstate["agg_mean_prev"]
        return {"p": a + beta / (1 - beta) * (a - a_prev) if mode == "B" else a.clone()}

    return aux


def dfedcata(hp):
    """Card dfedcata §3.1: local x <- x - eta(g + lam_pen (x - y_i) + wd x); aggregation with Nesterov (mode A or B).

    The direction is built as the public code builds it (card §3.2 items 3-4; client/dfedcata.py): the gradient
    of CE + lamb * (-<x, y_i>) is g - lam_pen y_i, clipped with clip_grad_norm_ (eps 1e-6) when ``clip`` is set,
    and SGD's weight decay then adds (lam_pen + wd) x after the clipping. Unclipped this is the card's step.
    """
    lam_pen, beta, mode = hp.get("lam_pen", 0.05), hp.get("beta", 0.9), hp.get("mode", "A")
    decay = lam_pen + hp.get("weight_decay", 0.0)
    local = R.chain(R.gradient(), R.anchor_pull(lam_pen), *clip_rule(hp, R.TORCH_CLIP_EPS),
                    *([R.weight_decay(decay)] if decay else []))
    return Algorithm("dfedcata", local,
                     C.nesterov_extrapolation(beta, mode), params={"lam_pen": lam_pen, "beta": beta, "mode": mode},
                     x_bar=lambda state, cstate: cstate["agg_mean"], aux=_cata_aux(beta, mode))


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedcata": dfedcata}.items():
        register_algorithm(name, factory, origin=__name__)
