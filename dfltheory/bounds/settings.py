"""The papers' own experimental settings, checked against the conditions of their own theorems.

A setting fixes the hyper-parameters a paper's experiments used (card section 8); the problem constants
(L, sigma's, ...) stay explicit inputs. :func:`violations` reports, for each condition of the theorem, the
range of one free constant (by default L) on which the paper's own setting breaks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy as sp

from dfltheory.bounds.catalog import get
from dfltheory.bounds.solve import solve
from dfltheory.bounds.theorem import Check, Condition, Source

__all__ = ["ExperimentSetting", "violations"]


@dataclass(frozen=True)
class ExperimentSetting:
    """Hyper-parameters of one of a paper's experiments, tied to the theorem whose conditions they should meet.

    ``findings`` are what the toolkit found about the setting itself (e.g. DFedADMM's eta_l = lambda, which makes
    the local steps restart), printed by ``dfltheory bounds experiments``."""

    id: str
    paper: str
    theorem: str
    description: str
    values: Mapping[str, float]
    source: Source
    topology: str | None = None
    notes: str = ""
    free: tuple[str, ...] = field(default=("L",))
    findings: tuple[str, ...] = ()

    def check(self, **constants) -> Check:
        """The theorem's check at the setting's values plus the given constants."""
        return get(self.theorem).check(**{**self.values, **constants})


def violations(setting: ExperimentSetting, name: str = "L", **constants) -> list[dict]:
    """For each condition that involves ``name``: the set of ``name`` values on which the setting violates it.

    Other free symbols of a condition must be given in ``constants``; conditions that do not involve
    ``name`` are decided directly (``holds`` True/False, or None when values are missing).
    """
    thm = get(setting.theorem)
    if name not in thm.symbols:
        raise ValueError(f"--free {name}: {name!r} is not a symbol of {thm.id}; choose one of "
                         + ", ".join(f"{n} ({v.meaning})" for n, v in sorted(thm.symbols.items())))
    var = thm.symbols[name]
    known = {k: float(v) for k, v in {**setting.values, **constants}.items() if k in thm.symbols and k != name}
    subs = {thm.symbols[k].symbol: sp.Float(v) for k, v in known.items()}
    out = []
    for cond in thm.conditions:
        rel = cond.relation.subs(subs)  # sympy may decide it for every value of what is left (positivity)
        missing = [] if rel in (sp.true, sp.false) else sorted(set(cond.names) - set(known) - {name})
        entry = {"text": cond.text, "relation": sp.sstr(cond.relation), "origin": cond.origin, "missing": missing}
        if missing:
            entry.update(holds=None, violated_for=None)
        elif name not in cond.names or rel in (sp.true, sp.false):
            holds = bool(rel) if rel in (sp.true, sp.false) else bool(cond.holds_at(known))
            entry.update(holds=holds, violated_for=None if holds else f"all {name}")
        else:
            broken = Condition(cond.relation.negated, cond.text, cond.source, cond.origin, cond.why)
            bad = solve(var, [broken], {k: known[k] for k in cond.names if k != name})
            entry.update(holds=None if not bad.empty else True, violated_for=None if bad.empty else bad.text())
        out.append(entry)
    return out
