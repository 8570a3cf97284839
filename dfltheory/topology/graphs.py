"""Communication graphs of decentralized federated learning, one generator per topology.

Every generator has the NetworkX-style signature ``(n, seed=None, ...)`` and returns a ``networkx.Graph``
(undirected) or ``networkx.DiGraph`` (directed; an edge ``u -> v`` means that ``v`` receives ``u``'s message,
so the mixing matrix has ``W[v, u] > 0``). Self-loops are never stored: every weight rule adds them.
Time-varying topologies take the round ``t`` as a keyword: the graph of round ``t`` is a deterministic function
of ``(seed, t)``.

Sources (card sections in ``shared/spec``): dfedsam.md §7 and dfedadmm.md §7 (ring, grid, exponential, full,
random), dfedsgpsm.md §3.2/§7 (random directed k-out, neighbour selection of seed 000 App. A.1, seed L285-289),
dfedpgp.md §7 (random in-neighbours), dfedcata.md §7 (the public code's ``_benefit_choose`` neighbour lists).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from dfltheory.topology.checks import ARGUMENTS, default_k, number

DIRECTIONS = ("out", "in", "undirected", "regular")


def check_n(n) -> int:
    """Validate the number of clients (an integer >= 2)."""
    return number(n, "n", **ARGUMENTS["n"])


def check_k(k, n: int, what: str = "k") -> int:
    """Validate a neighbour count 1 <= k <= n - 1."""
    return number(k, what, 1, n - 1, integer=True, meaning="the neighbours per client, at most n - 1")


def check_p(p, what: str = "p") -> float:
    return number(p, what, 0.0, 1.0, meaning="an edge probability")


def check_stride(stride) -> int:
    """Validate the second hop of the code's grid (any integer >= 1; only stride mod n matters)."""
    return number(stride, "stride", low=1, integer=True, meaning="the code grid's second hop i +- stride")


def check_direction(direction) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'out', 'in', 'undirected' or 'regular', got {direction!r}")
    return direction


def check_losses(losses, n: int) -> np.ndarray:
    """Validate the clients' losses of the neighbour selection: n finite numbers (a sequence, from Python)."""
    try:
        f = np.asarray(losses, dtype=float)
        bad = (f"shape {f.shape}" if f.shape != (n,) else
               f"{np.count_nonzero(~np.isfinite(f))} NaN or infinite values" if not np.all(np.isfinite(f)) else "")
    except (TypeError, ValueError):
        bad = repr(losses)
    if bad:
        raise ValueError(f"losses must be a sequence of {n} finite numbers (one per client), got {bad}; leave it "
                         "out for a fixed U(0, 1) draw from the seed")
    return f


