"""The verification report's data: every section computed (topology constants, the catalog, stated against
derived rates, the papers' settings against their conditions, the verification runs, a digits network per paper,
the DFedSAM least-squares runs and sweeps, the PEP worst cases, the papers' experimental claims), as plain dicts
and lists that ``dfltheory.figures.report`` turns into the report's pages and figures.

:func:`report_data` runs the sections in the order of :data:`STAGES`, announcing each to a :class:`StageProgress`;
:func:`run_values` reads the theorem symbols a training run states (the network section's, and ``dfltheory plot
run``'s). Relations are kept as sympy's text (``relation``; a network row's ``failed`` and ``undecided``): the
presentation writes them for a reader.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from dfltheory.verify.records import CatalogSection, NetworkSection, PepSection, ReportSections, TopologySection

#: processes that train the verification and claims runs (single-threaded each): two on a 2-core machine
WORKERS = min(2, os.cpu_count() or 1)
#: The topologies of the papers' topology experiments (DFedSAM Table 2, DFedADMM Table 2, DFedCata §7).
PAPER_TOPOLOGIES = ("ring", "grid", "exponential", "full", "random", "watts-strogatz")
TOPOLOGY_KEYS = ("lambda", "spectral_gap", "psi", "lambda_min", "Phi", "doubly_stochastic", "q_measured", "delta",
                 "beta_pi", "kappa_pi", "beta_A", "kappa_A", "n_eff_0.9")
#: the stages of :func:`report_data`, in order
STAGES = ("topology constants", "stated against derived rates", "the papers' settings against their conditions",
          "verification runs", "a digits network per paper", "DFedSAM training runs", "worst cases (PEP)",
          "the papers' experimental claims")
# run hyper-parameter -> theorem symbol: what a run's config.json (and its algorithm's defaults) states (a config
# stored under former names is read under today's: dfltheory.empirical.algorithms.current_names)
RUN_SYMBOLS = {"lr": "eta", "K": "K", "n": "m", "rho": "rho", "Q": "Q", "momentum": "alpha", "lam_pen": "lam_pen",
               "beta": "beta", "K_v": "K_v"}


class StageProgress(Protocol):
    """Where :func:`report_data` says how far it is: a stage opens (``stage``) or is skipped with the reason
    (``skip``); ``step(*args)`` reports within a stage (words, ``done, total`` and optionally the seconds left)."""

    def stage(self, name: str) -> None: ...

    def skip(self, name: str, why: str) -> None: ...

    def step(self, *args) -> None: ...


# --- failures: one case of a stage that raised, recorded in the report instead of ending it ------------------------

def error_text(err: BaseException) -> str:
    """``TypeName: message`` on one line (at most 300 characters)."""
    text = " ".join(str(err).split()) or "(no message)"
    return f"{type(err).__name__}: {text}"[:300]


def failed(stage: str, case: str, err: BaseException | str, command: str, **row) -> dict:
    """The row of a case that failed: ``row`` (the keys the section's rows have) with ``status`` 'failed', the
    ``error`` on one line and the ``command`` that reproduces it; its traceback goes to stderr."""
    if isinstance(err, BaseException):
        traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
        err = error_text(err)
    return {**row, "stage": stage, "case": case, "status": "failed", "error": err, "command": command}


def is_failed(row) -> bool:
    return isinstance(row, dict) and row.get("status") == "failed"


def report_command(papers, *keep: str) -> str:
    """``dfltheory report PAPER ... --no-...`` running only the stages named in ``keep`` ('verify', 'network',
    'train', 'pep', 'claims') for ``papers``: the command that reproduces one stage of the report."""
    skip = [f"--no-{s}" for s in ("verify", "network", "train", "pep", "claims") if s not in keep]
    return " ".join(["dfltheory report", *(papers or ()), "--out", "report-repro", *skip])



def topology_section(n: int = 100) -> dict:
    from dfltheory.topology import analyze

    rows = {name: analyze(name, n, weights="default") for name in PAPER_TOPOLOGIES}
    return TopologySection(n, {k: {key: v.get(key) for key in ("weights",) + TOPOLOGY_KEYS}
                               for k, v in rows.items()}).to_dict()


def catalog_section() -> dict:
    from dfltheory.bounds import catalog

    cat = catalog()
    return CatalogSection(len(cat), Counter(t.paper for t in cat.values()), Counter(t.kind for t in cat.values()),
                          Counter(t.source.tag for t in cat.values())).to_dict()


def _rate(i: str) -> dict:
    """``dfltheory bounds verify ID``'s comparison, or the failed row (its parent theorem kept for the tables)."""
    from dfltheory.bounds import get
    from dfltheory.bounds.rates import verify

    try:
        return verify(i).to_dict()
    except Exception as err:  # one corollary: recorded, the others go on
        return failed(STAGES[1], i, err, f"dfltheory bounds verify {i}", id=i, parent=getattr(get(i), "parent", None))


def rates_section(progress: Callable | None = None, papers=None) -> list[dict]:
    """Every corollary with a schedule (of ``papers``, default all): ``dfltheory bounds verify``'s comparison."""
    from dfltheory.bounds.rates import verifiable
    from dfltheory.verify.processes import pool_map

    ids = [i for i in verifiable() if papers is None or i.split(".")[0] in papers]
    return pool_map(_rate, [(i,) for i in ids], WORKERS, progress)


def _settings(papers=None) -> list:
    from dfltheory.bounds import PAPERS
    from dfltheory.bounds.catalog import experiments

    return [s for paper in PAPERS if papers is None or paper in papers for s in experiments(paper)]


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


def _violations(setting: str, theorem: str, free: str) -> list[dict] | None:
    """The conditions of ``theorem`` at ``setting`` (``violations``), None where that theorem has no symbol
    ``free``."""
    from dataclasses import replace

    from dfltheory.bounds import get
    from dfltheory.bounds.settings import violations

    s = replace(next(s for s in _settings() if s.id == setting), theorem=theorem)
    try:
        return violations(s, free) if free in get(theorem).symbols else None
    except Exception as err:  # one setting: recorded, the others go on
        return failed(STAGES[2], f"{setting} against {theorem}", err,
                      f"dfltheory bounds experiments {setting.split('.')[0]}")


def experiments_section(progress: Callable | None = None, papers=None) -> list[dict]:
    """Each experimental setting of the papers against its theorem's conditions (``dfltheory bounds experiments``):
    for each condition the range of the free constant (L) on which the setting violates it. The same settings are
    checked against the theorem's named variants whose conditions differ (entries with ``variant_check``).
    Settings with equal values and theorem are decided once."""
    from dfltheory.verify.processes import pool_map

    todo = [(s, t, t != s.theorem) for s in _settings(papers) for t in (s.theorem, *_variants(s.theorem))]
    key = {(s.id, t): (t, tuple(sorted(s.values.items())), s.free[0]) for s, t, _ in todo}
    first = {}
    for s, t, _ in todo:
        first.setdefault(key[s.id, t], (s.id, t))
    unique = list(first.values())
    results = dict(zip(unique, pool_map(_violations, [(i, t, key[i, t][2]) for i, t in unique], WORKERS,
                                        progress)))
    rows = []
    for s, t, variant in todo:
        found = results[first[key[s.id, t]]]
        if found is None:
            continue
        row = {"id": s.id, "paper": s.paper, "theorem": t, "description": s.description, "values": dict(s.values),
               "free": s.free[0], "findings": [] if variant else list(s.findings), "variant_check": variant,
               "conditions": [] if is_failed(found) else found}
        if is_failed(found):
            row.update({k: found[k] for k in ("stage", "status", "error", "command")}, case=f"{s.id} against {t}")
        rows.append(row)
    return rows


def worked_example(papers=None):
    """(paper, :class:`~dfltheory.verify.worked_example.WorkedExample`) of the first registered plan that declares
    one (``PaperPlan.example``), among ``papers`` (None: all); None where none does."""
    from dfltheory.verify.plans import plans

    return next(((p.paper, p.example) for p in plans().values()
                 if p.example is not None and (papers is None or p.paper in papers)), None)


def _declared():
    found = worked_example()
    if found is None:
        raise ValueError("no registered plan declares a worked example; give one (PaperPlan.example, a "
                         "dfltheory.verify.worked_example.WorkedExample)")
    return found[1]


def training_section(out: Path, rounds: int = 60, n: int = 16, example=None) -> dict:
    """The worked example (``example``, default :func:`worked_example`'s): its algorithm on a least-squares problem
    whose L, sigma_g, sigma_l and f* are exact, on a ring, at the largest step size that its theorem admits; the
    measured min_t ||grad f(x_bar^t)||^2 next to the bound evaluated with those constants
    (:func:`dfltheory.verify.worked_example.training`)."""
    from dfltheory.verify.worked_example import training

    return training(example or _declared(), out, rounds, n)


def sweeps_section(out: Path, example=None) -> dict:
    """The worked example's topology sweep (n = 16, 100 rounds) and rate in T (T = 25 ... 200) of
    :mod:`dfltheory.verify.worked_example`: smaller than the README's examples (n = 64; T up to 800), which the
    report's text points to, so that ``make report`` stays near a minute and a half."""
    from dfltheory.verify.worked_example import rate_in_T, topology_sweep

    example = example or _declared()
    return {"topology": topology_sweep(example, out / "sweep-topology", n=16, rounds=100),
            "rate": rate_in_T(example, out / "sweep-rate", n=16, horizons=(25, 50, 100, 200))}


def merge_results(parts: list[dict], sums: tuple[str, ...] = ()) -> dict:
    """One result from several of the same schema (one paper each): lists joined, dicts updated, the keys ``sums``
    added, any other key the first part's."""
    merged = dict(parts[0])
    for part in parts[1:]:
        for k, v in part.items():
            if isinstance(v, list) and isinstance(merged.get(k), list):
                merged[k] = merged[k] + v
            elif isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            elif k in sums and isinstance(v, (int, float)):
                merged[k] = (merged.get(k) or 0) + v
            else:
                merged.setdefault(k, v)
    return merged


def per_paper(run: Callable[[tuple], dict], papers, stage: str, what: str, command: Callable[[str], str],
              sums: tuple[str, ...] = (), split: Callable[[str], list[str]] | None = None) -> tuple[dict | None, str]:
    """``run(papers)`` at once (``run(("all",))`` without papers); where it raises, ``run((paper,))`` for each
    paper (cached runs are read again, not retrained), a paper that raises recorded in ``failures`` under ``stage``
    (with the command that reproduces it) and the others kept. With ``split`` (paper -> its parts, e.g. theorem
    ids), a paper that raises is retried part by part: only the parts that raise are failures (all of them: the
    paper's one failure). (result or None, why None: ``what`` failed, the first error)."""
    from dfltheory.bounds import PAPERS

    chosen = tuple(papers) if papers else tuple(PAPERS)
    try:
        return {**run(tuple(papers) if papers else ("all",)), "failures": []}, ""
    except Exception as err:  # retried paper by paper below: one paper's failure keeps the others
        traceback.print_exc()
        first = err
    parts, failures = [], []
    for paper in chosen:
        try:
            parts.append(run((paper,)))
            continue
        except Exception as err:
            whole = failed(stage, paper, err, command(paper), paper=paper)
        found, lost = [], []
        for part in split(paper) if split else ():
            try:
                found.append(run((part,)))
            except Exception as err:
                lost.append(failed(stage, part, err, command(part), paper=paper, theorem=part))
        parts += found
        failures += lost if found else [whole]
    if not parts:
        return None, (f"{what} failed: {error_text(first)} (the traceback is on stderr; reproduce: "
                      f"{command(' '.join(chosen))})")
    return {**merge_results(parts, sums), "failures": failures}, ""


def verification_section(out: Path, size: str, progress: Callable | None = None,
                         papers=None) -> tuple[dict | None, str]:
    """``dfltheory.verify.holds.verify`` on every main theorem and variant of ``papers`` (default all; runs cached in
    ``out/verify/runs``); where it fails, paper by paper and in a paper that fails theorem by theorem
    (:func:`per_paper`): what fails is in ``failures``. None and why where every paper failed."""
    from dfltheory.verify.holds import verify

    def run(chosen):
        return verify(targets=chosen, size=size, out=out / "verify", progress=progress, workers=WORKERS)

    def theorems(paper: str) -> list[str]:
        from dfltheory.verify.plans import plans

        return [t.theorem for t in plans()[paper].targets] if paper in plans() else []

    return per_paper(run, papers, STAGES[3], "verification",
                     lambda p: f"dfltheory verify {p} --size {size} --out verify-repro", sums=("wall_seconds",),
                     split=theorems)


def run_values(run: str | Path) -> dict[str, float]:
    """The theorem symbols a run directory states: eta, K (or the symbol its plan names: ``PaperPlan.run_symbols``,
    DFedPGP's K_u), m, rho, Q, alpha, lam_pen, ... with
    the algorithm's defaults and forced values (D-PSGD and SGP: K = 1), and lam of its topology (with its
    --topology-params) when W is symmetric and doubly stochastic (Definition 1)."""
    from dfltheory.empirical.algorithms import current_names, make
    from dfltheory.empirical.rundir import read_json
    from dfltheory.empirical.runner import ALGO_KEYS
    from dfltheory.parsing import parse_params
    from dfltheory.topology import analyze
    from dfltheory.verify.plans import plans

    cfile = Path(run) / "config.json"
    if not cfile.exists():
        raise ValueError(f"{run} holds no config.json: give a directory written by `dfltheory train --out`")
    cfg = read_json(cfile, "restore it (the options the run was trained with) or train the run again")
    if not isinstance(cfg.get("algo"), str) or "n" not in cfg:
        raise ValueError(f"{cfile} is damaged: not a run configuration (a JSON object with 'algo' and 'n'); restore "
                         "it or train the run again")
    cfg = current_names(cfg, stored=True)  # a config.json written under former option names: as that run ran
    algo = make(cfg["algo"], **{k: cfg.get(k) for k in ALGO_KEYS if k in cfg})
    resolved = {**cfg, "Q": 1, **algo.params, "K": algo.K or cfg.get("K")}  # one communication step per round
    # unless the algorithm has its own Q (DFedSAM-MGS)
    out = {sym: float(resolved[key]) for key, sym in RUN_SYMBOLS.items()
           if isinstance(resolved.get(key), (int, float)) and not isinstance(resolved.get(key), bool)}
    for plan in plans().values():  # a run's option that is another symbol in its paper's theorems
        for mine, theirs in plan.run_symbols.get(cfg["algo"], {}).items():
            if mine in out:
                out[theirs] = out.pop(mine)
    if cfg.get("lr_decay", 1.0) != 1.0:
        print(f"note: the run decays its learning rate by {cfg['lr_decay']} per round; eta = {out['eta']:g} is the "
              "initial one (the theorems assume a constant step)", file=sys.stderr)
    if algo.decentralized:
        topo = analyze(cfg.get("topology", "ring"), int(cfg["n"]), weights=cfg.get("weights") or "default",
                       seed=int(cfg.get("seed", 0)), **parse_params(cfg.get("topology_params")))
        if topo["symmetric"] and topo["doubly_stochastic"]:  # Definition 1's W (lam = 1 if disconnected)
            out["lam"] = float(topo["lambda"])
    return out


def network_section(out: Path, rounds: int = 10, n: int = 4, points: int = 2, iters: int = 8,
                    progress: Callable | None = None, papers=None) -> tuple[dict | None, str]:
    """A digits network (the default MLP) trained with each paper's algorithm for a few rounds on a ring of ``n``
    (the algorithm, its options and the quantity measured are those of the paper's main theorem in
    :func:`dfltheory.verify.plans.plans`); the constants estimated from each run
    (``dfltheory.verify.estimators.estimate_run`` at ``points`` points, ``iters`` Lanczos steps: small, for time), the
    paper's and all conditions at the run's hyper-parameters (push-sum C, q measured on the graph), the largest step
    size the paper's conditions allow, and the bound against the measured quantity. A paper whose run cannot be
    evaluated keeps a row with the reason (``error``); one that raises anything else a failed row (``status``
    'failed', the command that reproduces it). ``papers`` restricts the rows (default: every paper's)."""
    from dfltheory.verify.plans import plans

    rows = []
    chosen = [plan for plan in plans().values() if papers is None or plan.paper in papers]
    for k, plan in enumerate(chosen):
        target = next(t for t in plan.targets if t.main)
        base = {"paper": plan.paper, "algo": target.algo, "theorem": target.theorem, "rounds": rounds, "n": n}
        try:
            rows.append(_network_row(out, plan, target, rounds, n, points, iters))
        except (KeyError, ValueError) as err:  # the run cannot be evaluated against the theorem: a finding
            rows.append({**base, "error": f"{type(err).__name__}: {str(err).strip(chr(34))}"})
        except Exception as err:  # a crash of this paper's run: recorded, the other papers go on
            rows.append(failed(STAGES[4], plan.paper, err, report_command((plan.paper,), "network"), **base))
        if progress:
            progress("runs", k + 1, len(chosen))
    return NetworkSection(rounds, n, points, iters, rows).to_dict(), ""


def _network_row(out: Path, plan, target, rounds: int, n: int, points: int, iters: int) -> dict:
    import math
    import shutil

    import numpy as np
    import sympy as sp

    from dfltheory.bounds import get, topology_values
    from dfltheory.empirical.rundir import read_records
    from dfltheory.empirical.runner import load_run, run
    from dfltheory.verify.estimators import estimate_run
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
    cfg.update(plan.network_hp)
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
            "failed": [sp.sstr(v.relation) for v in check_all.violated],
            "undecided": [sp.sstr(v.relation) for v in check_all.undecided],
            "formula_value": check_all.value, "bound": bound,
            "measured": value, "ratio": bound / value if bound and value > 0 else None}


