"""Registry of topologies, the :class:`Topology` object and :func:`analyze`, which computes every constant.

``build(name, n, weights="metropolis", seed=0, **params)`` returns a :class:`Topology`; ``topo.matrix(t)`` is the
mixing matrix of round t (x <- W x; column-stochastic for 'push-sum'). ``analyze`` returns a dict with stable keys
(documented in docs/topology.md and in :data:`KEYS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from dfltheory.topology import beyond_gap, checks, graphs, memory, pushsum, spectral
from dfltheory.topology.weights import SYMMETRIC_ONLY, check_rule, circulant_weight, mixing_matrix

INF = float("inf")
CACHE_ROUNDS = 128
DENSE_MATRIX_MAX_N = 20000  # Topology.matrix() refuses a dense n x n array above this (3.2 GB at n = 20000)


@dataclass(frozen=True)
class Spec:
    make: Callable            # (n, seed, t, **params) -> networkx graph
    directed: bool
    time_varying: bool
    default_weights: str
    source: str


def _fixed(fn):
    return lambda n, seed, t, **p: fn(n, seed=seed, **p)


def _code(name):
    return lambda n, seed, t, **p: graphs.code_graph(name, n, seed=seed, t=t, **p)


REGISTRY: dict[str, Spec] = {
    "ring": Spec(_fixed(graphs.ring), False, False, "metropolis", "dfedsam.md §7 Ring"),
    "grid": Spec(_fixed(graphs.grid), False, False, "metropolis", "dfedsam.md §7 Grid (2-D, no wrap)"),
    "torus": Spec(_fixed(graphs.torus), False, False, "metropolis", "dfedadmm.md §5.5 (10x10 torus)"),
    "exponential": Spec(_fixed(graphs.exponential), False, False, "metropolis", "dfedsam.md §5.4 (i ~ i +- 2^k)"),
    "exponential-directed": Spec(_fixed(graphs.exponential_directed), True, False, "push-sum",
                                 "Assran et al. 2019 (i -> i + 2^k)"),
    "full": Spec(_fixed(graphs.full), False, False, "metropolis", "dfedsam.md §7 Full-connected"),
    "star": Spec(_fixed(graphs.star), False, False, "metropolis", "server topology as a graph"),
    "erdos-renyi": Spec(_fixed(graphs.erdos_renyi), False, False, "metropolis", "dfedcata.md §7 ER (fixed draw)"),
    "watts-strogatz": Spec(_fixed(graphs.watts_strogatz), False, False, "metropolis", "dfedcata.md §7 WS"),
    "k-out": Spec(_fixed(graphs.k_out), True, False, "push-sum", "random directed k-out (fixed)"),
    "one-peer-exponential": Spec(lambda n, seed, t, **p: graphs.one_peer_exponential(n, seed=seed, t=t), True, True,
                                 "push-sum", "Assran et al. 2019 one-peer exponential (time-varying)"),
    "random": Spec(lambda n, seed, t, **p: graphs.random_k(n, seed=seed, t=t, **p), True, True, "push-sum",
                   "dfedsgpsm.md §7 / dfedpgp.md §7 (k random neighbours per round)"),
    "neighbour-selection": Spec(lambda n, seed, t, **p: graphs.neighbour_selection(n, seed=seed, t=t, **p), True,
                                True, "push-sum", "seed 000 App. A.1 eq. (2), L285-289"),
    "code-ring": Spec(_code("code-ring"), False, False, "uniform", "dfedcata.md §7 code ring"),
    "code-grid": Spec(_code("code-grid"), False, False, "uniform", "dfedcata.md §7 code grid {i+-1, i+-9}"),
    "code-exp": Spec(_code("code-exp"), True, False, "uniform", "dfedcata.md §7 code exp {i + 2^k}"),
    "code-full": Spec(_code("code-full"), False, False, "uniform", "dfedcata.md §7 code full"),
    "code-random": Spec(_code("code-random"), False, True, "uniform", "dfedcata.md §7 generate_random_topo"),
    "code-er": Spec(_code("code-er"), False, True, "uniform", "dfedcata.md §7 code ER (redrawn each round)"),
    "code-ws": Spec(_code("code-ws"), False, False, "uniform", "dfedcata.md §7 code WS (k=8, p=0.1)"),
}
NAMES: tuple[str, ...] = tuple(REGISTRY)


PARAMS: dict[str, tuple[str, ...]] = {
    "grid": ("rows",), "torus": ("rows",), "erdos-renyi": ("p",), "watts-strogatz": ("k", "p"), "k-out": ("k",),
    "random": ("k", "direction"), "neighbour-selection": ("k", "losses"), "code-grid": ("stride",),
    "code-random": ("k",), "code-er": ("p",), "code-ws": ("k", "p"),
}
#: The validator of each parameter, called with (value, n) before any memory estimate or graph
_PARAM_CHECKS: dict[str, Callable] = {
    "k": graphs.check_k, "p": lambda p, n: graphs.check_p(p), "rows": lambda rows, n: graphs.grid_shape(n, rows),
    "stride": lambda s, n: graphs.check_stride(s), "direction": lambda d, n: graphs.check_direction(d),
    "losses": graphs.check_losses,
}


def check_params(name: str, n: int, params: dict) -> None:
    """Refuse a parameter that topology ``name`` does not take, or a value outside its range (k > n - 1, p > 1,
    ...), before anything is estimated or built: a bad value is reported as itself, never as a memory problem."""
    unknown = set(params) - set(PARAMS.get(name, ()))
    if unknown:
        raise ValueError(f"bad parameter {', '.join(sorted(unknown))} for topology {name!r}; it takes "
                         f"{', '.join(PARAMS.get(name, ())) or 'no parameters'}")
    for key, value in params.items():
        _PARAM_CHECKS[key](value, n)


def _spec(name: str) -> Spec:
    if name not in REGISTRY:
        raise ValueError(f"unknown topology {name!r}; choose one of {', '.join(NAMES)}")
    return REGISTRY[name]


@dataclass
class Topology:
    """A named topology with a weight rule: ``matrix(t)`` is the mixing matrix of round t."""

    name: str
    n: int
    weights: str
    seed: int | None
    params: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def spec(self) -> Spec:
        return _spec(self.name)

    @property
    def time_varying(self) -> bool:
        if self.name == "random" and self.params.get("direction") in ("undirected", "regular"):
            return True
        return self.spec.time_varying

    @property
    def directed(self) -> bool:
        if self.name == "random" and self.params.get("direction") in ("undirected", "regular"):
            return False
        return self.spec.directed

    @property
    def circulant(self) -> tuple[list[int], bool] | None:
        return graphs.circulant_offsets(self.name, self.n, **self.params)

    def _t(self, t) -> int:
        return int(t) if self.time_varying else 0

    def graph(self, t: int = 0) -> nx.Graph:
        """The communication graph of round t (edge u -> v: v receives from u)."""
        return self.spec.make(self.n, self.seed, self._t(t), **self.params)

    def adjacency(self, t: int = 0) -> sp.csr_array:
        """A[v, u] = 1 iff v receives from u in round t (sparse, no diagonal)."""
        key = ("A", self._t(t))
        if key not in self._cache:
            if self.circulant is not None:
                offs, _ = self.circulant
                n = self.n
                offs = sorted({o % n for o in offs} - {0})
                src = np.tile(np.arange(n), len(offs))
                dst = (src + np.repeat(offs, n)) % n
                A = sp.csr_array((np.ones(src.size), (dst, src)), shape=(n, n))
            else:
                A = sp.csr_array(nx.to_scipy_sparse_array(self.graph(t), nodelist=range(self.n), dtype=float).T)
            self._store(key, A)
        return self._cache[key]

    def _store(self, key, value) -> None:
        """Keep the last CACHE_ROUNDS rounds (fixed topologies: one entry per object)."""
        if len(self._cache) >= 2 * CACHE_ROUNDS:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = value

    def circulant_row(self, t: int = 0) -> np.ndarray | None:
        """First row c of the (circulant) mixing matrix, W[i, j] = c[(j - i) mod n]; None if not circulant."""
        if self.circulant is None:
            return None
        offs, directed = self.circulant
        if directed and self.weights in SYMMETRIC_ONLY:
            mixing_matrix(self.adjacency(0), self.weights)  # raises the rule's error
        deg = len({o % self.n for o in offs} - {0})
        w_self, w = circulant_weight(self.weights, deg)
        return spectral.circulant_first_row(self.n, offs, w_self, w)

    def sparse_matrix(self, t: int = 0) -> sp.csr_array:
        """Mixing matrix of round t as a scipy.sparse CSR array."""
        key = ("W", self._t(t))
        if key not in self._cache:
            self._store(key, mixing_matrix(self.adjacency(t), self.weights))
        return self._cache[key]

    def matrix(self, t: int = 0) -> np.ndarray:
        """Mixing matrix of round t, dense float64 (n x n); fixed topologies ignore t (n <= DENSE_MATRIX_MAX_N:
        :meth:`sparse_matrix` and :meth:`circulant_row` hold larger ones)."""
        if self.n > DENSE_MATRIX_MAX_N:
            raise ValueError(f"n = {self.n:,} is too large for a dense mixing matrix ({8e-9 * self.n ** 2:.3g} GB; "
                             f"n <= {DENSE_MATRIX_MAX_N:,}); lower n")
        return self.sparse_matrix(t).toarray()

    def spectrum(self, t: int = 0, method: str = "auto") -> spectral.Spectrum:
        """Spectrum of round t: FFT for circulant topologies, Lanczos for large sparse symmetric, dense otherwise."""
        if method in ("auto", "fft") and self.circulant is not None:
            return spectral.circulant_spectrum(self.circulant_row(t))
        if method == "fft":
            raise ValueError(f"topology {self.name!r} is not circulant; use method 'dense' or 'lanczos'")
        return spectral.spectrum(self.sparse_matrix(t), method=method)

    def check_size(self, horizon: int | None = None) -> None:
        """Refuse, before anything large is allocated, an analysis that cannot run: bad parameters, per-round
        spectra of a large time-varying directed topology, or more memory than the machine has free (:mod:`memory`)."""
        check_params(self.name, self.n, self.params)
        if self.time_varying and self.directed and self.n > spectral.DENSE_MAX_N:
            raise ValueError(f"n = {self.n:,}: per-round spectra of a time-varying directed topology need the dense "
                             f"path (n <= {spectral.DENSE_MAX_N}); lower n")
        rule = check_rule(self.spec.default_weights if self.weights == "default" else self.weights)
        memory.check(self.name, self.n, self.params, horizon, weights=rule)


class MatrixTopology(Topology):
    """A user's fixed mixing matrix (W, or a push-sum P), analysed like a named topology: weights 'given', no
    seed, never time-varying; directed when W is not symmetric. ``source`` (a file name) goes into ``params``."""

    def __init__(self, W, source: str | None = None):
        W = spectral.check_stochastic(spectral.check_matrix(W))
        super().__init__("matrix", W.shape[0], "given", None, {"file": str(source)} if source is not None else {})
        self._W = sp.csr_array(W, dtype=float)
        self._symmetric = spectral.is_symmetric(self._W)

    time_varying = False
    circulant = None

    @property
    def spec(self) -> Spec:
        raise ValueError("a matrix topology has no registry entry")

    @property
    def directed(self) -> bool:
        return not self._symmetric

    def graph(self, t: int = 0) -> nx.Graph:
        return nx.from_scipy_sparse_array(self.adjacency(t).T, create_using=nx.DiGraph if self.directed else nx.Graph)

    def adjacency(self, t: int = 0) -> sp.csr_array:
        A = sp.csr_array((self._W != 0).astype(float))
        A.setdiag(0)
        A.eliminate_zeros()
        return A

    def sparse_matrix(self, t: int = 0) -> sp.csr_array:
        return self._W

    def check_size(self, horizon: int | None = None) -> None:
        memory.check("matrix", self.n, horizon=horizon, symmetric=self._symmetric, nnz=self._W.nnz)


def from_matrix(W, source: str | None = None) -> MatrixTopology:
    """A :class:`MatrixTopology` from an array or sparse matrix, or from a file path (:func:`files.load_matrix`)."""
    if isinstance(W, (str, bytes)) or hasattr(W, "__fspath__"):
        from dfltheory.topology.files import load_matrix

        return MatrixTopology(load_matrix(W), source=str(W) if source is None else source)
    return MatrixTopology(W, source=source)


def build(name: str, n: int, weights: str = "metropolis", seed: int | None = 0, **params) -> Topology:
    """Build topology ``name`` on ``n`` clients with weight rule ``weights`` ('default': the topology's own rule)."""
    spec = _spec(name)
    n = graphs.check_n(n)
    checks.arguments(seed=seed)
    if weights == "default":
        weights = spec.default_weights
    check_rule(weights)
    check_params(name, n, params)
    memory.check(name, n, params, analysis=False, weights=weights)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (2 ** 32))
    topo = Topology(name, n, weights, seed, dict(params))
    if topo.circulant is None or topo.n <= 2000:
        topo.sparse_matrix(0)  # fail early on a rule that does not fit the graph
    else:
        topo.circulant_row(0)
    return topo


