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

from dfltheory.bounds.solve import Solution, json_number, solve
from dfltheory.bounds.symbols import DomainError, Var

__all__ = ["Source", "Condition", "Verdict", "Check", "Theorem", "TAGS", "ORIGINS", "CONDITION_SETS", "DomainError",
           "Solution"]

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
        for name in ("seed", "lines", "equation", "card"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Source {name}={getattr(self, name)!r} must be a string: where the formula is "
                                 "printed, e.g. Source('Lian et al. 2017, NeurIPS', 'Theorem 1', 'eq. (5)')")
        if not self.seed or not self.lines:
            raise ValueError("a Source names the paper (seed) and where in it (lines), e.g. Source('Lian et al. "
                             "2017, NeurIPS', 'Theorem 1'); both are empty or missing")
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


#: Where a condition comes from: the paper states it (or it is the paper's condition rewritten under a
#: corollary's schedule, or a reading of a lost or ambiguous statement), or the toolkit derived it.
ORIGINS = {
    "paper": "stated by the paper (in a theorem, lemma or proof), or the paper's own condition under a schedule",
    "derived": "added by the toolkit: the paper's proof needs it, or it keeps the bound finite; `why` says which",
}

#: What ``conditions=`` selects in :meth:`Theorem.check`, :meth:`Theorem.solve` and the command line.
CONDITION_SETS = {"all": ("paper", "derived"), "paper": ("paper",)}


@dataclass(frozen=True)
class Condition:
    """A hypothesis of a theorem as a sympy relation, with the paper's wording and source.

    ``origin`` is ``"paper"`` or ``"derived"`` (see :data:`ORIGINS`); it defaults to ``"derived"`` for a source
    tagged DERIVED or CORRECTED and to ``"paper"`` otherwise. A derived condition says ``why`` it is there.
    """

    relation: sp.core.relational.Relational
    text: str
    source: Source | None = None
    origin: str = ""
    why: str = ""

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text:
            raise ValueError(f"condition {self.relation!r}: text={self.text!r} must be the paper's wording, a "
                             "non-empty string")
        if self.source is not None and not isinstance(self.source, Source):
            raise ValueError(f"condition {self.text!r}: source={self.source!r} must be a dfltheory.bounds.Source "
                             "(or None)")
        if not isinstance(self.why, str):
            raise ValueError(f"condition {self.text!r}: why={self.why!r} must be a string (why the toolkit adds it)")
        if isinstance(self.relation, sp.logic.boolalg.BooleanAtom):
            raise ValueError(
                f"condition {self.text!r} is trivially {self.relation} under the symbols' positivity assumptions; "
                "build it with evaluate=False (e.g. sp.StrictGreaterThan(alpha, 0, evaluate=False)) or drop it")
        if not self.origin:
            tag = self.source.tag if self.source else "SEED"
            object.__setattr__(self, "origin", "derived" if tag in ("DERIVED", "CORRECTED") else "paper")
        if not isinstance(self.relation, sp.core.relational.Relational):  # (=, != are refused by register_paper)
            raise ValueError(f"condition {self.text!r}: {self.relation!r} is not an inequality; give a sympy "
                             "relation <, <=, > or >= (e.g. sp.LessThan(eta, 1 / L, evaluate=False))")
        if self.origin not in ORIGINS:
            raise ValueError(f"condition {self.text!r}: origin {self.origin!r} is not one of {sorted(ORIGINS)}")
        if self.origin == "derived" and not self.why:
            raise ValueError(f"condition {self.text!r} is derived by the toolkit: say why (why='...')")

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
    origin: str = "paper"
    why: str = ""

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "relation": self.relation,
            "origin": self.origin,
            "why": self.why,
            "holds": self.holds,
            "margin": self.margin,
            "relative_margin": self.relative_margin,
            "missing": list(self.missing),
        }


