"""Measured against predicted: DFedSAM (seed 001) on the synthetic least-squares problem, whose L, sigma_g,
sigma_l and f* are exact, with the theorem evaluated at the run's own constants.

* :func:`dfedsam_run`      one run and the symbol values of Theorem 4.1 it realises;
* :func:`topology_sweep`   the same problem and step size across topologies and gossip steps Q: the measured
                           error relative to the complete graph against the bound's ratio;
* :func:`rate_in_T`        Corollary 4.1.1's schedule eta = c/(L sqrt(KT)), rho = r/sqrt(T) over horizons T:
                           the measured slope in log T against the bound's and the stated -1/2.

Each run writes its directory (config, metrics, checkpoint) under ``out``; an existing one is replaced.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

PROBLEM = "synthetic-quadratic"
#: (topology, Q) pairs of :func:`topology_sweep`; the complete graph last (the reference, lambda = 0).
SWEEP_CASES = (("ring", 1), ("ring", 2), ("ring", 4), ("torus", 1), ("exponential", 1), ("full", 1))


def dfedsam_run(out: Path, n: int, rounds: int, eta: float, rho: float, K: int = 5, topology: str = "ring",
                Q: int = 1, seed: int = 0) -> tuple[list[dict], dict]:
    """Train DFedSAM (DFedSAM-MGS when Q > 1) with Metropolis weights into ``out``; returns the metrics rows
    and the values of every symbol of ``dfedsam.thm4.1`` except T (B is the largest measured gradient norm)."""
    from dfltheory.empirical.data import load
    from dfltheory.empirical.runner import run
    from dfltheory.empirical.rundir import read_records
    from dfltheory.topology import analyze

    shutil.rmtree(out, ignore_errors=True)
    run({"algo": "dfedsam-mgs" if Q > 1 else "dfedsam", "dataset": PROBLEM, "n": n, "topology": topology,
         "weights": "metropolis", "rounds": rounds, "K": K, "lr": eta, "rho": rho, "Q": Q if Q > 1 else None,
         "batch_size": 16, "seed": seed, "out": str(out), "progress": False, "local_eval": False,
         "checkpoint_every": rounds})
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


def largest_step_size(n: int, K: int = 5, rho: float = 0.01) -> float:
    """The largest eta that every condition of Theorem 4.1 admits on this problem (its conditions involve
    eta, K and L only)."""
    from dfltheory.bounds import get
    from dfltheory.empirical.data import load

    L = load(PROBLEM, n, seed=0).constants["L"]
    return get("dfedsam.thm4.1").largest("eta", K=K, L=L, rho=rho, Q=1, lam=0.5, m=n)


def topology_sweep(out: str | Path, n: int = 16, rounds: int = 100, K: int = 5, rho: float = 0.01,
                   cases: Sequence[tuple[str, int]] = SWEEP_CASES) -> dict:
    """One run per (topology, Q) at the largest admissible step size; rows with lambda, the measured
    min_t ||grad f(x_bar^t)||^2, the final consensus distance, the bound at T = rounds, its dominant term and
    both relative to the last case (the complete graph by default)."""
    from dfltheory.bounds import get

    thm = get("dfedsam.thm4.1")
    eta = largest_step_size(n, K, rho)
    rows = []
    for topology, Q in cases:
        metrics, values = dfedsam_run(Path(out) / f"{topology}-Q{Q}", n, rounds, eta, rho, K, topology, Q)
        check = thm.check(T=rounds, **values)
        rows.append({"topology": topology, "Q": Q, "lambda": values["lam"],
                     "measured": min(r["grad_norm_sq"] for r in metrics), "final_consensus": metrics[-1]["consensus"],
                     "bound": check.value, "dominant": check.dominant_term, "conditions_hold": check.ok})
    for r in rows:
        r["measured_ratio"] = r["measured"] / rows[-1]["measured"]
        r["bound_ratio"] = r["bound"] / rows[-1]["bound"]
    return {"n": n, "rounds": rounds, "K": K, "rho": rho, "eta": eta, "theorem": thm.id, "rows": rows}


def rate_in_T(out: str | Path, n: int = 16, horizons: Sequence[int] = (25, 50, 100, 200, 400, 800), K: int = 5,
              r: float = 0.05) -> dict:
    """DFedSAM under Corollary 4.1.1's schedule for each horizon T, with c the largest constant that the
    corollary's condition T >= 100 c^2 K allows at the smallest T; the least-squares slopes in log T of the
    measured min_t ||grad f||^2 and of the bound (``dfedsam.cor4.1.1.derived``), the stated -1/2, the slopes between
    consecutive horizons (``local_slopes``), and the horizon from which the bound's O(1/sqrt(KT)) term is its
    largest."""
    from dfltheory.bounds import get
    from dfltheory.empirical.data import load

    cor = get("dfedsam.cor4.1.1.derived")
    L = load(PROBLEM, n, seed=0).constants["L"]
    c = math.sqrt(min(horizons) / (100 * K))
    rows = []
    for T in horizons:
        metrics, values = dfedsam_run(Path(out) / f"T{T}", n, T, c / (L * math.sqrt(K * T)), r / math.sqrt(T), K)
        values = {k: v for k, v in {**values, "T": T, "c": c, "r": r}.items() if k in cor.required}
        rows.append({"T": T, "eta": c / (L * math.sqrt(K * T)), "rho": r / math.sqrt(T),
                     "measured": min(m["grad_norm_sq"] for m in metrics), "bound": cor.evaluate(**values),
                     "conditions_hold": cor.check(**values).ok})
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