CERTIFICATE_T = (3, 5, 10, 20)  # the certificate at each T is optimised for it; larger T: `dfltheory certify`


def certificate_cases(papers=None) -> list[tuple[str, dict]]:
    """The three-way comparison of the report (issue 27): for each main theorem's algorithm on the class its PEP
    covers (m = 2, W(0.5), sigma_g = 1, B = 2, L = 1, f(x0) - f* = 1), K and the step inside the theorem's
    conditions: (PEP model, options) of each plan that declares one (``PaperPlan.certificate_case``) among
    ``papers`` (None: all), in the plans' ``certificate_order``."""
    from dfltheory.verify.plans import plans

    chosen = [p for p in plans().values() if p.certificate_case is not None and (papers is None or p.paper in papers)]
    return [(p.certificate_case[0], dict(p.certificate_case[1]))
            for p in sorted(chosen, key=lambda p: p.certificate_order)]


def certificate_command(algorithm: str, kw: dict, T=CERTIFICATE_T) -> str:
    """``dfltheory certify`` on one case of :func:`certificate_cases`."""
    sets = " ".join(f"{k}={v:g}" for k, v in kw.items() if k not in ("K", "eta"))
    return (f"dfltheory certify {algorithm} --m 2 --K {kw['K']} --eta {kw['eta']:g} --T {' '.join(map(str, T))} "
            f"--lambda 0.5 --set sigma_g=1 B=2{' ' + sets if sets else ''}")


