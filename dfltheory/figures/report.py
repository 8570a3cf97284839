"""The verification report, verdict first: one table per paper (each main theorem and its variants: conditions at
the paper's settings, stated against derived rate, bound-holds verdict on exact problems, bound against measured on
a network with estimated constants, the discrepancies found), then the sections with their figures.

``dfltheory report --out report`` writes ``report.html`` (self-contained: inline CSS, the PNG figures beside it),
``report.md`` and ``report.json`` there, from the Jinja2 templates in ``dfltheory/figures/templates``, and prints
its progress on stderr stage by stage. :func:`build_report` is the whole job; the sections are its parts.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from dfltheory.figures.format import duration, formula

#: processes that train the verification and claims runs (single-threaded each): two on a 2-core machine
WORKERS = min(2, os.cpu_count() or 1)
#: The topologies of the papers' topology experiments (DFedSAM Table 2, DFedADMM Table 2, DFedCata §7).
PAPER_TOPOLOGIES = ("ring", "grid", "exponential", "full", "random", "watts-strogatz")
TOPOLOGY_KEYS = ("lambda", "spectral_gap", "psi", "lambda_min", "Phi", "doubly_stochastic", "q_measured", "delta")


def topology_section(n: int = 100) -> dict:
    from dfltheory.topology import analyze

    rows = {name: analyze(name, n, weights="default") for name in PAPER_TOPOLOGIES}
    return {"n": n, "rows": {k: {key: v.get(key) for key in ("weights",) + TOPOLOGY_KEYS} for k, v in rows.items()}}


def catalog_section() -> dict:
    from dfltheory.bounds import catalog

    cat = catalog()
    return {"count": len(cat), "by_paper": Counter(t.paper for t in cat.values()),
            "by_kind": Counter(t.kind for t in cat.values()), "by_tag": Counter(t.source.tag for t in cat.values())}


def _rate(i: str) -> dict:
    from dfltheory.bounds.rates import verify

    return verify(i).to_dict()


def pool_map(fn, items: list, progress: Callable | None = None) -> list:
    """``[fn(i) for i in items]`` on up to two worker processes (sympy is single-threaded), in order."""
    from concurrent.futures import ProcessPoolExecutor

    workers = min(2, os.cpu_count() or 1, len(items))
    if workers < 2:
        out = []
        for k, i in enumerate(items):
            out.append(fn(i))
            if progress:
                progress(k + 1, len(items))
        return out
    import multiprocessing

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        out = []
        for k, r in enumerate(pool.map(fn, items)):
            out.append(r)
            if progress:
                progress(k + 1, len(items))
        return out


def rates_section(progress: Callable | None = None, papers=None) -> list[dict]:
    """Every corollary with a schedule (of ``papers``, default all): ``dfltheory bounds verify``'s comparison."""
    from dfltheory.bounds.rates import verifiable

    return pool_map(_rate, [i for i in verifiable() if papers is None or i.split(".")[0] in papers], progress)


def _settings(papers=None) -> list:
    import importlib

    from dfltheory.bounds import PAPERS

    return [s for paper in PAPERS if papers is None or paper in papers
            for s in getattr(importlib.import_module(f"dfltheory.bounds.{paper}"), "EXPERIMENTS", ())]


def _variants(theorem: str) -> list[str]:
    """The named variants of ``theorem`` (directly or through another variant) whose conditions differ from its."""
    from dfltheory.bounds import catalog

    cat = catalog()

    def root(t):
        while t.variant_of in cat:
            t = cat[t.variant_of]
        return t.id

    conds = [(c.text, str(c.relation)) for c in cat[theorem].conditions]
    return [t.id for t in cat.values() if t.kind == "theorem" and t.variant_of and root(t) == theorem
            and [(c.text, str(c.relation)) for c in t.conditions] != conds]


