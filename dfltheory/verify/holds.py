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
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from dfltheory.bounds.catalog import topology_keys
from dfltheory.bounds.rates import TOPOLOGY_SYMBOLS
from dfltheory.empirical.sweep import RunCache, check_workers
from dfltheory.verify import measures as M
from dfltheory.verify.mutations import c_star, mutation_tables, shares
from dfltheory.verify.plans import PaperPlan, Target, Topo, plans, resolve

#: Verdict names, strongest first.
VERDICTS = ("violated", "inconclusive", "holds", "vacuous", "conditions fail", "diverged", "not testable")


@dataclass(frozen=True)
class Size:
    """How much is run: clients, rounds, seeds per setting, topologies per paper, step fractions, an extra K,
    the horizons of the rate experiment and the minibatch size."""

    m: int
    T: int
    seeds: int
    topologies: int
    fractions: tuple[float, ...]
    extra_K: bool
    horizons: tuple[int, ...]
    batch_size: int = 4
    longest: int = 0  # a longer horizon, up to this, where a theorem's conditions need more rounds than T
    reach: int = 0  # the longest informative run (rounds): T_run = 2 T* must fit
    budget: int = 0  # the rounds of a main theorem's informative candidates together (the first always runs)
    pep_T: tuple[int, ...] = ()  # the horizons of the PEP instrument of the mutation tables (none: no PEP)


SIZES = {
    "quick": Size(m=6, T=20, seeds=5, topologies=1, fractions=(1.0,), extra_K=False, horizons=()),
    # default: the largest step only (the quarter step held everywhere and caught nothing; it doubled the stage)
    "default": Size(m=8, T=100, seeds=5, topologies=3, fractions=(1.0,), extra_K=True,
                    horizons=(25, 50, 100, 200), longest=1000, reach=200_000, budget=45_000, pep_T=(4,)),
    "informative": Size(m=8, T=100, seeds=5, topologies=3, fractions=(1.0, 0.25), extra_K=True,
                        horizons=(25, 50, 100, 200), longest=1000, reach=200_000, budget=400_000, pep_T=(6,)),
    "large": Size(m=16, T=400, seeds=10, topologies=3, fractions=(1.0, 0.25), extra_K=True,
                  horizons=(50, 100, 200, 400, 800), batch_size=8, longest=10000),
}


# ------------------------------------------------------------------------------------------------ targets
def resolve_targets(targets: Iterable[str]) -> dict[str, tuple[Target, ...]]:
    """``('all',)``, paper names or theorem ids -> {paper: targets}; an unknown name is a ValueError listing the
    valid ones."""
    out: dict[str, list[Target]] = {}
    for name in targets:
        if name == "all":
            for paper, plan in plans().items():
                out[paper] = list(plan.targets)
        elif name in plans():
            out[name] = list(plans()[name].targets)
        else:
            paper = name.split(".")[0]
            plan = plans().get(paper)
            try:
                target = plan.target(name) if plan else None
            except KeyError:
                target = None
            if target is None:
                valid = [t.theorem for p in plans().values() for t in p.targets]
                raise ValueError(f"nothing to verify for {name!r}: give 'all', a paper ({', '.join(plans())}) or a "
                                 f"theorem with a training experiment ({', '.join(valid)})")
            out.setdefault(paper, [])
            if target not in out[paper]:
                out[paper].append(target)
    return {p: tuple(ts) for p, ts in out.items()}


# ------------------------------------------------------------------------------------------------ runs
def train_command(cfg: Mapping) -> str:
    """The ``dfltheory train`` command line that reproduces a run config."""
    flags = []
    for key, value in cfg.items():
        if value is None or key in ("progress", "threads"):
            continue
        flag = "--" + key.replace("_", "-")
        if key == "local_eval":
            if not value:
                flags.append("--no-local-eval")
            continue
        if key in ("K", "Q", "K_v"):
            flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            if value:
                flags.append(flag)
            continue
        if isinstance(value, Mapping):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        flags.append(f"{flag} {value!r}" if isinstance(value, float) else f"{flag} {value}")
    return "dfltheory train " + " ".join(flags)


# ------------------------------------------------------------------------------------------------ constants
@dataclass
class Instance:
    """One problem instance on one topology: the symbol values that do not depend on the run, with labels."""

    paper: str
    topo: Topo
    values: dict[str, float]
    constants: str  # 'certified' / 'exact' / 'measured' (push-sum: cited or measured C, q)
    kinds: dict[str, str] = field(default_factory=dict)  # symbol -> exact / bound / measured
    mixing: float = math.nan  # lambda (gossip) or measured q (push-sum): the topology's mixing rate
    note: str = ""
    trivial: dict = field(default_factory=dict)  # measure -> TrivialLevel (dfltheory.verify.trivial)
    constants_table: list = field(default_factory=list)  # dfltheory.verify.problems.constants_table


def _setup(plan: PaperPlan, size: Size, target: Target, topos: Sequence[Topo], T: int):
    """The plan's problem and its instances on ``topos`` at horizon T: the constants in the paper's forms and every
    value that does not depend on the runs."""
    from dfltheory.verify.problems import PROBLEMS, theorem_constants

    problem = PROBLEMS[plan.problem]
    consts = theorem_constants(problem.load(size.m), size.batch_size, theorem=plan.paper)
    probe = run_config(plan, problem, target, topos[0], {k: 0.0 for k in plan.config}, 1.0, plan.K, T, size, 0)
    probe = {k: v for k, v in probe.items() if k not in plan.config.values()}  # the start point needs no step
    return problem, instances(plan, size, probe, consts, topos, T)


