"""The algorithms of DFedSAM (K SAM steps, one gossip step) and DFedSAM-MGS (Q gossip steps): each a local rule
composed with a communication rule, read like the paper's pseudocode (the table of
:mod:`dfltheory.empirical.algorithms` lists them with their sources)."""

from __future__ import annotations

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.algorithms import Algorithm, extras


def dfedsam(hp):
    """Algorithm 1 with Q = 1: y <- y - eta grad F(y + rho g/||g||) (eq. (3)); X^{t+1} = W Z^t (eq. (4))."""
    rho = hp.get("rho", 0.01)
    return Algorithm("dfedsam", R.chain(R.sam(rho), *extras(hp)), C.gossip(), params={"rho": rho})


def dfedsam_mgs(hp):
    """Algorithm 1 with Q gossip steps replacing eq. (4): X^{t+1} = W^Q Z^t (eq. (5), (14); card §3.1)."""
    rho, Q = hp.get("rho", 0.01), hp.get("Q", 4)
    return Algorithm("dfedsam-mgs", R.chain(R.sam(rho), *extras(hp)),
                     C.multi_gossip(Q, fresh=hp.get("fresh_gossip", False)), params={"rho": rho, "Q": Q})


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedsam": dfedsam, "dfedsam-mgs": dfedsam_mgs}.items():
        register_algorithm(name, factory, origin=__name__)