def _violations(key: tuple[str, str, str]) -> list[dict] | None:
    """The conditions of theorem ``key[1]`` at setting ``key[0]`` (``violations``), None where that theorem has
    no symbol ``key[2]``."""
    from dataclasses import replace

    from dfltheory.bounds import get
    from dfltheory.bounds.settings import violations

    s = replace(next(s for s in _settings() if s.id == key[0]), theorem=key[1])
    thm = get(key[1])
    if key[2] not in thm.symbols:
        return None
    out = violations(s, key[2])
    for c, cond in zip(out, thm.conditions):  # the relation once more, as sympy prints it for a reader
        c["formula"] = formula(cond.relation)
    return out


def experiments_section(progress: Callable | None = None, papers=None) -> list[dict]:
    """Each experimental setting of the papers against its theorem's conditions (``dfltheory bounds experiments``):
    for each condition the range of the free constant (L) on which the setting violates it. The same settings are
    checked against the theorem's named variants whose conditions differ (entries with ``variant_check``).
    Settings with equal values and theorem are decided once."""
    todo = [(s, t, t != s.theorem) for s in _settings(papers) for t in (s.theorem, *_variants(s.theorem))]
    key = {(s.id, t): (t, tuple(sorted(s.values.items())), s.free[0]) for s, t, _ in todo}
    first = {}
    for s, t, _ in todo:
        first.setdefault(key[s.id, t], (s.id, t))
    unique = list(first.values())
    results = dict(zip(unique, pool_map(_violations, [(i, t, key[i, t][2]) for i, t in unique], progress)))
    return [{"id": s.id, "paper": s.paper, "theorem": t, "description": s.description, "values": dict(s.values),
             "free": s.free[0], "findings": [] if variant else list(s.findings), "variant_check": variant,
             "conditions": results[first[key[s.id, t]]]}
            for s, t, variant in todo if results[first[key[s.id, t]]] is not None]


def training_section(out: Path, rounds: int = 60, n: int = 16) -> dict:
    """DFedSAM on a least-squares problem whose L, sigma_g, sigma_l and f* are exact, on a ring, at the largest
    step size that Theorem 4.1 of seed 001 admits; the measured min_t ||grad f(x_bar^t)||^2 next to the bound
    evaluated with those constants."""
    from dfltheory.bounds import get
    from dfltheory.verify.dfedsam_least_squares import dfedsam_run, largest_step_size

    thm = get("dfedsam.thm4.1")
    K, rho = 5, 0.01
    eta = largest_step_size(n, K, rho)
    run_dir = out / "run-dfedsam-quadratic"
    rows, values = dfedsam_run(run_dir, n, rounds, eta, rho, K)
    check = thm.check(T=rounds, **values)
    return {"config": {"n": n, "rounds": rounds, "K": K, "lr": eta, "rho": rho, "topology": "ring"},
            "status": "completed" if rows[-1]["finite"] else "diverged",
            "constants": values, "measured_min_grad_norm_sq": min(r["grad_norm_sq"] for r in rows),
            "bound_at_T": check.value, "bound_terms": check.terms, "dominant_term": check.dominant_term,
            "conditions": [v.to_dict() for v in check.conditions],
            "metrics": str(run_dir / "metrics.jsonl"), "theorem": thm.id,
            "notes": "L, sigma_g (at x*), sigma_l (at x*), f* are exact for this problem; B is the largest measured "
                     "||grad f(x_bar^t)|| (a quadratic has no global gradient bound); eta is the largest step size "
                     "that every condition of the theorem admits."}


def sweeps_section(out: Path) -> dict:
    """The topology sweep (n = 16, 100 rounds) and the rate in T (T = 25 ... 200) of
    :mod:`dfltheory.verify.dfedsam_least_squares`: smaller than the README's examples (n = 64; T up to 800), which the
    report's text points to, so that ``make report`` stays near a minute and a half."""
    from dfltheory.verify.dfedsam_least_squares import rate_in_T, topology_sweep

    return {"topology": topology_sweep(out / "sweep-topology", n=16, rounds=100),
            "rate": rate_in_T(out / "sweep-rate", n=16, horizons=(25, 50, 100, 200))}


