"""The step programs of DFedSAM (:mod:`dfltheory.program`): the algorithm as the engine trains it (the normalised
SAM ascent, not expressible in a PEP) and its PEP-able relaxation, registered through the function a plugin calls."""

from __future__ import annotations

from dfltheory.program import Program
from dfltheory.program.library import MEAN, gossip, local_gradient, sam_queries

PROGRAMS = (
    Program("dfedsam", "DFedSAM(-MGS): K SAM steps with the normalised ascent y + rho g/||g|| (not expressible "
            "in a PEP), then Q gossip steps (seed 001 eq. (3)-(5), card dfedsam §3.1)", local_gradient(True), gossip,
            metric=MEAN, params=dict(Q=1, rho=0.01), queries=sam_queries),
    Program("dfedsam-unnormalized", "DFedSAM(-MGS) with the unnormalized ascent step y + rho grad f_i(y) (named "
            "variant; the paper's normalized step rho g/||g|| is not expressible in a PEP)",
            local_gradient(), gossip, metric=MEAN, params=dict(Q=1, rho=0.0), queries=2),
)


def register() -> None:
    """The paper's programs into the program table, through the function a user's plugin calls."""
    from dfltheory.program import register_program

    for program in PROGRAMS:
        register_program(program, origin=__name__)