KEYS = ("topology", "n", "weights", "seed", "params", "time_varying", "directed", "horizon", "Q",
        "lambda", "lambda_mean", "spectral_gap", "psi", "lambda_2", "lambda_min", "sigma_2", "sigma_2_mean",
        "lambda_Q", "Phi", "phi_E2", "method",
        "symmetric", "row_stochastic", "column_stochastic", "doubly_stochastic", "definition1", "connected",
        "D", "a", "B", "B_disjoint", "Delta", "Delta_disjoint",
        "C", "q", "one_minus_q", "log10_one_minus_q", "log10_C", "vacuous",
        "q_pgp", "log10_one_minus_q_pgp", "C_pgp", "log10_C_pgp", "q_remark1", "log10_one_minus_q_remark1",
        "q_no", "log10_one_minus_q_no", "C_no", "log10_delta_lower_bound", "delta", "q_measured", "C_measured",
        "beta_pi", "kappa_pi", "beta_A", "kappa_A", *(f"n_eff_{g}" for g in beyond_gap.GAMMAS), "notes")


def _properties(W: sp.csr_array, spec: spectral.Spectrum, atol: float = 1e-9) -> dict:
    ones = np.ones(W.shape[0])
    rows = float(np.abs(W @ ones - 1).max())
    cols = float(np.abs(W.T @ ones - 1).max())
    sym = spec.symmetric
    ds = rows <= atol and cols <= atol
    return {"symmetric": sym, "row_stochastic": rows <= atol, "column_stochastic": cols <= atol,
            "doubly_stochastic": ds,
            "definition1": bool(sym and ds and spec.lambda_2 < 1 - 1e-12 and spec.lambda_min > -1 + 1e-12)}