def certificates_section(T=CERTIFICATE_T, papers=None) -> list[dict]:
    """The paper's bound, the horizon-free certificate's bound (:func:`dfltheory.pep.certificate_table`) and the
    fixed-T worst case (T <= 10) of each case of :func:`certificate_cases` (of ``papers``' theorems, default all):
    how much of a bound's looseness is the proof's (paper / certificate) and how much the problem's (certificate /
    worst case). About 70 s, every certificate also proved in exact arithmetic. A case that raises is one failed row
    (its command), the others go on."""
    from dfltheory.pep import W_lambda, certificate_table

    rows = []
    for algorithm, kw in certificate_cases(papers):
        command = certificate_command(algorithm, kw, T)
        try:
            found = certificate_table((algorithm,), m=2, T=T, W=W_lambda(2, 0.5), sigma_g=1.0, B=2.0, **kw)
        except Exception as err:
            found = [failed(STAGES[6], f"certificate {algorithm}", err, command, algorithm=algorithm, K=kw["K"],
                            eta=kw["eta"], T=", ".join(map(str, T)), theorem=None)]
        rows += [{**r, "stage": STAGES[6], "case": r.get("case") or f"certificate {algorithm}, T = {r.get('T')}",
                  "command": r.get("command") or command} if is_failed(r) else r for r in found]
    return rows


