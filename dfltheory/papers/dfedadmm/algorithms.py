"""The algorithms of DFedADMM and DFedADMM-SAM (primal-dual local steps on the augmented Lagrangian, then gossip):
each a local rule composed with a communication rule, read like the paper's pseudocode (the table of
:mod:`dfltheory.empirical.algorithms` lists them with their sources)."""

from __future__ import annotations

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, extras


def _oracle(rho: float | None) -> R.Transform:
    return R.sam(rho) if rho is not None else R.gradient()


def _admm_aux(lam: float):
    """w^t = x_bar^t + ((1 - gamma)/gamma)(x_bar^t - x_bar^{t-1}), gamma = 1 - (1 - eta/lam)^K.

    Card dfedadmm §2 and §6.1 (Lemma 9, seed 004 L593-604). With local epochs K is the clients' mean step count;
    where 1 - eta/lam < 0 (lam < eta) its power needs an integer K, so K is rounded there (a real number, never a
    complex one).
    """

    def aux(xbar, xbar_prev, cstate, lr, K):
        base = 1.0 - lr / lam
        gamma = 1.0 - base ** (K if base >= 0 else round(K))
        if gamma == 0:
            return {}
        return {"w": xbar + (1.0 - gamma) / gamma * (xbar - xbar_prev)}

    return aux


def _dfedadmm(name, rho, hp):
    lam = hp.get("lam", 0.1)
    return Algorithm(name, R.chain(_oracle(rho), R.admm_dual(lam), *extras(hp)), C.gossip(),
                     params={"lam": lam, "rho": rho}, aux=_admm_aux(lam))


def dfedadmm(hp):
    """Seed 004 Algorithm 1: x <- x - eta(g - ghat + (x - x^t)/lam); ghat, z = x_K - lam ghat_old; X^{t+1} = W Z."""
    return _dfedadmm("dfedadmm", None, hp)


def dfedadmm_sam(hp):
    """DFedADMM with the SAM gradient (box lines 10-13), rho = 0.1 in the experiments (card dfedadmm §8)."""
    return _dfedadmm("dfedadmm-sam", hp.get("rho", 0.1), hp)


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedadmm": dfedadmm, "dfedadmm-sam": dfedadmm_sam}.items():
        register_algorithm(name, factory, origin=__name__)
