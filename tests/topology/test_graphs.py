import networkx as nx
import numpy as np
import pytest

from dfltheory.topology import NAMES, build, graphs


@pytest.mark.parametrize("name", NAMES)
def test_every_topology_builds_with_its_default_rule(name):
    topo = build(name, 16, weights="default", seed=3)
    W = topo.matrix(0)
    assert W.shape == (16, 16) and W.dtype == np.float64
    assert np.all(W >= 0)
    assert isinstance(topo.graph(0), nx.DiGraph if topo.directed else nx.Graph)
    sums = W.sum(axis=0) if topo.weights == "push-sum" else W.sum(axis=1)
    assert np.allclose(sums, 1.0)


def test_fixed_topologies_ignore_t_and_time_varying_do_not():
    ring = build("ring", 10)
    assert np.array_equal(ring.matrix(0), ring.matrix(7))
    rnd = build("random", 20, weights="push-sum", k=3, seed=1)
    assert rnd.time_varying and not np.array_equal(rnd.matrix(0), rnd.matrix(1))
    again = build("random", 20, weights="push-sum", k=3, seed=1)
    assert np.array_equal(rnd.matrix(5), again.matrix(5))  # round t is a function of (seed, t)


def test_degrees_of_the_regular_graphs():
    assert all(d == 2 for _, d in graphs.ring(10).degree)
    assert all(d == 4 for _, d in graphs.torus(100).degree)
    assert sorted({d for _, d in graphs.grid(100).degree}) == [2, 3, 4]
    assert all(d == 14 for _, d in graphs.exponential(100).degree)  # i +- 1, 2, ..., 64
    assert all(d == 7 for _, d in graphs.exponential_directed(100).out_degree)


def test_random_k_out_in_and_undirected():
    G = graphs.random_k(50, seed=0, k=10, direction="out")
    assert all(d == 10 for _, d in G.out_degree)
    H = graphs.random_k(50, seed=0, k=10, direction="in")
    assert all(d == 10 for _, d in H.in_degree)
    U = graphs.random_k(50, seed=0, k=10, direction="undirected")
    assert not U.is_directed() and min(d for _, d in U.degree) >= 10


def test_code_neighbour_lists_match_the_card():
    n = 100
    assert list(graphs.code_neighbours("code-ring", n)[0]) == [1, 99]
    assert list(graphs.code_neighbours("code-grid", n)[0]) == [1, 9, 91, 99]
    assert list(graphs.code_neighbours("code-exp", n)[0]) == [1, 2, 4, 8, 16, 32, 64]  # one direction
    assert len(graphs.code_neighbours("code-full", n)[5]) == 99
    deg = [len(x) for x in graphs.code_neighbours("code-random", n, seed=0)]
    assert 8 <= np.mean(deg) <= 10  # card: mean 9.1 (each client picks 9, upper triangle, symmetrized)


def test_code_exp_weights_are_one_eighth_row_uniform():
    W = build("code-exp", 100, weights="default").matrix()
    assert np.allclose(W[0, [0, 1, 2, 4, 8, 16, 32, 64]], 1 / 8)
    assert np.allclose(W.sum(axis=1), 1) and np.allclose(W.sum(axis=0), 1)
    assert not np.allclose(W, W.T)


def test_one_peer_exponential_cycles_through_hops():
    hops = [next(iter(graphs.one_peer_exponential(16, t=t).successors(0))) for t in range(5)]
    assert hops == [1, 2, 4, 8, 1]


def test_neighbour_selection_prefers_large_loss_gaps():
    losses = np.array([0.0] * 10 + [5.0])
    P = graphs.selection_probabilities(losses)
    assert np.allclose(P.sum(axis=1), 1)
    assert P[0, 10] > 100 * P[0, 1]  # e^5 vs e^0
    counts = np.zeros(11)
    for t in range(30):
        G = graphs.neighbour_selection(11, seed=0, k=2, t=t, losses=losses)
        for u in range(10):
            counts[list(G.successors(u))] += 1
    assert counts[10] == 300  # client 10 (the outlier) is picked by every client in every round


def test_neighbour_selection_draws_k_distinct_others():
    G = graphs.neighbour_selection(30, seed=2, k=5)
    assert all(d == 5 for _, d in G.out_degree) and nx.number_of_selfloops(G) == 0