def _start_point(base_cfg: Mapping, consts: Mapping, values: Mapping[str, float], measures: Iterable[str],
                 paper: str) -> tuple[float, float, int, dict, dict]:
    """f(x^0), ||x^0||^2, the model dimension d, the trivial level of each measure
    (:mod:`dfltheory.verify.trivial`: its value at x^0, the certified supremum, and a numeric supremum over points
    sampled around x^0 and the clients' optima) and the numeric estimates of B and sigma_g at those points
    (:func:`dfltheory.verify.problems.numeric_estimates`; none for DFedPGP's blocks) for the run config (x^0 is
    shared by all clients and seeds)."""
    from dfltheory.empirical.runner import build
    from dfltheory.verify import trivial
    from dfltheory.verify.problems import numeric_estimates

    engine, evaluator = build({**base_cfg, "out": None})
    x0, X0 = engine.x_bar(), engine.client_models()
    data = engine.data.constants or {}
    centres = [] if engine.shared is not None else [c for key in ("x_client_star", "x_best")
                                                    for c in torch_rows(data.get(key))]
    levels, sups = {}, {}  # the gradient measures share one quantity, ||grad f||^2: sampled once
    for measure in sorted(set(measures)):
        same = "gradient" if measure in trivial.GRADIENT_MEASURES else measure
        if same not in sups:
            sups[same] = trivial.numeric_sup(measure, evaluator, X0, centres, values, engine.shared)
        level = trivial.level_at_start(measure, evaluator, X0, consts, values, engine.shared)
        levels[measure] = level.with_numeric(sups[same])
    numeric = {} if engine.shared is not None else numeric_estimates(
        evaluator, [X0, *trivial.sample_points(X0, centres)], paper)
    return float(evaluator.objective(x0)[0]), float((x0.double() ** 2).sum()), int(x0.numel()), levels, numeric


def torch_rows(value) -> list:
    """The rows of a (k, d) or (d,) tensor (none for None)."""
    if value is None:
        return []
    return list(value) if value.dim() == 2 else [value]


def instances(plan: PaperPlan, size: Size, base_cfg: Mapping, consts: Mapping, topos: Sequence[Topo],
              T: int) -> list[Instance]:
    """The instances of a paper: one per topology, and for push-sum papers one per source of C and q."""
    from dfltheory.bounds import get
    from dfltheory.topology import analyze
    from dfltheory.verify.problems import constants_table

    used = {name for t in plan.targets for name in get(t.theorem).symbols} | {"f_star_lower"}
    source = {k: consts[plan.constant_of.get(k, k)] for k in sorted(used) if plan.constant_of.get(k, k) in consts}
    problem_values = {k: c.value for k, c in source.items()}
    kinds = {k: c.kind for k, c in source.items()}
    f_star = problem_values.pop("f_star_lower", 0.0)
    f0, x0_sq, d, levels, numeric = _start_point(base_cfg, consts, {k: c.value for k, c in consts.items()},
                                                 (t.measure for t in plan.targets), plan.paper)
    best = consts.get("f_star_best")  # of the pooled objective f: compared only where f* itself is not exact
    found = best is not None and consts["f_star_lower"].kind != "exact" and best.value > f_star
    table = constants_table(consts, {k: plan.constant_of.get(k, k) for k in source if k != "f_star_lower"},
                            numeric, (f0 - f_star, f0 - best.value if found else None))
    common = {**problem_values, "K": plan.K, "K_u": plan.K, "T": T, "m": size.m, "Q": 1,
              "f0_minus_fstar": f0 - f_star, "x0_sq_mean": x0_sq}
    common.update(resolve(plan.symbols, common))
    out = []
    for topo in topos:
        info = analyze(topo.name, size.m, weights=topo.weights, seed=base_cfg.get("data_seed", 0), d=d,
                       K_u=plan.K, horizon=max(T, 50), **dict(topo.params))
        if not plan.pushsum:
            vals = {**common, "lam": info["lambda"], "psi": info["psi"]}
            family = "certified" if all(k != "measured" for k in kinds.values()) else "measured"
            out.append(Instance(plan.paper, topo, vals, family, kinds, info["lambda"], trivial=levels,
                                constants_table=table))
            continue
        keys = topology_keys(plan.paper)  # the paper's own push-sum lemma, where its theorems use it
        cited_C, cited_q, lemma = info[keys.get("C", "C")], info[keys.get("q", "q")], plan.pushsum_lemma
        for label, C, q, note in (
                ("cited", cited_C, cited_q, f"C, q from {lemma} (d = {d})"),
                ("measured", info["C_measured"], info["q_measured"], "C, q fitted to the graph sequence's "
                 "consensus e(t) <= C q^t over the horizon (dfltheory.topology.pushsum.measured)")):
            vals = {**common, "C": C, "q": q, "delta": info["delta"]}
            out.append(Instance(plan.paper, topo, vals, label, {**kinds, "C": label, "q": label},
                                info["q_measured"], note, levels, table))
    return out


