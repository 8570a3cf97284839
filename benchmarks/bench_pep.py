"""Benchmark: PEP solve time for DFedAvg and how the SDP grows with m, K, T (explicit W and spectral class), and
the trade-off of imposing sigma_g at the averages only or at every queried point; then every other algorithm at the
target size (DFedADMM(-SAM), DFedCata A/B, push-sum; push-sum and DFedAvg also over the spectral class and on a
random sequence, one matrix per round) as a ratio to DFedAvg there, and pep_table()'s total time.

    python benchmarks/bench_pep.py [--quick] [--algorithms]

Target (issue 14): m = 3, K = 2, T = 5 under 60 s. Times are also given as ratios to the smallest instance
(m = 2, K = 1, T = 2) measured in the same run, next to the size-based estimate that worst_case uses to refuse
problems up front (dfltheory.pep.problem._expected_seconds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dfltheory.pep import PEPSolveError, estimate_size, worst_case


def W_lam(m, lam):
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


def timed(m, K, T, spectral=False, heterogeneity_at="averages"):
    mix = dict(spectral=(-0.5, 0.5)) if spectral else dict(W=W_lam(m, 0.5))
    t0 = time.perf_counter()
    try:
        r = worst_case("dfedavg", m, K, T, 0.05, sigma_g=1.0, B=2.0, heterogeneity_at=heterogeneity_at, **mix)
    except PEPSolveError as err:
        return None, time.perf_counter() - t0, str(err)[:60]
    return r, time.perf_counter() - t0, r.status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the target instance and the baseline")
    ap.add_argument("--algorithms", action="store_true", help="only the per-algorithm times and pep_table()")
    args = ap.parse_args()
    if args.algorithms:
        algorithms()
        return
    timed(2, 1, 2)  # imports and the first cvxpy compilation
    _, base, _ = timed(2, 1, 2)
    grid = [(3, 2, 5)] if args.quick else [(2, 1, 2), (2, 2, 3), (3, 1, 3), (3, 2, 3), (3, 2, 4), (3, 2, 5),
                                            (2, 2, 6), (4, 2, 4), (4, 2, 5), (3, 3, 5)]
    print(f"baseline m=2 K=1 T=2: {base:.3f} s (build + solve)")
    print(f"{'mixing':<9} {'sigma_g at':<9} {'m':>2} {'K':>2} {'T':>2} {'gram':>5} {'constr':>7} {'seconds':>8} "
          f"{'x base':>7} {'estimate':>9}  status / value")
    for spectral in (False, True):
        for m, K, T in grid:
            for where in (("averages", "all") if (m, K, T) == (3, 2, 5) else ("averages",)):
                est = estimate_size("dfedavg", m, K, T, spectral=spectral, heterogeneity_at=where, sigma_g=True,
                                    B=True)
                r, sec, status = timed(m, K, T, spectral, where)
                gram, cons = (r.size.gram, r.size.constraints) if r else (est.gram, est.constraints)
                value = f"{r.value:.6g}" if r else ""
                print(f"{'spectral' if spectral else 'explicit':<9} {where:<9} {m:>2} {K:>2} {T:>2} {gram:>5} {cons:>7} "
                      f"{sec:>8.2f} {sec / base:>7.1f} {est.expected_seconds:>9.1f}  {status} {value}", flush=True)


#: every algorithm at the target size m = 3, K = 2 (K = 1 for sgp / dpsgd), T = 5, explicit mixing
#: (algorithm, settings, mixing: None = W(0.5), or P_DIRECTED for push-sum; "class": [-0.5, 0.5]; "random": a new
#: random draw per round, table.random_sequence seed 1)
ALGORITHM_RUNS = [
    ("dfedavg", dict(K=2, eta=0.05)),
    ("dfedsam-unnormalized", dict(K=2, eta=0.05, rho=0.05)),
    ("dfedadmm", dict(K=2, eta=0.005, lam_pen=0.01)),
    ("dfedadmm-sam-unnormalized", dict(K=2, eta=0.005, lam_pen=0.01, rho=0.05)),
    ("dfedcata-a", dict(K=2, eta=0.05, lam_pen=1.0, beta=0.3)),
    ("dfedcata-b", dict(K=2, eta=0.05, lam_pen=1.0, beta=0.3)),
    ("dfedsgpm", dict(K=2, eta=0.02, alpha=0.5)),
    ("sgp", dict(K=1, eta=0.1)),
    ("dfedavg", dict(K=2, eta=0.05), "class"),
    ("dfedsgpm", dict(K=2, eta=0.02, alpha=0.5), "class"),
    ("dfedavg", dict(K=2, eta=0.05), "random"),
    ("dfedsgpm", dict(K=2, eta=0.02, alpha=0.5), "random"),
]


def algorithms() -> None:
    from dfltheory.pep import pep_table
    from dfltheory.pep.table import P_DIRECTED, random_sequence

    timed(2, 1, 2)  # imports and the first cvxpy compilation
    print(f"{'algorithm':<26} {'gram':>5} {'constr':>7} {'seconds':>8} {'x dfedavg':>9}  value")
    base = None
    for algorithm, kw, *kind in ALGORITHM_RUNS:
        push = algorithm in ("dfedsgpm", "sgp")
        if not kind:
            mix = dict(W=P_DIRECTED) if push else dict(W=W_lam(3, 0.5))
        elif kind[0] == "class":
            mix = dict(spectral=(-0.5, 0.5))
        else:
            mix = dict(W=random_sequence(3, 4, 1, symmetric=not push))
        t0 = time.perf_counter()
        r = worst_case(algorithm, 3, T=5, sigma_g=1.0, B=2.0, **kw, **mix)
        sec = time.perf_counter() - t0
        base = base or sec
        label = algorithm + (f" ({kind[0]})" if kind else "")
        print(f"{label:<26} {r.size.gram:>5} {r.size.constraints:>7} {sec:>8.2f} {sec / base:>9.2f}  {r.value:.6g}",
              flush=True)
    t0 = time.perf_counter()
    rows = pep_table()
    print(f"pep_table(): {len(rows)} rows in {time.perf_counter() - t0:.1f} s (target < 60 s)")


if __name__ == "__main__":
    main()
