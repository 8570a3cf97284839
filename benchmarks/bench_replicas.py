"""Benchmark: informative runs need 1e5 cheap rounds (issue 21, item 3). Target: 1e5 rounds of a d = 10, m = 8
problem with 5 seeds in under 2 minutes on the 2 CPU cores, as a ratio against today's per-round cost measured in the
same run.

    python benchmarks/bench_replicas.py [--rounds 2000] [--full]

Baseline: one seed through the runner as `verify` trained it before (DFedSAM on synthetic-robust, m = 8, K = 4,
b = 4, metrics every round, one thread), times 5 seeds. Fast path: the 5 seeds as replicated clients of one engine
(:mod:`dfltheory.empirical.replicas`), float64, the theorem's per-round quantity kept on the device, compiled where a
C++ compiler is found (the first call's compilation is timed apart). ``--full`` also runs the whole 1e5 rounds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    from dfltheory.empirical.runner import run
    from dfltheory.verify.replicated import replicated_terms

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2000, help="rounds timed on the fast path")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--full", action="store_true", help="also time 1e5 rounds on the fast path")
    args = ap.parse_args()
    cfg = {"algo": "dfedsam", "dataset": "synthetic-robust", "model": "linear", "n": 8, "topology": "ring",
           "weights": "metropolis", "K": 4, "lr": 0.004, "batch_size": 4, "rho": 0.01, "threads": 1,
           "data_params": {"dim": 10, "n_per_client": 100, "heterogeneity": 1.0}, "eval_every": 1}
    with tempfile.TemporaryDirectory() as tmp:
        base_rounds = 200
        run({**cfg, "rounds": 2, "out": str(Path(tmp) / "warm"), "local_eval": False, "progress": False})
        t0 = time.perf_counter()
        run({**cfg, "rounds": base_rounds, "checkpoint_every": base_rounds, "local_eval": False,
             "out": str(Path(tmp) / "base"), "progress": False})
        base = (time.perf_counter() - t0) / base_rounds * args.seeds  # seconds per round for all seeds
        t0 = time.perf_counter()
        replicated_terms(cfg, args.seeds, "min", {}, 20, Path(tmp) / "compile")
        first = time.perf_counter() - t0
        _, seconds = replicated_terms(cfg, args.seeds, "min", {}, args.rounds, Path(tmp) / "fast")
        fast = seconds / args.rounds
        print(f"baseline (runner, {args.seeds} seeds one after the other): {base * 1e3:.2f} ms per round "
              f"-> 1e5 rounds {base * 1e5 / 60:.1f} min")
        print(f"replicated ({args.seeds} seeds in one engine): {fast * 1e3:.3f} ms per round over {args.rounds} "
              f"rounds ({base / fast:.0f}x faster) -> 1e5 rounds {fast * 1e5:.0f} s; target < 120 s "
              f"(first call, with compilation: {first:.1f} s)")
        if args.full:
            _, seconds = replicated_terms(cfg, args.seeds, "min", {}, 100_000, Path(tmp) / "full")
            print(f"1e5 rounds x {args.seeds} seeds measured: {seconds:.0f} s")


if __name__ == "__main__":
    main()
