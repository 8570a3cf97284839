"""The step programs of DFedSGPSM (:mod:`dfltheory.program`; seed 000 L80-108, card dfedsgpsm §3.1): K SAM +
heavy-ball steps at the de-biased z = x/w, then push-sum; its rho = 0 case DFedSGPM and the PEP-able relaxation with
the unnormalised ascent; DFedSGPSM-S, whose P(t) follows the clients' losses. Registered through the function a
plugin calls."""

from __future__ import annotations

from dfltheory.program import Program, Slot
from dfltheory.program.library import MOMENTUM, PUSH_MEAN, heavy_ball, push_sum, sam_queries

def _push_sum_by_loss(ops, s, p):
    """x <- P(t) x, w <- P(t) w, P(t) from the losses f_i(x_i/w_i) (card dfedsgpsm §3.2)."""
    s["x"] = ops.push_sum_by_loss(s["x"])


PROGRAMS = (
    Program("dfedsgpm", "DFedSGPSM at rho = 0 (DFedSGPM): K heavy-ball steps v = alpha v + grad f_i(x/w), x -= "
            "eta v (v reset each round), then push-sum with P (needs alpha)",
            heavy_ball(), push_sum, slots=(Slot("x"), MOMENTUM), metric=PUSH_MEAN, params=dict(alpha=None),
            mixing="push-sum"),
    Program("dfedsgpsm", "DFedSGPSM: K SAM + heavy-ball steps at z = x/w with the normalised ascent (not "
            "expressible in a PEP), then push-sum", heavy_ball(True), push_sum, slots=(Slot("x"), MOMENTUM),
            metric=PUSH_MEAN, params=dict(alpha=0.9, rho=0.1), queries=sam_queries, mixing="push-sum"),
    Program("dfedsgpsm-s", "DFedSGPSM-S: DFedSGPSM whose out-neighbours are drawn every round with p(b_ij) "
            "proportional to exp(|f_i - f_j|) from the clients' losses (seed 000 App. A.1 eq. (2), L285-289; card "
            "dfedsgpsm §3.2; not expressible in a PEP)", heavy_ball(True), _push_sum_by_loss,
            slots=(Slot("x"), MOMENTUM), metric=PUSH_MEAN, params=dict(alpha=0.9, rho=0.1), queries=sam_queries,
            mixing="push-sum"),
    Program("dfedsgpsm-unnormalized", "DFedSGPSM with the unnormalized ascent z + rho grad f_i(z) (the box's "
            "normalized step is not expressible in a PEP); needs alpha",
            heavy_ball(), push_sum, slots=(Slot("x"), MOMENTUM), metric=PUSH_MEAN, params=dict(alpha=None, rho=0.0),
            queries=2, mixing="push-sum"),
)


def register() -> None:
    """The paper's programs into the program table, through the function a user's plugin calls."""
    from dfltheory.program import register_program

    for program in PROGRAMS:
        register_program(program, origin=__name__)
