"""Property tests built on the public strategies of dfltheory.testing.strategies."""

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfltheory.testing import strategies as S
from dfltheory.topology import lam, pushsum, validate
from dfltheory.topology.weights import metropolis

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(S.doubly_stochastic(), st.data())
def test_gossip_preserves_the_mean(W, data):
    X = data.draw(S.states(W.shape[0]))
    assert np.allclose((W @ X).mean(axis=0), X.mean(axis=0), atol=1e-9)


@FAST
@given(S.symmetric_doubly_stochastic(), st.data())
def test_gossip_contracts_the_disagreement_by_lambda(W, data):
    X = data.draw(S.states(W.shape[0]))
    xbar = X.mean(axis=0)
    after = np.linalg.norm(W @ X - xbar)
    before = np.linalg.norm(X - xbar)
    assert after <= lam(W) * before + 1e-9 * (1 + before)


@FAST
@given(S.doubly_stochastic(min_n=3, max_n=3), S.doubly_stochastic(min_n=3, max_n=3))
def test_products_of_doubly_stochastic_matrices_stay_doubly_stochastic(A, B):
    rep = validate(A @ B @ A)
    assert rep.doubly_stochastic and (A @ B >= 0).all()


@FAST
@given(S.symmetric_doubly_stochastic(), st.integers(1, 5))
def test_lambda_of_a_power_is_the_power_of_lambda(W, Q):
    assert np.isclose(lam(np.linalg.matrix_power(W, Q)), lam(W) ** Q, atol=1e-9)


@FAST
@given(S.connected_graphs(max_n=14))
def test_metropolis_weights_satisfy_definition_1_on_every_connected_graph(G):
    W = metropolis(nx.to_numpy_array(G)).toarray()
    rep = validate(W, strict=True, graph=G)  # raises, naming the property, if one fails
    assert rep.definition1 and rep.ok["graph"] is True
    assert lam(W) < 1


def _cycled(mats, rounds):
    return [mats[t % len(mats)] for t in range(rounds)]


@settings(max_examples=25, deadline=None)
@given(S.column_stochastic_sequences(), st.data())
def test_push_sum_conserves_sums_and_debiased_values_reach_the_mean(seq, data):
    B, mats = seq
    n = mats[0].shape[0]
    X = data.draw(S.states(n))
    x, w = X.copy(), np.ones(n)
    for P in _cycled(mats, 1500):
        x, w = P @ x, P @ w
        assert np.isclose(w.sum(), n, rtol=1e-9)
    assert np.allclose(x.sum(axis=0), X.sum(axis=0), rtol=1e-9, atol=1e-7)
    assert np.allclose(x / w[:, None], X.mean(axis=0), atol=1e-6 * (1 + np.abs(X).max()))


@FAST
@given(S.column_stochastic_sequences())
def test_sequences_are_B_strongly_connected_on_disjoint_blocks(seq):
    B, mats = seq
    assert pushsum.window_B(mats, "disjoint") <= B
    assert pushsum.window_B(mats, "disjoint") <= pushsum.window_B(mats, "sliding")


@FAST
@given(S.column_stochastic_sequences(max_n=6, max_B=2))
def test_measured_q_never_exceeds_the_theoretical_q(seq):
    _, mats = seq
    mats = _cycled(mats, len(mats) * (40 // len(mats) + 1))
    Bd = pushsum.window_B(mats, "disjoint")
    theory = pushsum.sgp_constants(mats[0].shape[0], pushsum.max_column_nnz(mats),
                                   pushsum.window_diameter(mats, Bd, "disjoint"), Bd)
    m = pushsum.measured(mats)
    assert m["delta"] > 0
    if not theory["vacuous"]:
        assert m["q_measured"] <= theory["q"] + 1e-9
    no = pushsum.nedic_olshevsky_constants(mats[0].shape[0], pushsum.window_B(mats, "sliding"))
    assert m["q_measured"] <= no["q"] + 1e-9