def round_rng(seed, t: int) -> np.random.Generator:
    """The generator of round ``t``: a deterministic function of ``(seed, t)`` (fresh entropy if seed is None)."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng([int(seed), int(t)])


def _circulant_graph(n: int, offsets, directed: bool) -> nx.Graph:
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    idx = np.arange(n)
    for o in sorted({int(o) % n for o in offsets} - {0}):
        G.add_edges_from(zip(idx.tolist(), ((idx + o) % n).tolist()))
    return G


# ---------------------------------------------------------------- circulant offsets (FFT fast path)

def exponential_offsets(n: int) -> list[int]:
    """Hops 2^0, 2^1, ..., 2^k < n (exponential graph, Assran et al. 2019; dfedsam.md §5.4)."""
    return [2 ** k for k in range(max(1, math.ceil(math.log2(n))))] if n > 1 else []


def circulant_offsets(name: str, n: int, **params) -> tuple[list[int], bool] | None:
    """Offsets o such that i is linked to i + o (mod n), and whether the graph is directed; None if not circulant.

    The mixing matrix of such a graph under every weight rule of :mod:`weights` is circulant, so its spectrum is
    the FFT of its first row (see :func:`dfltheory.topology.spectral.circulant_spectrum`)."""
    if name in ("ring", "code-ring"):
        return [1, -1], False
    if name == "exponential":
        offs = exponential_offsets(n)
        return offs + [-o for o in offs], False
    if name == "exponential-directed":
        return exponential_offsets(n), True
    if name == "code-exp":  # client i pulls from i + 2^k: edge (i + 2^k) -> i
        return [-o for o in exponential_offsets(n)], True
    if name in ("full", "code-full"):
        return list(range(1, n)), False
    if name == "code-grid":
        s = check_stride(params.get("stride", 9))
        return [1, -1, s, -s], False
    return None


# ---------------------------------------------------------------- fixed undirected graphs

def ring(n, seed=None) -> nx.Graph:
    """Cycle i ~ i +- 1 (mod n) (dfedsam.md §7 "Ring")."""
    n = check_n(n)
    return _circulant_graph(n, [1, -1], directed=False)


def grid_shape(n: int, rows) -> tuple[int, int]:
    """(rows, columns) of the n-client grid: ``rows`` must divide n; None picks the largest divisor <= sqrt(n)."""
    if rows is None:
        rows = max(r for r in range(1, math.isqrt(n) + 1) if n % r == 0)
    rows = number(rows, "rows", 1, n, integer=True, meaning="the grid's rows, a divisor of n")
    if n % rows:
        raise ValueError(f"rows must divide n={n}, got rows={rows}")
    return rows, n // rows


def grid(n, seed=None, rows=None) -> nx.Graph:
    """2-D grid (no wrap-around), rows x (n/rows) with rows the largest divisor <= sqrt(n) by default."""
    n = check_n(n)
    r, c = grid_shape(n, rows)
    G = nx.convert_node_labels_to_integers(nx.grid_2d_graph(r, c), ordering="sorted")
    return G


def torus(n, seed=None, rows=None) -> nx.Graph:
    """2-D torus (periodic grid), rows x (n/rows); 10 x 10 at n = 100 (dfedadmm.md §5.5)."""
    n = check_n(n)
    r, c = grid_shape(n, rows)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for i in range(r):
        for j in range(c):
            u = i * c + j
            for v in (((i + 1) % r) * c + j, i * c + (j + 1) % c):
                if v != u:
                    G.add_edge(u, v)
    return G


def exponential(n, seed=None) -> nx.Graph:
    """Undirected exponential graph i ~ i +- 2^k (mod n), 2^k < n (dfedsam.md §5.4)."""
    n = check_n(n)
    return _circulant_graph(n, circulant_offsets("exponential", n)[0], directed=False)


def full(n, seed=None) -> nx.Graph:
    """Complete graph (dfedsam.md §7 "Full-connected")."""
    return nx.complete_graph(check_n(n))


def star(n, seed=None) -> nx.Graph:
    """Star with hub 0 (the server topology of centralized FL, as a graph)."""
    return nx.star_graph(check_n(n) - 1)


def erdos_renyi(n, seed=None, p=0.1) -> nx.Graph:
    """Erdos-Renyi G(n, p); may be disconnected (then lambda = 1, reported, never hidden)."""
    return nx.erdos_renyi_graph(check_n(n), check_p(p), seed=seed)


def watts_strogatz(n, seed=None, k=None, p=0.1) -> nx.Graph:
    """Watts-Strogatz small world: ring lattice with k nearest neighbours (default 8, at most n - 1), rewiring
    probability p."""
    n = check_n(n)
    k = check_k(default_k("watts-strogatz", n) if k is None else k, n)
    return nx.watts_strogatz_graph(n, k, check_p(p), seed=seed)


# ---------------------------------------------------------------- fixed directed graphs

def exponential_directed(n, seed=None) -> nx.DiGraph:
    """One-directional exponential graph i -> i + 2^k (mod n), 2^k < n (Assran et al. 2019)."""
    n = check_n(n)
    return _circulant_graph(n, exponential_offsets(n), directed=True)


def k_out(n, seed=None, k=None) -> nx.DiGraph:
    """Random directed k-out graph: every client sends to k distinct others (default 10, at most n - 1) drawn
    uniformly (fixed over rounds)."""
    return random_k(n, seed=seed, k=default_k("k-out", check_n(n)) if k is None else k, t=0, direction="out")


# ---------------------------------------------------------------- time-varying graphs

def one_peer_exponential(n, seed=None, t=0) -> nx.DiGraph:
    """Time-varying one-peer exponential graph: in round t client i sends to i + 2^(t mod ceil(log2 n))."""
    n = check_n(n)
    offs = exponential_offsets(n)
    return _circulant_graph(n, [offs[t % len(offs)]], directed=True)


def random_k(n, seed=None, k=None, t=0, direction="out") -> nx.Graph:
    """The papers' "random" topology: a fresh draw every round t, k neighbours per client (default 10, at most
    n - 1).

    direction='out': client i sends to k distinct others drawn uniformly without replacement (seed 000, L275-279,
    push-sum; dfedsgpsm.md §7). direction='in': client i pulls from k uniformly drawn others (seed 003, L189, L362-366;
    dfedpgp.md §7). direction='undirected': the 'out' draw symmetrized (the symmetric baselines of seed 000 L277 and
    seeds 001/004, whose exact rule is not stated), about 2k neighbours per client. direction='regular': a uniform
    random k-regular undirected graph (networkx's ``random_regular_graph``; k n must be even), exactly k neighbours
    per client, the symmetric arm with the directed arms' neighbour budget (issue 22)."""
    n = check_n(n)
    k = check_k(default_k("random", n) if k is None else k, n)
    check_direction(direction)
    rng = round_rng(seed, t)
    if direction == "regular":
        if k * n % 2:
            raise ValueError(f"a k-regular graph needs k n even, got k = {k} and n = {n}; change k by one")
        return nx.random_regular_graph(k, n, seed=int(rng.integers(2**31)))
    others = np.argsort(rng.random((n, n - 1)), axis=1)[:, :k]  # k distinct picks among the n-1 others
    picks = others + (others >= np.arange(n)[:, None])          # skip i itself
    G = nx.Graph() if direction == "undirected" else nx.DiGraph()
    G.add_nodes_from(range(n))
    src = np.repeat(np.arange(n), k)
    dst = picks.ravel()
    if direction == "in":
        src, dst = dst, src
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    return G


def neighbour_selection(n, seed=None, k=None, t=0, losses=None) -> nx.DiGraph:
    """Loss-driven out-neighbour selection of DFedSGPSM-S (seed 000 App. A.1, eq. (2), L285-289).

    p(b_ij) = exp(|f_i - f_j|) / sum_j exp(|f_i - f_j|). Choices the paper leaves open (dfedsgpsm.md §3.2, §11),
    made here: k draws (default 10, at most n - 1) without replacement among j != i (the self-loop is always kept by
    the weight rule), fresh draws every round; ``losses`` (length n) default to a fixed draw of U(0, 1) from
    ``seed``."""
    n = check_n(n)
    k = check_k(default_k("neighbour-selection", n) if k is None else k, n)
    if losses is None:
        losses = (np.random.default_rng() if seed is None else np.random.default_rng([int(seed)])).random(n)
    f = check_losses(losses, n)
    rng = round_rng(seed, t)
    logits = np.abs(f[:, None] - f[None, :])
    np.fill_diagonal(logits, -np.inf)
    # Gumbel top-k = k draws without replacement with probabilities proportional to exp(logits)
    keys = logits + rng.gumbel(size=(n, n))
    picks = np.argsort(-keys, axis=1)[:, :k]
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(np.repeat(np.arange(n), k).tolist(), picks.ravel().tolist()))
    return G


