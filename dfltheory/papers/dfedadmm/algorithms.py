"""The algorithms of DFedADMM and DFedADMM-SAM (primal-dual local steps on the augmented Lagrangian, then gossip),
derived from their step programs (:mod:`dfltheory.program`; the table of :mod:`dfltheory.empirical.algorithms` lists
them with their sources). Their penalty lambda is the option ``lam_pen`` (the bounds' and the programs' name; ``lam``
is the spectral lambda everywhere else): it was the option ``lam`` before, a name their registration declares
``renamed``, so that stored configs and old sweep files giving ``lam`` are read as ``lam_pen``."""

from __future__ import annotations

import math
from functools import partial

from dfltheory.empirical.algorithms import check_hyper, from_program

COLLAPSE = 0.1  # |1 - eta/lambda| below this: the K local steps of DFedADMM act as about one


def step_warning(name: str, lam_pen: float, lr: float, lr_decay: float, K: int, rounds: int) -> str | None:
    """Why DFedADMM's local steps may collapse, or None (the train command prints it). The local step of seed 004
    (L95; card dfedadmm §3.2) is x_{k+1} - x^t = (1 - eta/lambda)(x_k - x^t) - eta (g_k - ghat): when
    |1 - eta/lambda| < COLLAPSE every step nearly restarts from x^t, so K steps act as about one (the papers'
    eta = lambda = 0.1 is exactly there). With a decaying lr the factor is 1 - eta_t/lambda, eta_t = eta decay^t: the
    message names the rounds it is in the collapse zone. eta > lambda makes the factor negative (and amplifying for
    eta >= 2 lambda); seed 004's analysis needs eta <= lambda (gamma <= 1)."""
    if not lam_pen or rounds < 1:
        return None
    r = lr / lam_pen
    head = (f"{name} with --lr {lr:g} and --lam-pen {lam_pen:g}: the local step x_(k+1) - x^t = (1 - eta/lambda)"
            f"(x_k - x^t) - eta (g_k - ghat) (seed 004 L95) has the factor 1 - eta/lambda = {1 - r:.3g}")
    fix = f"use a penalty well above the step, e.g. --lam-pen {10 * lr:g} with --lr {lr:g}"
    if lr_decay == 1.0:
        first, last = (0, rounds - 1) if abs(1 - r) < COLLAPSE else (1, 0)
    else:  # r decay^t in (1 - c, 1 + c) for t strictly between a and b
        a, b = sorted(math.log(x / r) / math.log(lr_decay) for x in (1 - COLLAPSE, 1 + COLLAPSE))
        first, last = max(0, math.floor(a) + 1), min(rounds - 1, math.ceil(b) - 1)
    if first <= last:
        when = ("" if lr_decay == 1.0 else
                f"; with --lr-decay {lr_decay:g} the factor 1 - eta_t/lambda = 1 - {r:.3g}*{lr_decay:g}^t is within "
                f"{COLLAPSE:g} of 0 in rounds {first} to {last}")
        return (f"{head}{when}: {'there ' if when else ''}every local step nearly restarts from x^t and the K = {K} "
                f"local steps act as about one; {fix}")
    if r >= 1 + COLLAPSE:
        return (f"{head} < 0: x_k oscillates around x^t" + (" and grows geometrically" if r >= 2 else "")
                + f", and seed 004's analysis needs eta <= lambda; {fix}")
    return None


def _dfedadmm(name, rho, hp):
    lam_pen = hp.get("lam_pen", 0.1)
    check_hyper("lam_pen", lam_pen, shown="lam_pen (--lam-pen)")
    given = {"lam_pen": lam_pen} if rho is None else {"lam_pen": lam_pen, "rho": rho}
    if rho is not None:
        check_hyper("rho", rho)
    return from_program(name, name, hp, given, params={"lam_pen": lam_pen, "rho": rho},
                        warning=partial(step_warning, name, lam_pen))


def dfedadmm(hp):
    """Seed 004 Algorithm 1: x <- x - eta(g - ghat + (x - x^t)/lam_pen); ghat, z = x_K - lam_pen ghat_old;
    X^{t+1} = W Z;
    measured at w^t (card dfedadmm §2, §6.1)."""
    return _dfedadmm("dfedadmm", None, hp)


def dfedadmm_sam(hp):
    """DFedADMM with the SAM gradient (box lines 10-13), rho = 0.1 in the experiments (card dfedadmm §8)."""
    return _dfedadmm("dfedadmm-sam", hp.get("rho", 0.1), hp)


def register() -> None:
    """The paper's algorithms into the algorithm table, through the function a user's plugin calls."""
    from dfltheory.empirical.algorithms import register_algorithm

    for name, factory in {"dfedadmm": dfedadmm, "dfedadmm-sam": dfedadmm_sam}.items():
        register_algorithm(name, factory, origin=__name__, renamed={"lam": "lam_pen"})