def _circulant_diameter(topo: Topology) -> float:
    d = shortest_path(topo.adjacency(0).T, directed=True, unweighted=True, indices=0)  # vertex-transitive
    return float(d.max())


def analyze(name: str, n: int, weights: str = "metropolis", seed: int | None = 0, Q: int = 1,
            horizon: int | None = None, d: float = 1.0, K_u: int = 1, **params) -> dict:
    """Every constant of topology ``name`` (see :data:`KEYS`, docs/topology.md). Unavailable values are None with
    the reason in ``notes``; quantities that are infinite by definition (disconnected graph) are float('inf')."""
    _spec(name)
    checks.arguments(seed=seed, Q=Q, horizon=horizon, d=d, K_u=K_u)
    Topology(name, graphs.check_n(n), weights, seed, dict(params)).check_size(horizon)  # before building anything
    return analyze_topology(build(name, n, weights=weights, seed=seed, **params), Q=Q, horizon=horizon, d=d, K_u=K_u)


def analyze_matrix(W, Q: int = 1, horizon: int | None = None, d: float = 1.0, K_u: int = 1,
                   source: str | None = None) -> dict:
    """:func:`analyze` for a user's matrix (array, sparse matrix or file path, see :func:`from_matrix`): the same
    keys; ``topology`` is 'matrix', ``weights`` 'given', ``params`` {'file': path}; ``notes['definition1']`` names
    the first property of Definition 1 that fails (n <= DENSE_MAX_N)."""
    checks.arguments(Q=Q, horizon=horizon, d=d, K_u=K_u)  # before the file is read
    return analyze_topology(from_matrix(W, source=source), Q=Q, horizon=horizon, d=d, K_u=K_u)


