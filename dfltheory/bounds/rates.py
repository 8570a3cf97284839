"""Rate verification: substitute a corollary's schedule into its theorem and compare with the stated rate.

For a corollary with ``parent`` theorem and ``schedule`` (e.g. ``eta = c/(L sqrt(K T))``, ``rho = r/sqrt(T)``):

1. every term of the parent bound is expanded into additive pieces; each piece's leading behaviour as
   ``T -> oo`` is ``coef * T**p`` (computed with ``T = s**-2`` and sympy's ``as_leading_term`` at ``s -> 0``),
   and the coefficient's growth in K as ``K -> oo`` is ``K**a``;
2. the stated rate (the corollary's own terms, an O-expression) is treated the same way;
3. the two are compared order by order: the slowest order, pieces of the theorem that no stated term
   dominates, the order at which the topology enters, and orders that do not vanish;
4. each condition of the parent is rewritten under the schedule as a threshold on T (``T >= 100 c**2 K``).

The report is a result: a difference is a discrepancy between what the paper's theorem gives and what
its corollary states.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from dfltheory.bounds.catalog import catalog, get
from dfltheory.bounds.theorem import Theorem

__all__ = ["Piece", "RateReport", "verify", "leading", "TOPOLOGY_SYMBOLS"]

#: Names of symbols through which a topology enters a bound.
TOPOLOGY_SYMBOLS = frozenset({"lam", "psi", "q", "C", "delta", "Delta", "D", "Bw", "a", "lam_sgp"})

_s = sp.Symbol("s_lead", positive=True)
#: a condition whose slack has more operations than this is not solved for T under a schedule (sympy's simplify and
#: solve do not finish on DFedPGP's u-descent coefficient T5, 122 operations; the others have at most ~20)
MAX_SOLVE_OPS = 60


def leading(expr: sp.Expr, x: sp.Symbol) -> tuple[sp.Expr, sp.Rational]:
    """Leading behaviour of ``expr`` as ``x -> oo``: ``(coef, p)`` with ``expr ~ coef * x**p``."""
    expr = sp.sympify(expr)
    if x not in expr.free_symbols:
        return expr, sp.Integer(0)
    lt = expr.subs(x, _s**-2).as_leading_term(_s)
    coef, power = lt.as_coeff_exponent(_s)
    if _s in coef.free_symbols:  # not a pure power (e.g. log terms): fall back on the limit of the log-ratio
        p = sp.limit(sp.log(expr) / sp.log(x), x, sp.oo)
        return sp.simplify(sp.limit(expr / x**p, x, sp.oo)), sp.nsimplify(p)
    return sp.simplify(coef), sp.nsimplify(-power / 2)


def _order_text(p) -> str:
    return "1" if p == 0 else f"T^{sp.sstr(p)}"


@dataclass(frozen=True)
class Piece:
    """One order of one term: ``coef * T**T_exp``, with ``coef ~ K**K_exp`` as K grows."""

    term: str
    coef: sp.Expr
    T_exp: sp.Rational
    K_exp: sp.Rational | None
    symbols: frozenset[str]

    @property
    def topology(self) -> bool:
        return bool(self.symbols & TOPOLOGY_SYMBOLS) or any(s.startswith("Phi") for s in self.symbols)

    def to_dict(self) -> dict:
        return {
            "term": self.term,
            "leading": sp.sstr(self.coef * sp.Symbol("T") ** self.T_exp),
            "T_exponent": sp.sstr(self.T_exp),
            "K_exponent": None if self.K_exp is None else sp.sstr(self.K_exp),
            "topology": self.topology,
        }


def _piece(name: str, coef: sp.Expr, p, K: sp.Symbol | None) -> Piece:
    coef = sp.factor(coef)
    k_exp = leading(coef, K)[1] if K is not None and K in coef.free_symbols else (sp.Integer(0) if K else None)
    return Piece(name, coef, p, k_exp, frozenset(str(s) for s in coef.free_symbols))


def _pieces(name: str, expr: sp.Expr, T: sp.Symbol, K: sp.Symbol | None) -> list[Piece]:
    """Group the additive pieces of ``expr`` by their order in T (one Piece per order).

    When expanding makes pieces cancel at the leading order (e.g. ``1 - (1 - x/sqrt(T))**K``), the pieces
    would misstate the order; the whole term's leading behaviour is used instead.
    """
    by_order: dict[sp.Rational, sp.Expr] = {}
    for part in sp.Add.make_args(sp.expand(expr)):
        coef, p = leading(part, T)
        by_order[p] = by_order.get(p, 0) + coef
    out = [_piece(name, coef, p, K) for p, coef in sorted(by_order.items(), key=lambda kv: -kv[0])]
    out = [p for p in out if p.coef != 0]
    whole_coef, whole_p = leading(expr, T)
    if whole_coef != 0 and (not out or out[0].T_exp != whole_p):
        return [_piece(name, whole_coef, whole_p, K)]
    return out


def _symbolic_power(expr: sp.Expr, T: sp.Symbol) -> bool:
    """Does ``expr`` raise something that involves T to a symbolic power (``(1 - c/sqrt(T))**K``)?"""
    return any(T in p.free_symbols and p.exp.free_symbols - {T} for p in sp.sympify(expr).atoms(sp.Pow))


@dataclass(frozen=True)
class RateReport:
    """The comparison between a corollary's stated rate and its theorem under the corollary's schedule."""

    corollary: str
    parent: str
    schedule: dict
    derived: tuple[Piece, ...]
    stated: tuple[Piece, ...]
    findings: tuple[str, ...]
    conditions: tuple[dict, ...] = field(default_factory=tuple)

    @property
    def derived_rate(self) -> sp.Rational:
        return max(p.T_exp for p in self.derived)

    @property
    def stated_rate(self) -> sp.Rational:
        return max(p.T_exp for p in self.stated)

    def to_dict(self) -> dict:
        return {
            "id": self.corollary,
            "parent": self.parent,
            "schedule": {k: sp.sstr(v) for k, v in self.schedule.items()},
            "derived_rate": _order_text(self.derived_rate),
            "stated_rate": _order_text(self.stated_rate),
            "derived": [p.to_dict() for p in self.derived],
            "stated": [p.to_dict() for p in self.stated],
            "findings": list(self.findings),
            "conditions": list(self.conditions),
        }

    def format(self) -> str:
        lines = [f"{self.corollary}  (schedule substituted into {self.parent})"]
        lines.append("  schedule: " + ", ".join(f"{k} = {sp.sstr(v)}" for k, v in self.schedule.items()))
        lines.append(f"  rate: theorem gives O({_order_text(self.derived_rate)}), corollary states "
                     f"O({_order_text(self.stated_rate)})")
        lines.append("  theorem under the schedule, by term and order:")
        for p in self.derived:
            k = "" if p.K_exp is None else f"  [K^{sp.sstr(p.K_exp)}]"
            lines.append(f"    {p.term:>14}  {_order_text(p.T_exp):>8}  {sp.sstr(p.coef)}{k}")
        lines.append("  stated rate:")
        for p in self.stated:
            k = "" if p.K_exp is None else f"  [K^{sp.sstr(p.K_exp)}]"
            lines.append(f"    {p.term:>14}  {_order_text(p.T_exp):>8}  {sp.sstr(p.coef)}{k}")
        if self.conditions:
            lines.append("  conditions under the schedule:")
            for c in self.conditions:
                lines.append(f"    {c['text']}: {c['under_schedule']}")
        lines.append("  findings:" if self.findings else "  findings: none, the stated rate matches")
        lines.extend(f"    - {f}" for f in self.findings)
        return "\n".join(lines)


def _dominates(s: Piece, d: Piece) -> bool:
    """Does stated piece ``s`` dominate derived piece ``d`` for large T (and large K)?"""
    if s.T_exp > d.T_exp:
        return True
    if s.T_exp < d.T_exp:
        return False
    return d.K_exp is None or s.K_exp is None or s.K_exp >= d.K_exp


def _findings(derived: list[Piece], stated: list[Piece], schedule_constants: frozenset[str]) -> list[str]:
    out = []
    rd, rs = max(p.T_exp for p in derived), max(p.T_exp for p in stated)
    if rd >= 0:
        out.append(f"the theorem does not vanish under the schedule: a term of order {_order_text(rd)} remains "
                   f"({', '.join(sorted({p.term for p in derived if p.T_exp == rd}))})")
    if rd > rs:
        out.append(f"slower than stated: the theorem gives O({_order_text(rd)}), the corollary states "
                   f"O({_order_text(rs)})")
    elif rd < rs:
        out.append(f"looser than needed: the corollary states O({_order_text(rs)}) but the theorem gives "
                   f"O({_order_text(rd)})")
    for d in derived:
        covering = [s for s in stated if _dominates(s, d)]
        if not covering:
            k = "" if d.K_exp is None else f" K^{sp.sstr(d.K_exp)}"
            out.append(f"dropped: the theorem's '{d.term}' term has a piece of order{k} {_order_text(d.T_exp)} "
                       f"that no stated term covers: {sp.sstr(d.coef)}")
            continue
        mentioned = set().union(*(s.symbols for s in covering)) | schedule_constants
        absent = sorted(d.symbols - mentioned)
        if absent:
            out.append(f"constants differ: the theorem's '{d.term}' piece of order {_order_text(d.T_exp)} involves "
                       f"{', '.join(absent)}, which no stated term of that order or slower mentions")
    topo_d = [p.T_exp for p in derived if p.topology]
    topo_s = [p.T_exp for p in stated if p.topology]
    if topo_d and topo_s and max(topo_d) > max(topo_s):
        out.append(f"topology enters earlier: at {_order_text(max(topo_d))} in the theorem, but only at "
                   f"{_order_text(max(topo_s))} in the stated rate")
    elif topo_d and not topo_s:
        out.append(f"the stated rate has no topology term; the theorem's enters at {_order_text(max(topo_d))}")
    return out


def _conditions_under_schedule(parent: Theorem, schedule: dict, T: sp.Symbol) -> list[dict]:
    out = []
    for cond in parent.conditions:
        if not cond.relation.free_symbols & (set(schedule) | {T}):
            continue
        rel = cond.relation.subs(schedule)
        if sp.count_ops(cond.margin) > MAX_SOLVE_OPS:  # simplify and solve can take minutes here
            out.append({"text": cond.text, "relation": sp.sstr(cond.relation),
                        "under_schedule": f"{sp.sstr(rel)} (not solved for T: too large to solve)",
                        "holds_for_large_T": None})
            continue
        margin = sp.simplify(cond.margin.subs(schedule))
        if T not in margin.free_symbols:  # the schedule turns it into a condition on its constants alone
            strict = ">" if cond.strict else ">="
            out.append({"text": cond.text, "relation": sp.sstr(cond.relation),
                        "under_schedule": f"{sp.sstr(margin)} {strict} 0 (independent of T)",
                        "holds_for_large_T": None})
            continue
        text = sp.sstr(rel)
        if _symbolic_power(margin, T):  # sympy's solve can take minutes here; leave it unsolved
            out.append({"text": cond.text, "relation": sp.sstr(cond.relation),
                        "under_schedule": f"{text} (not solved for T: symbolic power)", "holds_for_large_T": None})
            continue
        try:
            roots = [r for r in sp.solve(sp.Eq(margin, 0), T) if r.is_positive is not False]
        except (NotImplementedError, TypeError):
            roots = []
        sign = leading(margin, T)[0].is_positive  # sign of the slack for large T
        holds_large = None if sign is None else bool(sign)
        if len(roots) == 1:
            thr = sp.simplify(roots[0])
            if holds_large:
                text = f"T >= {sp.sstr(thr)}"
            elif holds_large is False:
                text = f"T <= {sp.sstr(thr)} (violated for large T)"
        elif holds_large is False:
            text = f"{sp.sstr(rel)} (violated for large T)"
        out.append({"text": cond.text, "relation": sp.sstr(cond.relation), "under_schedule": text,
                    "holds_for_large_T": holds_large})
    return out


def verify(corollary: str | Theorem, parent: Theorem | None = None) -> RateReport:
    """Compare a corollary's stated rate with its parent theorem (by default ``get(corollary.parent)``) under
    the corollary's schedule."""
    cor = get(corollary) if isinstance(corollary, str) else corollary
    if cor.parent is None or not cor.schedule:
        raise ValueError(f"{cor.id} has no parent theorem and schedule to verify; corollaries with a schedule: "
                         + ", ".join(verifiable()))
    parent = parent if parent is not None else get(cor.parent)
    syms = {**parent.symbols, **cor.symbols}
    if "T" not in syms:
        raise ValueError(f"{cor.id}: no horizon T to take the rate in")
    T = syms["T"].symbol
    K = syms["K"].symbol if "K" in syms else None
    schedule = {syms[k].symbol: v for k, v in cor.schedule.items()}
    constants = frozenset(str(s) for e in cor.schedule.values() for s in sp.sympify(e).free_symbols) - set(
        parent.symbols)  # introduced by the schedule (c, r, ...): an O(.) statement hides them
    derived = [p for name, e in parent.terms.items() for p in _pieces(name, sp.sympify(e).subs(schedule), T, K)]
    stated = [p for name, e in cor.terms.items() for p in _pieces(name, sp.sympify(e).subs(schedule), T, K)]
    return RateReport(
        corollary=cor.id,
        parent=parent.id,
        schedule=dict(cor.schedule),
        derived=tuple(derived),
        stated=tuple(stated),
        findings=tuple(_findings(derived, stated, constants)),
        conditions=tuple(_conditions_under_schedule(parent, schedule, T)),
    )


def verifiable(paper: str | None = None) -> list[str]:
    """Ids of the corollaries that carry a schedule and a parent theorem."""
    return [i for i, t in catalog().items() if t.parent and t.schedule and (paper is None or t.paper == paper)]
