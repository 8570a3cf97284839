"""Memory an analysis will need, estimated from (name, n, params, horizon) before anything is allocated.

``check(...)`` raises ValueError when the estimate exceeds :data:`FRACTION` of the memory the machine has free
(``MemAvailable`` of /proc/meminfo, else free physical pages from ``os.sysconf``; no check where neither exists),
naming the need, the limit and the largest n that fits. The coefficients are peak bytes measured with tracemalloc
(numpy 2, scipy 1.1x, networkx 3), rounded up:

* circulant graphs (FFT path): 64 B per client (first row, its FFT, moduli) + 48 B per edge (adjacency and the
  breadth-first search of the diameter); measured 124 B/client for the ring, 1.8 kB/client for the exponential
  graph at n = 10^6;
* networkx graphs: 1 kB per client + 600 B per directed edge (measured 1-2 kB/client on grid, torus, star, WS);
  the uniform draws of the random topologies (``random``, ``k-out``, ``code-random``) hold an n x (n-1) float64
  array, its argsort and a sorting copy (24 n^2 B), the neighbour selection six n x n arrays (48 n^2 B);
* sparse mixing matrices kept for up to ``core.CACHE_ROUNDS`` rounds: 2 x (16 B per non-zero + 8 B per row);
* spectra: Lanczos 256 B per client + 32 B per edge (a symmetric W with n > DENSE_MAX_N: a symmetric rule on an
  undirected graph); dense eigenvalues of one n x n matrix 48 n^2 B (every other W, e.g. 'uniform' or 'push-sum'
  weights on a non-regular graph);
* push-sum constants (n <= DENSE_MAX_N): the T dense rounds and their boolean patterns, 11 T n^2 B, + 48 n^2 B
  for the product P(t-1)...P(0), with T = horizon for a time-varying topology and 1 otherwise, + 100 B per round
  of the horizon for the measured kernel e(t) (measured 70-80 B/round, any n);
* the constants beyond the spectral gap (:mod:`beyond_gap`, n <= DENSE_MAX_N): 32 n^2 B for a Perron vector and
  its weighted norm (measured 25), + 160 n^2 B for the Lyapunov solve of n_eff up to LYAPUNOV_MAX_N (measured 128)
  or 48 n^2 B for the eigenvalues of a symmetric W above it (a circulant's n_eff: one FFT of its first row, one
  gamma at a time, below the peak of its spectrum);
* 1 kB per analysed round of a time-varying topology;
* a matrix file (``stored``, checked from its header before it is read): 16 B per entry of a dense one (.npy,
  Matrix Market array; measured 9 B), 40 B per row + 40 B per stored entry of a Matrix Market coordinate one
  (measured 28 + 28 B), the CSR conversion and the stochasticity check included.
"""

from __future__ import annotations

import math
import numbers
import os

from dfltheory.topology.checks import default_k

FRACTION = 0.75  # of the memory available when the analysis starts
DENSE_MAX_N = 2000  # = spectral.DENSE_MAX_N (not imported: this module must stay import-light and cycle-free)
LYAPUNOV_MAX_N = 1000  # n_eff of a non-normal or time-varying W (beyond_gap): a dense Lyapunov solve, 4 s at n = 1000
CACHE_ROUNDS = 128  # = core.CACHE_ROUNDS

_P = {"erdos-renyi": 0.1, "code-er": 0.1}  # default edge probabilities of the generators (graphs.py)
_DENSE_DRAW = {"random": 24, "k-out": 24, "code-random": 25, "neighbour-selection": 48}  # bytes per n^2
_SYMMETRIC_RULES = ("metropolis", "max-degree", "lazy-metropolis", "sinkhorn")  # symmetric W on undirected graphs
_TIME_VARYING = ("one-peer-exponential", "random", "neighbour-selection", "code-random", "code-er")


