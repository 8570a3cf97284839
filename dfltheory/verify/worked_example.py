"""Measured against predicted on a problem whose constants are exact: a paper's worked example (a
:class:`WorkedExample`, declared by its verification plan, ``PaperPlan.example``) trains its algorithm on the
synthetic least-squares problem, whose L, sigma_g, sigma_l and f* are exact, and evaluates its theorem at the run's
own constants. The report runs the example the registered plans declare
(:func:`dfltheory.verify.report_data.worked_example`); ``examples/`` runs it larger.

* :func:`example_run`      one run and the symbol values of the theorem it realises;
* :func:`topology_sweep`   the same problem and step size across topologies and gossip steps Q: the measured
                           error relative to the complete graph against the bound's ratio;
* :func:`rate_in_T`        the corollary's schedule (``WorkedExample.schedule``) over horizons T: the measured slope
                           in log T against the bound's and the stated -1/2.

Each run writes its directory (config, metrics, checkpoint) under ``out``; an existing one is replaced.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

PROBLEM = "synthetic-quadratic"
#: (topology, Q) pairs of :func:`topology_sweep`; the complete graph last (the reference, lambda = 0).
SWEEP_CASES = (("ring", 1), ("ring", 2), ("ring", 4), ("torus", 1), ("exponential", 1), ("full", 1))


@dataclass(frozen=True)
class WorkedExample:
    """A paper's worked example: ``algorithm`` (``gossip_algorithm`` where a round takes Q > 1 gossip steps) with K
    local steps and radius ``rho`` on the least-squares problem, measured against ``theorem`` (whose symbols are eta,
    K, rho, m, Q, lam and the problem's constants L, sigma_g, sigma_l, B, f0_minus_fstar), and against
    ``corollary`` under its schedule: ``schedule(T, K, L, c, r)`` -> (eta, rho), with c the largest constant
    ``largest_c(T_min, K)`` that its condition allows at the smallest horizon. ``illustration``: the values at which
    the report draws the theorem against the spectral gap (Q = 1, 2, 4), ``illustration_text`` its subtitle;
    ``name``, ``gossip_name``, ``theorem_name``, ``corollary_name``: how the report's text and captions name them."""

    theorem: str
    corollary: str
    algorithm: str
    gossip_algorithm: str
    schedule: Callable[[int, int, float, float, float], tuple[float, float]]
    largest_c: Callable[[int, int], float]
    name: str
    gossip_name: str
    theorem_name: str
    corollary_name: str
    K: int = 5
    rho: float = 0.01
    r: float = 0.05
    illustration: Mapping[str, float] = field(default_factory=dict)
    illustration_text: str = ""  # the figure's subtitle (default: the values, one by one)


def example_run(example: WorkedExample, out: Path, n: int, rounds: int, eta: float, rho: float, K: int = 5,
                topology: str = "ring", Q: int = 1, seed: int = 0) -> tuple[list[dict], dict]:
    """Train the example's algorithm (its gossip variant when Q > 1) with Metropolis weights into ``out``; returns
    the metrics rows and the values of every symbol of its theorem except T (B is the largest measured gradient
    norm)."""
    from dfltheory.empirical.data import load
    from dfltheory.empirical.rundir import read_records
    from dfltheory.empirical.runner import run
    from dfltheory.topology import analyze

    shutil.rmtree(out, ignore_errors=True)
    run({"algo": example.gossip_algorithm if Q > 1 else example.algorithm, "dataset": PROBLEM, "n": n,
         "topology": topology, "weights": "metropolis", "rounds": rounds, "K": K, "lr": eta, "rho": rho,
         "Q": Q if Q > 1 else None, "batch_size": 16, "seed": seed, "out": str(out), "progress": False,
         "local_eval": False, "checkpoint_every": rounds})
    rows = read_records(Path(out) / "metrics.jsonl")
    lam = analyze(topology, n, weights="metropolis")["lambda"]
    values = {"eta": eta, "K": K, "rho": rho, "m": n, "Q": Q, "lam": lam,
              **problem_constants(load(PROBLEM, n, seed=seed).constants, rows)}
    return rows, values


def problem_constants(constants: Mapping[str, float], rows: Iterable[Mapping]) -> dict[str, float]:
    """The theorem symbols a synthetic problem fixes, from its exact ``constants`` (``load(...).constants``) and
    a run's metrics: L, sigma_g and sigma_l at x*, f(x^0) - f*, and B as the largest measured ||grad f(x_bar^t)||
    (a quadratic has no global gradient bound)."""
    rows = list(rows)
    return {"L": constants["L"], "sigma_g": math.sqrt(constants["sigma_g2_star"]),
            "sigma_l": math.sqrt(constants["sigma_l2_star"]),
            "B": math.sqrt(max(r["grad_norm_sq"] for r in rows)),
            "f0_minus_fstar": rows[0]["train_loss"] - constants["f_star"]}


def largest_step_size(example: WorkedExample, n: int, K: int = 5, rho: float = 0.01) -> float:
    """The largest eta that every condition of the example's theorem admits on this problem (its conditions
    involve eta, K and L only)."""
    from dfltheory.bounds import get
    from dfltheory.empirical.data import load

    L = load(PROBLEM, n, seed=0).constants["L"]
    return get(example.theorem).largest("eta", K=K, L=L, rho=rho, Q=1, lam=0.5, m=n)


def training(example: WorkedExample, out: Path, rounds: int = 60, n: int = 16) -> dict:
    """One run on a ring at the largest step size that the theorem admits; the measured min_t ||grad f(x_bar^t)||^2
    next to the bound evaluated with the run's constants."""
    from dfltheory.bounds import get

    thm = get(example.theorem)
    K, rho = example.K, example.rho
    eta = largest_step_size(example, n, K, rho)
    run_dir = out / f"run-{example.algorithm}-quadratic"
    rows, values = example_run(example, run_dir, n, rounds, eta, rho, K)
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


def topology_sweep(example: WorkedExample, out: str | Path, n: int = 16, rounds: int = 100, K: int = 5,
                   rho: float = 0.01, cases: Sequence[tuple[str, int]] = SWEEP_CASES) -> dict:
    """One run per (topology, Q) at the largest admissible step size; rows with lambda, the measured
    min_t ||grad f(x_bar^t)||^2, the final consensus distance, the bound at T = rounds, its dominant term and
    both relative to the last case (the complete graph by default)."""
    from dfltheory.bounds import get

    thm = get(example.theorem)
    eta = largest_step_size(example, n, K, rho)
    rows = []
    for topology, Q in cases:
        metrics, values = example_run(example, Path(out) / f"{topology}-Q{Q}", n, rounds, eta, rho, K, topology, Q)
        check = thm.check(T=rounds, **values)
        rows.append({"topology": topology, "Q": Q, "lambda": values["lam"],
                     "measured": min(r["grad_norm_sq"] for r in metrics), "final_consensus": metrics[-1]["consensus"],
                     "bound": check.value, "dominant": check.dominant_term, "conditions_hold": check.ok})
    for r in rows:
        r["measured_ratio"] = r["measured"] / rows[-1]["measured"]
        r["bound_ratio"] = r["bound"] / rows[-1]["bound"]
    return {"n": n, "rounds": rounds, "K": K, "rho": rho, "eta": eta, "theorem": thm.id, "rows": rows}


def rate_in_T(example: WorkedExample, out: str | Path, n: int = 16,
              horizons: Sequence[int] = (25, 50, 100, 200, 400, 800), K: int = 5, r: float | None = None) -> dict:
    """The example's algorithm under its corollary's schedule for each horizon T, with c the largest constant that
    the corollary's condition allows at the smallest T; the least-squares slopes in log T of the measured
    min_t ||grad f||^2 and of the bound (``example.corollary``), the stated -1/2, the slopes between consecutive
    horizons (``local_slopes``), and the horizon from which the bound's ``optimization`` term is its largest.
    ``r``: the radius constant of the schedule (default the example's)."""
    from dfltheory.bounds import get
    from dfltheory.empirical.data import load

    r = example.r if r is None else r
    cor = get(example.corollary)
    L = load(PROBLEM, n, seed=0).constants["L"]
    c = example.largest_c(min(horizons), K)
    rows = []
    for T in horizons:
        eta, rho = example.schedule(T, K, L, c, r)
        metrics, values = example_run(example, Path(out) / f"T{T}", n, T, eta, rho, K)
        values = {k: v for k, v in {**values, "T": T, "c": c, "r": r}.items() if k in cor.required}
        rows.append({"T": T, "eta": eta, "rho": rho, "measured": min(m["grad_norm_sq"] for m in metrics),
                     "bound": cor.evaluate(**values), "conditions_hold": cor.check(**values).ok})
    T = np.array(horizons, dtype=float)
    logs = {key: np.log([row[key] for row in rows]) for key in ("measured", "bound")}
    slopes = {key: float(np.polyfit(np.log(T), y, 1)[0]) for key, y in logs.items()}
    # the slope between consecutive horizons: neither curve is a power of T, so the fitted slope depends on the range
    local = {key: (np.diff(y) / np.diff(np.log(T))).tolist() for key, y in logs.items()}
    grid = np.unique(np.round(np.logspace(0, 12, 1201)))
    terms = cor.evaluate_terms(**{**values, "T": grid})  # the constants of the last run
    others = np.max([v for k, v in terms.items() if k != "optimization"], axis=0)
    return {"n": n, "K": K, "c": c, "r": r, "corollary": cor.id, "rows": rows,
            "slopes": {**slopes, "stated": -0.5}, "local_slopes": local,
            "T_leading": float(grid[np.argmax(terms["optimization"] >= others)])}
