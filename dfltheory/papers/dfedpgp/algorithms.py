"""The algorithms of DFedPGP (personal v, push-sum of the shared u) and DFedPGP-pull (its experiments'
row-stochastic pull), derived from the step program ``dfedpgp`` (:mod:`dfltheory.papers.dfedpgp.programs`; the table
of :mod:`dfltheory.empirical.algorithms` lists them with their sources)."""

from __future__ import annotations

from dataclasses import replace

from dfltheory.empirical.algorithms import check_hyper
from dfltheory.empirical.program_rules import algorithm
from dfltheory.program import PROGRAMS


def personal_split(layers):
    """Personal mask of DFedPGP: the named layers, by default the last Linear layer (the classifier head v, u the
    feature extractor; seed 003 L73, L90, L187); 'none' (or ()) makes every parameter shared."""

    def split(model):
        if layers is None:
            names = [model.last_linear()]
        else:
            names = [] if layers == "none" else layers.split(",") if isinstance(layers, str) else list(layers)
        mask = model.parameter_mask(names)
        if mask.all():
            raise ValueError("DFedPGP needs shared parameters, but every layer is personal; choose fewer personal "
                             "layers (--personal) or a model with more than one layer (e.g. --model mlp)")
        return mask

    return split


def dfedpgp(hp):
    """DFedPGP (seed 003 Algorithm 1, L90-100; card dfedpgp §3.1): K_v steps on the personal v with u frozen at
    z = u/mu, then K_u = K steps on the shared u at z = u/mu with v^{t+1} fixed, then push-sum of (u, mu) only;
    v is never sent. Plain SGD as in the theory by default; ``momentum`` > 0 is the experiments' SGD with momentum
    (seed 003 L189), one optimizer per phase; weight decay and clipping act inside the step, as that optimizer's."""
    K_v, lr_v, layers, beta = hp.get("K_v", 1), hp.get("lr_v"), hp.get("personal"), hp.get("momentum", 0.0)
    decay, clip = hp.get("weight_decay"), hp.get("clip")
    check_hyper("K_v", K_v)
    if beta:
        check_hyper("momentum", beta)
    if lr_v is not None:
        check_hyper("lr_v", lr_v)
    if clip:
        check_hyper("clip", clip)
    given = {"K_v": K_v, "lr_v": lr_v or 0.0, "momentum": beta, "weight_decay": decay or 0.0, "clip": clip or 0.0}
    return algorithm(PROGRAMS["dfedpgp"], given, params={"K_v": K_v, "lr_v": lr_v, "personal": layers,
                                                         "momentum": beta}, K_v=K_v, split=personal_split(layers))


def dfedpgp_pull(hp):
    """DFedPGP as its experiments run it (seed 003 L362-366, eq. (6); card dfedpgp §7, §11 A2): client i pulls u from
    its in-neighbours and itself with p_ij = 1/(n + 1) (weights 'uniform' on topology 'random' with direction=in), a
    row-stochastic P. The push-sum weights then stay mu = P 1 = 1, so z = u and the rule is plain pull gossip of u;
    the local phases are DFedPGP's."""
    return replace(dfedpgp(hp), name="dfedpgp-pull", stochastic="row")


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedpgp": dfedpgp, "dfedpgp-pull": dfedpgp_pull}.items():
        register_algorithm(name, factory, origin=__name__)