def available_bytes() -> float:
    """Free memory: MemAvailable of /proc/meminfo, else free physical pages (os.sysconf), else inf."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return math.inf


def _number(params: dict, key: str, default: float) -> float:
    value = params.get(key, default)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0 else default


def _circulant_degree(name: str, n: int, params: dict) -> int | None:
    """Number of distinct non-zero offsets of a circulant topology (graphs.circulant_offsets without the list)."""
    log2n = max(1, math.ceil(math.log2(n)))
    return {"ring": 2, "code-ring": 2, "exponential": 2 * log2n, "exponential-directed": log2n, "code-exp": log2n,
            "full": n - 1, "code-full": n - 1, "code-grid": 4}.get(name)


def _edges(name: str, n: int, params: dict) -> float:
    """Directed edges (non-zeros of the adjacency) of one round of a networkx-built topology."""
    if name in ("grid", "torus"):
        return 4.0 * n
    if name == "star":
        return 2.0 * n
    if name == "one-peer-exponential":
        return float(n)
    if name in _P:
        return _number(params, "p", _P[name]) * n * (n - 1)
    k = _number(params, "k", default_k(name, n))
    undirected = name in ("watts-strogatz", "code-ws", "code-random") or params.get("direction") == "undirected"
    return (2.0 if undirected else 1.0) * k * n


def topology_bytes(name: str, n: int, params: dict | None = None, horizon: int | None = 50, analysis: bool = True,
                   weights: str = "metropolis", symmetric: bool | None = None,
                   nnz: float | None = None, stored: str | None = None) -> dict[str, float]:
    """Estimated peak bytes of building (``analysis=False``) or analysing topology ``name`` on n clients with the
    weight rule ``weights``, by part.

    ``name='matrix'`` is a user-given matrix with ``nnz`` non-zeros: in memory already (``stored=None``: only the
    analysis counts), or in a file that stores it ``'dense'`` or ``'sparse'`` (reading it counts)."""
    params = params or {}
    horizon = int(horizon) if isinstance(horizon, numbers.Integral) and horizon >= 1 else 50
    tv = name in _TIME_VARYING
    rounds = horizon if tv else 1
    deg = _circulant_degree(name, n, params)
    parts: dict[str, float] = {}
    if name == "matrix":
        edges = float(nnz or 0)
        sym = bool(symmetric)
        if stored is not None:
            parts["reading the matrix file"] = 16.0 * float(n) ** 2 if stored == "dense" else 40.0 * (n + edges)
    elif deg is not None:
        edges = float(deg) * n
        parts["the circulant graph, its FFT spectrum and diameter"] = 64.0 * n + 48.0 * edges
        sym = name not in ("exponential-directed", "code-exp")
    else:
        edges = _edges(name, n, params)
        parts["the graph (networkx)"] = 1000.0 * n + 600.0 * edges + _DENSE_DRAW.get(name, 0) * float(n) ** 2
        directed = (name in ("k-out", "one-peer-exponential", "neighbour-selection")
                    or (name == "random" and params.get("direction", "out") not in ("undirected", "regular")))
        sym = not directed and weights in _SYMMETRIC_RULES
    if name != "matrix" and (deg is None or n <= DENSE_MAX_N):
        parts["the sparse mixing matrices"] = min(rounds, CACHE_ROUNDS) * 2 * (16.0 * (edges + n) + 8.0 * n)
    if not analysis:
        return parts
    if deg is None:
        if sym and n > DENSE_MAX_N:
            parts["the Lanczos spectrum"] = 256.0 * n + 32.0 * edges
        else:
            parts["dense eigenvalues"] = 48.0 * float(n) ** 2
    if deg is None and n <= DENSE_MAX_N:
        parts["beta, kappa and n_eff (Perron vector, weighted norm, Lyapunov solve or eigenvalues)"] = (
            32.0 + (160.0 if n <= LYAPUNOV_MAX_N else 48.0)) * float(n) ** 2
    if n <= DENSE_MAX_N:
        parts[f"the push-sum constants over {rounds:,} dense round(s)"] = (11.0 * rounds + 48.0) * float(n) ** 2
        parts[f"the measured push-sum kernel over {horizon:,} rounds"] = 100.0 * horizon
    if tv:
        parts[f"{horizon:,} analysed rounds"] = 1000.0 * horizon
    return parts


def _gb(x: float) -> str:
    return f"{x / 1e9:.3g} GB" if x >= 1e8 else f"{x / 1e6:.3g} MB"


def _largest(fits, high: int) -> int:
    """The largest m in [1, high] with fits(m) (fits grows false with m; 0 if even 1 does not fit), rounded down to
    three significant digits (so it still fits)."""
    if not fits(1):
        return 0
    lo, hi = 1, high
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    scale = 10 ** max(0, len(str(lo)) - 3)
    return lo // scale * scale


def check(name: str, n: int, params: dict | None = None, horizon: int | None = 50, analysis: bool = True,
          weights: str = "metropolis", **matrix) -> None:
    """Raise ValueError, before anything is allocated, when :func:`topology_bytes` exceeds FRACTION of the free
    memory; the message names the need, its largest part, the limit and the fix: the largest n that fits (a
    named topology) and, where the horizon's rounds weigh most, the largest horizon that fits at this n."""
    parts = topology_bytes(name, n, params, horizon, analysis, weights, **matrix)
    need = sum(parts.values())
    free = available_bytes()
    limit = FRACTION * free
    if need <= limit:
        return
    what = max(parts, key=parts.get)
    label = "a matrix" if name == "matrix" else name

    def fits(m, h):
        return sum(topology_bytes(name, m, params, h, analysis, weights, **matrix).values()) <= limit

    by_rounds = "round" in what and isinstance(horizon, numbers.Integral)
    largest_n = _largest(lambda m: fits(m, horizon), n) if name != "matrix" else 0
    longest = _largest(lambda h: fits(n, h), horizon) if by_rounds else 0
    fixes, levers = [], []
    if largest_n >= 2:
        fixes.append(f"the largest n that fits is about {largest_n:,}" + (f" at horizon {horizon:,}" if by_rounds
                                                                          else ""))
        levers.append("n")
    if longest:
        fixes.append(f"the longest horizon that fits at n = {n:,} is about {longest:,}")
        levers.append("the horizon")
    if levers:
        fix = ", ".join(fixes) + ": lower " + " or ".join(levers)
    elif name == "matrix":
        fix = "analyse a smaller matrix" + (", or a symmetric sparse one (Lanczos path)" if analysis else "")
    else:
        fix = "free some memory: not even n = 2 fits"
    raise ValueError(f"n = {n:,} needs about {_gb(need)} for {label} (mostly {what}: {_gb(parts[what])}), more than "
                     f"the {_gb(limit)} it may use ({FRACTION:.0%} of the {_gb(free)} of memory available); {fix}")


