"""Bound-holds experiments: every main theorem of the five papers, and each named variant, against training on a
problem whose constants are exact or certified.

For each paper (:func:`dfltheory.verify.plans.plans`):

1. the problem's constants (:mod:`dfltheory.verify.problems`), the topology's constants (lambda, psi; for push-sum
   C, q cited from the lemma and measured on the graph sequence, and delta), the hyper-parameters of the plan,
   f(x^0) - f* with f* bounded below, and ||x^0||^2 give every symbol of the theorem except the step size;
2. the step size is the largest value that the conditions (the paper's and the derived ones) of every target of
   the paper admit on every topology of the run, and a fraction of it (one value for all topologies, so that the
   topology dependence is measured at a fixed step); a target whose conditions no step size meets gets the verdict
   ``conditions fail``, naming the conditions that fail even for a vanishing step;
3. S runs per setting that differ only in the sampling seed (the data, x^0 and the graph drawn from ``data_seed``);
   the theorem's quantity (:mod:`dfltheory.verify.measures`) is estimated by the mean over them with a 95 % interval;
4. the verdict per (theorem, variant, setting, constants): ``holds`` (the bound is above the interval; ratio
   bound / measured and the dominant term), ``violated`` (below the interval; the command that reproduces a run),
   ``inconclusive`` (inside the interval), ``vacuous`` (the bound is infinite), ``conditions fail`` or, for a main
theorem that no run can test (DFedCata's Theorem 2, whose formula is lost), ``not testable`` with the reason.

Runs are cached in ``out/runs/<key>`` (the key hashes the run's config), so a second call only re-evaluates.
The rate in T (the corollary's schedule over horizons) and the topology dependence (measured against predicted
ratios across topologies) use the same machinery. :func:`verify` returns the JSON-safe dict documented in
docs/verify.md; figures and the report present it (:mod:`dfltheory.figures.verification`).

This module runs the stages in order (:func:`verify`; :func:`horizons` the T* rows alone); each stage is its own
module: the sizes and instances (:mod:`~dfltheory.verify.instances`), the T* rows
(:mod:`~dfltheory.verify.horizon_rows`), the bound-holds grid of steps 2-4 (:mod:`~dfltheory.verify.holds_grid`,
judged by :mod:`~dfltheory.verify.judging`), the rate in T (:mod:`~dfltheory.verify.measured_rate`), the
informative runs (:mod:`~dfltheory.verify.informative` on :mod:`~dfltheory.verify.replicated` engines, started in
the background by :mod:`~dfltheory.verify.processes`) and the JSON written (:mod:`~dfltheory.verify.strict_json`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from dfltheory.empirical.sweep import RunCache
from dfltheory.verify.holds_grid import verify_paper
from dfltheory.verify.horizon_rows import horizon_rows
from dfltheory.verify.informative import finish_informative, informative
from dfltheory.verify.instances import SIZES, Size, check_run_options, resolve_targets
from dfltheory.verify.measured_rate import rate
from dfltheory.verify.mutations import mutation_tables
from dfltheory.verify.plans import plans
from dfltheory.verify.processes import Background
from dfltheory.verify.records import Verdict
from dfltheory.verify.replicated import replicated_terms
from dfltheory.verify.strict_json import json_safe


def verify(targets: Sequence[str] = ("all",), size: str | Size = "default", out: str | Path = "verify",
           progress: Callable[[str, int, int, float], None] | None = None, rates: bool = True, workers: int = 1,
           device: str = "cpu") -> dict:
    """Run (or read from the cache in ``out``) the bound-holds experiments of ``targets`` ('all', paper names or
    theorem ids) and return the verdicts, overlays, topology dependence and rates as one JSON-safe dict; it is
    also written to ``out/verify.json``. ``progress(stage, done, total, eta_seconds)`` is called after every run;
    ``workers`` processes train each stage's runs (one CPU thread each), and the informative runs train from the
    start in ``workers`` processes of their own beside them; ``device`` ('cpu', 'cuda', ...) is where."""
    import platform

    from dfltheory import __version__

    size = check_run_options(size, SIZES, workers, device)
    chosen = resolve_targets(targets)
    out = Path(out)
    cache = RunCache(out / "runs")
    start = time.perf_counter()
    name = next((k for k, v in SIZES.items() if v == size), "custom")
    result = {"version": __version__, "size": name,
              "seeds": list(range(size.seeds)), "m": size.m, "T": size.T, "device": device, "workers": workers,
              "machine": f"{platform.platform()}, {platform.processor() or platform.machine()}",
              "verdicts": [], "overlays": {}, "topology": [], "rates": [], "horizons": [], "informative": [],
              "mutations": [],
              "constants": {}}
    found = horizon_rows(chosen, size, workers)
    # the informative runs need only the T* rows: they start now and train beside the bound-holds and rate runs,
    # the longest first (DFedPGP's ~180,000 rounds would otherwise come after every other stage)
    entries = [e for paper, tgts in chosen.items()
               for e in informative(plans()[paper], tgts, size, found[paper][0], out / "informative", device=device,
                                    size_name=name)]
    jobs = [(e, i) for e in entries for i, _ in enumerate(e.get("candidates", ()))]
    jobs.sort(key=lambda j: -j[0]["candidates"][j[1]]["R"])  # longest first
    background = Background(replicated_terms, [e["candidates"][i]["job"] for e, i in jobs], workers)
    try:
        for paper, tgts in chosen.items():
            rows, tables = found[paper]
            plan = plans()[paper]
            stage = (lambda name: (lambda d, t, e: progress(name, d, t, e)) if progress else None)
            part = verify_paper(plan, tgts, size, cache, stage(f"{paper}: bound-holds runs"), workers, device)
            result["constants"].update(tables)
            stars = {(r["theorem"], r["topology"], r["constants"]): r["best"]["T_star"]
                     for r in rows if not r.get("tuned") and r["problem"] == plan.problem}
            for v in part["verdicts"]:
                v["T_star"] = stars.get((v["theorem"], v.get("topology"), v.get("constants")))
            result["horizons"] += rows
            result["verdicts"] += part["verdicts"]
            if any(t.main for t in tgts):
                result["verdicts"] += [Verdict.from_dict({
                    "theorem": thm, "paper": paper, "variant": "printed", "main": True, "setting": "-",
                    "problem": "-", "topology": "-", "constants": "-", "verdict": "not testable", "failed": [],
                    "note": why, "functional": "-", "instance_rationale": "no run can test it",
                    "c_star": {"factor": None, "instrument": None}, "term_shares": {}}).to_dict()
                    for thm, why in plan.untestable.items()]
            result["overlays"][paper] = part["overlays"]
            result["topology"] += part["topology"]
            if rates and any(t.main for t in tgts):
                r = rate(plan, size, cache, stage(f"{paper}: rate in T"), workers, device)
                if r:
                    result["rates"].append(r)
        trained = background.results(
            (lambda d, t, eta: progress("informative runs (beyond T*)", d, t, eta)) if progress else None)
    finally:
        background.close()
    done = {(id(e), i): r for (e, i), r in zip(jobs, trained)}
    finished = {id(e): finish_informative(e, [done[(id(e), i)] for i in range(len(e["candidates"]))])
                for e in entries if e.get("candidates")}
    result["informative"] = [finished.get(id(e), e) for e in entries]
    result["mutations"] = mutation_tables(result["informative"], size.pep_T)
    for e in result["informative"]:
        e.pop("_terms", None)
        e.pop("_judge", None)
    result["wall_seconds"] = time.perf_counter() - start
    result["runs_trained"] = cache.trained
    result = json_safe(result)
    (out / "verify.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def horizons(targets: Sequence[str] = ("all",), size: str | Size = "default",
             workers: int = 1) -> tuple[list[dict], dict]:
    """The T* rows and the constants tables (:func:`dfltheory.verify.horizon_rows.horizon_rows`) of ``targets``
    at ``size``, without training."""
    size = check_run_options(size, SIZES, workers, "cpu")
    found = horizon_rows(resolve_targets(targets), size, workers)
    rows = [r for part, _ in found.values() for r in part]
    tables = {k: v for _, more in found.values() for k, v in more.items()}
    return json_safe(rows), json_safe(tables)
