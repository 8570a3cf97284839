"""A theorem as data: named symbols, the bounded quantity, the bound as named sympy terms, its conditions
as sympy relations, and its provenance. Evaluation is lambdified numpy, vectorized by broadcasting.

Example
-------
>>> from dfltheory.bounds import get
>>> thm = get("dfedsam.thm4.1")
>>> thm.evaluate(eta=1e-3, K=20, T=1000, L=1, rho=0.01, sigma_l=1, sigma_g=1, B=1,
...              lam=0.733333, m=100, Q=4, f0_minus_fstar=2.3)          # doctest: +SKIP
0.2386358...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import sympy as sp

from dfltheory.bounds.symbols import DomainError, Var

__all__ = ["Source", "Condition", "Verdict", "Check", "Theorem", "TAGS", "DomainError", "interval_text"]

#: Provenance tags, as the theorem cards use them.
TAGS = {
    "SEED": "printed in the paper (copied exactly, typos included)",
    "DERIVED": "derived by the toolkit's authors from the paper's own lemmas; not the paper's claim",
    "CORRECTED": "the paper's formula with a slip in its proof repaired (a named variant, never the default)",
    "INTERP": "one reading of an ambiguous passage of the paper",
    "RECONSTRUCTED": "the paper's formula is lost in the source text; rebuilt from its proof or prose",
}

KINDS = ("theorem", "corollary", "lemma", "remark", "proposition")


@dataclass(frozen=True)
class Source:
    """Where a formula comes from: seed file, lines, equation, theorem-card section and provenance tag."""

    seed: str
    lines: str
    equation: str = ""
    card: str = ""
    tag: str = "SEED"

    def __post_init__(self):
        if self.tag not in TAGS:
            raise ValueError(f"unknown provenance tag {self.tag!r}; use one of {sorted(TAGS)}")

    def __str__(self) -> str:
        parts = [f"seed {self.seed} {self.lines}"]
        if self.equation:
            parts.append(self.equation)
        if self.card:
            parts.append(f"card {self.card}")
        return ", ".join(parts) + f" [{self.tag}]"


def _margin_expr(rel: sp.core.relational.Relational) -> sp.Expr:
    """Signed slack of a relation: >= 0 exactly when it holds (> 0 for strict ones)."""
    if isinstance(rel, (sp.LessThan, sp.StrictLessThan)):
        return rel.rhs - rel.lhs
    if isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan)):
        return rel.lhs - rel.rhs
    raise TypeError(f"a condition must be an inequality (<, <=, >, >=), got {rel!r}")


@dataclass(frozen=True)
class Condition:
    """A hypothesis of a theorem as a sympy relation, with the paper's wording and source."""

    relation: sp.core.relational.Relational
    text: str
    source: Source | None = None

    def __post_init__(self):
        if isinstance(self.relation, sp.logic.boolalg.BooleanAtom):
            raise ValueError(
                f"condition {self.text!r} is trivially {self.relation} under the symbols' positivity assumptions; "
                "build it with evaluate=False (e.g. sp.StrictGreaterThan(alpha, 0, evaluate=False)) or drop it")

    @property
    def strict(self) -> bool:
        return isinstance(self.relation, (sp.StrictLessThan, sp.StrictGreaterThan))

    @cached_property
    def margin(self) -> sp.Expr:
        return _margin_expr(self.relation)

    @cached_property
    def names(self) -> tuple[str, ...]:
        """Names of the symbols the condition involves, sorted."""
        return tuple(sorted(str(s) for s in self.relation.free_symbols))

    @cached_property
    def _fns(self):
        args = sorted(self.relation.free_symbols, key=str)
        return (sp.lambdify(args, self.margin, modules="numpy"),
                sp.lambdify(args, sp.Abs(sp.sympify(self.relation.rhs)), modules="numpy"))

    def holds_at(self, values: Mapping[str, object]) -> np.ndarray:
        """Whether the condition holds, elementwise over broadcast array values (undefined counts as not)."""
        args = [np.asarray(values[n], dtype=float) for n in self.names]
        with np.errstate(all="ignore"):
            margin = np.asarray(self._fns[0](*args), dtype=float)
        return margin > 0 if self.strict else margin >= 0

    def margin_at(self, values: Mapping[str, object]) -> tuple[float, float]:
        """(signed slack, |threshold side|) at the given values; slack >= 0 where the condition holds."""
        args = [np.asarray(values[n], dtype=float) for n in self.names]
        margin_fn, scale_fn = self._fns
        with np.errstate(all="ignore"):
            return float(margin_fn(*args)), float(scale_fn(*args))