def _spectral_gap_figure():
    from dfltheory.figures import plot_topology_constants

    ax = plot_topology_constants(("ring", "grid", "exponential", "watts-strogatz"), [16, 32, 64, 128, 256])
    ax.set_title("spectral gap 1 - lambda (Metropolis weights)")
    return ax


def _bound_vs_gap_figure():
    """DFedSAM's Theorem 4.1 for Q = 1, 2, 4 against the spectral gap, the papers' topologies marked, and its
    terms at Q = 1."""
    import matplotlib.pyplot as plt
    import numpy as np

    from dfltheory.bounds import get
    from dfltheory.topology import analyze

    thm = get("dfedsam.thm4.1")
    values = dict(eta=1e-3, K=5, T=1000, L=1.0, rho=0.01, sigma_l=1.0, sigma_g=1.0, B=1.0, m=100,
                  f0_minus_fstar=2.3)
    gaps = np.logspace(-4, 0, 300)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for Q in (1, 2, 4):
        left.plot(gaps, thm.evaluate(**values, Q=Q, lam=1 - gaps), label=f"Q = {Q}" + (" (DFedSAM)" if Q == 1 else ""))
    for name in ("ring", "grid", "exponential"):
        gap = analyze(name, 100)["spectral_gap"]
        left.axvline(gap, color="grey", lw=0.8, ls=":")
        left.annotate(f"{name}, n = 100", (gap, 0.97), xycoords=("data", "axes fraction"), rotation=90,
                      va="top", ha="right", fontsize="x-small", color="grey")
    left.set(xscale="log", yscale="log", xlabel="spectral gap 1 - lambda", ylabel="bound on min_t E||grad f||^2",
             title="DFedSAM(-MGS) Theorem 4.1, T = 1000")
    left.legend(fontsize="small")
    for name, vals in thm.evaluate_terms(**values, Q=1, lam=1 - gaps).items():
        right.plot(gaps, vals, "--", label=name)
    right.plot(gaps, thm.evaluate(**values, Q=1, lam=1 - gaps), "k-", label="bound (sum)")
    right.set(xscale="log", yscale="log", xlabel="spectral gap 1 - lambda",
              ylabel="term of the bound on min_t E||grad f||^2", title="its terms at Q = 1")
    right.legend(fontsize="small")
    fig.suptitle("eta = 1e-3, K = 5, L = 1, rho = 0.01, sigma_l = sigma_g = B = 1, m = 100", fontsize="small")
    return left


def _predicted_vs_measured_figure(training: dict):
    from dfltheory.figures import plot_predicted_vs_measured

    ax = plot_predicted_vs_measured(training["metrics"], training["theorem"], training["constants"])
    ax.set_title("DFedSAM on least squares, ring: bound vs measured")
    return ax


def figures(out: Path, training: dict | None, sweeps: dict | None = None) -> dict[str, str]:
    """Draw and save the report's own figures into ``out``; returns file name -> caption."""
    import matplotlib

    matplotlib.use("Agg")
    from dfltheory.figures import plot_rate_in_T, plot_topology_sweep
    from dfltheory.figures.axes import save_figure

    draw = {"spectral_gap.png": (_spectral_gap_figure, "Spectral gap 1 − λ against n (Metropolis weights)."),
            "bound_vs_spectral_gap.png": (_bound_vs_gap_figure, "DFedSAM(-MGS) Theorem 4.1 against the spectral "
                                          "gap for Q = 1, 2, 4, the papers' topologies at n = 100 marked, and its "
                                          "terms at Q = 1.")}
    if training is not None:
        draw["predicted_vs_measured.png"] = (lambda: _predicted_vs_measured_figure(training),
                                             "DFedSAM on least squares, ring: the bound against the measured "
                                             "running minimum.")
    if sweeps is not None:
        draw["topology_sweep.png"] = (lambda: plot_topology_sweep(sweeps["topology"]),
                                      "Measured and bound relative to the complete graph, per topology.")
        draw["rate_in_T.png"] = (lambda: plot_rate_in_T(sweeps["rate"]),
                                 "Measured and bound against the horizon T under Corollary 4.1.1's schedule.")
    for name, (fn, _) in draw.items():
        save_figure(fn(), out / name)
    return {name: caption for name, (_, caption) in draw.items()}


