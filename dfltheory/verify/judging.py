"""Judging a theorem's bound against a measured quantity: the verdict (:func:`verdict`: ``holds``, ``violated``,
``inconclusive``, ``vacuous`` or ``conditions fail``; the names of :data:`VERDICTS`), the trivial level it is read
against (:func:`trivial_fields`) and the evidence every verdict carries (:func:`judged_verdict`), for the bound-holds
grid (:mod:`dfltheory.verify.holds_grid`) and the informative runs (:func:`informative_verdicts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from dfltheory.verify import measures as M
from dfltheory.verify.instances import theorem_values
from dfltheory.verify.mutations import c_star, shares


#: Verdict names, strongest first.
VERDICTS = ("violated", "inconclusive", "holds", "vacuous", "conditions fail", "diverged", "not testable")


def verdict(thm, est: M.Estimate, values: Mapping[str, float]) -> dict:
    """Compare a theorem's bound at ``values`` with the estimate (the names: :mod:`dfltheory.verify.holds`; the keys:
    :class:`dfltheory.verify.records.Verdict`)."""
    from dfltheory.verify.records import Verdict

    check = thm.check("all", **theorem_values(thm, values))
    out = {"bound": check.value, "dominant": check.dominant_term, "paper_conditions_hold": check.paper_ok,
           "all_conditions_hold": check.all_ok, "failed": [v.text for v in check.violated + check.undecided]}
    if not check.all_ok:  # the formula's value is then no bound
        out.update(bound=None, formula_value=check.value, verdict="conditions fail")
        if "T" in thm.symbols and any("T" in c.names for c in thm.conditions):
            try:
                T_min = thm.smallest("T", "all", **{k: v for k, v in theorem_values(thm, values).items() if k != "T"})
                out["note"] = f"the conditions hold from T = {math.ceil(T_min)} rounds on"
            except ValueError:
                out["note"] = "no horizon T meets the conditions"
        return Verdict.from_dict(out).to_dict()
    if not math.isfinite(check.value):
        return Verdict.from_dict({**out, "verdict": "vacuous"}).to_dict()
    if check.value >= est.high:
        name = "holds"
    elif check.value < est.low:
        name = "violated"
    else:
        name = "inconclusive"
    ratio = check.value / est.mean if est.mean > 0 else math.inf
    return Verdict.from_dict({**out, "verdict": name, "ratio": ratio}).to_dict()


#: the label of a verdict on a theorem stated as O(.) (the catalog takes its constants as 1): it bounds nothing
BIG_O = "O(.) statement, its constants taken as 1: no bound to hold or fail, indicative only"


def trivial_fields(level, terms: np.ndarray, v: Mapping, big_o: bool = False) -> dict:
    """The trivial level of a verdict (:mod:`dfltheory.verify.trivial`; the runs' own largest per-round quantity
    joins the numeric supremum), whether it is informative (the bound below the smaller level) and its label. A
    theorem stated as O(.) (``big_o``) is never informative: its hidden constants are unknown."""
    from dfltheory.verify.records import Verdict
    from dfltheory.verify.trivial import trajectory_max

    level = level.with_numeric(trajectory_max(terms))
    bound = v.get("bound")
    if big_o:
        return Verdict(trivial=level.to_dict(), informative=False, big_o=True, label=BIG_O).to_dict()
    informative = v.get("verdict") in ("holds", "violated", "inconclusive") and level.informative(bound)
    return Verdict(trivial=level.to_dict(), informative=informative,
                   label=level.label(bound) if bound is not None else "no bound").to_dict()


def functional(measure: str, proof: bool = False) -> str:
    """The functional of the trajectory a verdict measures, labelled where the printed statement and the proof
    differ (issue 33 item 1)."""
    text = M.MEASURES[measure][1]
    return f"{text} (the proof's left-hand side)" if proof else text


def judged_verdict(thm, est, values: Mapping[str, float], level, terms: np.ndarray, measure: str,
                   is_proof: bool) -> dict:
    """:func:`verdict` of ``thm`` on the estimate ``est`` of functional ``measure`` with its trivial level, and the
    evidence every verdict carries: the measured mean, interval and estimate, the functional judged, the terms'
    shares of the bound and ``c_star`` by training (bound / the interval's lower end). The one place the bound-holds
    grid and the informative runs judge a theorem."""
    from dfltheory.verify.records import Verdict

    v = verdict(thm, est, values)
    v.update(trivial_fields(level, terms, v, thm.big_o))
    full = {**v, "measured": est.mean, "ci": [est.low, est.high], "estimate": est.to_dict(),
            "functional": functional(measure, is_proof),
            "term_shares": shares(thm, values) if v.get("bound") is not None else {},
            "c_star": {**c_star(v.get("bound"), {"training": est.low}), "lower": est.low}}
    return Verdict.from_dict(full).to_dict()


def informative_verdicts(thms: Sequence, terms: np.ndarray, measure: str, values: Mapping[str, float], step: str,
                         eta: float, T_run: int, level, proof: Mapping[str, str] | None = None) -> list[dict]:
    """The verdict of each theorem of ``thms`` on the replicated runs' ``terms`` at horizon ``T_run`` with step
    ``eta`` (:func:`verdict` with the trivial level), on the functional ``measure`` of the printed statement and,
    for a theorem of ``proof`` (theorem -> measure), also on the proof's functional (DFedSAM: the printed min over t,
    the proof's average; both use the per-round ||grad f(x_bar^t)||^2 and its trivial level). Each carries
    ``functional``, ``term_shares`` and ``c_star`` by training (bound / the interval's lower end); the curve is the
    running functional and the bound over T in [T_run / 10, T_run] at the step fixed. (The slopes of issue 21 are
    dropped, issue 33 item 5: a running average's -1 slope is a transient over T, not a rate; ``at_end`` is ``at``.)"""
    out = []
    Ts = np.unique(np.geomspace(max(T_run // 10, 1), T_run, 24).astype(int))
    for thm in thms:
        vals = {**theorem_values(thm, values), step: eta}
        judged = [(measure, False)] + ([(proof[thm.id], True)] if proof and thm.id in proof else [])
        for name, is_proof in judged:
            est = M.expectation(name, terms, T_run)
            at_T = {**judged_verdict(thm, est, {**vals, "T": T_run}, level, terms[:, :T_run], name, is_proof),
                    "T": T_run}
            running = M.running(name, terms[:, :T_run].mean(0))
            bound = np.asarray(thm.evaluate(**{**vals, "T": Ts.astype(float)}), dtype=float) * np.ones(len(Ts))
            ok = np.asarray(thm.valid("all", **{**vals, "T": Ts.astype(float)})) & np.isfinite(bound)
            out.append({"theorem": thm.id, "variant": thm.variant + (" (judged on the proof's functional)"
                                                                     if is_proof else ""),
                        "functional": at_T["functional"], "proof_functional": is_proof, "at": at_T, "at_end": at_T,
                        "measured_slope": None, "bound_slope": None,
                        "slope_note": "dropped: a running average's slope over T is a transient, not a rate",
                        "curve": {"T": Ts.tolist(), "measured": running[Ts - 1].tolist(),
                                  "bound": np.where(ok, bound, np.nan).tolist()}})
    return out


def informative_at(thm, values: Mapping[str, float], level) -> bool:
    """Whether ``thm``'s conditions hold at ``values`` and its bound there is finite and below the trivial level."""
    check = thm.check("all", **values)
    return bool(check.all_ok and check.value is not None and math.isfinite(check.value)
                and level.informative(check.value))
