"""The sizes, targets and instances of a verification: how much is run (:class:`Size`, :data:`SIZES`), which
theorems (:func:`resolve_targets`), each problem instance on each topology with every symbol value that does not
depend on the runs (:class:`Instance`, :func:`problem_instances`), and the ``train`` config of one run
(:func:`run_config`) with the command that reproduces it (:func:`train_command`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dfltheory.bounds.catalog import topology_keys
from dfltheory.empirical.run_config import flag
from dfltheory.empirical.sweep import check_workers
from dfltheory.verify.plans import PaperPlan, Target, Topo, plans, resolve


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


def train_command(cfg: Mapping) -> str:
    """The ``dfltheory train`` command line that reproduces a run config."""
    flags = []
    for key, value in cfg.items():
        if value is None or key in ("progress", "threads"):
            continue
        option = flag(key)
        if key == "local_eval":
            if not value:
                flags.append("--no-local-eval")
            continue
        if isinstance(value, bool):
            if value:
                flags.append(option)
            continue
        if isinstance(value, Mapping):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        flags.append(f"{option} {value!r}" if isinstance(value, float) else f"{option} {value}")
    return "dfltheory train " + " ".join(flags)


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


def problem_instances(plan: PaperPlan, size: Size, target: Target, topos: Sequence[Topo], T: int):
    """The plan's problem and its instances on ``topos`` at horizon T: the constants in the paper's forms and every
    value that does not depend on the runs."""
    from dfltheory.verify.problems import PROBLEMS, theorem_constants

    problem = PROBLEMS[plan.problem]
    consts = theorem_constants(problem.load(size.m), size.batch_size, theorem=plan.paper)
    probe = run_config(plan, problem, target, topos[0], {k: 0.0 for k in plan.config}, 1.0, plan.K, T, size, 0)
    probe = {k: v for k, v in probe.items() if k not in plan.config.values()}  # the start point needs no step
    return problem, instances(plan, size, probe, consts, topos, T)


def start_point(base_cfg: Mapping, consts: Mapping, values: Mapping[str, float], measures: Iterable[str],
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
    f0, x0_sq, d, levels, numeric = start_point(base_cfg, consts, {k: c.value for k, c in consts.items()},
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


def theorem_kinds(thm, inst: Instance) -> dict[str, str]:
    """How each problem constant the theorem uses is known: exact, bound (certified) or measured."""
    return {k: v for k, v in inst.kinds.items() if k in thm.symbols}


def theorem_values(thm, values: Mapping[str, float]) -> dict[str, float]:
    """The values of the symbols the theorem has."""
    return {k: v for k, v in values.items() if k in thm.symbols}


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
