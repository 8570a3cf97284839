"""Mixing-weight rules: from a graph (adjacency, no self-loops) to a mixing matrix W (self-loops added).

Convention: ``A[v, u] = 1`` when client v receives client u's message (edge u -> v); ``x <- W x`` mixes the stacked
client states, so ``W[v, u]`` is the weight v gives to u. Rule names (the strings of ``RULES``):

* ``'metropolis'``       Metropolis-Hastings, W_ij = 1/(1 + max(d_i, d_j)) on edges, W_ii = 1 - sum_j W_ij.
                          Symmetric, doubly stochastic, satisfies Definition 1 of seeds 001/004 on every connected graph.
* ``'max-degree'``       W_ij = 1/(1 + d_max) on edges, W_ii = 1 - d_i/(1 + d_max). Symmetric, doubly stochastic.
* ``'lazy-metropolis'``  (I + W_MH)/2: all eigenvalues in [0, 1].
* ``'uniform'``          the papers' neighbourhood average W_vu = 1/(|N_v^in| + 1) over N_v^in and v itself:
                          row-stochastic (dfedcata.md §3.2 item 6; seed 003 eq. (6), L362-366).
* ``'push-sum'``         column-stochastic push weights P_vu = 1/(|N_u^out| + 1) (seed 000 L82, seed 003 L100).
* ``'sinkhorn'``         Sinkhorn-Knopp balancing of A + I to a doubly stochastic matrix (symmetric for undirected
                          graphs); raises if the pattern admits no doubly stochastic scaling.
* ``'default'``          the topology's own rule (see :data:`dfltheory.topology.core.NAMES`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dfltheory.topology.spectral import check_matrix

RULES = ("metropolis", "max-degree", "lazy-metropolis", "uniform", "push-sum", "sinkhorn")
SYMMETRIC_ONLY = ("metropolis", "max-degree", "lazy-metropolis")


def check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ValueError(f"unknown weight rule {rule!r}; choose one of {', '.join(RULES)} (or 'default')")
    return rule


def _is_symmetric(A: sp.csr_array) -> bool:
    return (A != A.T).nnz == 0


def _with_diagonal(off: sp.csr_array, diag: np.ndarray) -> sp.csr_array:
    return sp.csr_array(off + sp.diags_array(diag)).tocsr()


def metropolis(A) -> sp.csr_array:
    """Metropolis-Hastings weights (Xiao & Boyd 2004): W_ij = 1/(1 + max(d_i, d_j)), i ~ j."""
    A = sp.csr_array(A, dtype=float)
    d = np.asarray(A.sum(axis=1)).ravel()
    C = A.tocoo()
    off = sp.csr_array((1.0 / (1.0 + np.maximum(d[C.row], d[C.col])), (C.row, C.col)), shape=A.shape)
    return _with_diagonal(off, 1.0 - np.asarray(off.sum(axis=1)).ravel())


def max_degree(A) -> sp.csr_array:
    """Max-degree weights W_ij = 1/(1 + d_max): the 1 + d_max keeps W_ii > 0, hence W > -I."""
    A = sp.csr_array(A, dtype=float)
    d = np.asarray(A.sum(axis=1)).ravel()
    off = A / (1.0 + d.max())
    return _with_diagonal(off, 1.0 - d / (1.0 + d.max()))


def lazy(W) -> sp.csr_array:
    """Lazy version (I + W)/2."""
    W = sp.csr_array(W)
    return _with_diagonal(W / 2.0, np.full(W.shape[0], 0.5))


def uniform(A) -> sp.csr_array:
    """Row-stochastic neighbourhood average W_vu = 1/(indeg(v) + 1), u in N_v^in plus v itself."""
    A = sp.csr_array(A, dtype=float)
    K = _with_diagonal(A, np.ones(A.shape[0]))
    r = np.asarray(K.sum(axis=1)).ravel()
    return sp.csr_array(sp.diags_array(1.0 / r) @ K)


def push_sum(A) -> sp.csr_array:
    """Column-stochastic push weights P_vu = 1/(outdeg(u) + 1) (seed 000 L82: p_{j,i} = 1/|N_i^out|, self included)."""
    A = sp.csr_array(A, dtype=float)
    K = _with_diagonal(A, np.ones(A.shape[0]))
    c = np.asarray(K.sum(axis=0)).ravel()
    return sp.csr_array(K @ sp.diags_array(1.0 / c))


def sinkhorn(A, tol: float = 1e-12, max_iter: int = 20_000) -> sp.csr_array:
    """Doubly stochastic balancing of A + I by Sinkhorn-Knopp (alternate row and column normalisation).

    Converges iff A + I has total support (true for every strongly connected graph with self-loops). Raises
    ValueError otherwise rather than return a matrix that is not doubly stochastic."""
    A = sp.csr_array(A, dtype=float)
    K = _with_diagonal(A, np.ones(A.shape[0]))
    symmetric = _is_symmetric(A)
    r = np.ones(K.shape[0])
    c = np.ones(K.shape[0])
    for _ in range(max_iter):
        r = 1.0 / (K @ c)
        c = 1.0 / (K.T @ r)
        rows = r * (K @ c)
        if np.max(np.abs(rows - 1.0)) < tol:
            break
    else:
        raise ValueError("sinkhorn: no doubly stochastic scaling found (the graph is not strongly connected); "
                         "use 'push-sum' or 'uniform' weights, or connect the graph")
    W = sp.csr_array(sp.diags_array(r) @ K @ sp.diags_array(c))
    if symmetric:
        W = sp.csr_array((W + W.T) / 2.0)
    return W


def mixing_matrix(A, rule: str) -> sp.csr_array:
    """Apply the weight ``rule`` to adjacency ``A`` (A[v, u] = 1 iff v receives from u; diagonal ignored)."""
    check_rule(rule)
    A = sp.csr_array(check_matrix(A, what="graph adjacency"), dtype=float)
    A.setdiag(0)
    A.eliminate_zeros()
    A.data[:] = 1.0
    if rule in SYMMETRIC_ONLY and not _is_symmetric(A):
        raise ValueError(f"weight rule {rule!r} needs an undirected (symmetric) graph; for a directed graph use "
                         "'push-sum' (column-stochastic), 'uniform' (row-stochastic) or 'sinkhorn'")
    if rule == "metropolis":
        return metropolis(A)
    if rule == "max-degree":
        return max_degree(A)
    if rule == "lazy-metropolis":
        return lazy(metropolis(A))
    if rule == "uniform":
        return uniform(A)
    if rule == "push-sum":
        return push_sum(A)
    return sinkhorn(A)


def circulant_weight(rule: str, degree: int) -> tuple[float, float]:
    """(self weight, neighbour weight) of every rule on a circulant (regular, vertex-transitive) graph of the given
    in/out degree: all rules reduce to 1/(degree + 1), the lazy one to (1/2 + 1/(2(d+1)), 1/(2(d+1)))."""
    check_rule(rule)
    w = 1.0 / (degree + 1)
    if rule == "lazy-metropolis":
        return 0.5 + w / 2, w / 2
    return w, w
