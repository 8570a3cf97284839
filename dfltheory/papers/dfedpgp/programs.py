"""The step program of DFedPGP (:mod:`dfltheory.program`; seed 003 Algorithm 1, L90-100, card dfedpgp §3.1): each
round K_v local units on the personal v with u frozen, then K_u = K units on the shared u at z = u/mu with v^{t+1}
fixed, then push-sum of (u, mu) only; v is never sent. Registered through the function a plugin calls.

The experiments' SGP optimizer (seed 003 L189) is part of the step, in the order of one SGD optimizer per phase: the
gradient plus weight decay, restricted to the moving part, clipped, then heavy-ball momentum on the moving part (a
buffer per phase, new each round), then eta_v / eta_u on the personal steps; each is off at 0 (the theory's plain
SGD: momentum = weight_decay = clip = 0, lr_v = 0 meaning eta_v = eta_u)."""

from __future__ import annotations

from dfltheory.program import Program, Slot
from dfltheory.program.library import MOMENTUM, PUSH_MEAN, push_sum


def _alternating(ops, s, p):
    """d = the moving part of grad F_i(z, v) + wd x (v on the first K_v units, u after; card dfedpgp §3.1), clipped,
    through the phase's momentum, scaled by eta_v / eta_u on v (``rules.alternating``, ``rules.personal_lr``)."""
    d = ops.grad(ops.debias(s["x"]))
    if p.weight_decay:
        d = d + p.weight_decay * s["x"]
    moving = ops.personal if ops.personal_phase else ops.shared
    d = moving(d)
    if p.clip:
        d = ops.clip(d, p.clip)
    if p.momentum:
        s["momentum"] = d = moving(p.momentum * s["momentum"] + d)
    if p.lr_v and ops.personal_phase:
        d = d * (p.lr_v * ops.decay / ops.eta)
    return d


PROGRAMS = (
    Program("dfedpgp", "DFedPGP: K_v local steps on the personal v (u frozen), then K steps on the shared u at z = "
            "u/mu, then push-sum of u and its weights only (v never sent)", _alternating, push_sum,
            slots=(Slot("x"), MOMENTUM), metric=PUSH_MEAN, mixing="push-sum", personal="K_v",
            params=dict(K_v=1, lr_v=0.0, momentum=0.0, weight_decay=0.0, clip=0.0)),
)


def register() -> None:
    """The paper's programs into the program table, through the function a user's plugin calls."""
    from dfltheory.program import register_program

    for program in PROGRAMS:
        register_program(program, origin=__name__)