def analyze_topology(topo: Topology, Q: int = 1, horizon: int | None = None, d: float = 1.0, K_u: int = 1) -> dict:
    """:func:`analyze` for an already built :class:`Topology` (small matrices run single-threaded: BLAS threads only
    slow down 100 x 100 products)."""
    from threadpoolctl import threadpool_limits

    checks.arguments(Q=Q, horizon=horizon, d=d, K_u=K_u)
    topo.check_size(horizon)
    with threadpool_limits(1 if topo.n <= spectral.DENSE_MAX_N else None):
        return _analyze(topo, Q, horizon, d, K_u)


def _analyze(topo: Topology, Q: int, horizon: int | None, d: float, K_u: int) -> dict:
    if horizon is None:
        horizon = 50
    n = topo.n
    notes: dict = {}
    out = dict.fromkeys(KEYS)
    out.update(topology=topo.name, n=n, weights=topo.weights, seed=topo.seed, params=dict(topo.params),
               time_varying=topo.time_varying, directed=topo.directed, horizon=int(horizon), Q=int(Q), notes=notes)

    rounds = range(horizon) if topo.time_varying else range(1)
    large = n > spectral.DENSE_MAX_N
    specs = [topo.spectrum(t) for t in rounds]
    if topo.circulant is not None:
        props = {"symmetric": specs[0].symmetric, "row_stochastic": True, "column_stochastic": True,
                 "doubly_stochastic": True,
                 "definition1": bool(specs[0].symmetric and specs[0].lambda_2 < 1 - 1e-12
                                     and specs[0].lambda_min > -1 + 1e-12)}
        plist = [props]
    else:
        plist = [_properties(topo.sparse_matrix(t), s) for t, s in zip(rounds, specs)]
    for k in ("symmetric", "row_stochastic", "column_stochastic", "doubly_stochastic", "definition1"):
        out[k] = all(p[k] for p in plist)

    lams = np.array([s.lam for s in specs])
    lam = float(lams.max())
    out.update({"lambda": lam, "lambda_mean": float(lams.mean()), "spectral_gap": 1.0 - lam,
                "lambda_2": float(max(s.lambda_2 for s in specs)), "lambda_min": float(min(s.lambda_min for s in specs)),
                "sigma_2": float(max(s.sigma_2 for s in specs)),
                "sigma_2_mean": float(np.mean([s.sigma_2 for s in specs])), "method": specs[0].method})
    if topo.time_varying:
        notes["lambda"] = (f"time-varying: lambda = max over {horizon} rounds of the per-round SLEM, lambda_mean its "
                           "mean; lambda_2/lambda_min/sigma_2 are the extremes over rounds")
    if lam >= 1.0 - 1e-12:
        notes["spectral_gap"] = "lambda = 1 (disconnected graph or eigenvalue -1): zero gap, Phi and phi_E2 are inf"
    out["psi"] = lam if out["definition1"] else None
    if out["psi"] is None:
        notes["psi"] = ("psi (seed 004 Definition 1) is defined only for W satisfying Definition 1 (symmetric, doubly "
                        "stochastic, connected, W > -I); see lambda and sigma_2 instead")
        if isinstance(topo, MatrixTopology) and not large:
            from dfltheory.topology.validation import validate

            rep = validate(topo.sparse_matrix(0))
            p = (rep.failures() or ["spectral"])[0]
            notes["definition1"] = f"the matrix fails '{p}' by {rep.violation[p]:.3g}: {rep.detail[p]}"
    if out["symmetric"]:
        out["lambda_Q"] = spectral.lambda_q(lam, Q)
        out["Phi"] = spectral.phi(lam, n, Q)
        out["phi_E2"] = spectral.phi_e2(lam)
    else:
        notes["Phi"] = "lambda^Q, Phi (seed 001 eq. (6)) need a symmetric W (lambda(W^Q) = lambda^Q fails otherwise)"

    _push_sum_constants(topo, out, notes, rounds, horizon, d, K_u, large)
    beyond_gap.constants(topo, out, notes, rounds)
    return out


