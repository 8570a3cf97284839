"""Plugin algorithms written once as step programs, new algorithms, not aliases of built-in ones; their registration
gives ``train``, ``pep`` and ``certify`` with no further code (tests/pep/test_program.py).

Gradient tracking (adapt-then-combine; Nedic, Olshevsky & Shi 2017, DIGing; Di Lorenzo & Scutari 2016, NEXT):

    y_i <- y_i + grad f_i(x_i) - g_i,   g_i <- grad f_i(x_i),   x_i <- x_i - eta y_i     (the local step, K = 1)
    X <- W X,   Y <- W Y                                                                   (the communication)

with y^0 = g^0 = 0, so that the first round's tracker is the gradient itself: mean(y) = mean(g) at every round.
(Its one-round certificate sees a free state, where mean(y) and mean(g) are unrelated: it gives only the trivial
2 L Delta; the invariant is not part of a program's state.)

D-PSGD (step then mix) with a heavy-ball momentum kept across rounds: v_i <- alpha v_i + grad f_i(x_i),
x_i <- x_i - eta v_i, X <- W X (v never sent), v^0 = 0.
"""

from dfltheory.pep.problem import register_program
from dfltheory.program import Metric, Program, Slot


def direction(ops, s, p):
    g = ops.grad(s["x"])
    s["y"] = s["y"] + g - s["g"]
    s["g"] = g
    return s["y"]


def communicate(ops, s, p):
    s["x"] = ops.gossip(s["x"], 1)
    s["y"] = ops.gossip(s["y"], 1)


GRADIENT_TRACKING = Program(
    "gt-atc", "gradient tracking (adapt-then-combine): y tracks the mean gradient; x and y gossiped each round",
    direction, communicate,
    slots=(Slot("x"), Slot("y", init="zero", kind="vector"), Slot("g", init="zero", kind="vector")),
    metric=Metric("min"), K=1)



def heavy_ball(ops, s, p):
    s["v"] = p.alpha * s["v"] + ops.grad(s["x"])
    return s["v"]


def gossip_x(ops, s, p):
    s["x"] = ops.gossip(s["x"], 1)


HEAVY_BALL = Program(
    "dpsgd-hb", "D-PSGD (step then mix) with a heavy-ball momentum v kept across rounds (never sent)",
    heavy_ball, gossip_x, slots=(Slot("x"), Slot("v", init="zero", kind="vector")), metric=Metric("min"),
    params={"alpha": 0.5}, K=1)

register_program(GRADIENT_TRACKING, origin=__file__)
register_program(HEAVY_BALL, origin=__file__)
