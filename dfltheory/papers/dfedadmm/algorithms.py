"""The algorithms of DFedADMM and DFedADMM-SAM (primal-dual local steps on the augmented Lagrangian, then gossip),
derived from their step programs (:mod:`dfltheory.program`; the table of :mod:`dfltheory.empirical.algorithms` lists
them with their sources). The engine's ``lam`` is the programs' penalty ``lam_pen``."""

from __future__ import annotations

from dfltheory.empirical.algorithms import check_hyper, from_program


def _dfedadmm(name, rho, hp):
    lam = hp.get("lam", 0.1)
    check_hyper("lam", lam)
    given = {"lam_pen": lam} if rho is None else {"lam_pen": lam, "rho": rho}
    if rho is not None:
        check_hyper("rho", rho)
    return from_program(name, name, hp, given, params={"lam": lam, "rho": rho})


def dfedadmm(hp):
    """Seed 004 Algorithm 1: x <- x - eta(g - ghat + (x - x^t)/lam); ghat, z = x_K - lam ghat_old; X^{t+1} = W Z;
    measured at w^t (card dfedadmm §2, §6.1)."""
    return _dfedadmm("dfedadmm", None, hp)


def dfedadmm_sam(hp):
    """DFedADMM with the SAM gradient (box lines 10-13), rho = 0.1 in the experiments (card dfedadmm §8)."""
    return _dfedadmm("dfedadmm-sam", hp.get("rho", 0.1), hp)


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedadmm": dfedadmm, "dfedadmm-sam": dfedadmm_sam}.items():
        register_algorithm(name, factory, origin=__name__)