def pep_command(index: int) -> str:
    """The command that solves the ``index``-th instance of :data:`dfltheory.pep.table.INSTANCES` alone."""
    return (f'python -c "from dfltheory.pep.table import INSTANCES, pep_table; '
            f'print(pep_table([INSTANCES[{index}]]))"')


def pep_rows(papers=None) -> list[dict]:
    """:func:`dfltheory.pep.pep_table` one instance at a time (of ``papers``' theorems, default all): an instance
    that raises is one failed row with the command that solves it alone, the others go on."""
    from dfltheory.pep import pep_table
    from dfltheory.pep.table import INSTANCES

    rows = []
    for k, (algorithm, kw, mixing, lam) in enumerate(INSTANCES):
        if papers is not None and _pep_paper(algorithm) not in papers:
            continue
        try:
            found = pep_table([(algorithm, kw, mixing, lam)])
        except Exception as err:
            found = [failed(STAGES[6], f"PEP {algorithm}, {mixing}", err, pep_command(k), algorithm=algorithm,
                            instance=f"instance {k} of dfltheory.pep.table.INSTANCES: {mixing}", theorem=None)]
        rows += [{**r, "stage": STAGES[6], "case": r.get("case") or f"PEP {algorithm}, {mixing}",
                  "command": r.get("command") or pep_command(k)} if is_failed(r) else r for r in found]
    return rows


