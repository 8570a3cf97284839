"""Benchmark: every bound of the catalog over 10^6 parameter points through lambdify, against sympy
substitution on a sample of points, in the same run.

    python benchmarks/bench_bounds.py [--points 1000000] [--sample 50]

Prints, per theorem, the seconds for 10^6 points (target: well under a second) and the per-point speed-up
over ``expr.subs(...).evalf()``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dfltheory.bounds import catalog


def default_point(thm) -> dict[str, float]:
    """A point inside every domain: the theorem's reference values where it has them."""
    out = {}
    for v in thm.variables:
        if v.name in thm.reference:
            out[v.name] = float(thm.reference[v.name])
        elif v.integer:
            out[v.name] = max(v.low, 10.0)
        elif v.high < np.inf:
            out[v.name] = (max(v.low, 0.0) + v.high) / 2
        else:
            out[v.name] = 1e-3 if v.name in ("eta", "rho") else 1.0
    return {k: out[k] for k in thm.required}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=50)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'theorem':<34} {'1e6 pts lambdify (s)':>21} {'sympy subs/pt (ms)':>19} {'speed-up/pt':>12}")
    worst = 0.0
    for tid, thm in catalog().items():
        base = default_point(thm)
        # vary the first continuous, unbounded-above symbol over [1, 2] times its value (stays in its domain)
        vary = next((k for k in base if not thm.symbols[k].integer and thm.symbols[k].high == np.inf), None)
        grid = dict(base)
        if vary:
            grid[vary] = base[vary] * rng.uniform(1.0, 2.0, args.points)
        else:
            grid = {k: np.full(args.points, v) for k, v in base.items()}
        try:
            thm.evaluate(**{k: (v[:10] if np.ndim(v) else v) for k, v in grid.items()})  # warm the lambdify cache
            t0 = time.perf_counter()
            thm.evaluate(**grid)
        except Exception as exc:  # a default point outside a theorem's own definition: say so, go on
            print(f"{tid:<34} skipped ({exc})")
            continue
        fast = time.perf_counter() - t0
        worst = max(worst, fast)
        syms = {thm.symbols[k].symbol: v for k, v in base.items()}
        t0 = time.perf_counter()
        for i in range(args.sample):
            pt = dict(syms)
            if vary:
                pt[thm.symbols[vary].symbol] = float(grid[vary][i])
            float(thm.bound.subs(pt).evalf())
        slow = (time.perf_counter() - t0) / args.sample
        print(f"{tid:<34} {fast:>21.3f} {1e3 * slow:>19.2f} {slow / (fast / args.points):>12.3g}")
    print(f"slowest bound over {args.points:.0e} points: {worst:.3f} s")


if __name__ == "__main__":
    main()
