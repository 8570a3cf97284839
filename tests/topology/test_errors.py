import numpy as np
import pytest

from dfltheory.topology import analyze, build, lam, validate
from dfltheory.topology.pushsum import check_sequence


@pytest.mark.parametrize("n", [1, 0, -3, 2.5, True])
def test_bad_n(n):
    with pytest.raises(ValueError, match="n must be"):
        build("ring", n)


def test_k_larger_than_n_minus_1():
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, n-1\]"):
        build("random", 10, weights="push-sum", k=10)
    with pytest.raises(ValueError, match="k must be"):
        build("watts-strogatz", 6, k=6)


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown topology 'nope'"):
        build("nope", 10)
    with pytest.raises(ValueError, match="unknown weight rule 'best'"):
        build("ring", 10, weights="best")


def test_symmetric_rule_on_a_directed_graph_is_refused():
    with pytest.raises(ValueError, match="needs an undirected"):
        build("k-out", 10, weights="metropolis", k=2)
    with pytest.raises(ValueError, match="needs an undirected"):
        build("code-exp", 100, weights="metropolis")


@pytest.mark.parametrize("W, msg", [
    (np.ones((2, 3)) / 3, "square"),
    (np.array([[0.5, np.nan], [0.5, 0.5]]), "NaN"),
    (np.array([[1.5, -0.5], [-0.5, 1.5]]), "negative"),
    (np.ones((1, 1)), "n >= 2"),
])
def test_bad_matrices(W, msg):
    with pytest.raises(ValueError, match=msg):
        lam(W)
    with pytest.raises(ValueError, match=msg):
        validate(W)


def test_disconnected_graph_gives_lambda_one_and_infinite_phi():
    r = analyze("erdos-renyi", 30, p=0.0)  # no edges at all
    assert r["lambda"] == 1.0 and r["spectral_gap"] == 0.0
    assert r["Phi"] == float("inf") and r["phi_E2"] == float("inf")
    assert r["psi"] is None and "spectral_gap" in r["notes"]
    assert r["B"] == float("inf") and r["C"] == float("inf") and r["vacuous"]


def test_bad_push_sum_sequences():
    with pytest.raises(ValueError, match="empty"):
        check_sequence([])
    with pytest.raises(ValueError, match="column-stochastic"):
        check_sequence([np.array([[0.9, 0.5], [0.5, 0.5]])])
    with pytest.raises(ValueError, match="expected an 2 x 2"):
        check_sequence([np.eye(2), np.eye(3)])


def test_bad_Q_and_horizon():
    with pytest.raises(ValueError, match="Q"):
        analyze("ring", 10, Q=0)
    with pytest.raises(ValueError, match="horizon"):
        analyze("ring", 10, horizon=0)


def test_bad_parameter_name():
    with pytest.raises(ValueError, match="bad parameter"):
        build("ring", 10, k=3)
