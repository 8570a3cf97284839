"""The step programs of DFedADMM and DFedADMM-SAM (:mod:`dfltheory.program`; seed 004 Algorithm 1, card dfedadmm
§3.2): K steps on the augmented Lagrangian with the dual ghat_i, the dual update and the message, then Q gossip steps;
measured at w^t (card dfedadmm §2, §6.1). Registered through the function a plugin calls."""

from __future__ import annotations

from dfltheory.program import Metric, Program, Slot
from dfltheory.program.library import admm_extrapolation, gossip, local_gradient, sam_queries

DUAL = Slot("dual", init="zero", kind="vector", symbol="ghat")
W_POINT = Metric("average", extrapolation=admm_extrapolation, name="w",
                 text="w^t = x_bar^t + ((1-gamma)/gamma)(x_bar^t - x_bar^{t-1})")


def _admm(normalized=False):
    """eq. (6): d = g - ghat_i^{t-1} + (x - x_i^t)/lam_pen (seed 004 Algorithm 1, card dfedadmm §3.2)."""
    grad = local_gradient(normalized)
    return lambda ops, s, p: grad(ops, s, p) - s["dual"] + (s["x"] - ops.anchor) / p.lam_pen


def _admm_end(ops, s, p):
    """lines 15-16: ghat_i^t = ghat_i^{t-1} - (x_K - x_i^t)/lam_pen; the message x_K - lam_pen ghat_i^{t-1} (OLD
    dual)."""
    old = s["dual"]
    s["dual"] = old - (s["x"] - ops.anchor) / p.lam_pen
    s["x"] = s["x"] - p.lam_pen * old


PROGRAMS = (
    Program("dfedadmm", "DFedADMM: K steps on the augmented Lagrangian with the dual ghat_i, message x_K - "
            "lam_pen ghat_old, then Q gossip steps (needs lam_pen)",
            _admm(), gossip, slots=(Slot("x"), DUAL), round_end=_admm_end,
            metric=W_POINT, params=dict(Q=1, lam_pen=None)),
    Program("dfedadmm-sam", "DFedADMM-SAM: DFedADMM with the normalised SAM gradient (not expressible in a PEP)",
            _admm(True), gossip, slots=(Slot("x"), DUAL),
            round_end=_admm_end, metric=W_POINT, params=dict(Q=1, lam_pen=None, rho=0.1),
            queries=sam_queries),
    Program("dfedadmm-sam-unnormalized", "DFedADMM-SAM with the unnormalized ascent step y + rho grad f_i(y), the "
            "step its proof analyses (the box's normalized step is not expressible in a PEP)",
            _admm(), gossip, slots=(Slot("x"), DUAL),
            round_end=_admm_end, metric=W_POINT, params=dict(Q=1, lam_pen=None, rho=0.0), queries=2),
)


def register() -> None:
    """The paper's programs into the program table, through the function a user's plugin calls."""
    from dfltheory.program import register_program

    for program in PROGRAMS:
        register_program(program, origin=__name__)
