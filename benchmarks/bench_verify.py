"""Benchmark: wall time of `dfltheory verify all` at the default size (issue 12: under 10 minutes on 2 CPU cores),
from an empty cache, and of the second call that only reads the cache and re-evaluates.

    python benchmarks/bench_verify.py [--size quick|default] [--jobs 2]

The baseline measured in the same run is one DFedSAM run of the default size (m = 8, T = 100, one thread): the
total is also given as a multiple of it, which travels between machines better than seconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    from dfltheory.empirical.runner import run
    from dfltheory.verify.holds import verify
    from dfltheory.verify.instances import SIZES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="default", choices=sorted(SIZES))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = {"algo": "dfedsam", "dataset": "synthetic-robust", "model": "linear", "n": 8, "topology": "ring",
               "weights": "metropolis", "rounds": 100, "K": 4, "lr": 0.01, "batch_size": 4, "threads": 1,
               "local_eval": False, "checkpoint_every": 100, "progress": False}
        run({**cfg, "out": str(Path(tmp) / "warm"), "rounds": 2})
        t0 = time.perf_counter()
        run({**cfg, "out": str(Path(tmp) / "base")})
        base = time.perf_counter() - t0
        t0 = time.perf_counter()
        first = verify(["all"], args.size, Path(tmp) / "v", workers=args.jobs)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = verify(["all"], args.size, Path(tmp) / "v", workers=args.jobs)
        warm = time.perf_counter() - t0
    print(f"one run (baseline): {base:.2f} s")
    print(f"verify all --size {args.size} --jobs {args.jobs}: {cold:.0f} s ({cold / base:.0f} x the baseline), "
          f"{first['runs_trained']} runs, {len(first['verdicts'])} verdicts; target < 600 s on 2 cores")
    print(f"second call (cache): {warm:.1f} s, {second['runs_trained']} runs trained")


if __name__ == "__main__":
    main()