def pep_section(papers=None) -> dict:
    """:func:`pep_rows`: the worst case of each algorithm's quantity (PEP) against its theorem's bound at
    sigma_l = 0, one row per instance; and :func:`certificates_section` (of ``papers``, default all)."""
    return PepSection(pep_rows(papers), certificates_section(papers=papers)).to_dict()


def claims_partition(m: int, seed: int = 0) -> dict:
    """The data partition the claims' runs train on at ``m`` clients for their first seed (the data seed is the
    seed): {"title", "counts": per client the training samples of each class}."""
    from dfltheory.empirical import data as D
    from dfltheory.verify.claims import COMMON

    data = D.load(COMMON["dataset"], m, partition=COMMON["partition"], alpha=COMMON["alpha"], seed=seed)
    return {"title": f"{COMMON['dataset']}: Dirichlet alpha = {COMMON['alpha']:g}, m = {m}, data seed {seed}",
            "counts": D.label_counts(data).tolist()}


def stored_plan_claims(root: Path | None = None) -> list[dict]:
    """The committed results of the claims' data plans other than digits (``docs/claims-<plan>.json`` of the source
    tree: MNIST and Fashion-MNIST at their cpu sizes), shown in the report beside its own digits run, each group
    titled with its data set and size; none where the files are absent (an installed package)."""
    import json

    from dfltheory.verify.claims import PLANS

    docs = Path(root) if root is not None else Path(__file__).resolve().parents[2] / "docs"
    out = []
    for name in PLANS:
        path = docs / f"claims-{name}.json"
        if name != "digits" and path.is_file():
            out.append({**json.loads(path.read_text()), "stored": str(path.name)})
    return out