@dataclass(frozen=True)
class Check:
    """Result of :meth:`Theorem.check`: the formula's value, its terms and a verdict per condition.

    ``conditions`` holds a verdict on every condition, the paper's and the derived ones (each verdict has its
    ``origin``); ``selected`` (``"all"`` or ``"paper"``) names those that decide :attr:`ok` and :attr:`is_bound`.
    Where a selected condition is violated the formula's ``value`` is **no bound** (it can even be negative):
    :attr:`is_bound` is False and :attr:`dominant_term` is None.
    """

    id: str
    quantity: str
    value: float
    terms: dict[str, float]
    conditions: tuple[Verdict, ...]
    infinite_reason: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    selected: str = "all"

    def _chosen(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.conditions if v.origin in CONDITION_SETS[self.selected])

    @property
    def ok(self) -> bool:
        """True when every selected condition holds (undecidable ones count as not holding)."""
        return all(v.holds is True for v in self._chosen())

    @property
    def paper_ok(self) -> bool:
        """True when every condition the paper states holds."""
        return all(v.holds is True for v in self.conditions if v.origin == "paper")

    @property
    def all_ok(self) -> bool:
        """True when every condition, the paper's and the derived ones, holds."""
        return all(v.holds is True for v in self.conditions)

    @property
    def violated(self) -> tuple[Verdict, ...]:
        """The selected conditions that fail."""
        return tuple(v for v in self._chosen() if v.holds is False)

    @property
    def undecided(self) -> tuple[Verdict, ...]:
        """The selected conditions that cannot be decided (a value is missing or undefined)."""
        return tuple(v for v in self._chosen() if v.holds is None)

    @property
    def is_bound(self) -> bool:
        """False where a selected condition is violated: the value is then no bound on the quantity."""
        return not self.violated

    @property
    def dominant_term(self) -> str | None:
        """The largest term, where the value is a bound; None where it is not (or no term is defined)."""
        defined = {k: v for k, v in self.terms.items() if not np.isnan(v)}
        return max(defined, key=defined.get) if defined and self.is_bound else None

    def summary(self) -> str:
        """One line: whether the value is a bound, under the paper's conditions and under all of them."""
        def verdict(group: tuple[Verdict, ...]) -> str:
            bad = [v for v in group if v.holds is False]
            unknown = [v for v in group if v.holds is None]
            if bad:
                return "violated (" + "; ".join(v.relation for v in bad) + ")"
            if unknown:
                return "undecided (give " + ", ".join(sorted({m for v in unknown for m in v.missing})) + ")"
            return "all hold" if group else "none"

        paper = tuple(v for v in self.conditions if v.origin == "paper")
        derived = tuple(v for v in self.conditions if v.origin == "derived")
        return f"paper's conditions: {verdict(paper)}; derived conditions: {verdict(derived)}"

    def to_dict(self) -> dict:
        """JSON-ready dict with the stable keys ``id``, ``quantity``, ``value`` (the formula's value, a bound only
        where ``is_bound``), ``is_bound``, ``terms``, ``dominant_term`` (null where no bound), ``conditions``
        (each ``text``, ``relation``, ``origin``, ``why``, ``holds``, ``margin``, ``relative_margin``,
        ``missing``), ``conditions_used`` (``all`` or ``paper``), ``paper_conditions_hold``,
        ``all_conditions_hold``, ``infinite_reason`` and ``values``. Infinite numbers are written as the
        string ``"inf"`` so that the output stays valid JSON."""
        return {
            "id": self.id,
            "quantity": self.quantity,
            "value": json_number(self.value),
            "is_bound": self.is_bound,
            "terms": {k: json_number(v) for k, v in self.terms.items()},
            "dominant_term": self.dominant_term,
            "conditions": [v.to_dict() for v in self.conditions],
            "conditions_used": self.selected,
            "paper_conditions_hold": self.paper_ok,
            "all_conditions_hold": self.all_ok,
            "infinite_reason": self.infinite_reason,
            "values": {k: json_number(v) for k, v in self.values.items()},
        }


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
        self._check_types()
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

    def _check_types(self) -> None:
        """Each field of the type the docstring gives, or a ValueError naming the field and the fix (a plugin's
        theorem is checked here before anything reads it)."""
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"a theorem's id must be a string '<paper>.<name>', got {self.id!r}")
        where = self.id
        for name in ("paper", "title", "quantity", "variant", "notes"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{where}: {name}={getattr(self, name)!r} must be a string")
        for name in ("parent", "variant_of"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{where}: {name}={getattr(self, name)!r} must be a theorem id (a string) or None")
        for name in ("terms", "schedule", "reference"):
            value = getattr(self, name)
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise ValueError(f"{where}: {name} must be a dict name -> sympy expression, got {value!r}")
        for name, expr in {**self.terms, **self.schedule}.items():
            try:
                sp.sympify(expr, strict=True)
            except (sp.SympifyError, TypeError):
                raise ValueError(f"{where}: {name} = {expr!r} is not a sympy expression; build it from the "
                                 "variables' symbols (COMMON['eta'].symbol, ...)") from None
        for name, kind, example in (("variables", Var, "COMMON['eta']"), ("conditions", Condition,
                                                                         "Condition(sp.LessThan(eta, 1 / L), ...)"),
                                    ("assumptions", str, "'f is L-smooth'")):
            value = getattr(self, name)
            if not isinstance(value, (tuple, list)) or not all(isinstance(v, kind) for v in value):
                raise ValueError(f"{where}: {name} must be a tuple of {kind.__name__} (e.g. ({example},)), got "
                                 f"{value!r}")
        if not isinstance(self.source, Source):
            raise ValueError(f"{where}: source={self.source!r} must be a dfltheory.bounds.Source naming where the "
                             "result is printed, e.g. Source('Lian et al. 2017, NeurIPS', 'Theorem 1')")
        if not isinstance(self.big_o, bool):
            raise ValueError(f"{where}: big_o={self.big_o!r} must be True or False")

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
        """Validate names and domains, then that ``need`` is given (a value given wrong is reported as itself, not
        as the others missing); returns (values, reasons for +inf, mask of +inf entries)."""
        unknown = sorted(set(values) - set(self.symbols))
        if unknown:
            raise KeyError(
                f"{self.id}: unknown symbol(s) {unknown}; valid symbols are "
                + ", ".join(f"{n} ({v.meaning})" for n, v in sorted(self.symbols.items()))
            )
        reasons, mask = [], False
        out = {}
        for name, val in values.items():
            var = self.symbols[name]
            try:
                if val is None:
                    raise TypeError
                arr = np.asarray(val, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"{self.id}: {name} = {val!r} is not a number; give a number, or a list or numpy "
                                 f"array of numbers ({name} is {var.meaning}, domain {var.domain_text})") from None
            reason = var.validate(arr)
            if reason:
                reasons.append(reason)
                mask = mask | (arr == var.high)
            out[name] = arr
        missing = [n for n in need if n not in values]
        if missing:
            raise KeyError(
                f"{self.id}: missing value(s) for {missing}; the bound needs "
                + ", ".join(f"{n} ({self.symbols[n].meaning})" for n in need)
            )
        return out, reasons, mask

    def validate(self, **values) -> None:
        """Raise, as :meth:`evaluate` would, for an unknown symbol or a value outside its symbol's domain (NaN and
        infinities included); no value is required."""
        self._parse(values, ())

    def evaluate(self, **values):
        """The bound at the given values (scalars or broadcastable numpy arrays).

        Values on a documented infinite end of a domain (``lam = 1``, ``q = 1``) give ``inf``; values
        outside a domain raise :class:`DomainError` naming the symbol and its domain.
        """
        vals, _, mask = self._parse(values, self.required)
        return self._bound_of(vals, mask)

    def _bound_of(self, vals: Mapping[str, np.ndarray], mask):
        """:meth:`evaluate` at values already parsed (``mask``: where one sits on a documented infinite end)."""
        args = [vals[n] for n in self.required]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(self._bound_fn(*args), dtype=float)
        out = np.where(mask, np.inf, out) if mask is not False else out
        out = np.broadcast_to(out, np.broadcast_shapes(out.shape, *(np.shape(a) for a in args))).copy()
        bad = np.isnan(out)
        if np.any(bad):  # every value is in its domain: an inf - inf or 0 * inf of overflowing terms
            raise DomainError(f"{self.id}: the bound is not defined (NaN) at {int(bad.sum())} of the given points: "
                              "values this extreme overflow double precision (inf - inf between its terms); move them "
                              "towards moderate values")
        lost = np.isinf(out) & ~np.broadcast_to(np.asarray(mask, dtype=bool), out.shape)
        if np.any(lost):  # inf where no symbol sits on a documented infinite end: overflow or cancellation
            raise DomainError(f"{self.id}: the bound overflows to inf at {int(lost.sum())} of the given points, where "
                              "no value sits on an infinite end of its domain: the values are too extreme for "
                              "double precision (e.g. an effective step (1-(1-eta lam_pen)^K)/lam_pen that cancels "
                              "to 0 for eta*lam_pen below ~1e-15); move them towards moderate values")
        return float(out) if out.ndim == 0 else out

    def partial(self, conditions: str = "all", **fixed) -> "Partial":
        """The bound and where it is a bound (:meth:`evaluate`, :meth:`valid`) as a function of the values not in
        ``fixed``, which are validated once: a search over a step or a horizon (:mod:`dfltheory.verify.horizons`
        evaluates a bound ~10^5 times with ~25 values of which two move) validates only the two."""
        return Partial(self, conditions, fixed)

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
    def selected_conditions(self, conditions: str = "all") -> tuple[Condition, ...]:
        """The conditions ``conditions`` selects: ``"all"`` (the paper's and the toolkit's derived ones) or
        ``"paper"`` (the paper's alone)."""
        if conditions not in CONDITION_SETS:
            raise ValueError(f"conditions={conditions!r} is not one of {sorted(CONDITION_SETS)}: 'paper' uses the "
                             "paper's own conditions, 'all' adds those the toolkit derived")
        return tuple(c for c in self.conditions if c.origin in CONDITION_SETS[conditions])

    def check(self, conditions: str = "all", **values) -> Check:
        """Evaluate the bound at one point and give a verdict (holds / violated / undecidable, with margin) on
        every condition, the paper's and the derived ones; ``conditions`` (``"all"`` or ``"paper"``) selects
        those that decide whether the value is a bound (:attr:`Check.is_bound`). Arrays are refused: use
        :meth:`evaluate`, :meth:`evaluate_terms` and :meth:`valid` on grids."""
        self.selected_conditions(conditions)
        shaped = sorted(k for k, v in values.items() if np.ndim(v) != 0)
        if shaped:
            raise ValueError(f"{self.id}: check() decides the conditions at one point, but {shaped} are arrays; "
                             "give one number each, or use evaluate(), evaluate_terms() and valid(), which take "
                             "arrays elementwise")
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
            values={k: float(v) for k, v in vals.items()},
            selected=conditions,
        )

    def _verdict(self, cond: Condition, vals: Mapping[str, float]) -> Verdict:
        missing = tuple(n for n in cond.names if n not in vals)
        rel = sp.sstr(cond.relation)
        tags = dict(origin=cond.origin, why=cond.why)
        if missing:
            return Verdict(cond.text, rel, None, None, None, missing, **tags)
        margin, scale = cond.margin_at(vals)
        if math.isnan(margin):
            return Verdict(cond.text, rel, None, None, None, **tags)
        holds = margin > 0 if cond.strict else margin >= 0
        rel_margin = margin / scale if 0.0 < scale < math.inf else None
        return Verdict(cond.text, rel, bool(holds), margin, rel_margin, **tags)

    def valid(self, conditions: str = "all", **values) -> np.ndarray | bool:
        """Where every selected condition holds, elementwise over broadcast array values: the points at which
        the bound is a bound. Conditions on symbols not given raise, as in :meth:`evaluate`."""
        chosen = self.selected_conditions(conditions)
        names = sorted({n for c in chosen for n in c.names})
        vals, _, _ = self._parse(values, names)
        return self._valid_of(vals, chosen)

    @staticmethod
    def _valid_of(vals: Mapping[str, np.ndarray], chosen) -> np.ndarray | bool:
        """:meth:`valid` at values already parsed, for the conditions ``chosen``."""
        ok = np.ones(np.broadcast_shapes(*(np.shape(v) for v in vals.values())), dtype=bool)
        for cond in chosen:
            ok &= cond.holds_at(vals)
        return bool(ok) if ok.ndim == 0 else ok

    def solve(self, name: str, conditions: str = "all", symbolic: bool = True, **values) -> Solution:
        """The values of ``name`` in its domain at which every selected condition that involves it holds, the
        others fixed: a :class:`~dfltheory.bounds.solve.Solution` with float intervals, the largest and smallest
        admissible value, the exact set where sympy's answer passed the numeric check, and the method used.

        sympy's answer is never taken unverified (see :mod:`dfltheory.bounds.solve`); ``symbolic=False`` does
        not ask sympy (the numeric set alone: for many solves of which only the floats are used). Conditions that
        do not involve ``name`` are ignored here (see :meth:`check`); a condition that involves a symbol not given is
        an error listing what is missing.
        """
        if name not in self.symbols:
            raise KeyError(f"{self.id}: unknown symbol {name!r}; valid symbols are {sorted(self.symbols)}")
        others, _, _ = self._parse({k: v for k, v in values.items() if k != name}, ())
        shaped = sorted(k for k, v in others.items() if np.ndim(v) != 0)
        if shaped:
            raise ValueError(f"{self.id}: solving for {name} needs one number for each other symbol; {shaped} "
                             "are arrays")
        chosen = [c for c in self.selected_conditions(conditions) if name in c.names]
        left = sorted({n for c in chosen for n in c.names} - {name} - set(others))
        if left:
            raise KeyError(f"{self.id}: to solve for {name} give values for {left}")
        return solve(self.symbols[name], chosen, {k: float(v) for k, v in others.items()}, symbolic)

    def admissible(self, name: str, conditions: str = "all", **values) -> sp.Set:
        """The admissible set of ``name`` as a sympy set (see :meth:`solve`, which also says how it was found)."""
        return self.solve(name, conditions, **values).as_set()

    def largest(self, name: str, conditions: str = "all", **values) -> float:
        """The largest float value of ``name`` at which every selected condition holds, the others fixed (the
        next float above it fails one, unless it is the domain's end); raises where none is admissible."""
        return self._extreme(name, conditions, values, +1)

    def smallest(self, name: str, conditions: str = "all", **values) -> float:
        """The smallest float value of ``name`` at which every selected condition holds, the others fixed (see
        :meth:`largest`)."""
        return self._extreme(name, conditions, values, -1)

    def _extreme(self, name: str, conditions: str, values: Mapping[str, float], side: int) -> float:
        sol = self.solve(name, conditions, **values)
        if sol.empty:
            raise ValueError(f"{self.id}: no value of {name} satisfies every condition "
                             f"({'the paper' if conditions == 'paper' else 'paper and derived'}) at "
                             + ", ".join(f"{k}={v:g}" for k, v in values.items()))
        if side < 0 and not sol.intervals[0][2]:
            raise ValueError(f"{self.id}: {name} is admissible down to the open end {sol.intervals[0][0]:g} of its "
                             "domain, so there is no smallest admissible value")
        return sol.largest if side > 0 else sol.smallest

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


class Partial:
    """:meth:`Theorem.partial`: ``f(**free)`` -> (bound, valid), the values of :meth:`Theorem.evaluate` (+inf on a
    documented infinite end; :class:`DomainError` where the bound is NaN or overflows) and of
    :meth:`Theorem.valid` at ``fixed`` and ``free`` together, with ``fixed`` validated when the function is made."""

    def __init__(self, thm: Theorem, conditions: str, fixed: Mapping[str, object]):
        self.thm, self.conditions = thm, thm.selected_conditions(conditions)
        self.fixed, _, self.mask = thm._parse(fixed, ())

    def __call__(self, **free) -> tuple[np.ndarray | float, np.ndarray | bool]:
        thm = self.thm
        given, _, mask = thm._parse(free, ())
        vals = {**self.fixed, **given}
        needed = {*thm.required, *(n for c in self.conditions for n in c.names)}
        if not needed <= set(vals):
            thm._parse(vals, sorted(needed))  # raises, naming the values missing, as evaluate and valid do
        mask = np.logical_or(self.mask, mask) if (self.mask is not False or mask is not False) else False
        return thm._bound_of(vals, mask), thm._valid_of(vals, self.conditions)