def selection_probabilities(losses) -> np.ndarray:
    """Matrix of eq. (2) of seed 000 (row i: probabilities that i picks j, j = i included as in the paper)."""
    f = np.asarray(losses, dtype=float)
    e = np.exp(np.abs(f[:, None] - f[None, :]))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- the public code's neighbour lists

def code_neighbours(name: str, n: int, seed=None, t: int = 0, **params) -> list[np.ndarray]:
    """Neighbour list N_i of every client, as the ``_benefit_choose`` lineage of the papers' code builds it.

    dfedcata.md §7: ring {i-1, i+1}; grid {i+-1, i+-stride} (stride 9 at n = 100: a circulant, not a 10x10 grid);
    exp {i + 2^k}, one direction; full: all others; random: ``generate_random_topo``, every client picks k = 9 others,
    the upper triangle is kept and symmetrized, redrawn each round (seed + t); er: ``erdos_renyi_graph(n, 0.1)``
    redrawn each round; ws: ``watts_strogatz_graph(n, 8, 0.1, seed)``, fixed. Client i averages uniformly over
    N_i and itself (weight rule 'uniform')."""
    n = check_n(n)
    G = code_graph(name, n, seed=seed, t=t, **params)
    if G.is_directed():
        return [np.array(sorted(G.predecessors(i)), dtype=int) for i in range(n)]
    return [np.array(sorted(G.neighbors(i)), dtype=int) for i in range(n)]


def code_graph(name: str, n, seed=None, t: int = 0, **params) -> nx.Graph:
    """Graph of the code's topology ``name`` in {'code-ring', 'code-grid', 'code-exp', 'code-full', 'code-random',
    'code-er', 'code-ws'}; for 'code-exp' a DiGraph with edges (i + 2^k) -> i (client i pulls from i + 2^k)."""
    n = check_n(n)
    if name in ("code-ring", "code-grid", "code-full"):
        return _circulant_graph(n, circulant_offsets(name, n, **params)[0], directed=False)
    if name == "code-exp":
        return _circulant_graph(n, circulant_offsets(name, n)[0], directed=True)
    if name == "code-random":
        k = check_k(params.get("k", default_k(name, n)), n)
        rng = round_rng(seed, t)
        others = np.argsort(rng.random((n, n - 1)), axis=1)[:, :k]
        picks = others + (others >= np.arange(n)[:, None])
        A = np.zeros((n, n), dtype=bool)
        A[np.repeat(np.arange(n), k), picks.ravel()] = True
        A = np.triu(A, 1)
        G = nx.from_numpy_array((A | A.T).astype(int))
        return G
    if name == "code-er":
        s = None if seed is None else int(seed) + int(t)
        return nx.erdos_renyi_graph(n, check_p(params.get("p", 0.1)), seed=s)
    if name == "code-ws":
        k = check_k(params.get("k", default_k(name, n)), n)
        return nx.watts_strogatz_graph(n, k, check_p(params.get("p", 0.1)), seed=seed)
    raise ValueError(f"unknown code topology {name!r}")