def claims_section(out: Path, size: str, progress: Callable | None = None, papers=None) -> tuple[dict | None, str]:
    """:func:`dfltheory.verify.claims.run_claims` for ``papers`` (default every paper; cohorts cached in
    ``out/claims/cohorts``); where it fails, paper by paper (:func:`per_paper`): a paper that fails is in
    ``failures``. None and why where every paper failed."""
    from dfltheory.verify.claims import run_claims

    def run(chosen):
        return run_claims(papers=chosen, size=size, out=out / "claims", workers=WORKERS, progress=progress)

    result, note = per_paper(run, papers, STAGES[7], "claims",
                             lambda p: f"dfltheory claims {p} --size {size} --out claims-repro",
                             sums=("wall_seconds", "cpu_seconds", "cohort_seconds", "cohorts", "cohorts_trained",
                                   "runs"))
    if result is None:
        return None, note
    try:
        return {**result, "partition": claims_partition(result["m"])}, ""
    except Exception as err:  # the figure of the partition only: the claims stay
        result["failures"].append(failed(STAGES[7], "the partition the claims train on", err,
                                         f"dfltheory plot partition --clients {result['m']} --out partition.png"))
        return result, ""


def collect_failures(rep: dict) -> list[dict]:
    """Every failed case of the sections (rows with ``status`` 'failed', the verification's and claims'
    ``failures``) and every stage that failed whole (``stage_failures``), in the order of the stages."""
    pep = rep.get("pep") or {}
    found = [*rep.get("stage_failures", ()), *(rep.get("rates") or ()), *(rep.get("experiments") or ()),
             *(rep.get("verification") or {}).get("failures", ()), *(rep.get("network") or {}).get("rows", ()),
             *pep.get("rows", ()), *pep.get("certificates", ()), *(rep.get("claims") or {}).get("failures", ())]
    rows = [{"stage": r.get("stage", ""), "case": r.get("case") or r.get("id") or r.get("algorithm") or "",
             "error": r.get("error") or "", "command": r.get("command") or ""} for r in found if is_failed(r)]
    order = list(STAGES) + ["figures"]
    return sorted(rows, key=lambda r: order.index(r["stage"]) if r["stage"] in order else len(order))


