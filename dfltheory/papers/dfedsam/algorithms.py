"""The algorithms of DFedSAM (K SAM steps, one gossip step) and DFedSAM-MGS (Q gossip steps), derived from the
step program ``dfedsam`` (:mod:`dfltheory.program`; the table of :mod:`dfltheory.empirical.algorithms` lists them
with their sources)."""

from __future__ import annotations

from dfltheory.empirical.algorithms import check_hyper, from_program


def dfedsam(hp):
    """Algorithm 1 with Q = 1: y <- y - eta grad F(y + rho g/||g||) (eq. (3)); X^{t+1} = W Z^t (eq. (4))."""
    rho = hp.get("rho", 0.01)
    check_hyper("rho", rho)
    return from_program("dfedsam", "dfedsam", hp, {"rho": rho}, params={"rho": rho})


def dfedsam_mgs(hp):
    """Algorithm 1 with Q gossip steps replacing eq. (4): X^{t+1} = W^Q Z^t (eq. (5), (14); card §3.1); a fresh W
    per gossip step with ``fresh_gossip`` (the experiments' protocol, seed 001 L307)."""
    rho, Q = hp.get("rho", 0.01), hp.get("Q", 4)
    check_hyper("rho", rho)
    check_hyper("Q", Q)
    return from_program("dfedsam", "dfedsam-mgs", hp, {"rho": rho, "Q": Q}, params={"rho": rho, "Q": Q},
                        fresh=bool(hp.get("fresh_gossip", False)))


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedsam": dfedsam, "dfedsam-mgs": dfedsam_mgs}.items():
        register_algorithm(name, factory, origin=__name__)
