"""T*: the horizon from which a bound says something (issue 21, item 2).

For one theorem at fixed constants (every symbol but the step size and T), T* is the smallest horizon T at which
the bound drops below the trivial level (:mod:`dfltheory.verify.trivial`), for two step-size rules:

* ``largest``: the largest step every condition (the paper's and the derived ones) admits at that T;
* ``best``: the admissible step that minimises the bound at that T (the conditions may depend on T).

Neither needs training. The search evaluates T at the decades 1, 10, ..., ``T_MAX`` = 1e12, then at 7 points inside
the first decade that works, and bisects in integer T (to one round, or 0.1 % of T beyond T = 1000) below the first
point that works. The bound need not be monotone in T: every T reported is a real evaluation below the level, and
the search assumes the bound crosses the level once between two grid points. Where no T <= 1e12 works, the result
says "vacuous at every T" and names the term that keeps the bound above the level at T = 1e12 with the rule's step.

The best step at a given T: the admissible set of the step (:meth:`Theorem.solve`, numerically: sympy is not asked)
is sampled on 48 log-spaced points per interval and the minimum is refined by golden-section search in log(step)
between its neighbours; every value returned is a real evaluation at an admissible step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

T_MAX = 1e12
RULES = ("largest", "best")


@dataclass(frozen=True)
class Point:
    """The bound at horizon T with a step chosen by a rule (None where no step is admissible)."""

    T: int
    step: float
    bound: float


def _admissible(thm, step: str, values: Mapping[str, float], T: float):
    if not any("T" in c.names for c in thm.conditions):  # the admissible steps do not depend on T: solve once
        T = 1.0
    key = (thm.id, step, tuple(sorted(values.items())), T)
    if key not in _SOLVED:
        _SOLVED[key] = _solve(thm, step, values, T)
    return _SOLVED[key]


_SOLVED: dict = {}  # (theorem, step, values, T) -> admissible set: the search asks for the same T-free set often


def _solve(thm, step: str, values: Mapping[str, float], T: float):
    try:
        sol = thm.solve(step, "all", symbolic=False, **{**values, "T": T})  # the floats alone: no sympy
    except (ValueError, KeyError):
        return None
    return None if sol.empty else sol


def _bound(thm, step: str, values: Mapping[str, float], T: float, eta) -> np.ndarray:
    """The bound at (T, eta) where every condition holds and it is finite and >= 0, else +inf (where it cannot be
    evaluated, e.g. overflow at an extreme step, +inf at every step given)."""
    f = _partial(thm, values)
    try:
        out, ok = f(T=T, **{step: eta})
        out = np.asarray(out, dtype=float)
    except Exception:  # DomainError (overflow at an extreme step): no value there
        out = np.full(np.shape(eta), np.inf)
        ok = np.asarray(f.thm.valid("all", **{**values, "T": T, step: eta}))
    ok = np.asarray(ok) & np.isfinite(out) & (out >= 0)
    return np.where(ok, out, np.inf)


def _partial(thm, values: Mapping[str, float]):
    """``thm.partial`` at ``values`` (validated once, kept for the searches that ask for them again)."""
    key = (id(thm), thm.id, tuple(sorted(values.items())))
    if key not in _PARTIAL:
        if len(_PARTIAL) > 4096:
            _PARTIAL.clear()
        _PARTIAL[key] = thm.partial("all", **values)
    return _PARTIAL[key]


_PARTIAL: dict = {}


#: how far inside an open end of the admissible set a step is taken (a strict condition eta < c: the bound is often
#: infinite at its edge, issue 33 item 5), relative to the end
INSIDE = 1e-3


def inside(low: float, high: float, low_closed: bool, high_closed: bool) -> tuple[float, float]:
    """The ends of an admissible interval, each moved inside by :data:`INSIDE` (relative) where it is open."""
    lo = low if low_closed or low <= 0 else low * (1 + INSIDE)
    hi = high if high_closed or not math.isfinite(high) else high * (1 - INSIDE)
    if lo > hi:  # an interval narrower than the margins: its midpoint, which lies inside it
        lo = hi = (low + high) / 2
    return lo, hi


def largest_inside(thm, step: str, values: Mapping[str, float], T: float | None = None) -> float:
    """The largest step the conditions admit, strictly inside an open end (ValueError where none is admissible)."""
    sol = _admissible(thm, step, {k: v for k, v in values.items() if k not in (step, "T")},
                      values.get("T", 1.0) if T is None else T)
    if sol is None:
        raise ValueError(f"no step {step} meets the conditions of {thm.id}")
    return inside(*sol.intervals[-1][:4])[1]


def at(thm, step: str, values: Mapping[str, float], T: float, rule: str) -> Point | None:
    """The bound at horizon T with the step of ``rule`` ('largest' or 'best'), strictly inside every open end of
    the admissible set."""
    sol = _admissible(thm, step, values, T)
    if sol is None:
        return None
    if rule == "largest":
        top = inside(*sol.intervals[-1][:4])[1]
        b = float(_bound(thm, step, values, T, top))
        return Point(int(T), top, b) if math.isfinite(b) else None
    best = None
    for interval in sol.intervals:
        low, high = inside(*interval[:4])
        hi = high if math.isfinite(high) else max(low, 1.0) * 1e12
        lo = max(low, hi * 1e-12)  # steps below 1e-12 x the largest only lose
        if not (0 < lo <= hi and math.isfinite(hi)):
            continue
        grid = np.unique(np.geomspace(lo, hi, 48) if hi > lo else np.array([lo]))
        vals = _bound(thm, step, values, T, grid)
        i = int(np.argmin(vals))
        if not math.isfinite(vals[i]):
            continue
        a, b = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, len(grid) - 1)])
        eta, v = _golden(lambda e: float(_bound(thm, step, values, T, e)), a, b, float(grid[i]), float(vals[i]))
        if best is None or v < best.bound:
            best = Point(int(T), eta, v)
    return best


def _golden(f, a: float, b: float, x: float, fx: float, iters: int = 30) -> tuple[float, float]:
    """Golden-section search of f(exp(s)) over s in [a, b] (log step), keeping the best point seen: (step, value)
    with the value evaluated at exactly that step (``x`` a step with its value ``fx``, the grid's best)."""
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(math.exp(c)), f(math.exp(d))
    best = (x, fx)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(math.exp(d))
        for s, v in ((c, fc), (d, fd)):
            if v < best[1]:
                best = (math.exp(s), v)
    return best


def horizon(thm, step: str, values: Mapping[str, float], level: float, rule: str, T_max: float = T_MAX) -> dict:
    """T* of ``thm`` at ``values`` (every symbol but ``step`` and T) against ``level``, for one step ``rule``.

    Returns ``{"rule", "T_star", "step", "bound", "level"}`` (T_star None and ``vacuous`` True where no T <= T_max
    works, with ``why``: the dominant term at T_max with the best step, or that no step is admissible)."""
    if rule not in RULES:
        raise ValueError(f"unknown step rule {rule!r}; choose one of {', '.join(RULES)}")
    values = {k: v for k, v in values.items() if k not in (step, "T")}

    def works(T):
        p = at(thm, step, values, T, rule)
        return p if p is not None and p.bound < level else None

    prev, hit = 0, None
    for decade in range(int(round(math.log10(T_max))) + 1):  # 1, 10, ..., T_max; then 8 points in the decade
        T = 10.0**decade
        hit = works(T)
        if hit is not None:
            for T_in in np.unique(np.ceil(np.logspace(decade - 1, decade, 9)[1:-1])) if decade else ():
                if T_in > prev and (p := works(T_in)) is not None:
                    hit = p
                    break
                prev = max(prev, int(T_in))
            break
        prev = int(T)
    out = {"rule": rule, "level": level}
    if hit is None:
        last = at(thm, step, values, T_max, rule)
        if last is None:
            why = f"no step {step} meets the conditions at T = {T_max:.0e}"
        else:
            name, value = thm.dominant_term(**{**values, "T": T_max, step: last.step})
            why = (f"at T = {T_max:.0e} and the {rule} step {step} = {last.step:.3g} the bound is {last.bound:.3g} >= "
                   f"{level:.3g}; its term '{name}' alone is {value:.3g}")
        return {**out, "T_star": None, "step": None, "bound": None, "vacuous": True, "why": why}
    lo, hi = prev, hit.T  # lo fails (or is 0), hi works: bisect to one round or 0.1 % of T
    while hi - lo > max(1, hi // 1000):
        mid = (lo + hi) // 2
        p = works(mid)
        if p is not None:
            hi, hit = mid, p
        else:
            lo = mid
    return {**out, "T_star": hit.T, "step": hit.step, "bound": hit.bound, "vacuous": False}


def tuned_horizon(thm, step: str, values: Mapping[str, float], level: float, name: str,
                  span: tuple[float, float], points: int = 6, refine: int = 5) -> tuple[dict, float] | None:
    """T* (best step) with the free hyper-parameter ``name`` chosen continuously in ``span`` (log scale): a
    ``points``-point log grid, then ``refine`` golden-section steps in log(value) around the grid's best (DFedADMM's
    penalty, DFedPGP's eta_v; issue 33 items 4, 5). Returns (the horizon row, the value) or None where no value
    gives a T*. T* is integer and piecewise constant: the search keeps the best value it has evaluated."""
    def star(v: float) -> float:
        h = horizon(thm, step, {**values, name: v}, level, "best")
        cache[v] = h
        return h["T_star"] if h["T_star"] else math.inf

    cache: dict[float, dict] = {}
    grid = np.geomspace(span[0], span[1], points)
    stars = [star(float(v)) for v in grid]
    i = int(np.argmin(stars))
    if not math.isfinite(stars[i]):
        return None
    a, b = math.log(grid[max(i - 1, 0)]), math.log(grid[min(i + 1, points - 1)])
    _golden(lambda v: star(v), a, b, float(grid[i]), stars[i], iters=refine)
    v = min(cache, key=lambda k: (cache[k]["T_star"] or math.inf))
    return cache[v], v