def _kinds(thm, inst: Instance) -> dict[str, str]:
    """How each problem constant the theorem uses is known: exact, bound (certified) or measured."""
    return {k: v for k, v in inst.kinds.items() if k in thm.symbols}


def _for(thm, values: Mapping[str, float]) -> dict[str, float]:
    """The values of the symbols the theorem has."""
    return {k: v for k, v in values.items() if k in thm.symbols}


def largest_step(plan: PaperPlan, targets: Sequence[Target], insts: Sequence[Instance]) -> tuple[float | None, dict]:
    """The largest step that every target's conditions (paper and derived) admit on every instance, and for each
    target that admits none, the conditions that fail even for a vanishing step."""
    from dfltheory.bounds import get
    from dfltheory.verify.horizons import largest_inside

    steps, failures = [], {}
    for target in targets:
        thm = get(target.theorem)
        for inst in insts:
            vals = {k: v for k, v in _for(thm, inst.values).items() if k != plan.step}
            try:  # strictly inside an open end: at the edge of a strict condition the bound is often infinite
                steps.append(largest_inside(thm, plan.step, vals))
            except ValueError:
                failures[(target.theorem, inst.constants, inst.topo.label)] = why_no_step(thm, plan.step, vals)
    return (min(steps) if steps else None), failures


def why_no_step(thm, step: str, values: Mapping[str, float]) -> list[str]:
    """The conditions that no value of ``step`` meets, each alone; if each alone admits some value, the pair whose
    admissible sets are disjoint."""
    from dfltheory.bounds.solve import solve

    var = thm.symbols[step]
    chosen = [c for c in thm.conditions if step in c.names]
    alone = [c for c in chosen if solve(var, [c], values).empty]
    if alone:
        return [f"{c.text} (no {step} > 0 meets it)" for c in alone]
    for i, a in enumerate(chosen):
        for b in chosen[i + 1:]:
            if solve(var, [a, b], values).empty:
                return [f"{a.text} and {b.text} (together: no {step} meets both)"]
    return [f"the conditions on {step} together admit no value"]


# ------------------------------------------------------------------------------------------------ one paper
@dataclass
class Job:
    """The runs (one per seed) of one algorithm at one setting."""

    cfgs: tuple[dict, ...]

    @property
    def command(self) -> str:
        return train_command(self.cfgs[0])


def run_config(plan: PaperPlan, problem, target: Target, topo: Topo, values: Mapping[str, float], step: float,
               K: int, T: int, size: Size, seed: int, device: str = "cpu") -> dict:
    """The ``train`` config of one run (``device`` other than cpu is recorded, so it is part of the cache key)."""
    cfg = {"algo": target.algo, "dataset": problem.config["dataset"], "model": problem.config.get("model"),
           "data_params": dict(problem.config.get("data_params", {})) or None,
           "data_seed": problem.config.get("data_seed", 0), "n": size.m, "topology": topo.name,
           "weights": topo.weights, "topology_params": ",".join(f"{k}={v}" for k, v in topo.params.items()) or None,
           "rounds": T, "K": K, "lr": float(step), "batch_size": size.batch_size, "seed": seed, "eval_every": 1,
           "checkpoint_every": T, "local_eval": False, "threads": 1}  # tiny problems: one thread is fastest
    for sym, key in plan.config.items():
        cfg[key] = values[sym]
    cfg.update(target.hp)
    if device != "cpu":
        cfg["device"] = device
    return {k: v for k, v in cfg.items() if v is not None}


def verdict(thm, est: M.Estimate, values: Mapping[str, float]) -> dict:
    """Compare a theorem's bound at ``values`` with the estimate (see the module docstring for the names; the keys:
    :class:`dfltheory.verify.records.Verdict`)."""
    from dfltheory.verify.records import Verdict

    check = thm.check("all", **_for(thm, values))
    out = {"bound": check.value, "dominant": check.dominant_term, "paper_conditions_hold": check.paper_ok,
           "all_conditions_hold": check.all_ok, "failed": [v.text for v in check.violated + check.undecided]}
    if not check.all_ok:  # the formula's value is then no bound
        out.update(bound=None, formula_value=check.value, verdict="conditions fail")
        if "T" in thm.symbols and any("T" in c.names for c in thm.conditions):
            try:
                T_min = thm.smallest("T", "all", **{k: v for k, v in _for(thm, values).items() if k != "T"})
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


def overlay(thm, measure: str, terms: np.ndarray, values: Mapping[str, float]) -> dict:
    """The measured quantity at every horizon T = 1..R (mean over seeds, running min/average) and the bound at
    every T with the run's constants, NaN where the conditions fail at that T."""
    R = terms.shape[1]
    T = np.arange(1, R + 1, dtype=float)
    vals = {**_for(thm, values), "T": T}
    bound = np.asarray(thm.evaluate(**vals), dtype=float) * np.ones_like(T)
    ok = np.asarray(thm.valid("all", **vals)) & np.isfinite(bound)
    return {"T": T.astype(int).tolist(), "measured": M.running(measure, terms.mean(0)).tolist(),
            "bound": np.where(ok, bound, np.nan).tolist()}


