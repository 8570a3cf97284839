"""The admissible set of one symbol: the values at which every condition of a theorem holds, the others fixed.

sympy's ``solveset`` is fast and exact, but it can be silently wrong on the papers' rational conditions (it
mis-solved DFedPGP's u-descent condition, returning an empty set where the condition holds, and a set too small
where it holds further out). So a symbolic answer is never returned unchecked:

1. the conditions are evaluated on a dense grid over the symbol's whole domain (log-spaced, 1e-300 to 1e300,
   finer between 1e-60 and 1e60, and near a finite upper end);
2. wherever one condition changes between two neighbouring grid points, the change is located by bisection to two
   adjacent floating-point numbers (the last where it holds, the first where it does not);
3. the admissible set is read off these points together with the symbolic answer's end points, so that it ends at
   floats where every condition holds while the next float fails one (unless the end is the domain's);
4. the symbolic answer is kept (its exact end points, for display) only where it agrees with this numeric one to
   1e-9; otherwise the numeric answer stands and :attr:`Solution.method` says why.

The numeric answer can miss only a window narrower than one grid cell opened by a single condition that changes
twice inside that cell (grid cells are 6 % wide between 1e-60 and 1e60), which the papers' conditions
(polynomials of low degree in the solved symbol) do not produce at the grid's resolution. Where a condition is
decided by rounding (its two sides equal to the last bits), the answer follows the floating-point evaluation, as
:meth:`~dfltheory.bounds.theorem.Theorem.check` does; a piece found only within 1e-9 of an open end of a bounded
domain (alpha, q, lambda -> 1), where formulas like (1 - alpha^K)/(1 - alpha) have lost every digit, is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from dfltheory.bounds.symbols import Var

__all__ = ["Solution", "solve"]

_RTOL = 1e-9
#: sympy is asked only for conditions that are ratios of polynomials of at most this degree in the solved symbol.
_SYMBOLIC_DEGREE = 2


@dataclass(frozen=True)
class Solution:
    """The admissible values of one symbol.

    ``intervals`` are ``(low, high, low_closed, high_closed)`` with float ends: a finite end is a float at which
    every condition holds, the next float outward failing one or leaving the domain ``[low, high]``; an infinite
    end is open. For an integer symbol the ends are integers. ``exact`` is sympy's set where it passed the numeric
    check, else None; ``method`` says which answer stands and why.
    """

    name: str
    integer: bool
    intervals: tuple[tuple[float, float, bool, bool], ...]
    method: str
    exact: sp.Set | None = None
    low: float = -math.inf
    high: float = math.inf

    @property
    def empty(self) -> bool:
        return not self.intervals

    @property
    def largest(self) -> float:
        """The largest admissible value (``inf`` when unbounded); raises when none is admissible."""
        self._nonempty()
        return self.intervals[-1][1]

    @property
    def smallest(self) -> float:
        """The smallest admissible value (the domain's open end is never returned: see :attr:`intervals`)."""
        self._nonempty()
        return self.intervals[0][0]

    def _nonempty(self) -> None:
        if self.empty:
            raise ValueError(f"no value of {self.name} satisfies every condition")

    def as_set(self) -> sp.Set:
        """A sympy set: the verified exact set where there is one, else the numeric intervals (or Ranges)."""
        if self.exact is not None:
            return self.exact
        parts = []
        for lo, hi, lc, hc in self.intervals:
            if self.integer:
                stop = sp.oo if math.isinf(hi) else int(hi) + 1
                parts.append(sp.Range(int(lo), stop))
            else:
                parts.append(sp.Interval(_sym(lo), _sym(hi), not lc, not hc))
        return sp.Union(*parts) if parts else sp.EmptySet

    def text(self) -> str:
        """``eta in (0, 0.00625)``, ``T in {65, 66, ...}``, ``none``: readable, numbers to 4 digits."""
        if self.empty:
            return "none"
        if self.integer:
            parts = []
            for lo, hi, _, _ in self.intervals:
                if math.isinf(hi):
                    parts.append(f"{self.name} in {{{_int(lo)}, {_int(lo + 1)}, ...}}")
                elif hi == lo:
                    parts.append(f"{self.name} = {_int(lo)}")
                else:
                    parts.append(f"{self.name} in {{{_int(lo)}, ..., {_int(hi)}}}")
            return " or ".join(parts)
        ends = _pieces(self.exact) if self.exact is not None else None
        parts = []
        for i, (lo, hi, lc, hc) in enumerate(self.intervals):
            if ends is not None:
                lo, hi, lc, hc = ends[i]
            if lo == math.nextafter(self.low, math.inf):  # the first float past an open end: open there
                lo, lc = self.low, False
            if hi == math.nextafter(self.high, -math.inf):
                hi, hc = self.high, False
            parts.append(f"{self.name} in {'[' if lc else '('}{_num(lo)}, {_num(hi)}{']' if hc else ')'}")
        return " or ".join(parts)

    def to_dict(self) -> dict:
        js = json_number
        return {"name": self.name, "admissible": self.text(), "method": self.method,
                "intervals": [[js(lo), js(hi), lc, hc] for lo, hi, lc, hc in self.intervals],
                "largest": None if self.empty else js(self.largest),
                "smallest": None if self.empty else js(self.smallest)}


def json_number(x) -> float | str:
    """A float for JSON output: infinities as the strings ``"inf"`` / ``"-inf"`` (bare Infinity is not JSON)."""
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _sym(x: float):
    return sp.oo if x == math.inf else -sp.oo if x == -math.inf else sp.Float(x, 17)


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


def _int(x: float) -> str:
    return f"{int(x):,}".replace(",", "_") if abs(x) >= 1e6 else str(int(x))


# ----------------------------------------------------------------------------------------------- numeric scan
def _grid(var: Var) -> np.ndarray:
    """Points inside the domain of ``var``: log-spaced offsets from the lower end (and from a finite upper end)."""
    fine = np.logspace(-60, 60, 120 * 40 + 1)
    coarse = np.concatenate([np.logspace(-300, -60, 241), np.logspace(60, 300, 241)])
    offsets = np.concatenate([fine, coarse])
    lo, hi = var.low, var.high
    if math.isinf(lo):
        pts = [-offsets, offsets, [0.0]] if math.isinf(hi) else [hi - offsets]
    elif math.isinf(hi):
        pts = [lo + offsets]
    else:
        unit = offsets[offsets < 1]
        pts = [lo + (hi - lo) * unit, hi - (hi - lo) * unit, [(lo + hi) / 2]]
    pts.append([lo, hi, math.nextafter(lo, math.inf), math.nextafter(hi, -math.inf)])
    p = np.unique(np.concatenate([np.asarray(x, dtype=float) for x in pts]))
    p = p[np.isfinite(p)]
    return p[var.within(p)]


def _bisect(pred: Callable[[float], bool], a: float, b: float) -> tuple[float, float]:
    """Two adjacent floats between ``a`` and ``b`` at which ``pred`` takes the values it takes at ``a`` and ``b``."""
    pa = pred(a)
    for _ in range(2000):
        if a > 0 and b > 0 and max(a, b) > 4 * min(a, b):
            mid = math.sqrt(a) * math.sqrt(b)
        else:
            mid = a / 2 + b / 2
        if mid in (a, b):
            return a, b
        if pred(mid) == pa:
            a = mid
        else:
            b = mid
    return a, b  # pragma: no cover - bisection on floats ends within ~1100 halvings


def _runs(points: np.ndarray, ok: np.ndarray, var: Var, first: float, last: float):
    """Maximal runs of admissible points as intervals, extended to the domain's ends past the grid's ends."""
    out = []
    n = len(points)
    i = 0
    while i < n:
        if not ok[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and ok[j + 1]:
            j += 1
        lo, hi = float(points[i]), float(points[j])
        if points[i] <= first and points[i] != var.low:  # admissible down to the domain's (open) lower end
            lo = var.low if math.isinf(var.low) else math.nextafter(var.low, math.inf)
        if points[j] >= last and points[j] != var.high:
            hi = var.high if math.isinf(var.high) else math.nextafter(var.high, -math.inf)
        out.append((lo, hi, not math.isinf(lo), not math.isinf(hi)))
        i = j + 1
    return out


def _noise(run, var: Var) -> bool:
    """A piece that lies wholly within 1e-9 (relative) of an open, finite end of a bounded domain, which no
    condition can be trusted to decide there: formulas such as (1 - alpha^K)/(1 - alpha) or C/(1 - q) lose all
    their digits as alpha, q -> 1, and the floats they give there are rounding noise."""
    lo, hi, _, _ = run
    if not (math.isfinite(var.low) and math.isfinite(var.high)):
        return False
    band = 1e-9 * (var.high - var.low)
    return (var.high_open and lo >= var.high - band) or (var.low_open and hi <= var.low + band)


def _integer_runs(runs, holds: Callable[[float], bool]):
    """The integers inside continuous runs, with ends checked where a boundary sits within rounding of one."""
    out = []
    for lo, hi, lc, hc in runs:
        a = math.ceil(lo) if math.isfinite(lo) else lo
        if a == lo and not lc:
            a += 1
        for _ in range(4):  # the boundary is located to a float: at most a rounding step away
            if not math.isfinite(a) or holds(a) or a > hi:
                break
            a += 1
        b = math.floor(hi) if math.isfinite(hi) else hi
        if b == hi and not hc and math.isfinite(b):
            b -= 1
        for _ in range(4):
            if not math.isfinite(b) or holds(b) or b < a:
                break
            b -= 1
        if a <= b:
            out.append((float(a), float(b), True, math.isfinite(b)))
    return out


def _low_degree(rel, x: sp.Symbol) -> bool:
    """Whether a relation's slack is a ratio of polynomials of degree <= 2 in ``x``: sympy solves those quickly;
    on higher degrees and other forms it can take seconds, and the numeric answer stands alone."""
    num, den = sp.fraction(sp.together(rel.lhs - rel.rhs))
    return all(p.is_polynomial(x) and sp.Poly(p, x).degree() <= _SYMBOLIC_DEGREE for p in (num, den))


def _symbolic(conditions, x: sp.Symbol, subs: Mapping, var: Var) -> tuple[sp.Set | None, str]:
    region = var.interval()
    for cond in conditions:
        if not _low_degree(cond.relation, x):  # decided before substituting: subs of x^K at K = 100 is slow
            return None, f"{sp.sstr(cond.relation)} is not a ratio of polynomials of degree <= 2 in {x}"
        try:
            rel = cond.relation.subs(subs)
        except TypeError:  # the values make a side undefined (a division by zero: zoo): no comparison
            return None, f"{sp.sstr(cond.relation)} is undefined at the given values"
        if rel in (sp.true, sp.false):
            region = region if rel == sp.true else sp.EmptySet
            continue
        try:
            solved = sp.solveset(rel, x, domain=sp.S.Reals)
        except Exception as exc:  # noqa: BLE001 - sympy raises many kinds; the numeric answer stands
            return None, f"sympy could not solve {sp.sstr(cond.relation)} ({type(exc).__name__})"
        if solved.has(sp.ConditionSet):
            return None, f"{sp.sstr(cond.relation)} has no closed-form solution"
        region = region.intersect(solved)
    return region, ""


def _pieces(region: sp.Set) -> list[tuple[float, float, bool, bool]] | None:
    """(low, high, low_closed, high_closed) of each piece of a union of intervals (a point is a closed piece),
    sorted; None for any other kind of set."""
    if region is sp.EmptySet or region.is_empty:
        return []
    out = []
    for p in region.args if isinstance(region, sp.Union) else (region,):
        if isinstance(p, sp.Interval):
            out.append((float(p.start), float(p.end), not p.left_open, not p.right_open))
        elif isinstance(p, sp.FiniteSet) and all(v.is_real for v in p):
            out.extend((float(v), float(v), True, True) for v in p)
        else:
            return None
    return sorted(out)


def _close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= _RTOL * max(abs(a), abs(b)) + 1e-300


def _agrees(sym, num) -> bool:
    if len(sym) != len(num):
        return False
    return all(_close(s[0], n[0]) and _close(s[1], n[1]) for s, n in zip(sym, num))


def solve(var: Var, conditions: Sequence, values: Mapping[str, float], symbolic: bool = True) -> Solution:
    """The admissible set of ``var`` under ``conditions`` (each a :class:`~dfltheory.bounds.theorem.Condition`),
    every other symbol they involve fixed by ``values`` (floats); see the module docstring for the method.
    ``symbolic=False`` skips sympy (the numeric set, which stands whenever the two differ, and no exact set): for
    callers that solve many times and use only the floats (``dfltheory.verify.horizons``)."""
    name = var.name
    x = var.symbol
    subs = {s: sp.Float(float(v)) for k, v in values.items() if (s := _symbol_of(conditions, k)) is not None}
    fixed = {k: float(v) for k, v in values.items()}

    def holds_all(pts) -> np.ndarray:
        ok = np.ones(np.shape(pts), dtype=bool)
        for cond in conditions:
            ok &= np.asarray(cond.holds_at({**fixed, name: pts}), dtype=bool)
        return ok

    def holds(v: float) -> bool:
        return bool(holds_all(np.float64(v)))

    exact, why = _symbolic(conditions, x, subs, var) if symbolic else (None, "sympy not asked")
    sym_pieces = _pieces(exact) if exact is not None else None

    grid = _grid(var)
    extra = []
    for cond in conditions:
        h = np.asarray(cond.holds_at({**fixed, name: grid}), dtype=bool)
        h = np.broadcast_to(h, grid.shape)
        for k in np.flatnonzero(h[1:] != h[:-1]):
            extra.extend(_bisect(lambda v, c=cond: bool(c.holds_at({**fixed, name: np.float64(v)})),
                                 float(grid[k]), float(grid[k + 1])))
    for lo, hi, _, _ in sym_pieces or ():
        for e in (lo, hi):
            if math.isfinite(e):
                extra.extend([e, math.nextafter(e, -math.inf), math.nextafter(e, math.inf)])
    points = np.unique(np.concatenate([grid, np.asarray(extra, dtype=float)]))
    points = points[var.within(points)]
    ok = np.broadcast_to(holds_all(points), points.shape)
    # where all conditions together change between two neighbours that are not adjacent floats (one condition's
    # change met another's exact boundary there), locate the change too
    refine = [k for k in np.flatnonzero(ok[1:] != ok[:-1]) if math.nextafter(points[k], math.inf) != points[k + 1]]
    if refine:
        extra = [e for k in refine for e in _bisect(holds, float(points[k]), float(points[k + 1]))]
        points = np.unique(np.concatenate([points, extra]))
        ok = np.broadcast_to(holds_all(points), points.shape)
    runs = [r for r in _runs(points, ok, var, float(grid[0]), float(grid[-1])) if not _noise(r, var)]
    if var.integer:
        runs = _integer_runs(runs, holds)

    if sym_pieces is None:
        method = f"numeric ({why or 'sympy returned a set that is not a union of intervals'})"
        exact = None
    elif (_agrees_integer(exact, runs) if var.integer else _agrees(sym_pieces, runs)):
        method = "symbolic, verified numerically"
    else:
        method = (f"numeric (sympy's solveset gave {_pieces_text(sym_pieces, name)}, which the conditions "
                  f"evaluated numerically contradict)")
        exact = None
    if var.integer:
        exact = None  # the integer runs are exact; sympy's Range/Interval mix is not shown
    return Solution(name=name, integer=var.integer, intervals=tuple(runs), method=method, exact=exact,
                    low=var.low, high=var.high)


def _agrees_integer(exact: sp.Set, runs) -> bool:
    """sympy's real set against integer runs: each run's end integers inside it, their outer neighbours not."""
    def inside(v: float) -> bool:
        return bool(exact.contains(sp.Integer(int(v))) == sp.true)

    pieces = _pieces(exact)
    if pieces is None or len(pieces) != len(runs):
        return False
    for lo, hi, _, _ in runs:
        if not inside(lo) or inside(lo - 1):
            return False
        if math.isfinite(hi) and (not inside(hi) or inside(hi + 1)):
            return False
    return True


def _pieces_text(pieces, name: str) -> str:
    if not pieces:
        return "the empty set"
    return " or ".join(f"{name} in {'[' if ac else '('}{_num(a)}, {_num(b)}{']' if bc else ')'}"
                       for a, b, ac, bc in pieces)


def _symbol_of(conditions, name: str) -> sp.Symbol | None:
    for cond in conditions:
        for s in cond.relation.free_symbols:
            if str(s) == name:
                return s
    return None