def check_papers(papers) -> tuple[str, ...] | None:
    """The papers a report is restricted to (None: every paper), each a known paper (plugins' included); an unknown
    name is a ValueError listing the known ones."""
    from dfltheory.bounds import PAPERS

    if not papers or tuple(papers) == ("all",):
        return None
    unknown = [p for p in papers if p not in PAPERS]
    if unknown:
        raise ValueError(f"unknown paper{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))}; give any of "
                         f"{', '.join(PAPERS)} (or none for all; a plugin's paper needs --plugin FILE)")
    return tuple(dict.fromkeys(papers))


def restrict(result: dict, papers) -> dict:
    """Given verification results (verify's schema) kept to ``papers``: their verdicts, rates, topology, T* and
    informative rows (by ``paper``, or the paper of ``theorem``) and their figures and overlays."""
    def mine(row) -> bool:
        paper = row.get("paper") or str(row.get("theorem", "")).split(".")[0] if isinstance(row, dict) else None
        return paper in papers

    out = dict(result)
    for key, value in result.items():
        if key in ("figures", "overlays", "constants") and isinstance(value, dict):
            out[key] = {p: v for p, v in value.items() if p in papers} if key != "constants" else value
        elif isinstance(value, list) and all(isinstance(r, dict) for r in value):
            out[key] = [r for r in value if mine(r)]
    return out