@dataclass
class Setting:
    """One setting of a paper: constants family, label, topology, instance, symbol values, K, step, horizon T;
    ``primary`` settings give the overlays; ``only`` restricts it to some targets (the longer-horizon settings)."""

    family: str
    label: str
    topo: Topo
    inst: Instance
    values: dict
    K: int
    eta: float
    T: int
    primary: bool
    only: frozenset | None = None

    def targets(self, targets: Sequence[Target]) -> list[Target]:
        return [t for t in targets if self.only is None or t.theorem in self.only]


def _longer(plan: PaperPlan, targets: Sequence[Target], size: Size, primary: Sequence[Setting]) -> list[Setting]:
    """For a target whose conditions fail at the size's T only because T is too small (DFedPGP's C^2 < (1-q)^2 T),
    a setting at the smallest T the conditions admit (2 % above it), if that is at most ``size.longest``."""
    from dfltheory.bounds import get

    out: dict[int, set] = {}
    for st in primary:
        for target in targets:
            thm = get(target.theorem)
            vals = _for(thm, st.values)
            if "T" not in thm.symbols or not set(thm.required) <= set(vals) or thm.check("all", **vals).all_ok:
                continue  # no horizon in the theorem, a value known only after the runs (Xi), or nothing fails
            try:
                T_min = thm.smallest("T", "all", **{k: v for k, v in vals.items() if k != "T"})
            except ValueError:
                continue
            T = math.ceil(1.02 * T_min)
            if size.T < T <= size.longest and thm.check("all", **{**vals, "T": T}).all_ok:
                out.setdefault((T, math.ceil(T_min)), set()).add(target.theorem)
    return [replace(st, label=f"{st.label}, T = {T} (the conditions need T >= {need})", T=T,
                    values={**st.values, "T": T}, primary=False, only=frozenset(ths))
            for st in primary for (T, need), ths in sorted(out.items())]


def _settings(plan: PaperPlan, size: Size, step: float,
              floor: float) -> list[tuple[str, Topo, float | None, int, bool]]:
    """(label, topology, step, K, primary) of every setting of a paper at one instance family: each topology at
    every fraction of the largest step, raised to the smallest admissible step ``floor`` where the fraction falls
    below it (DFedADMM needs eta >= lam_pen/K), and the first topology at twice K with its own largest step (None:
    computed later). The primary settings (largest step, the plan's K) give the overlays and the topology
    dependence."""
    topos = plan.topologies[: size.topologies]
    s = plan.step
    out = []
    for t in topos:
        for frac in size.fractions:
            if frac == 1.0 or frac * step >= floor:
                out.append((f"{t.label}, {s} = {frac:g} x largest", t, step * frac, plan.K, frac == 1.0))
            elif floor < step:
                out.append((f"{t.label}, {s} = smallest admissible ({frac:g} x largest is below it)", t, floor,
                            plan.K, False))
    if size.extra_K and _free_K(plan):
        out.append((f"{topos[0].label}, K = {2 * plan.K}, {s} = largest at that K", topos[0], None, 2 * plan.K, False))
    return out


def _free_K(plan: PaperPlan) -> bool:
    """Whether every algorithm of the plan takes the K it is given (D-PSGD and SGP force K = 1: a row at 2 K would
    repeat the K = 1 runs, issue 33 item 5)."""
    from dfltheory.empirical.algorithms import make

    return all(not make(t.algo).K for t in plan.targets)


def smallest_step(plan: PaperPlan, targets: Sequence[Target], insts: Sequence[Instance]) -> float:
    """The smallest step that every target's conditions admit on every instance (0 where they admit steps down to
    0)."""
    from dfltheory.bounds import get

    floor = 0.0
    for target in targets:
        thm = get(target.theorem)
        for inst in insts:
            vals = {k: v for k, v in _for(thm, inst.values).items() if k != plan.step}
            try:
                sol = thm.solve(plan.step, "all", **vals)
            except (ValueError, KeyError):
                continue
            if not sol.empty:
                low, _, closed = sol.intervals[0][:3]
                floor = max(floor, low if closed else low * (1 + 1e-6))  # just inside an open end
    return floor