class Progress:
    """Stage-by-stage progress on ``stream`` (stderr): ``[3/8] verification runs ... 12/40 runs, ETA 1 min``."""

    def __init__(self, stages: tuple[str, ...], stream=None):
        """``stream``: where to print (stderr by default; False for nowhere)."""
        self.stages, self.k, self.times = stages, 0, {}
        self.stream = sys.stderr if stream is None else (stream or None)
        self.t0 = self.started = self.last = time.perf_counter()

    def _say(self, text: str, end: str = "\n") -> None:
        if self.stream:
            print(text, file=self.stream, end=end, flush=True)

    def stage(self, name: str) -> None:
        """Close the stage running (its time) and open ``name``."""
        self.close()
        self.k = self.stages.index(name) + 1
        self.t0 = time.perf_counter()
        self._say(f"[{self.k}/{len(self.stages)}] {name} ...")

    def close(self) -> None:
        if self.k and self.stages[self.k - 1] not in self.times:
            self.times[self.stages[self.k - 1]] = time.perf_counter() - self.t0
            self._say(f"[{self.k}/{len(self.stages)}] {self.stages[self.k - 1]}: done in "
                      f"{duration(self.times[self.stages[self.k - 1]])}")

    def skip(self, name: str, why: str) -> None:
        self.close()
        self.k = self.stages.index(name) + 1
        self.times[name] = 0.0
        self._say(f"[{self.k}/{len(self.stages)}] {name}: skipped ({why})")

    def step(self, *args, **kwargs) -> None:
        """A callback for a stage's inner loop: ``step(done, total)``, with optional words (a unit, or the name of
        an inner part such as verify's ``"dfedsam: bound-holds runs"``) and an optional float, the seconds left
        as the caller estimates them; or ``step(text)``. Prints the count and the time left (the caller's
        estimate, or the rate so far within the part), at most one line per 5 s unless a part starts or ends."""
        head = f"[{self.k}/{len(self.stages)}] {self.stages[self.k - 1]} ..." if self.k else ""
        nums = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        left = next((float(a) for a in args if isinstance(a, float)), None)
        text = " ".join(str(a) for a in args if isinstance(a, str))
        new = text != getattr(self, "_part", None)
        if new:  # a new inner part: its own clock
            self._part, self._part_t0 = text, time.perf_counter()
        if len(nums) >= 2 and nums[1]:
            done, total = nums[:2]
            if not new and done < total and time.perf_counter() - self.last < 5:
                return
            if left is None and done:
                left = (time.perf_counter() - self._part_t0) / done * (total - done)
            eta = f", ETA {duration(left)}" if left is not None and done < total else ""
            unit = "" if text.endswith(("runs", "steps")) else " steps"
            text = f"{text}{':' if text else ''} {done}/{total}{unit if not text else ''}{eta}".strip()
        self.last = time.perf_counter()
        self._say(f"{head} {text}".rstrip())

    @property
    def wall(self) -> float:
        return time.perf_counter() - self.started


def verification_section(out: Path, size: str, progress: Callable | None = None) -> tuple[dict | None, str]:
    """``dfltheory.verify.holds.verify`` on every main theorem and variant (runs cached in ``out/verify/runs``), its
    figures drawn by :func:`dfltheory.figures.verification.render` (``figures``: paths relative to ``out``), or None
    and why not where it failed."""
    from dfltheory.verify.holds import verify

    try:
        result = verify(targets=("all",), size=size, out=out / "verify", progress=progress, workers=WORKERS)
    except Exception as err:  # the report keeps every other section; the traceback goes to stderr
        import traceback

        traceback.print_exc()
        return None, f"verification failed: {type(err).__name__}: {err} (the traceback is on stderr)"
    return verification_figures(result, out), ""