@dataclass(frozen=True)
class Verdict:
    """The verdict on one condition at given values. ``holds`` is None when undecidable (values missing)."""

    text: str
    relation: str
    holds: bool | None
    margin: float | None
    relative_margin: float | None
    missing: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "relation": self.relation,
            "holds": self.holds,
            "margin": self.margin,
            "relative_margin": self.relative_margin,
            "missing": list(self.missing),
        }


@dataclass(frozen=True)
class Check:
    """Result of :meth:`Theorem.check`: the bound, its terms and a verdict per condition."""

    id: str
    quantity: str
    value: float
    terms: dict[str, float]
    conditions: tuple[Verdict, ...]
    infinite_reason: str | None = None
    values: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when every condition holds (undecidable ones count as not holding)."""
        return all(v.holds is True for v in self.conditions)

    @property
    def violated(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.conditions if v.holds is False)

    @property
    def dominant_term(self) -> str | None:
        defined = {k: v for k, v in self.terms.items() if not np.isnan(v)}
        return max(defined, key=defined.get) if defined else None

    def to_dict(self) -> dict:
        """JSON-ready dict with the stable keys ``id``, ``quantity``, ``value``, ``terms``, ``dominant_term``,
        ``conditions`` (each ``text``, ``relation``, ``holds``, ``margin``, ``relative_margin``, ``missing``),
        ``all_conditions_hold``, ``infinite_reason`` and ``values``. Infinite numbers are written as the
        string ``"inf"`` so that the output stays valid JSON."""
        return {
            "id": self.id,
            "quantity": self.quantity,
            "value": _json_number(self.value),
            "terms": {k: _json_number(v) for k, v in self.terms.items()},
            "dominant_term": self.dominant_term,
            "conditions": [v.to_dict() for v in self.conditions],
            "all_conditions_hold": self.ok,
            "infinite_reason": self.infinite_reason,
            "values": {k: _json_number(v) for k, v in self.values.items()},
        }


def _json_number(x):
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


@dataclass(frozen=True)
class Theorem:
    """A theorem, corollary, lemma or remark of a paper, as data.

    Parameters
    ----------
    id : short stable identifier, ``paper.kindNumber[.variant]`` (e.g. ``dfedsam.thm4.1``).
    paper : the paper module's name (``dfedsgpsm``, ``dfedsam``, ``dfedcata``, ``dfedpgp``, ``dfedadmm``).
    kind : one of ``theorem``, ``corollary``, ``lemma``, ``remark``, ``proposition``.
    title : one line.
    quantity : the bounded quantity in words/ASCII math, e.g. ``min_{1<=t<=T} E||grad f(x_bar^t)||^2``;
        say whether it is a min, an average over t, or a bound on an auxiliary sequence.
    terms : named sympy terms; the bound is their sum.
    variables : every symbol that appears in terms, conditions or schedule.
    conditions : hypotheses as sympy relations.
    assumptions : names of the paper's assumptions the result needs.
    source : provenance.
    variant : ``printed`` (the paper's formula, the default) or a named reading/correction.
    variant_of : id of the printed formula this variant modifies.
    big_o : True when the paper states the bound only as O(.); the terms are then the O-expression taken
        literally (all hidden constants 1), and its value is a shape, not a number.
    parent, schedule : for a corollary, the theorem its schedule is substituted into and the schedule
        (symbol name -> sympy expression, e.g. ``eta = c/(L*sqrt(K*T))``).
    reference : values at which the card records a hand-computed value, and ``reference_value`` that value.
    notes : anything a user must know (a discrepancy, what the variant changes).
    """

    id: str
    paper: str
    kind: str
    title: str
    quantity: str
    terms: Mapping[str, sp.Expr]
    variables: tuple[Var, ...]
    source: Source
    conditions: tuple[Condition, ...] = ()
    assumptions: tuple[str, ...] = ()
    variant: str = "printed"
    variant_of: str | None = None
    big_o: bool = False
    parent: str | None = None
    schedule: Mapping[str, sp.Expr] = field(default_factory=dict)
    reference: Mapping[str, float] = field(default_factory=dict)
    reference_value: float | None = None
    notes: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {KINDS}")
        if not self.terms:
            raise ValueError(f"{self.id}: a theorem needs at least one term")
        known = {v.symbol for v in self.variables}
        names = [v.name for v in self.variables]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.id}: duplicate variable names in {names}")
        used = set()
        for expr in list(self.terms.values()) + [c.relation for c in self.conditions] + list(self.schedule.values()):
            used |= sp.sympify(expr).free_symbols
        stray = used - known
        if stray:
            raise ValueError(
                f"{self.id}: symbols {sorted(map(str, stray))} are used but not declared in variables "
                f"(declare them with the same Var as dfltheory.bounds.symbols, same assumptions)"
            )
        for name in self.schedule:
            if name not in names:
                raise ValueError(f"{self.id}: schedule sets {name!r}, which is not a variable")

    # ----------------------------------------------------------------- symbolic views
    @cached_property
    def symbols(self) -> dict[str, Var]:
        """Variables by name."""
        return {v.name: v for v in self.variables}

    @cached_property
    def bound(self) -> sp.Expr:
        """The bound: the sum of the terms."""
        return sp.Add(*self.terms.values())

    @cached_property
    def required(self) -> tuple[str, ...]:
        """Names of the variables the bound depends on, sorted."""
        return tuple(sorted(str(s) for s in self.bound.free_symbols))

    @cached_property
    def condition_symbols(self) -> tuple[str, ...]:
        names = set()
        for c in self.conditions:
            names |= {str(s) for s in c.relation.free_symbols}
        return tuple(sorted(names))

    def latex(self) -> str:
        return sp.latex(self.bound)

    # ----------------------------------------------------------------- numeric evaluation
    @cached_property
    def _bound_fn(self):
        args = [self.symbols[n].symbol for n in self.required]
        return sp.lambdify(args, self.bound, modules="numpy")

    @cached_property
    def _term_fns(self):
        args = [self.symbols[n].symbol for n in self.required]
        return {k: sp.lambdify(args, sp.sympify(e), modules="numpy") for k, e in self.terms.items()}

    @cached_property
    def _term_infinite_ends(self) -> dict[str, tuple]:
        """Per term, the symbols it involves that have a documented infinite end (lam = 1, q = 1)."""
        return {k: tuple(self.symbols[str(x)] for x in sp.sympify(e).free_symbols
                         if self.symbols[str(x)].infinite_at_high is not None) for k, e in self.terms.items()}

    def _parse(self, values: Mapping[str, object], need) -> tuple[dict, list[str], object]:
        """Validate names and domains; returns (values, reasons for +inf, mask of +inf entries)."""
        unknown = sorted(set(values) - set(self.symbols))
        if unknown:
            raise KeyError(
                f"{self.id}: unknown symbol(s) {unknown}; valid symbols are "
                + ", ".join(f"{n} ({v.meaning})" for n, v in sorted(self.symbols.items()))
            )
        missing = [n for n in need if n not in values]
        if missing:
            raise KeyError(
                f"{self.id}: missing value(s) for {missing}; the bound needs "
                + ", ".join(f"{n} ({self.symbols[n].meaning})" for n in need)
            )
        reasons, mask = [], False
        out = {}
        for name, val in values.items():
            var = self.symbols[name]
            arr = np.asarray(val, dtype=float)
            reason = var.validate(arr)
            if reason:
                reasons.append(reason)
                mask = mask | (arr == var.high)
            out[name] = arr
        return out, reasons, mask

    def evaluate(self, **values):
        """The bound at the given values (scalars or broadcastable numpy arrays).

        Values on a documented infinite end of a domain (``lam = 1``, ``q = 1``) give ``inf``; values
        outside a domain raise :class:`DomainError` naming the symbol and its domain.
        """
        vals, _, mask = self._parse(values, self.required)
        args = [vals[n] for n in self.required]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(self._bound_fn(*args), dtype=float)
        out = np.where(mask, np.inf, out) if mask is not False else out
        out = np.broadcast_to(out, np.broadcast_shapes(out.shape, *(np.shape(a) for a in args))).copy()
        bad = np.isnan(out)
        if np.any(bad):
            raise DomainError(f"{self.id}: the bound is not defined at {int(bad.sum())} of the given points")
        lost = np.isinf(out) & ~np.broadcast_to(np.asarray(mask, dtype=bool), out.shape)
        if np.any(lost):  # inf where no symbol sits on a documented infinite end: overflow or cancellation
            raise DomainError(f"{self.id}: the bound overflows to inf at {int(lost.sum())} of the given points, where "
                              "no value sits on an infinite end of its domain: the values are too extreme for "
                              "double precision (e.g. an effective step (1-(1-eta lam_pen)^K)/lam_pen that cancels "
                              "to 0 for eta*lam_pen below ~1e-15); move them towards moderate values")
        return float(out) if out.ndim == 0 else out

    def evaluate_terms(self, **values) -> dict:
        """Each named term at the given values: floats for scalars, arrays broadcast like :meth:`evaluate`."""
        vals, _, _ = self._parse(values, self.required)
        args = [vals[n] for n in self.required]
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        out = {}
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for k, f in self._term_fns.items():
                v = np.asarray(f(*args), dtype=float)
                for var in self._term_infinite_ends[k]:  # +inf where the term's own symbol sits on its end
                    v = np.where(vals[var.name] == var.high, np.inf, v)
                v = np.broadcast_to(v, shape)
                out[k] = float(v) if v.ndim == 0 else v.copy()
        return out

    def dominant_term(self, **values) -> tuple[str, float]:
        """The largest term at the given values, with its value."""
        terms = self.evaluate_terms(**values)
        name = max(terms, key=terms.get)
        return name, terms[name]

    # ----------------------------------------------------------------- conditions
    def check(self, **values) -> Check:
        """Evaluate the bound and give a verdict (holds / violated / undecidable, with margin) per condition."""
        vals, reasons, _ = self._parse(values, self.required)
        value = self.evaluate(**values)
        terms = self.evaluate_terms(**values)
        verdicts = tuple(self._verdict(c, vals) for c in self.conditions)
        return Check(
            id=self.id,
            quantity=self.quantity,
            value=float(value),
            terms=terms,
            conditions=verdicts,
            infinite_reason="; ".join(reasons) or None,
            values={k: float(v) for k, v in vals.items() if np.ndim(v) == 0},
        )

    def _verdict(self, cond: Condition, vals: Mapping[str, float]) -> Verdict:
        missing = tuple(n for n in cond.names if n not in vals)
        rel = sp.sstr(cond.relation)
        if missing:
            return Verdict(cond.text, rel, None, None, None, missing)
        margin, scale = cond.margin_at(vals)
        if math.isnan(margin):
            return Verdict(cond.text, rel, None, None, None)
        holds = margin > 0 if cond.strict else margin >= 0
        rel_margin = margin / scale if 0.0 < scale < math.inf else None
        return Verdict(cond.text, rel, bool(holds), margin, rel_margin)

    def valid(self, **values) -> np.ndarray | bool:
        """Where every condition holds, elementwise over broadcast array values: the points at which the bound
        is a bound. Conditions on symbols not given raise, as in :meth:`evaluate`."""
        vals, _, _ = self._parse(values, self.condition_symbols)
        ok = np.ones(np.broadcast_shapes(*(np.shape(v) for v in vals.values())), dtype=bool)
        for cond in self.conditions:
            ok &= cond.holds_at(vals)
        return bool(ok) if ok.ndim == 0 else ok

    def admissible(self, name: str, **values) -> sp.Set:
        """The set of values of ``name`` that satisfy its domain and every condition, the others fixed.

        Conditions that do not involve ``name`` are ignored here (see :meth:`check`); a condition that
        involves a variable not given is an error listing what is missing.
        """
        if name not in self.symbols:
            raise KeyError(f"{self.id}: unknown symbol {name!r}; valid symbols are {sorted(self.symbols)}")
        var = self.symbols[name]
        x = var.symbol
        others, _, _ = self._parse({k: v for k, v in values.items() if k != name}, ())
        subs = {self.symbols[k].symbol: sp.nsimplify(float(v), rational=True) for k, v in others.items()}
        region = var.interval()
        for cond in self.conditions:
            if x not in cond.relation.free_symbols:
                continue
            rel = cond.relation.subs(subs)
            left = sorted(str(s) for s in rel.free_symbols - {x})
            if left:
                raise KeyError(f"{self.id}: to solve for {name} give values for {left}")
            if rel in (sp.true, sp.false):
                region = region if rel == sp.true else sp.EmptySet
                continue
            solved = sp.solveset(rel, x, domain=sp.S.Reals)
            if solved.has(sp.ConditionSet):
                raise ValueError(f"{self.id}: the condition {sp.sstr(cond.relation)} ({cond.text}) cannot be solved "
                                 f"for {name} in closed form; check candidate values with check() "
                                 f"(`dfltheory check ... --set {name}=...`) instead")
            region = region.intersect(solved)
        if var.integer:
            region = region.intersect(sp.Range(int(max(var.low, 0)), 10**12))
        return region

    def largest(self, name: str, **values) -> float:
        """The largest float value of ``name`` at which every condition holds, the others fixed: the supremum
        of :meth:`admissible`, moved inward by the few ulps that rounding (or an open end) needs."""
        return self._extreme(name, values, +1)

    def smallest(self, name: str, **values) -> float:
        """The smallest float value of ``name`` at which every condition holds, the others fixed (see
        :meth:`largest`)."""
        return self._extreme(name, values, -1)

    def _extreme(self, name: str, values: Mapping[str, float], side: int) -> float:
        region = self.admissible(name, **values)
        if region is sp.EmptySet or region.is_empty:
            raise ValueError(f"{self.id}: no value of {name} satisfies every condition at {values}")
        x = float(region.sup if side > 0 else region.inf)
        if not math.isfinite(x):
            return x
        conds = [c for c in self.conditions if name in c.names]
        vals = {k: float(v) for k, v in values.items()}
        step = math.ulp(x) or 5e-324
        for _ in range(64):
            if all(bool(c.holds_at({**vals, name: x})) for c in conds):
                return x
            x -= side * step
            step *= 2
        raise ValueError(f"{self.id}: the {'largest' if side > 0 else 'smallest'} admissible {name} is not "
                         "representable in floating point")

    # ----------------------------------------------------------------- description
    def describe(self) -> str:
        """Human-readable statement: quantity, bound, terms, conditions, provenance."""
        lines = [f"{self.id}  ({self.kind}, variant: {self.variant})", f"  {self.title}"]
        if self.variant_of:
            lines.append(f"  variant of: {self.variant_of}")
        lines.append(f"  source: {self.source}")
        lines.append(f"  bounds: {self.quantity}" + ("   [stated as O(.), constants taken as 1]" if self.big_o else ""))
        lines.append("  bound = " + " + ".join(self.terms))
        for k, e in self.terms.items():
            lines.append(f"    {k:>14} = {sp.sstr(e)}")
        if self.schedule:
            lines.append(f"  schedule (substituted into {self.parent}):")
            for k, e in self.schedule.items():
                lines.append(f"    {k} = {sp.sstr(e)}")
        if self.conditions:
            lines.append("  conditions:")
            for c in self.conditions:
                lines.append(f"    {sp.sstr(c.relation):<40}  {c.text}" + (f"  [{c.source}]" if c.source else ""))
        if self.assumptions:
            lines.append("  assumptions: " + ", ".join(self.assumptions))
        lines.append("  symbols:")
        for v in self.variables:
            lines.append(f"    {v.name:>15}  {v.meaning}  {v.domain_text}")
        if self.notes:
            lines.append("  notes: " + self.notes)
        return "\n".join(lines)


def interval_text(region: sp.Set, name: str) -> str:
    """``name in (0, 0.002]`` for a sympy set of real values (unions joined by ``or``)."""
    def num(v):
        return "inf" if v in (sp.oo, -sp.oo) else f"{float(v):.4g}"

    parts = []
    for iv in region.args if isinstance(region, sp.Union) else [region]:
        if isinstance(iv, sp.Interval):
            lo = "(" if iv.left_open else "["
            hi = ")" if iv.right_open else "]"
            parts.append(f"{name} in {lo}{num(iv.start)}, {num(iv.end)}{hi}")
        else:
            parts.append(f"{name} in {iv}")
    return " or ".join(parts)
