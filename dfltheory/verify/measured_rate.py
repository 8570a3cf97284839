"""The rate in T measured under a corollary's schedule (:func:`rate`): the measured quantity and the parent
theorem's bound over horizons, and their slopes in log T against the stated rate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from dfltheory.empirical.sweep import RunCache
from dfltheory.verify import measures as M
from dfltheory.verify.holds_grid import Job, largest_step
from dfltheory.verify.instances import Size, problem_instances, run_config
from dfltheory.verify.judging import verdict
from dfltheory.verify.plans import PaperPlan


def rate(plan: PaperPlan, size: Size, cache: RunCache, progress: Callable | None = None, workers: int = 1,
         device: str = "cpu") -> dict | None:
    """The rate in T under the corollary's schedule: for each horizon, the schedule's constants fixed so that at the
    smallest horizon the step is the largest admissible one (and rho, lambda the plan's values); the measured
    quantity at T against the parent theorem's bound under the schedule; least-squares slopes in log T, and the
    stated rate of the corollary (:func:`dfltheory.bounds.rates.verify`)."""
    import sympy as sp

    from dfltheory.bounds import get
    from dfltheory.bounds.rates import verify as rate_report

    if not plan.rate or len(size.horizons) < 2:
        return None
    cor = get(plan.rate)
    parent = get(cor.parent)
    target = next((t for t in plan.targets if t.theorem == parent.id), None) or next(t for t in plan.targets
                                                                                     if t.main)
    topo = plan.topologies[0]
    T0 = min(size.horizons)
    problem, insts = problem_instances(plan, size, target, (topo,), T0)
    inst = insts[-1]  # push-sum: the measured constants
    step, _ = largest_step(plan, (replace(target, theorem=parent.id),), [inst])
    if step is None:
        return {"paper": plan.paper, "theorem": cor.id, "parent": parent.id, "note": "no admissible step at "
                f"T = {T0} under {parent.id}'s conditions", "rows": []}
    base = {**inst.values, plan.step: step}
    # each scheduled symbol's free constant (c, r, c_lam) matches the base value at T0; a constant fixed by an
    # earlier symbol (DFedPGP's eta_v shares c with eta_u) is reused
    fixed: dict[str, float] = {}

    def at(expr, values):  # the expression with every symbol named in values substituted
        return expr.subs({s: values[s.name] for s in expr.free_symbols if s.name in values})

    for name, expr in cor.schedule.items():
        free = [s for s in expr.free_symbols if s.name not in base and s.name not in fixed and s.name != "T"]
        if len(free) == 1 and name in base:
            fixed[free[0].name] = base[name] / float(at(expr, {**base, **fixed, free[0].name: 1.0, "T": T0}))
    jobs, rows = [], []
    for horizon in size.horizons:
        scheduled = {name: float(at(expr, {**base, **fixed, "T": horizon})) for name, expr in cor.schedule.items()}
        vals = {**base, **scheduled, "T": horizon}
        cfgs = tuple(run_config(plan, problem, target, topo, vals, vals[plan.step], plan.K, horizon, size, s, device)
                     for s in range(size.seeds))
        jobs.append((horizon, vals, Job(cfgs)))
    cache.fill([c for _, _, job in jobs for c in job.cfgs], workers, progress)
    for horizon, vals, job in jobs:
        runs = [cache.get(cfg) for cfg in job.cfgs]
        if any(status != "completed" for _, status in runs):
            rows.append({"T": horizon, "diverged": True, "command": job.command})
            continue
        terms = np.stack([M.per_round(target.measure, r, vals) for r, _ in runs])
        est = M.expectation(target.measure, terms)
        v = verdict(parent, est, vals)
        rows.append({"T": horizon, "schedule": {k: vals[k] for k in cor.schedule}, "measured": est.mean,
                     "ci": [est.low, est.high], "bound": v.get("formula_value", v["bound"]),
                     "conditions_hold": v["all_conditions_hold"], "failed": v["failed"], "verdict": v["verdict"],
                     "command": job.command})
    def slope(key: str, keep) -> float | None:  # least squares in log-log over the rows that qualify
        pts = [(r["T"], r[key]) for r in rows if keep(r)]
        if len(pts) < 2:
            return None
        T_, y = np.log(np.array(pts, dtype=float)).T
        return float(np.polyfit(T_, y, 1)[0])

    slopes = {"measured": slope("measured", lambda r: r.get("measured", 0) > 0),
              "bound": slope("bound", lambda r: r.get("conditions_hold") and 0 < r["bound"] < math.inf)}
    report = rate_report(cor)
    return {"paper": plan.paper, "theorem": cor.id, "parent": parent.id, "topology": topo.label,
            "constants": inst.constants, "schedule": {k: sp.sstr(v) for k, v in cor.schedule.items()},
            "schedule_constants": fixed, "horizons": list(size.horizons), "rows": rows,
            "measured_slope": slopes["measured"], "bound_slope": slopes["bound"],
            "stated_slope": float(report.stated_rate), "derived_slope": float(report.derived_rate)}