def verification_figures(result: dict, out: Path) -> dict:
    """Draw the figures of verify's results (overlays, rate in T, topology dependence) into ``out/verify/figures``
    with :func:`dfltheory.figures.verification.render`; ``result["figures"]`` then holds paths relative to ``out``.
    Results without overlays (a hand-written file) keep their own ``figures``."""
    from dfltheory.figures.verification import render

    if "overlays" not in result:
        return result
    drawn = render(result, out / "verify")
    return {**result, "figures": {paper: [f"verify/{f}" for f in files] for paper, files in drawn.items()}}


def network_section(out: Path, rounds: int = 10, n: int = 4, points: int = 2, iters: int = 8,
                    progress: Callable | None = None) -> tuple[dict | None, str]:
    """A digits network (the default MLP) trained with each paper's algorithm for a few rounds on a ring of ``n``
    (the algorithm, its options and the quantity measured are those of the paper's main theorem in
    :data:`dfltheory.verify.plans.PLANS`); the constants estimated from each run
    (``dfltheory.verify.estimators.estimate_run`` at ``points`` points, ``iters`` Lanczos steps: small, for time), the
    paper's and all conditions at the run's hyper-parameters (push-sum C, q measured on the graph), the largest step
    size the paper's conditions allow, and the bound against the measured quantity. A paper whose run cannot be
    evaluated keeps a row with the reason (``error``)."""
    from dfltheory.verify.estimators import estimate_run
    from dfltheory.verify.plans import PLANS

    rows = []
    for k, plan in enumerate(PLANS.values()):
        target = next(t for t in plan.targets if t.main)
        try:
            rows.append(_network_row(out, plan, target, rounds, n, points, iters, estimate_run))
        except (KeyError, ValueError, RuntimeError) as err:
            rows.append({"paper": plan.paper, "algo": target.algo, "theorem": target.theorem, "rounds": rounds,
                         "n": n, "error": f"{type(err).__name__}: {str(err).strip(chr(34))}"})
        if progress:
            progress("runs", k + 1, len(PLANS))
    return {"rounds": rounds, "n": n, "points": points, "iters": iters, "rows": rows}, ""


