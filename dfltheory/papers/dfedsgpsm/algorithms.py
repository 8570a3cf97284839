"""The algorithms of DFedSGPSM (push-sum + SAM + local momentum) and DFedSGPSM-S (out-neighbours drawn from the
losses), derived from their step programs (:mod:`dfltheory.papers.dfedsgpsm.programs`; the table of
:mod:`dfltheory.empirical.algorithms` lists them with their sources); the engine's ``momentum`` is the programs'
``alpha``."""

from __future__ import annotations

from dfltheory.empirical.algorithms import check_hyper, from_program


def _dfedsgpsm(name, hp, **fields):
    rho, alpha = hp.get("rho", 0.1), hp.get("momentum", 0.9)
    check_hyper("rho", rho)
    check_hyper("momentum", alpha)
    return from_program(name, name, hp, {"rho": rho, "alpha": alpha}, params={"rho": rho, "momentum": alpha},
                        **fields)


def dfedsgpsm(hp):
    """Card dfedsgpsm §3.1 (seed 000 L80-108): K steps x <- x - eta v, v <- alpha v + SAM grad at z = x/w
    (momentum reset each round), then push-sum x <- P x, w <- P w with a column-stochastic P."""
    return _dfedsgpsm("dfedsgpsm", hp)


def dfedsgpsm_s(hp):
    """DFedSGPSM-S (seed 000 App. A.1, L285-289; card dfedsgpsm §3.2): DFedSGPSM whose out-neighbours are drawn each
    round with p(b_ij) proportional to exp(|f_i - f_j|) from the clients' losses (topology 'neighbour-selection')."""
    return _dfedsgpsm("dfedsgpsm-s", hp, topology="neighbour-selection")


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedsgpsm": dfedsgpsm, "dfedsgpsm-s": dfedsgpsm_s}.items():
        register_algorithm(name, factory, origin=__name__)
