"""The step programs of DFedCata (:mod:`dfltheory.program`; card dfedcata §3.1): K steps on the Moreau envelope
f_i + (lam_pen/2)||x - y_i^t||^2, then aggregation with Nesterov extrapolation, in its two readings (A: the public
code, B: the proof), with the public code's options (weight decay, clipping: ``clip`` is torch only). Each can run
in the code's sequential schedule (``Program.sequential``). Registered through the function a plugin calls."""

from __future__ import annotations

from dfltheory.program import Metric, Program, Slot


#: torch.nn.utils.clip_grad_norm_'s eps, max_norm / (||g|| + 1e-6): the public code clips with it (card §3.2 item 4)
CLIP_EPS = 1e-6


def _cata(ops, s, p):
    """d = g + lam_pen (x - y_i^t) + wd x: K steps on f_i + (lam_pen/2)||x - y_i^t||^2 (card dfedcata §3.1), built
    as the public code builds it (card §3.2 items 3-4; client/dfedcata.py): the gradient of CE + lam_pen (-<x, y_i>)
    is g - lam_pen y_i, clipped when ``clip`` > 0 (clip_grad_norm_, a torch-only step), and SGD's weight decay then
    adds (lam_pen + weight_decay) x after the clipping. Unclipped this is the card's step."""
    d = ops.grad(s["x"]) - p.lam_pen * ops.anchor
    if p.clip:
        d = ops.clip(d, p.clip, CLIP_EPS)
    decay = p.lam_pen + p.weight_decay
    return d + decay * s["x"] if decay else d


def _cata_a(ops, s, p):
    """a^{t+1} = W^Q x_K, y^{t+1} = a + beta (a - x_K) (reading A, the public code; card dfedcata §3.1); a is kept,
    an output slot: the theory's average is its mean a_bar (card §6.1)."""
    s["agg"] = a = ops.gossip(s["x"], p.Q)
    s["x"] = a + p.beta * (a - s["x"])


def _cata_b(ops, s, p):
    """a^{t+1} = W^Q x_K; the previous aggregate kept (reading B, the proof: y = a + beta (a - a^t))."""
    s["agg_prev"], s["agg"] = s["agg"], ops.gossip(s["x"], p.Q)


def _cata_b_start(ops, s, p):
    """y^t = a^t + beta (a^t - a^{t-1}), Catalyst's consecutive extrapolation (reading B)."""
    return s["agg"] + p.beta * (s["agg"] - s["agg_prev"])


PROGRAMS = (
    Program("dfedcata-a", "DFedCata reading A (the public code): K steps on f_i + (lam_pen/2)||x - y_i||^2, then "
            "y = a + beta (a - x_K), a = W^Q x_K (needs lam_pen, beta)",
            _cata, _cata_a, slots=(Slot("x", symbol="y"), Slot("agg", symbol="a", output=True)),
            metric=Metric("average", "agg", name="p", text="p^t = a_bar^t (the mean of W x_K)"),
            params=dict(Q=1, lam_pen=None, beta=None, weight_decay=0.0, clip=0.0), sequential=True),
    Program("dfedcata-b", "DFedCata reading B (the proof): the same local steps, then y = a + beta (a - a_prev), "
            "Catalyst's consecutive extrapolation (needs lam_pen, beta)",
            _cata, _cata_b, slots=(Slot("agg", symbol="a"), Slot("agg_prev", symbol="a_prev")), start=_cata_b_start,
            metric=Metric("average", "agg", extrapolation=lambda p: p.beta / (1 - p.beta), prev="agg_prev",
                          name="p", text="p^t = a_bar^t + beta/(1-beta)(a_bar^t - a_bar^{t-1})"),
            params=dict(Q=1, lam_pen=None, beta=None, weight_decay=0.0, clip=0.0), sequential=True),
)


def register() -> None:
    """The paper's programs into the program table, through the function a user's plugin calls."""
    from dfltheory.program import register_program

    for program in PROGRAMS:
        register_program(program, origin=__name__)