def _push_sum_constants(topo, out, notes, rounds, horizon, d, K_u, large):
    n = topo.n
    if not out["column_stochastic"]:
        notes["push_sum"] = ("the matrices are not column-stochastic (weight rule "
                             f"{topo.weights!r}): push-sum constants D, B, Delta, a, C, q, delta do not apply "
                             "(dfedpgp.md §5.1, §11 A2); use weights='push-sum'")
        return
    if large:
        if topo.circulant is None:
            notes["push_sum"] = f"n > {spectral.DENSE_MAX_N}: push-sum constants are computed for circulant topologies only"
            return
        c = topo.circulant_row(0)
        out["D"] = int(np.count_nonzero(c))
        out["a"] = float(c[c > 0].min())
        connected = out["lambda"] < 1 - 1e-12
        out["B"] = out["B_disjoint"] = 1 if connected else INF
        out["Delta"] = out["Delta_disjoint"] = _circulant_diameter(topo) if connected else INF
        out["connected"] = connected
        out["q_measured"] = out["lambda"]
        notes["q_measured"] = "fixed circulant P with n large: q_measured = SLEM of P, the asymptotic rate of P^t"
        out["delta"] = 1.0
        notes["delta"] = "circulant P is doubly stochastic: all push-sum weights stay 1"
    else:
        T = horizon if topo.time_varying else 1
        mats = [topo.matrix(t) for t in range(T)]
        out["D"] = pushsum.max_column_nnz(mats)
        out["a"] = pushsum.min_positive_weight(mats)
        out["B"] = pushsum.window_B(mats, "sliding")
        out["B_disjoint"] = pushsum.window_B(mats, "disjoint")
        out["Delta"] = pushsum.window_diameter(mats, out["B"], "sliding")
        out["Delta_disjoint"] = pushsum.window_diameter(mats, out["B_disjoint"], "disjoint")
        out["connected"] = out["B"] == 1
        m = pushsum.measured(mats, horizon)
        out["delta"], out["q_measured"], out["C_measured"] = m["delta"], m["q_measured"], m["C_measured"]
        if topo.time_varying:
            notes["B"] = f"B, Delta over the windows inside the horizon T = {horizon} (sliding and disjoint)"
    sgp = pushsum.sgp_constants(n, out["D"], out["Delta_disjoint"], out["B_disjoint"], d=d)
    pgp = pushsum.sgp_constants(n, out["D"], out["Delta"], out["B"], d=d, K_u=K_u)
    rem = pushsum.remark1_q(out["a"], out["Delta"], out["B"])
    nol = pushsum.nedic_olshevsky_constants(n, out["B"])
    out.update({"C": sgp["C"], "q": sgp["q"], "one_minus_q": sgp["one_minus_q"],
                "log10_one_minus_q": sgp["log10_one_minus_q"], "log10_C": sgp["log10_C"], "vacuous": sgp["vacuous"],
                "q_pgp": pgp["q"], "log10_one_minus_q_pgp": pgp["log10_one_minus_q"], "C_pgp": pgp["C"],
                "log10_C_pgp": pgp["log10_C"], "q_remark1": rem["q"],
                "log10_one_minus_q_remark1": rem["log10_one_minus_q"],
                "q_no": nol["q"], "log10_one_minus_q_no": nol["log10_one_minus_q"], "C_no": nol["C"],
                "log10_delta_lower_bound": pushsum.log10_delta_lower_bound(n, out["B"])})
    notes["C"] = (f"C, q: Assran et al. 2019 Lemma 3 with E = Delta*B (disjoint blocks), d = {d}; C is the upper bound "
                  "and scales with sqrt(d)" + (f"; vacuous: {sgp['reason']}" if sgp["vacuous"] else ""))
    notes["q_pgp"] = f"seed 003 L525-527 with E = (K_u+1)*Delta*B, K_u = {K_u}" + (
        f"; vacuous: {pgp['reason']}" if pgp["vacuous"] else "")
    if rem["vacuous"]:
        notes["q_remark1"] = "vacuous: " + rem["reason"]
    notes["q_no"] = ("C_no = 4, q_no = (1 - n^(-nB))^(1/(nB)): Nedic & Olshevsky 2015 Lemma 1 as recalled by the card "
                     "(not checked against the original)" + (f"; vacuous: {nol['reason']}" if nol["vacuous"] else ""))
