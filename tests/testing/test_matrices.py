import networkx as nx
import numpy as np
import pytest

from dfltheory.testing.matrices import ring_matrix
from dfltheory.topology.weights import metropolis


@pytest.mark.parametrize("m", [3, 4, 7])
def test_ring_matrix_is_the_metropolis_ring_and_doubly_stochastic(m):
    A = nx.to_numpy_array(nx.cycle_graph(m))
    np.testing.assert_allclose(ring_matrix(m), metropolis(A).toarray(), atol=1e-15)
    W = ring_matrix(m, self_weight=0.5)
    np.testing.assert_allclose(W, W.T)
    np.testing.assert_allclose(W.sum(0), 1.0)
    assert W[0, 0] == 0.5 and W[0, 1] == W[0, m - 1] == 0.25


@pytest.mark.parametrize("m, s, match", [(2, 1 / 3, "m >= 3"), (5, 1.5, r"\[0, 1\]")])
def test_ring_matrix_rejects_bad_inputs(m, s, match):
    with pytest.raises(ValueError, match=match):
        ring_matrix(m, s)