def verify_paper(plan: PaperPlan, targets: Sequence[Target], size: Size, cache: RunCache,
                 progress: Callable | None = None, workers: int = 1, device: str = "cpu") -> dict:
    """Verdicts, overlays and topology dependence of one paper (see the module docstring)."""
    from dfltheory.bounds import get

    topos = plan.topologies[: size.topologies]
    problem, insts = _setup(plan, size, targets[0], topos, size.T)
    families = sorted({i.constants for i in insts}, key=["certified", "cited", "measured"].index)

    # the settings: per constants family, per topology, step and K (and a longer horizon where the conditions need it)
    settings, verdicts, overlays, topo_rows = [], [], [], []
    for family in families:
        fam = [i for i in insts if i.constants == family]
        step, failures = largest_step(plan, targets, fam)
        for (theorem, _, label), failed in failures.items():
            verdicts.append({"theorem": theorem, "paper": plan.paper, "variant": get(theorem).variant,
                             "main": plan.target(theorem).main, "setting": f"{label}, any step",
                             "problem": plan.problem, "topology": label, "m": size.m, "T": size.T,
                             "constants": family, "verdict": "conditions fail", "failed": failed,
                             "note": f"no step size {plan.step} > 0 meets every condition"})
        if step is None:
            continue
        for label, topo, eta, K, primary in _settings(plan, size, step, smallest_step(plan, targets, fam)):
            inst = next(i for i in fam if i.topo == topo)
            values = {**inst.values, "K": K, "K_u": K}
            if eta is None:  # the extra-K setting: its own largest step
                eta, _ = largest_step(plan, targets, [replace(inst, values=values)])
                if eta is None:
                    continue
            values[plan.step] = eta
            settings.append(Setting(family, label, topo, inst, values, K, eta, size.T, primary))
        settings += _longer(plan, targets, size, [s for s in settings if s.family == family and s.primary][:1])

    jobs = {}
    for st in settings:
        for target in st.targets(targets):
            key = (target.algo, tuple(sorted(target.hp.items())), st.topo.label, st.K, st.eta, st.T)
            if key not in jobs:
                jobs[key] = Job(tuple(run_config(plan, problem, target, st.topo, st.values, st.eta, st.K, st.T, size,
                                                 s, device) for s in range(size.seeds)))
    cache.fill([c for job in jobs.values() for c in job.cfgs], workers, progress)
    results = {key: [cache.get(cfg) for cfg in job.cfgs] for key, job in jobs.items()}

    for st in settings:
        family, label, topo, inst, values, K, eta, primary = (st.family, st.label, st.topo, st.inst, st.values, st.K,
                                                              st.eta, st.primary)
        for target in st.targets(targets):
            key = (target.algo, tuple(sorted(target.hp.items())), topo.label, K, eta, st.T)
            runs, job = results[key], jobs[key]
            thm = get(target.theorem)
            base = {"theorem": target.theorem, "paper": plan.paper, "variant": thm.variant, "main": target.main,
                    "setting": label, "problem": plan.problem, "topology": topo.label, "m": size.m, "T": st.T,
                    "hyper": {plan.step: eta, "K": K, **{k: values[k] for k in plan.symbols if k in values}},
                    "constants": family, "command": job.command, "algo": target.algo}
            if any(status != "completed" for _, status in runs):
                verdicts.append({**base, "verdict": "diverged", "note": "a run diverged; reproduce with the command"})
                continue
            vals = dict(values)
            terms = np.stack([M.per_round(target.measure, rows, vals) for rows, _ in runs])
            if "Xi" in thm.symbols:  # DFedCata's consensus error, measured (an upper estimate: around a_bar)
                vals["Xi"] = float(np.mean([[r["consensus"] for r in rows[:-1]] for rows, _ in runs]))
            judged = [(target.measure, False)]
            if target.theorem in plan.proof_measure:  # the proof bounds another functional: judged too, labelled
                judged.append((plan.proof_measure[target.theorem], True))
            for measure, is_proof in judged:
                est = M.expectation(measure, terms)
                v = judged_verdict(thm, est, vals, inst.trivial[target.measure], terms, measure, is_proof)
                note = inst.note
                if measure == "min":
                    note = (note + "; " if note else "") + "interval of the mean at the minimizing round"
                if v["verdict"] == "violated":
                    note = (note + "; " if note else "") + f"counter-example: {job.command} (seeds 0..{size.seeds - 1})"
                note = "; ".join(n for n in (v.pop("note", ""), note) if n)
                verdicts.append({**base, **v,
                                 "variant": thm.variant + (" (judged on the proof's functional)" if is_proof else ""),
                                 "proof_functional": is_proof,
                                 "instance_rationale": f"bound-holds grid: {plan.problem}, {label} (the largest step "
                                 "every target's conditions admit on every topology, or the fraction named)",
                                 "values": _for(thm, vals), "kinds": _kinds(thm, inst), "note": note})
            if primary:
                overlays.append({"theorem": target.theorem, "topology": topo.label, "constants": family,
                                 "main": target.main, **overlay(thm, target.measure, terms, vals)})
                if target.main:
                    topo_rows.append({"topology": topo.label, "constants": family, "mixing": inst.mixing,
                                      "measured": est.mean, "bound": v["bound"], "verdict": v["verdict"]})
    for v in verdicts:  # no bound compared (conditions fail, vacuous, diverged): the level all the same, no label
        if "trivial" not in v:
            inst = next((i for i in insts if i.topo.label == v["topology"] and i.constants == v["constants"]), None)
            level = inst.trivial[plan.target(v["theorem"]).measure] if inst else None
            v.update(trivial=level.to_dict() if level else None, informative=False, label=f"no bound: {v['verdict']}")
        v.setdefault("functional", functional(plan.target(v["theorem"]).measure))
        v.setdefault("instance_rationale", f"bound-holds grid: {plan.problem}, {v.get('setting')}")
        v.setdefault("c_star", {"factor": None, "instrument": None})
        v.setdefault("term_shares", {})
    return {"verdicts": verdicts, "overlays": overlays, "topology": _topology_dependence(plan, topo_rows)}