#: seconds per analysed round (measured on 2 shared CPU cores, numpy 2, rounded up): the measured push-sum kernel,
#: one dense product P(t) Phi and its normalisation per round (40 us at n = 10, + about 10 ns per entry of Phi);
#: a time-varying topology's own round besides (its matrix, spectrum and properties: 1.3 ms at n = 10, + a dense
#: eigenvalue solve, about 10 ns n^3, or above DENSE_MAX_N a Lanczos one, about 1 us per client)
KERNEL_ROUND, KERNEL_ENTRY = 4e-5, 1e-8
VARYING_ROUND, VARYING_CUBE, VARYING_CLIENT = 1.3e-3, 1e-8, 1e-6


def horizon_seconds(name: str, n: int, horizon: int | None) -> float:
    """Estimated seconds of the per-round work of analysing ``name`` on n clients over ``horizon`` rounds (the
    measured push-sum kernel, where n <= DENSE_MAX_N, and a time-varying topology's rounds); the rest of the
    analysis does not grow with the horizon."""
    horizon = int(horizon) if isinstance(horizon, numbers.Integral) and horizon >= 1 else 50
    n = float(n)
    per_round = KERNEL_ROUND + KERNEL_ENTRY * n * n if n <= DENSE_MAX_N else 0.0
    if name in _TIME_VARYING:
        per_round += VARYING_ROUND + (VARYING_CUBE * n**3 if n <= DENSE_MAX_N else VARYING_CLIENT * n)
    return horizon * per_round