def report_data(out: Path, progress: StageProgress, train: bool = True, n: int = 100, verify: bool | dict = True,
                size: str = "default", network: bool | dict = True, papers=None, pep: bool | dict = True,
                claims: bool | dict = True, claims_size: str = "default") -> tuple[dict, dict]:
    """Every section of the report, computed into ``out`` (the runs' directories): (sections, notes), the notes
    saying why a section is empty.

    ``verify``: True runs the verification layer (``size``), a dict uses those results (its schema), False skips
    it; ``network`` trains the digits network of each paper (a dict: those results as a report holds them, its
    relations written for a reader); ``train`` the DFedSAM least-squares runs; ``pep`` the PEP worst cases (a
    dict: :func:`pep_section`'s result); ``claims`` the papers' experimental claims at ``claims_size`` (a dict:
    those results). ``papers`` restricts every stage to those papers (default: all; :func:`check_papers`): their
    rates, settings, verification, network rows, PEP rows and certificate cases of their theorems, claims; the
    DFedSAM least-squares runs only where DFedSAM is one.

    Nothing here ends the report: a case that raises is a failed row of its section, a stage that raises is in
    ``stage_failures`` (its traceback on stderr); :func:`collect_failures` lists them all."""
    papers = check_papers(papers)
    notes, stage_failures = {}, []
    only = list(papers or ())

    def guarded(stage: str, fn: Callable, default, command: str):
        try:
            return fn()
        except Exception as err:  # the whole stage: recorded, the other stages go on
            stage_failures.append(failed(stage, "the whole stage", err, command))
            notes[stage] = f"failed: {stage_failures[-1]['error']} (reproduce: {command})"
            return default

    progress.stage("topology constants")
    rep = {"papers": only, "stage_failures": stage_failures}
    rep["topology"] = guarded(STAGES[0], lambda: topology_section(n), {"n": n, "rows": {}},
                              f"dfltheory topology ring --n {n}")
    rep["catalog"] = guarded(STAGES[0], catalog_section, {"count": 0, "by_paper": {}, "by_kind": {}, "by_tag": {}},
                             "dfltheory bounds list")
    progress.stage("stated against derived rates")
    rep["rates"] = guarded(STAGES[1], lambda: rates_section(lambda *done: progress.step("corollaries", *done), papers),
                           [], f"dfltheory bounds verify {only[0] if len(only) == 1 else ''}".strip())
    progress.stage("the papers' settings against their conditions")
    rep["experiments"] = guarded(STAGES[2], lambda: experiments_section(
        lambda *done: progress.step("settings", *done), papers), [],
        f"dfltheory bounds experiments {only[0] if len(only) == 1 else ''}".strip())
    if isinstance(verify, dict):
        progress.skip("verification runs", "results given")
        rep["verification"] = verify
    elif verify:
        progress.stage("verification runs")
        rep["verification"], notes["verification"] = guarded(
            STAGES[3], lambda: verification_section(out, size, progress.step, papers), (None, ""),
            report_command(only, "verify"))
        notes["verification"] = notes["verification"] or notes.get(STAGES[3], "")
        if rep["verification"] is None and STAGES[3] not in notes:
            stage_failures.append(failed(STAGES[3], "every paper", notes["verification"],
                                         report_command(only, "verify")))
    else:
        progress.skip("verification runs", "--no-verify")
        rep["verification"], notes["verification"] = None, "verification not run (--no-verify)"
    if isinstance(network, dict):
        progress.skip("a digits network per paper", "results given")
        rep["network"] = network
    elif network:
        progress.stage("a digits network per paper")
        rep["network"], notes["network"] = guarded(
            STAGES[4], lambda: network_section(out, progress=progress.step, papers=papers), (None, ""),
            report_command(only, "network"))
        notes["network"] = notes["network"] or notes.get(STAGES[4], "")
    else:
        progress.skip("a digits network per paper", "--no-network")
        rep["network"], notes["network"] = None, "left out (--no-network)"
    rep["training"] = rep["sweeps"] = None
    declared, chosen = worked_example(), worked_example(papers)  # (paper, its worked example) or None
    name = declared[1].name if declared else "worked example"
    if train and chosen is None:
        progress.skip(f"{name} training runs", f"{name} is not among the papers")
        notes["training"] = (f"left out: {name}'s least-squares runs belong to the report of {declared[0]}"
                             if declared else "left out: no paper declares a worked example")
    elif train:
        progress.stage(f"{name} training runs")
        paper, example = chosen
        command = report_command([paper] if papers else [], "train")
        rep["training"] = guarded(STAGES[5], lambda: training_section(out, example=example), None, command)
        progress.step("parts", 1, 3)
        rep["sweeps"] = guarded(STAGES[5], lambda: sweeps_section(out, example), None, command)
        progress.step("parts", 3, 3)
        if rep["training"] is None:
            notes["training"] = notes[STAGES[5]]
    else:
        progress.skip(f"{name} training runs", "--no-train")
        notes["training"] = "skipped (--no-train)"
    if isinstance(pep, dict) or not pep:
        progress.skip("worst cases (PEP)", "results given" if pep else "--no-pep")
        rep["pep"] = pep or None
    else:
        progress.stage("worst cases (PEP)")
        rep["pep"] = guarded(STAGES[6], lambda: pep_section(papers), None, report_command(only, "pep"))
        notes["pep"] = notes.get(STAGES[6], "")
    if isinstance(claims, dict) or not claims:
        progress.skip("the papers' experimental claims", "results given" if claims else "--no-claims")
        rep["claims"] = claims or None
        notes["claims"] = "" if claims else "left out (--no-claims)"
    else:
        progress.stage("the papers' experimental claims")
        rep["claims"], notes["claims"] = guarded(
            STAGES[7], lambda: claims_section(out, claims_size, lambda d, t, e: progress.step("cohorts", d, t, e),
                                              papers), (None, ""), report_command(only, "claims"))
        notes["claims"] = notes["claims"] or notes.get(STAGES[7], "")
        if rep["claims"] is None and STAGES[7] not in notes:
            stage_failures.append(failed(STAGES[7], "every paper", notes["claims"], report_command(only, "claims")))
    stored = stored_plan_claims() if claims is not False else []  # the chosen papers' rows only
    stored = [{**r, "claims": [c for c in r["claims"] if not papers or c["paper"] in papers]} for r in stored]
    rep["claims_stored"] = [r for r in stored if r["claims"]]
    return ReportSections.from_dict(rep).to_dict(), notes  # the sections' keys are the record's
