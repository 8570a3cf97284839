"""A plugin algorithm written once as a step program: gradient tracking (adapt-then-combine; Nedic, Olshevsky & Shi
2017, DIGing; Di Lorenzo & Scutari 2016, NEXT), a new algorithm, not an alias of a built-in one. Its registration
gives ``train``, ``pep`` and ``certify`` with no further code (tests/pep/test_program.py).

    y_i <- y_i + grad f_i(x_i) - g_i,   g_i <- grad f_i(x_i),   x_i <- x_i - eta y_i     (the local step, K = 1)
    X <- W X,   Y <- W Y                                                                   (the communication)

with y^0 = g^0 = 0, so that the first round's tracker is the gradient itself: mean(y) = mean(g) at every round.
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

register_program(GRADIENT_TRACKING, origin=__file__)
