"""Does DFedSAM converge at the rate its corollary states?

Corollary 4.1.1 of seed 001 runs DFedSAM with eta = c/(L sqrt(K T)) and rho = r/sqrt(T) and states
min_t E||grad f(x_bar^t)||^2 = O(1/sqrt(K T)). For a range of horizons T this example trains DFedSAM with that
schedule on a least-squares problem with exact constants (ring of n clients), measures
min_{t<=T} ||grad f(x_bar^t)||^2, and fits its slope in log T against the slope of the bound
(dfedsam.cor4.1.1.derived, the theorem with the schedule substituted) and the stated -1/2. The constant c is
the largest that the corollary's condition T >= 100 c^2 K allows at the smallest T. Prints a table and writes
``rate_in_T.png`` and ``rate_in_T.json`` into --out.

    .venv/bin/python examples/rate_in_T.py [--n 16] [--T 25 50 100 200 400 800] [--out runs/rate_in_T]

About a minute on two CPU cores at the defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import numpy as np

from dfltheory.bounds import get
from dfltheory.empirical.data import load
from dfltheory.empirical.runner import run
from dfltheory.figures.training import problem_constants, read_metrics
from dfltheory.topology import analyze


def slope(T, y) -> float:
    """Least-squares slope of log y against log T."""
    return float(np.polyfit(np.log(T), np.log(y), 1)[0])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--K", type=int, default=5)
    p.add_argument("--T", type=int, nargs="+", default=[25, 50, 100, 200, 400, 800])
    p.add_argument("--r", type=float, default=0.05, help="SAM radius constant: rho = r / sqrt(T)")
    p.add_argument("--out", default="runs/rate_in_T")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cor = get("dfedsam.cor4.1.1.derived")
    consts = load("synthetic-quadratic", args.n, seed=0).constants
    lam = analyze("ring", args.n, weights="metropolis")["lambda"]
    c = math.sqrt(min(args.T) / (100 * args.K))  # T >= 100 c^2 K at every horizon
    rows = []
    for T in args.T:
        eta, rho = c / (consts["L"] * math.sqrt(args.K * T)), args.r / math.sqrt(T)
        run_dir = out / f"T{T}"
        shutil.rmtree(run_dir, ignore_errors=True)
        run({"algo": "dfedsam", "dataset": "synthetic-quadratic", "n": args.n, "topology": "ring",
             "weights": "metropolis", "rounds": T, "K": args.K, "lr": eta, "rho": rho, "batch_size": 16,
             "seed": 0, "out": str(run_dir), "progress": False, "local_eval": False, "checkpoint_every": T})
        metrics = read_metrics(run_dir / "metrics.jsonl")
        values = {"K": args.K, "T": T, "lam": lam, "c": c, "r": args.r, **problem_constants(consts, metrics)}
        values = {k: v for k, v in values.items() if k in cor.required}
        rows.append({"T": T, "eta": eta, "rho": rho, "measured": min(r["grad_norm_sq"] for r in metrics),
                     "bound": cor.evaluate(**values), "conditions_hold": cor.check(**values).ok})
        print(f"T = {T:>5}  eta = {eta:.3g}  measured = {rows[-1]['measured']:.4g}  bound = {rows[-1]['bound']:.4g}",
              flush=True)
    Ts = np.array([r["T"] for r in rows], dtype=float)
    fit = {"measured": slope(Ts, [r["measured"] for r in rows]), "bound": slope(Ts, [r["bound"] for r in rows]),
           "stated": -0.5}
    grid = np.unique(np.round(np.logspace(0, 12, 1201)))
    terms = cor.evaluate_terms(**{**values, "T": grid})
    leading = grid[np.argmax(terms["optimization"] >= np.max([v for k, v in terms.items() if k != "optimization"],
                                                             axis=0))]
    print(f"\nslope in log T: measured {fit['measured']:.3f}, bound {fit['bound']:.3f}, stated {fit['stated']}")
    print(f"the bound's O(1/sqrt(KT)) term is its largest only from T = {leading:.3g} on")
    (out / "rate_in_T.json").write_text(json.dumps({"c": c, "r": args.r, "lambda": lam, "rows": rows,
                                                    "slopes": fit, "T_leading": float(leading)}, indent=1))
    figure(rows, fit, out / "rate_in_T.png")


def figure(rows, fit, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    T = np.array([r["T"] for r in rows], dtype=float)
    measured = np.array([r["measured"] for r in rows])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(T, measured, "o-", label=f"measured min_t ||grad f||^2 (slope {fit['measured']:.2f})")
    ax.plot(T, [r["bound"] for r in rows], "k--", label=f"dfedsam.cor4.1.1.derived (slope {fit['bound']:.2f})")
    ax.plot(T, measured[0] * (T / T[0]) ** -0.5, ":", color="grey", label="stated O(1/sqrt(KT)) (slope -0.5)")
    ax.set(xscale="log", yscale="log", xlabel="horizon T (schedule eta = c/(L sqrt(KT)), rho = r/sqrt(T))",
           title="DFedSAM on least squares, ring: rate in T")
    ax.set_xticks(T, [str(int(t)) for t in T])
    ax.minorticks_off()
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
