"""The T* rows of a verification: T* (:mod:`dfltheory.verify.horizons`) of every target on every problem,
topology and constants family of a size, at the largest admissible step, at the step that minimises the bound, and
with the plan's tuned hyper-parameters; no training.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from dfltheory.verify.instances import Size, problem_instances, theorem_values
from dfltheory.verify.plans import PaperPlan, Target, plans
from dfltheory.verify.processes import pool_map


def horizon_rows(chosen: Mapping[str, Sequence[Target]], size: Size, workers: int = 1) -> dict[str, tuple]:
    """T* (:mod:`dfltheory.verify.horizons`) of every target of ``chosen`` ({paper: targets}) on every problem
    (the plan's and its ``informative_problems``), topology and constants family of the size: the smallest horizon
    at which the bound falls below the trivial level, at the largest admissible step and at the step that minimises
    the bound; no training, one (paper, problem) per call in ``workers`` processes. DFedCata's measured consensus
    error Xi is set to 0 (its most favourable value): T* of a bound with Xi is then a lower estimate. Returns
    {paper: (rows, {"<paper> on <problem>": constants table})}."""
    tasks = [(paper, name, tuple(t.theorem for t in tgts), size) for paper, tgts in chosen.items()
             for name in (plans()[paper].problem, *plans()[paper].informative_problems)]
    found = {paper: ([], {}) for paper in chosen}
    for (paper, name, _, _), (rows, table) in zip(tasks, pool_map(_problem_horizons, tasks, workers)):
        found[paper][0].extend(rows)
        found[paper][1][f"{paper} on {name}"] = table
    return found


def _horizon_rows(plan: PaperPlan, targets: Sequence[Target], size: Size) -> tuple[list[dict], list[dict]]:
    """The T* rows of one problem, and its constants table (:func:`dfltheory.verify.problems.constants_table`)."""
    from dfltheory.bounds import get
    from dfltheory.verify.horizons import RULES, horizon, tuned_horizon

    problem, insts = problem_instances(plan, size, targets[0], plan.topologies[: size.topologies], size.T)
    rows = []
    for target in targets:
        thm = get(target.theorem)
        for inst in insts:
            vals = theorem_values(thm, {**inst.values, "Xi": 0.0})
            level = inst.trivial[target.measure]
            row = {"theorem": target.theorem, "paper": plan.paper, "variant": thm.variant, "main": target.main,
                   "problem": plan.problem, "topology": inst.topo.label, "constants": inst.constants, "m": size.m,
                   "K": plan.K, "step_symbol": plan.step, "level": level.level, "trivial": level.to_dict(),
                   "note": "Xi = 0 (its most favourable value): T* is a lower estimate" if "Xi" in thm.symbols
                   else ""}
            for rule in RULES:
                row[rule] = (horizon(thm, plan.step, vals, level.level, rule) if not thm.big_o else
                             {"rule": rule, "T_star": None, "step": None, "bound": None, "vacuous": False,
                              "why": "stated as O(.): its constants are unknown, so no horizon is one from which it "
                                     "says something"})
            rows.append(row)
            # the tuned searches serve the informative runs: a size without them (quick) skips them
            if (target.main or target.theorem in plan.tuned) and plan.tune and not thm.big_o and size.reach:
                for name, span in plan.tune.items():  # the value that makes T* (best step) smallest, continuously
                    found = tuned_horizon(thm, plan.step, vals, level.level, name, span)
                    if found:
                        h, v = found
                        rows.append({**row, "tuned": {name: v}, "largest": {"rule": "largest", "T_star": None,
                                                                           "note": "not searched with tuned values"},
                                     "best": h, "note": f"tuned: {name} = {v:.4g} (chosen continuously in "
                                     f"[{span[0]:g}, {span[1]:g}], log scale; both steps free)"})
    return rows, insts[0].constants_table


def _problem_horizons(paper: str, problem: str, theorems: tuple[str, ...], size: Size) -> tuple[list[dict], list]:
    """The T* rows and constants table of a paper's targets (named by their theorems: a plan holds functions, which
    do not pass to a worker process) on one problem."""
    plan = plans()[paper]
    return _horizon_rows(replace(plan, problem=problem), [plan.target(t) for t in theorems], size)