def _network_row(out: Path, plan, target, rounds: int, n: int, points: int, iters: int, estimate_run) -> dict:
    import math
    import shutil

    import numpy as np

    from dfltheory.bounds import get, topology_values
    from dfltheory.empirical.runner import run
    from dfltheory.figures.commands import run_values
    from dfltheory.empirical.metrics import read_records
    from dfltheory.verify.estimators import load_run
    from dfltheory.verify.measures import MEASURES, per_round

    thm = get(target.theorem)
    fixed = {k: v for k, v in plan.symbols.items() if not callable(v)}  # the plan's symbols (alpha, beta, ...)
    run_dir = out / f"network-{target.algo}"
    shutil.rmtree(run_dir, ignore_errors=True)
    cfg = {"algo": target.algo, "dataset": "digits", "n": n, "topology": "ring", "rounds": rounds, "K": plan.K,
           "lr": 0.01, "batch_size": 16, "seed": 0, "out": str(run_dir), "progress": False, "local_eval": False,
           "checkpoint_every": rounds, "eval_every": 1, "threads": 1, **dict(target.hp),
           **{key: fixed[sym] for sym, key in plan.config.items() if sym in fixed}}
    if plan.pushsum:
        cfg["weights"] = "push-sum"
    if target.algo.startswith("dfedadmm"):
        cfg["lam"] = 0.1  # a penalty well above the step (DFedADMM's eta = lambda collapses the local steps)
    run(cfg)
    est = estimate_run(run_dir, points=points, iters=iters)
    hyper = run_values(run_dir)
    saved = json.loads((run_dir / "config.json").read_text())
    topo, _ = topology_values(thm, saved.get("topology", "ring"), n, saved.get("weights") or "default",
                              int(saved.get("seed", 0)), Q=int(hyper.get("Q", 1)), push_sum="measured",
                              K_u=int(hyper.get("K_u", 1)))
    if plan.step not in hyper and "eta" in hyper:  # DFedPGP: the run's lr is eta_u, its lr_v eta_v
        hyper[plan.step] = hyper.pop("eta")
        hyper.setdefault("eta_v", float(saved.get("lr_v") or hyper[plan.step]))
    values = {**fixed, **topo, **hyper, **{k: float(v) for k, v in est.values().items()}, "T": float(rounds)}
    if "x0_sq_mean" in thm.symbols:  # every client starts from the same x^0 (the model's initialisation)
        values["x0_sq_mean"] = float((load_run(run_dir)[3] ** 2).sum())
    values = {k: v for k, v in values.items() if k in thm.symbols}
    check_paper, check_all = (thm.check(conditions=c, **values) for c in ("paper", "all"))
    measured = per_round(target.measure, read_records(run_dir / "metrics.jsonl"), values)
    value = float(np.min(measured) if MEASURES[target.measure][0] == "min" else np.mean(measured))
    try:
        largest = thm.largest(plan.step, "paper", **{k: v for k, v in values.items() if k != plan.step})
    except ValueError:
        largest = None
    bound = check_all.value if check_all.is_bound and math.isfinite(check_all.value) else None
    return {"paper": plan.paper, "algo": target.algo, "theorem": target.theorem, "run": run_dir.name,
            "rounds": rounds, "n": n, "K": plan.K, "measure": target.measure, "constants": est.to_dict(),
            "constants_text": est.text(), "L": values.get("L", values.get("L_u")), "step": plan.step,
            "eta": values.get(plan.step), "largest_eta": largest, "topology_values": topo, "values": values,
            "conditions_paper_ok": bool(check_paper.ok), "conditions_all_ok": bool(check_all.ok),
            "failed": [formula(v.relation) for v in check_all.violated],
            "undecided": [formula(v.relation) for v in check_all.undecided],
            "formula_value": check_all.value, "bound": bound,
            "measured": value, "ratio": bound / value if bound and value > 0 else None}


