"""Benchmark: the claims' lever (issue 22, item 4): an arm's 10 seeds, each its own problem, in one engine
(:mod:`dfltheory.empirical.cohort`) against the same 10 runs one after the other, measured in the same process.

    python benchmarks/bench_cohort.py [--rounds 10] [--m 50]

Config: the claims' DFedSAM arm at the full size (digits, m = 50, mlp-small, 5 local epochs of batch 32, SAM,
k-regular random graph, records every 5 rounds with the clients' own models), one CPU thread.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    import torch

    from dfltheory.empirical.cohort import run_cohort
    from dfltheory.verify import claims as C

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    if args.m < 2 or args.rounds < 1 or args.seeds < 1:
        ap.error(f"--m must be >= 2 and --rounds, --seeds >= 1; got {args.m}, {args.rounds}, {args.seeds}")
    torch.set_num_threads(1)
    size = C.ClaimSize(m=args.m, m_large=args.m, rounds=args.rounds, seeds=args.seeds, eval_every=5)
    claim = next(c for c in C.CLAIMS if c.id == "dfedsam.table1")
    cfg = {k: v for k, v in C.run_config(claim, claim.arm("DFedSAM"), size).items()
           if k not in ("rounds", "eval_every", "threads", "local_eval")}
    kw = {"rounds": args.rounds, "eval_every": 5}
    with tempfile.TemporaryDirectory() as tmp:
        run_cohort(cfg, [0], Path(tmp) / "warm", rounds=1)
        t0 = time.perf_counter()
        for s in range(args.seeds):
            run_cohort(cfg, [s], Path(tmp) / f"one{s}", **kw)
        apart = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_cohort(cfg, list(range(args.seeds)), Path(tmp) / "cohort", **kw)
        together = time.perf_counter() - t0
    print(f"{args.seeds} seeds x {args.rounds} rounds at m = {args.m}: one after the other {apart:.1f} s "
          f"({apart / args.rounds / args.seeds:.3f} s per seed-round), one cohort {together:.1f} s "
          f"({together / args.rounds:.3f} s per round): {apart / together:.2f}x")


if __name__ == "__main__":
    main()