def _topology_dependence(plan: PaperPlan, rows: list[dict]) -> list[dict]:
    """Measured and predicted ratios across topologies, relative to the best-mixing one, per constants family."""
    out = []
    for family in sorted({r["constants"] for r in rows}):
        fam = [dict(r) for r in rows if r["constants"] == family]
        if len(fam) < 2:
            continue
        ref = min(fam, key=lambda r: r["mixing"])
        for r in fam:  # a bound is None where its conditions fail: no predicted ratio then
            r["measured_ratio"] = r["measured"] / ref["measured"]
            bounds = (r["bound"], ref["bound"])
            r["bound_ratio"] = (r["bound"] / ref["bound"] if all(b is not None and 0 < b < math.inf for b in bounds)
                                else None)
        main = next(t.theorem for t in plan.targets if t.main)
        out.append({"paper": plan.paper, "theorem": main, "constants": family, "reference": ref["topology"],
                    "rows": fam})
    return out


# ------------------------------------------------------------------------------------------------ T*
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

    problem, insts = _setup(plan, size, targets[0], plan.topologies[: size.topologies], size.T)
    rows = []
    for target in targets:
        thm = get(target.theorem)
        for inst in insts:
            vals = _for(thm, {**inst.values, "Xi": 0.0})
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


# ------------------------------------------------------------------------------------------------ informative runs
def replicated_terms(cfg: Mapping, seeds: int, measure: str, values: Mapping[str, float], rounds: int, root: Path,
                     progress: Callable | None = None, checkpoint_every: int = 5000, progress_every: int = 1000,
                     compile: bool | None = None) -> tuple[np.ndarray, float]:
    """(seeds, rounds) per-round terms (:func:`dfltheory.verify.measures.per_round`) of ``seeds`` independent copies
    of the run ``cfg`` trained as one engine in float64 (:mod:`dfltheory.empirical.replicas`; ``torch.compile``d
    where a C++ compiler is found), and the seconds it took. Cached in ``root/<key>``: ``terms.npy`` once complete;
    ``checkpoint.pt`` every ``checkpoint_every`` rounds, from which a cut run resumes bit-exactly.
    ``progress(done, total, eta_seconds)`` every ``progress_every`` rounds. ``compile`` None: compiled where
    ``torch.compile`` can run (the cache key leaves it out: the two agree to float rounding)."""
    quantity = {"min": "grad_norm_sq", "avg": "grad_norm_sq", "avg_p": "grad_norm_sq_p", "avg_w": "grad_norm_sq_w",
                "avg_pgp": "delta_pgp"}[measure]
    from dfltheory.empirical.sweep import CACHE_VERSION

    # the version: entries written before every copy started at the bound's x0 (or before dpsgd's order changed)
    # are never read back as today's
    key_cfg = {**cfg, "replicas": seeds, "rounds": rounds, "quantity": quantity, "_cache": CACHE_VERSION}
    out = Path(root) / hashlib.sha256(json.dumps(key_cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]
    out.mkdir(parents=True, exist_ok=True)
    from dfltheory.empirical import rundir

    with rundir.lock(out, "the informative run"):  # a second verify training the same run is refused
        return _replicated_terms(cfg, seeds, values, rounds, out, key_cfg, progress, checkpoint_every,
                                 progress_every, compile)


def _replicated_terms(cfg, seeds, values, rounds, out: Path, key_cfg, progress, checkpoint_every,
                      progress_every, compile) -> tuple[np.ndarray, float]:
    """:func:`replicated_terms` inside the lock of its cache entry ``out`` (``key_cfg``: the entry's key)."""
    import torch

    from dfltheory.empirical import rundir
    from dfltheory.empirical.engine import check_compile
    from dfltheory.empirical.replicas import Replicas
    from dfltheory.empirical.rundir import load_checkpoint, save_checkpoint

    quantity = key_cfg["quantity"]
    done_file, ckpt = out / "terms.npy", out / "checkpoint.pt"
    if done_file.exists():
        try:
            meta = json.loads((out / "run.json").read_text())
            terms = np.load(done_file)
            if terms.shape == (seeds, rounds) and np.all(np.isfinite(terms)):
                return terms, float(meta["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged or partial cache entry is trained again
        for entry in out.iterdir():  # the directory stays: its lock is held
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.name != rundir.LOCK:
                entry.unlink(missing_ok=True)
    (out / "config.json").write_text(json.dumps(key_cfg, indent=1, default=str) + "\n")
    compiled = compile
    if compiled is None:
        try:
            check_compile(torch.device(cfg.get("device", "cpu")))
            compiled = True
        except ValueError:
            compiled = False
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny problems: one thread is fastest
    engine, _ = _replicated_engine(cfg, seeds, compiled, out)
    terms, seconds = None, 0.0
    if ckpt.exists():
        try:
            saved = load_checkpoint(ckpt, "bound-holds run", "it is trained again")
            state, terms, seconds = saved["engine"], saved["terms"], saved["seconds"]
            engine.load_state_dict(state)
        except (ValueError, KeyError):  # damaged (digest) or another run's: start again from round 0, fresh
            engine, _ = _replicated_engine(cfg, seeds, compiled, out)
            terms, seconds = None, 0.0
    rep = Replicas(engine, seeds, quantity, (values.get("L_u", 1.0), values.get("L_v", 1.0)))
    start = time.perf_counter()

    def on_round(t, so_far):
        if t % checkpoint_every == 0 and t < rounds:
            save_checkpoint({"engine": engine.state_dict(), "terms": so_far.clone(),
                             "seconds": seconds + time.perf_counter() - start}, ckpt)
        if progress and t % progress_every == 0:
            rate = (time.perf_counter() - start) / max(t - (0 if terms is None else terms.shape[1]), 1)
            progress(t, rounds, rate * (rounds - t))

    try:
        result = rep.run(rounds, terms, on_round).cpu().numpy()
    finally:
        torch.set_num_threads(threads)
    seconds += time.perf_counter() - start
    np.save(done_file, result)
    (out / "run.json").write_text(json.dumps({"seconds": seconds, "compiled": compiled, "seeds": seeds,
                                              "rounds": rounds}) + "\n")
    ckpt.unlink(missing_ok=True)
    return result, seconds


def _problem_horizons(paper: str, problem: str, theorems: tuple[str, ...], size: Size) -> tuple[list[dict], list]:
    """The T* rows and constants table of a paper's targets (named by their theorems: a plan holds functions, which
    do not pass to a worker process) on one problem."""
    plan = plans()[paper]
    return _horizon_rows(replace(plan, problem=problem), [plan.target(t) for t in theorems], size)


class Background:
    """[fn(*a) for a in args] started at once in ``workers`` processes and collected later (:meth:`results`), so
    that the longest runs of a verification train beside its other stages instead of after them (issue 33 item 4:
    DFedPGP's informative run alone is ~180,000 rounds). With one worker nothing runs until :meth:`results`, which
    is then :func:`pool_map`."""

    def __init__(self, fn: Callable, args: Sequence[tuple], workers: int):
        self.fn, self.args, self.workers, self.start = fn, list(args), workers, time.perf_counter()
        self.pool = self.futures = None
        if workers > 1 and len(self.args) > 1:
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=min(workers, len(self.args)))
            self.futures = [self.pool.submit(fn, *a) for a in self.args]

    def results(self, progress: Callable | None = None) -> list:
        """The results in order; ``progress(done, total, eta_seconds)`` as :func:`pool_map` (the runs already ended
        counted at once)."""
        if self.futures is None:
            return pool_map(self.fn, self.args, self.workers, progress)
        from concurrent.futures import as_completed

        total = len(self.futures)
        try:
            for n, _ in enumerate(as_completed(self.futures), 1):
                if progress:
                    progress(n, total, (time.perf_counter() - self.start) / n * (total - n))
            return [f.result() for f in self.futures]
        finally:
            self.close()

    def close(self) -> None:
        """Stop: the runs not started are cancelled (a run in training ends in its worker, which releases its cache
        entry's lock)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def pool_map(fn: Callable, args: Sequence[tuple], workers: int, progress: Callable | None = None) -> list:
    """[fn(*a) for a in args] in order, in ``workers`` processes where there are more than one (and more than one
    call); ``progress(done, total, eta_seconds)`` before the first and after each call that ends."""
    start = time.perf_counter()

    def tick(done):
        if progress:
            progress(done, len(args), (time.perf_counter() - start) / max(done, 1) * (len(args) - done))

    tick(0)
    if workers < 2 or len(args) < 2:
        out = []
        for a in args:
            out.append(fn(*a))
            tick(len(out))
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(args))) as pool:
        futures = [pool.submit(fn, *a) for a in args]
        for n, _ in enumerate(as_completed(futures), 1):
            tick(n)
        return [f.result() for f in futures]


def _replicated_engine(cfg: Mapping, seeds: int, compiled: bool, folder: Path):
    """The engine of ``seeds`` copies of the run ``cfg`` in float64 (the model, and with it the data and the
    mixing), every copy starting at the x^0 of the bound: the single run's initial model as the float32 default
    draws it (:func:`_start_point` evaluates f(x^0) there), written to ``folder/x0.pt`` and read as the float64
    build's ``init_weights`` (the float64 default draws other weights: f(x^0) - f* = 0.2550 against the bound's 0.2183
    on synthetic-robust-common, issue 33)."""
    import torch

    from dfltheory.empirical.runner import build

    single, _ = build({**cfg, "out": None})
    start = Path(folder) / "x0.pt"
    torch.save({k: v.detach().clone() for k, v in single.model.module.state_dict().items()}, start)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return build({**cfg, "out": None, "compile": compiled, "init_weights": str(start)}, replicas=seeds,
                     announce=False)  # verify's own start point: no note
    finally:
        torch.set_default_dtype(default)


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
        vals = {**_for(thm, values), step: eta}
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


#: the steps an informative candidate trains, as fractions of the step that minimises the bound at T_run (issue 33
#: item 5): the bound's optimisation term grows as 1/step, the measured average of ||grad f||^2 about as fast while
#: the descent completes, and the other terms shrink, so bound / measured falls with the step (DFedSGPSM: 2.93 at the
#: bound's best step, 1.94 at half of it; DFedCata 12.7 and 8.76), until the bound reaches the trivial level
STEP_FRACTIONS = (1.0, 0.5, 0.25)


def _informative_at(thm, values: Mapping[str, float], level) -> bool:
    """Whether ``thm``'s conditions hold at ``values`` and its bound there is finite and below the trivial level."""
    check = thm.check("all", **values)
    return bool(check.all_ok and check.value is not None and math.isfinite(check.value)
                and level.informative(check.value))


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
    the reach gets an entry saying so. An
    entry to run holds ``candidates``, each with ``job`` (the arguments of its :func:`replicated_terms` call) and
    ``judge`` (those of its :func:`informative_verdicts` call but the terms)."""
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
        # a bound without a topology symbol is the same on every topology: only the sparsest one is trained (the
        # measured quantity is largest where mixing is slowest; DFedCata's three topologies gave ratios equal to
        # 4 digits, issue 33)
        seen, kept = set(), []
        for r in within:
            free = not (set(get(r["theorem"]).symbols) & TOPOLOGY_SYMBOLS)
            key = (r["theorem"], r["problem"], r["constants"], r["topology"] if not free else None)
            if key not in seen:
                seen.add(key)
                kept.append(r)
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
                setups[row["problem"]] = _setup(replace(plan, problem=row["problem"]), size, main,
                                                plan.topologies[: size.topologies], size.T)
            problem, insts = setups[row["problem"]]
            inst = next(i for i in insts if i.topo.label == row["topology"] and i.constants == row["constants"])
            thm = get(row["theorem"])  # the main theorem, or the variant whose T* it is
            values = {**inst.values, "Xi": 0.0, **row.get("tuned", {})}
            best = at(thm, plan.step, {k: v for k, v in _for(thm, values).items() if k not in (plan.step, "T")},
                      T_run, "best").step
            for fraction in STEP_FRACTIONS:
                if candidates and spent + T_run > size.budget:
                    break
                eta = best * fraction
                if fraction != 1.0 and not _informative_at(thm, {**_for(thm, values), plan.step: eta, "T": T_run},
                                                           inst.trivial[main.measure]):
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


# ------------------------------------------------------------------------------------------------ rate in T
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
    problem, insts = _setup(plan, size, target, (topo,), T0)
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


# ------------------------------------------------------------------------------------------------ all
def check_run_options(size, sizes: Mapping, workers: int, device: str):
    """The size object named ``size`` in ``sizes`` (or ``size`` itself), after checking ``workers`` (processes that
    train runs) and ``device``; bad values are ValueErrors naming the fix."""
    from dfltheory.empirical.runner import check_device

    check_device(device)
    check_workers(workers)
    if isinstance(size, str):
        if size not in sizes:
            raise ValueError(f"unknown size {size!r}; choose one of {', '.join(sizes)}")
        return sizes[size]
    return size


def verify(targets: Sequence[str] = ("all",), size: str | Size = "default", out: str | Path = "verify",
           progress: Callable[[str, int, int, float], None] | None = None, rates: bool = True, workers: int = 1,
           device: str = "cpu") -> dict:
    """Run (or read from the cache in ``out``) the bound-holds experiments of ``targets`` ('all', paper names or
    theorem ids) and return the verdicts, overlays, topology dependence and rates as one JSON-safe dict; it is
    also written to ``out/verify.json``. ``progress(stage, done, total, eta_seconds)`` is called after every run;
    ``workers`` processes train the runs (one CPU thread each); ``device`` ('cpu', 'cuda', ...) is where."""
    import platform

    from dfltheory import __version__

    size = check_run_options(size, SIZES, workers, device)
    chosen = resolve_targets(targets)
    out = Path(out)
    cache = RunCache(out / "runs")
    start = time.perf_counter()
    result = {"version": __version__, "size": next((k for k, v in SIZES.items() if v == size), "custom"),
              "seeds": list(range(size.seeds)), "m": size.m, "T": size.T, "device": device, "workers": workers,
              "machine": f"{platform.platform()}, {platform.processor() or platform.machine()}",
              "verdicts": [], "overlays": {}, "topology": [], "rates": [], "horizons": [], "informative": [],
              "mutations": [],
              "constants": {}}
    found = horizon_rows(chosen, size, workers)
    # the informative runs need only the T* rows: they start now and train beside the bound-holds and rate runs,
    # the longest first (DFedPGP's ~180,000 rounds would otherwise come after every other stage)
    name = next((k for k, v in SIZES.items() if v == size), "custom")
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
                result["verdicts"] += [{"theorem": thm, "paper": paper, "variant": "printed", "main": True,
                                        "setting": "-", "problem": "-", "topology": "-", "constants": "-",
                                        "verdict": "not testable", "failed": [], "note": why,
                                        "functional": "-", "instance_rationale": "no run can test it",
                                        "c_star": {"factor": None, "instrument": None}, "term_shares": {}}
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
    """The T* rows and the constants tables (:func:`horizon_rows`) of ``targets`` at ``size``, without training."""
    size = check_run_options(size, SIZES, workers, "cpu")
    found = horizon_rows(resolve_targets(targets), size, workers)
    rows = [r for part, _ in found.values() for r in part]
    tables = {k: v for _, more in found.values() for k, v in more.items()}
    return json_safe(rows), json_safe(tables)


def json_safe(obj):
    """``obj`` as strict JSON: mappings with string keys, tuples and sets as lists, numpy scalars as Python numbers,
    NaN as None, infinities as the strings 'inf'/'-inf', any other number by ``float`` and anything else not JSON
    (a path) by its ``str``."""
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    try:
        return json_safe(float(obj))  # a 0-d tensor, a Fraction
    except (TypeError, ValueError):
        return str(obj)
