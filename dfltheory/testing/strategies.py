"""Hypothesis strategies for decentralized-learning objects, for property-based tests of any pillar.

* :func:`connected_graphs`              connected undirected networkx graphs (random spanning tree + extra edges)
* :func:`strongly_connected_digraphs`   strongly connected directed graphs (random Hamiltonian cycle + extra arcs)
* :func:`symmetric_doubly_stochastic`   symmetric doubly stochastic W satisfying Definition 1 (Metropolis, optionally
                                         lazy or mixed with a random doubly stochastic symmetric matrix)
* :func:`doubly_stochastic`             (not necessarily symmetric) doubly stochastic matrices (Birkhoff mixtures)
* :func:`column_stochastic_sequences`   (B, [P(0), ..., P(T-1)]) column-stochastic push-sum matrices whose union over
                                         every block of B rounds is strongly connected
* :func:`states`                         stacked client states X of shape (n, d)
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from dfltheory.topology.weights import lazy, metropolis, push_sum


@st.composite
def connected_graphs(draw, min_n: int = 2, max_n: int = 12, max_extra: int = 10) -> nx.Graph:
    """A connected graph: a random spanning tree (parent of node i drawn among 0..i-1) plus random extra edges."""
    n = draw(st.integers(min_n, max_n))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    for i in range(1, n):
        G.add_edge(i, draw(st.integers(0, i - 1)))
    if n > 2:
        extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=max_extra))
        G.add_edges_from((u, v) for u, v in extra if u != v)
    return G


@st.composite
def strongly_connected_digraphs(draw, min_n: int = 2, max_n: int = 10, max_extra: int = 10) -> nx.DiGraph:
    """A strongly connected digraph: a random Hamiltonian cycle plus random extra arcs."""
    n = draw(st.integers(min_n, max_n))
    order = draw(st.permutations(range(n)))
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(order, order[1:] + order[:1]))
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=max_extra))
    G.add_edges_from((u, v) for u, v in extra if u != v)
    return G


def _adjacency(G) -> np.ndarray:
    """A[v, u] = 1 iff v receives from u."""
    return nx.to_numpy_array(G, nodelist=range(len(G))).T


@st.composite
def symmetric_doubly_stochastic(draw, min_n: int = 2, max_n: int = 12) -> np.ndarray:
    """Symmetric doubly stochastic W satisfying Definition 1: Metropolis weights of a connected graph, optionally
    made lazy, optionally averaged with a symmetrized permutation matrix (which keeps W > -I strictly)."""
    G = draw(connected_graphs(min_n, max_n))
    W = metropolis(_adjacency(G)).toarray()
    if draw(st.booleans()):
        W = lazy(W).toarray()
    if draw(st.booleans()):
        n = W.shape[0]
        perm = np.eye(n)[list(draw(st.permutations(range(n))))]
        alpha = draw(st.floats(0.0, 0.5))
        W = (1 - alpha) * W + alpha * (perm + perm.T) / 2
    return W


@st.composite
def doubly_stochastic(draw, min_n: int = 2, max_n: int = 10, terms: int = 4) -> np.ndarray:
    """A doubly stochastic matrix: a convex combination of permutation matrices (Birkhoff-von Neumann)."""
    n = draw(st.integers(min_n, max_n))
    k = draw(st.integers(1, terms))
    weights = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k)))
    weights /= weights.sum()
    M = np.zeros((n, n))
    for w in weights:
        M += w * np.eye(n)[list(draw(st.permutations(range(n))))]
    return M


@st.composite
def column_stochastic_sequences(draw, min_n: int = 2, max_n: int = 8, max_B: int = 3,
                                max_blocks: int = 4) -> tuple[int, list[np.ndarray]]:
    """(B, [P(0), ..., P(T-1)]) with push-sum weights 1/(out-degree + 1), T = B * blocks, such that the union graph
    of every disjoint block of B rounds is strongly connected (the arcs of a strongly connected digraph are spread
    over the B rounds of each block; each round may add random extra arcs)."""
    n = draw(st.integers(min_n, max_n))
    B = draw(st.integers(1, max_B))
    blocks = draw(st.integers(1, max_blocks))
    mats = []
    for _ in range(blocks):
        G = draw(strongly_connected_digraphs(n, n))
        edges = list(G.edges)
        slots = draw(st.lists(st.integers(0, B - 1), min_size=len(edges), max_size=len(edges)))
        for b in range(B):
            H = nx.DiGraph()
            H.add_nodes_from(range(n))
            H.add_edges_from(e for e, s in zip(edges, slots) if s == b)
            extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3))
            H.add_edges_from((u, v) for u, v in extra if u != v)
            mats.append(push_sum(_adjacency(H)).toarray())
    return B, mats


def states(n: int, d: int = 3):
    """Stacked client states X in R^{n x d} with moderate finite entries."""
    return st.lists(st.floats(-100, 100, allow_nan=False), min_size=n * d, max_size=n * d).map(
        lambda v: np.array(v).reshape(n, d))