def machine(device: str = "cpu") -> dict:
    import torch

    from dfltheory import __version__

    return {"version": __version__, "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "torch": torch.__version__, "device": device}


STAGES = ("topology constants", "stated against derived rates", "the papers' settings against their conditions",
          "verification runs", "a digits network per paper", "DFedSAM training runs", "worst cases (PEP)",
          "the papers' experimental claims", "figures", "writing the report")


def pep_section() -> dict:
    """:func:`dfltheory.pep.pep_table`: the worst case of each algorithm's quantity (PEP) against its theorem's
    bound at sigma_l = 0, one row per instance."""
    from dfltheory.pep import pep_table

    return {"rows": pep_table()}


def claims_section(out: Path, size: str, progress: Callable | None = None) -> tuple[dict | None, str]:
    """:func:`dfltheory.verify.claims.run_claims` for every paper (cohorts cached in ``out/claims/cohorts``) with its
    figures (``figures``: {paper: path relative to ``out``}), or None and why where it failed."""
    from dfltheory.verify.claims import run_claims

    try:
        result = run_claims(papers=("all",), size=size, out=out / "claims",
                            workers=WORKERS, progress=progress)
    except Exception as err:  # the report keeps every other section; the traceback goes to stderr
        import traceback

        traceback.print_exc()
        return None, f"claims failed: {type(err).__name__}: {err} (the traceback is on stderr)"
    return claims_figures(result, out), ""


def claims_figures(result: dict, out: Path) -> dict:
    """Draw one figure per paper of the claims' results into ``out/claims/figures``; ``result["figures"]`` then
    holds {paper: path relative to ``out``}."""
    from dfltheory.figures.claims import render as draw

    drawn = draw(result, out / "claims")
    return {**result, "figures": {p: str(Path(f).relative_to(out)) for p, f in drawn.items()}}


def build_report(out: str | Path, train: bool = True, n: int = 100, verify: bool | dict = True,
                 size: str = "default", network: bool | dict = True, stream=None, papers=None,
                 pep: bool | dict = True, claims: bool | dict = True, claims_size: str = "default") -> dict:
    """Compute every section, write ``report.html``, ``report.md``, ``report.json`` and the figures into ``out``.

    ``verify``: True runs the verification layer (``size``), a dict uses those results (its schema), False skips
    it; ``network`` trains the digits network of each paper (a dict: those results, :func:`network_section`'s
    schema); ``train`` the DFedSAM least-squares runs; ``pep`` the PEP worst cases (a dict: :func:`pep_section`'s
    result); ``claims`` the papers' experimental claims at ``claims_size`` (a dict: those results).
    Progress goes to ``stream`` (stderr by default; False for none). ``papers`` restricts the rates and settings
    sections (default: all five papers; the tests use one, for time)."""
    from dfltheory.figures.render import write
    from dfltheory.figures.verdicts import paper_tables

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    prog = Progress(STAGES, stream=stream)
    notes = {}
    prog.stage("topology constants")
    rep = {"topology": topology_section(n), "catalog": catalog_section()}
    prog.stage("stated against derived rates")
    rep["rates"] = rates_section(lambda d, t: prog.step("corollaries", d, t), papers)
    prog.stage("the papers' settings against their conditions")
    rep["experiments"] = experiments_section(lambda d, t: prog.step("settings", d, t), papers)
    if isinstance(verify, dict):
        prog.skip("verification runs", "results given")
        rep["verification"] = verification_figures(verify, out)
    elif verify:
        prog.stage("verification runs")
        rep["verification"], notes["verification"] = verification_section(out, size, prog.step)
    else:
        prog.skip("verification runs", "--no-verify")
        rep["verification"], notes["verification"] = None, "verification not run (--no-verify)"
    if isinstance(network, dict):
        prog.skip("a digits network per paper", "results given")
        rep["network"] = network
    elif network:
        prog.stage("a digits network per paper")
        rep["network"], notes["network"] = network_section(out, progress=prog.step)
    else:
        prog.skip("a digits network per paper", "--no-network")
        rep["network"], notes["network"] = None, "left out (--no-network)"
    if train:
        prog.stage("DFedSAM training runs")
        rep["training"] = training_section(out)
        prog.step("parts", 1, 3)
        rep["sweeps"] = sweeps_section(out)
        prog.step("parts", 3, 3)
    else:
        prog.skip("DFedSAM training runs", "--no-train")
        rep["training"] = rep["sweeps"] = None
    if isinstance(pep, dict) or not pep:
        prog.skip("worst cases (PEP)", "results given" if pep else "--no-pep")
        rep["pep"] = pep or None
    else:
        prog.stage("worst cases (PEP)")
        rep["pep"] = pep_section()
    if isinstance(claims, dict) or not claims:
        prog.skip("the papers' experimental claims", "results given" if claims else "--no-claims")
        rep["claims"] = claims_figures(claims, out) if claims else None
        notes["claims"] = "" if claims else "left out (--no-claims)"
    else:
        prog.stage("the papers' experimental claims")
        rep["claims"], notes["claims"] = claims_section(out, claims_size,
                                                                lambda d, t, e: prog.step("cohorts", d, t, e))
    prog.stage("figures")
    rep["figures"] = figures(out, rep["training"], rep["sweeps"])
    prog.stage("writing the report")
    rep["verdicts"] = paper_tables(out, rep["experiments"], rep["rates"], rep["verification"], rep["network"])
    device = (rep["verification"] or {}).get("device", "cpu")
    seeds = sorted(set((rep["verification"] or {}).get("seeds", [])) | {0})
    rep["header"] = {**machine(device), "seeds": seeds, "stage_seconds": prog.times, "notes": notes,
                     "size": (rep["verification"] or {}).get("size")}
    prog.close()
    rep["header"]["wall_seconds"] = prog.wall
    write(out, rep)
    prog._say(f"wrote {out / 'report.html'}, {out / 'report.md'}, {out / 'report.json'} in {duration(prog.wall)}")
    return rep
