import numpy as np
import pytest

from dfltheory.topology import build, validate


def test_metropolis_ring_satisfies_definition_1():
    topo = build("ring", 12)
    rep = validate(topo.matrix(), graph=topo.graph())
    assert rep.definition1 and rep.doubly_stochastic and rep.graph and rep.symmetric
    assert "holds" in str(rep)


def test_each_property_is_reported_separately():
    push = build("k-out", 12, weights="push-sum", k=2, seed=0).matrix()
    rep = validate(push)
    assert rep.column_stochastic and not rep.row_stochastic and not rep.symmetric and not rep.definition1
    assert rep.ok["graph"] is None  # no graph given
    assert set(rep.failures()) >= {"symmetry", "row_stochastic", "doubly_stochastic"}


def test_strict_names_the_property_and_the_amount():
    W = np.array([[0.6, 0.5], [0.4, 0.5]])  # column-stochastic, not symmetric
    with pytest.raises(ValueError, match=r"fails 'symmetry' by 0\.1"):
        validate(W, strict=True)


def test_null_space_fails_on_a_disconnected_graph():
    W = np.kron(np.eye(2), np.full((2, 2), 0.5))
    rep = validate(W)
    assert rep.symmetric and rep.doubly_stochastic and not rep.null_space
    with pytest.raises(ValueError, match="null_space"):
        validate(W, strict=True)


def test_spectral_property_needs_w_above_minus_identity():
    W = np.array([[0.0, 1.0], [1.0, 0.0]])
    rep = validate(W)
    assert rep.null_space and not rep.spectral
    assert rep.detail["eigenvalue_range"][0] == pytest.approx(-1.0)


def test_graph_support_detects_weights_off_the_graph():
    topo = build("ring", 6)
    W = topo.matrix().copy()
    W[0, 3] = W[3, 0] = 0.01
    W[0, 0] -= 0.01
    W[3, 3] -= 0.01
    rep = validate(W, graph=topo.graph())
    assert not rep.graph and rep.violation["graph"] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="the 6 nodes"):
        validate(W, graph=np.eye(5))
