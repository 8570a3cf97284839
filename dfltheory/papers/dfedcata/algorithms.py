"""The algorithms of DFedCata (K steps on the Moreau envelope, Nesterov extrapolation at aggregation), derived from
the paper's step programs (``programs.py``: ``dfedcata-a``, ``dfedcata-b``; the table of
:mod:`dfltheory.empirical.algorithms` lists them with their sources). The hand-written rules they replaced are the
test oracle :mod:`dfltheory.testing.handwritten`."""

from __future__ import annotations

from dfltheory.constraints import Interval, Options, check
from dfltheory.empirical.algorithms import Algorithm, check_hyper
from dfltheory.empirical.program_rules import algorithm as program_algorithm

#: the hyper-parameters' ranges (the extrapolation's beta/(1 - beta) needs beta < 1; card dfedcata §3.1)
MODES = Options(("A", "B"), meaning="the Nesterov reading: A pre/post-aggregation (the public code), B consecutive "
                                    "(the proof)")
BETA = Interval(0, 1, closed="left", meaning="the Nesterov extrapolation beta")


def dfedcata(hp) -> Algorithm:
    """Card dfedcata §3.1: local x <- x - eta(g + lam_pen (x - y_i) + wd x); aggregation with Nesterov (mode A or B:
    program ``dfedcata-a`` or ``dfedcata-b``), the direction built as the public code builds it (card §3.2 items
    3-4: clipped, with clip_grad_norm_'s eps 1e-6, between the anchor pull and the weight decay; ``programs._cata``).
    Either runs in the code's sequential schedule (``Engine(sequential=True)``, ``Program.sequential``)."""
    from dfltheory.program import PROGRAMS

    lam_pen, beta, mode = hp.get("lam_pen", 0.05), hp.get("beta", 0.9), hp.get("mode", "A")
    check("mode", mode, MODES)
    check("beta", beta, BETA)
    given = {"lam_pen": lam_pen, "beta": beta, "weight_decay": hp.get("weight_decay", 0.0) or 0.0,
             "clip": check_hyper("clip", hp["clip"]) if hp.get("clip") else 0.0}
    return program_algorithm(PROGRAMS[f"dfedcata-{mode.lower()}"], given, name="dfedcata",
                             params={"lam_pen": lam_pen, "beta": beta, "mode": mode})


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedcata": dfedcata}.items():
        register_algorithm(name, factory, origin=__name__)
