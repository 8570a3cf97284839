"""Informative runs (issue 21 item 3, issue 33 item 2): each main theorem trained beyond T*, where its bound says
something, on the cheapest candidate instances and steps (:func:`informative`); the candidate where bound / measured
is smallest is kept (:func:`finish_informative`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from dfltheory.bounds.rates import TOPOLOGY_SYMBOLS
from dfltheory.verify.instances import SIZES, Size, problem_instances, run_config, theorem_values
from dfltheory.verify.judging import informative_at, informative_verdicts
from dfltheory.verify.plans import PaperPlan, Target


#: the steps an informative candidate trains, as fractions of the step that minimises the bound at T_run (issue 33
#: item 5): the bound's optimisation term grows as 1/step, the measured average of ||grad f||^2 about as fast while
#: the descent completes, and the other terms shrink, so bound / measured falls with the step (DFedSGPSM: 2.93 at the
#: bound's best step, 1.94 at half of it; DFedCata 12.7 and 8.76), until the bound reaches the trivial level
STEP_FRACTIONS = (1.0, 0.5, 0.25)


def informative(plan: PaperPlan, targets: Sequence[Target], size: Size, rows: Sequence[Mapping], root: Path,
                device: str = "cpu", size_name: str = "default") -> list[dict]:
    """Informative runs of each main theorem of ``targets`` (issue 21 item 3, issue 33 item 2). Candidate instances:
    every (problem, topology, constants) whose T* (best step; a tuned row where the plan tunes) gives
    T_run = 2 T* <= ``size.reach``, the cheapest first (ties: the plan's heterogeneous problem, the sparser
    topology), within ``size.budget`` rounds in all (the first always runs). Each instance trains ``size.seeds``
    copies as one engine for T_run rounds at the step that minimises the main bound at T_run (strictly inside an
    open end) and at the smaller :data:`STEP_FRACTIONS` of it where the bound stays informative (each such
    (instance, step) pair is a candidate); :func:`finish_informative` keeps the pair where bound / measured (the
    printed functional) is smallest: the sharpest test. A main theorem without a T* or whose every T_run exceeds
    the reach gets an entry saying so. An entry to run holds ``candidates``, each with ``job`` (the arguments of its
    :func:`dfltheory.verify.replicated.replicated_terms` call) and ``judge`` (those of its
    :func:`dfltheory.verify.judging.informative_verdicts` call but the terms)."""
    from dfltheory.bounds import get
    from dfltheory.verify.horizons import at

    if not size.reach:
        return []
    setups = {}  # problem name -> (problem, instances)
    out = []
    order = [t.label for t in plan.topologies]
    for main in [t for t in targets if t.main]:
        kin = {t.theorem for t in targets if (t.algo, t.measure, t.hp) == (main.algo, main.measure, main.hp)}
        cands = [r for r in rows if r["theorem"] == main.theorem and r["best"]["T_star"]]
        cands = cands or [r for r in rows if r["theorem"] in kin and r["best"]["T_star"]]  # a variant's T*
        base = {"theorem": main.theorem, "paper": plan.paper, "problem": plan.problem, "m": size.m,
                "seeds": size.seeds}
        if not cands:
            whys = dict.fromkeys(f"{r['theorem']}: {r['best']['why']}" for r in rows if r["theorem"] in kin)
            out.append({**base, "status": "no T*", "note": "no theorem of this algorithm has a T* <= 1e12: "
                        + "; ".join(list(whys)[:4])})
            continue
        best_of = {}  # one row per instance: its smallest T*
        for r in sorted(cands, key=lambda r: r["best"]["T_star"]):
            best_of.setdefault((r["problem"], r["topology"], r["constants"]), r)
        within = [r for r in best_of.values() if 2 * int(r["best"]["T_star"]) <= size.reach]
        if not within:
            r = min(best_of.values(), key=lambda r: r["best"]["T_star"])
            out.append({**base, "problem": r["problem"], "topology": r["topology"], "constants": r["constants"],
                        "T_star": int(r["best"]["T_star"]), "T_run": 2 * int(r["best"]["T_star"]),
                        "T_star_of": r["theorem"], "tuned": r.get("tuned", {}), "status": "beyond reach",
                        "note": f"T_run = 2 T* = {2 * int(r['best']['T_star'])} rounds (the smallest, {r['theorem']} "
                                f"on {r['problem']}, {r['topology']}, {r['constants']}) exceeds this size's reach of "
                                f"{size.reach} rounds" + (f" (--size informative reaches {SIZES['informative'].reach})"
                                                           if SIZES["informative"].reach > size.reach else "")})
            continue
        # the cheapest first (the sharpest instances of the default-size run were the cheap ones: DFedSGPSM, DFedCata
        # and DFedADMM on the common problem), ties: the plan's heterogeneous problem, then the sparser topology
        within.sort(key=lambda r: (r["best"]["T_star"], r["problem"] != plan.problem, order.index(r["topology"])))
        # where no theorem judged on the run has a topology symbol, each bound is the same on every topology: only
        # the sparsest topology is trained (the measured quantity is largest where mixing is slowest; DFedCata's three
        # topologies gave ratios equal to 4 digits, issue 33)
        if not any(set(get(t).symbols) & TOPOLOGY_SYMBOLS for t in kin | {r["theorem"] for r in within}):
            sparsest = {}
            for r in within:
                key = (r["theorem"], r["problem"], r["constants"])
                if key not in sparsest or order.index(r["topology"]) < order.index(sparsest[key]["topology"]):
                    sparsest[key] = r
            kept = [r for r in within if r is sparsest[(r["theorem"], r["problem"], r["constants"])]]
        else:
            kept = within
        same_bound = len(within) - len(kept)
        within = kept
        thms = [get(t.theorem) for t in targets if t.theorem in kin]
        candidates, spent = [], 0
        for row in within:  # the cheapest instance first, each at its steps
            T_star = int(row["best"]["T_star"])
            T_run = 2 * T_star
            if candidates and spent + T_run > size.budget:
                continue
            if row["problem"] not in setups:
                setups[row["problem"]] = problem_instances(replace(plan, problem=row["problem"]), size, main,
                                                plan.topologies[: size.topologies], size.T)
            problem, insts = setups[row["problem"]]
            inst = next(i for i in insts if i.topo.label == row["topology"] and i.constants == row["constants"])
            thm = get(row["theorem"])  # the main theorem, or the variant whose T* it is
            values = {**inst.values, "Xi": 0.0, **row.get("tuned", {})}
            fixed = {k: v for k, v in theorem_values(thm, values).items() if k not in (plan.step, "T")}
            best = at(thm, plan.step, fixed, T_run, "best").step
            for fraction in STEP_FRACTIONS:
                if candidates and spent + T_run > size.budget:
                    break
                eta = best * fraction
                at_step = {**theorem_values(thm, values), plan.step: eta, "T": T_run}
                if fraction != 1.0 and not informative_at(thm, at_step, inst.trivial[main.measure]):
                    continue  # a smaller step whose bound fails a condition or reaches the trivial level
                spent += T_run
                cfg = run_config(plan, problem, main, inst.topo, {**values, plan.step: eta}, eta, plan.K, T_run,
                                 size, 0, device)
                # the replicated runs do not measure DFedCata's consensus error Xi: the theorems that need it are
                # skipped
                judge = ([t for t in thms if "Xi" not in t.symbols], main.measure,
                         {k: v for k, v in values.items() if k != "Xi"}, plan.step, eta, T_run,
                         inst.trivial[main.measure], dict(plan.proof_measure))
                candidates.append({
                    "problem": row["problem"], "topology": row["topology"], "constants": row["constants"],
                    "T_star": T_star, "T_run": T_run, "R": T_run, "tuned": row.get("tuned", {}),
                    "T_star_of": row["theorem"], "step": eta, "step_fraction": fraction,
                    "sigma_g": next((f"{k} = {values[k]:.3g}" for k in ("sigma_g", "G_het", "sigma_g_u")
                                     if k in values), "not a symbol"),
                    "mixing": inst.mixing, "skipped": [t.id for t in thms if "Xi" in t.symbols],
                    "job": (cfg, size.seeds, main.measure, values, T_run, root), "judge": judge})
        out.append({**base, "status": "run", "step_symbol": plan.step, "candidates": candidates,
                    "instances": len(best_of), "within_reach": len(within) + same_bound, "budget": size.budget,
                    "same_bound": same_bound,
                    "command": f"dfltheory verify {main.theorem} --size {size_name} --out OUT (trains the "
                               f"{len(candidates)} candidate (instance, step) pair(s) as {size.seeds} float64 copies "
                               "each, "
                               "cached in OUT/informative; a `dfltheory train` run is float32 and seeds its copies "
                               "apart, so it does not reproduce them)"})
    return out


def finish_informative(entry: dict, done: Sequence[tuple[np.ndarray, float]]) -> dict:
    """An entry of :func:`informative` with each candidate's (terms, seconds): the verdicts of the candidate where
    bound / measured of the main theorem (its printed functional, at T_run) is smallest, the rationale, and every
    candidate's ratio."""
    results = []
    for cand, (terms, seconds) in zip(entry["candidates"], done):
        thms, *rest = cand["judge"]
        verdicts = informative_verdicts(thms, terms, *rest)
        # the theorem whose T* set the run (the main one, or its explicit variant where the main one is O(.))
        main = next((v for name in (cand["T_star_of"], entry["theorem"]) for v in verdicts
                     if v["theorem"] == name and not v["proof_functional"]), verdicts[0])
        ratio = main["at"].get("ratio")
        results.append((ratio if ratio is not None and main["at"].get("informative") else math.inf, cand, verdicts,
                        seconds, terms))
    ratio, cand, verdicts, _, terms = min(results, key=lambda r: r[0])
    table = [{k: c[k] for k in ("problem", "topology", "constants", "T_star", "T_run", "step", "step_fraction",
                                 "tuned")}
             | {"ratio": r if math.isfinite(r) else None, "seconds": sec} for r, c, _, sec, _ in results]
    step = ("the step that minimises the bound at T_run" if cand["step_fraction"] == 1.0 else
            f"{cand['step_fraction']:g} x the step that minimises the bound at T_run")
    why = (f"of {len(results)} candidate (instance, step) pair(s) trained ({entry['instances']} instance(s), "
           f"{entry['within_reach']} within reach"
           + (f", of which {entry['same_bound']} not trained: the bound has no topology symbol and is trained on "
              "the sparsest topology only" if entry.get("same_bound") else "")
           + f"; steps {', '.join(f'{f:g}' for f in STEP_FRACTIONS)} x the bound's "
           f"best where the bound stays informative; the cheapest first within the budget of {entry['budget']} "
           f"rounds), the one where bound / measured of {cand['T_star_of']} is smallest ({ratio:.3g}): "
           f"{cand['problem']} (heterogeneity {cand['sigma_g']}), {cand['topology']} (mixing {cand['mixing']:.3g}), "
           f"{cand['constants']} constants, T_run = 2 T* = {cand['T_run']}, {step}"
           + (f", tuned {cand['tuned']}" if cand["tuned"] else "")) \
        if math.isfinite(ratio) else (f"none of the {len(results)} candidate (instance, step) pair(s) gave "
                                      f"{cand['T_star_of']} an informative verdict; the first is shown")
    for v in verdicts:
        v["instance_rationale"] = why
        v["at"]["instance_rationale"] = why
    done_entry = {k: v for k, v in entry.items() if k != "candidates"}
    keep = {k: v for k, v in cand.items() if k not in ("job", "judge")}
    return {**done_entry, **keep, "seconds": sum(r[3] for r in results), "verdicts": verdicts,
            "instance_rationale": why, "candidates": table, "_terms": terms, "_judge": cand["judge"]}
