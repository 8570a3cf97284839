"""Benchmark of the spectral fast paths against the dense path, measured in the same run.

    .venv/bin/python benchmarks/bench_topology.py [--big-circulant 1000000] [--big-ws 100000] [--dense 4000]

Rows: lambda (SLEM) of a ring and of an exponential graph (Metropolis weights) through the FFT path at n = 10^6, of a
Watts-Strogatz graph (k = 8, p = 0.1) through Lanczos at n = 10^5, and each topology through the dense path at the
largest n run here (--dense). The fast path is also run at the dense n: the lambdas must agree there (|diff|), and
"speed-up" is dense time / fast time at that n. Times are wall-clock seconds of the spectrum alone (graph building
is listed separately). BLAS runs single-threaded (both paths, so the ratio compares algorithms, not thread counts).
"""

from __future__ import annotations

import argparse
import time

from threadpoolctl import threadpool_limits

from dfltheory.topology import build, spectral


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big-circulant", type=int, default=1_000_000)
    ap.add_argument("--big-ws", type=int, default=100_000)
    ap.add_argument("--dense", type=int, default=4000)
    args = ap.parse_args(argv)
    with threadpool_limits(1):
        return _run(args)


def _run(args) -> int:
    cases = [("ring", {}, args.big_circulant, "fft"), ("exponential", {}, args.big_circulant, "fft"),
             ("watts-strogatz", {"k": 8, "p": 0.1}, args.big_ws, "lanczos")]
    head = ("topology", "path", "n", "build s", "spectrum s", "lambda", "dense n", "dense s", "fast s @dense n",
            "speed-up", "|diff|", "dense s / fast s(big n)")
    rows = []
    for name, params, n_big, method in cases:
        topo, t_build = _timed(lambda: build(name, n_big, weights="metropolis", seed=0, **params))
        big, t_big = _timed(lambda: topo.spectrum(method=method))
        small = build(name, args.dense, weights="metropolis", seed=0, **params)
        fast, t_fast = _timed(lambda: small.spectrum(method=method))
        W = small.matrix()
        dense, t_dense = _timed(lambda: spectral.dense_spectrum(W))
        rows.append((name, method, f"{n_big:,}", f"{t_build:.3f}", f"{t_big:.4f}", f"{big.lam:.12f}",
                     f"{args.dense:,}", f"{t_dense:.3f}", f"{t_fast:.4f}", f"{t_dense / t_fast:.0f}x",
                     f"{abs(fast.lam - dense.lam):.1e}", f"{t_dense / t_big:.1f}"))
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for j, r in enumerate([head] + rows):
        print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
