import math

import numpy as np
import pytest
import scipy.sparse as sp

from dfltheory.topology import analyze, build, lam, phi, phi_e2, spectral, spectrum


# reference values of the cards (dfedsam.md §5.4, dfedadmm.md §5.5, dfedcata.md §7), m = 100
@pytest.mark.parametrize("name, weights, params, expected", [
    ("ring", "metropolis", {}, 0.998684),
    ("grid", "metropolis", {}, 0.979470),
    ("torus", "uniform", {}, 0.923607),
    ("exponential", "uniform", {}, 0.733333),
    ("full", "metropolis", {}, 0.0),
    ("code-grid", "default", {}, 0.9369),
    ("code-exp", "default", {}, 0.75),
    ("code-ring", "default", {}, 0.9987),
])
def test_card_reference_values(name, weights, params, expected):
    r = analyze(name, 100, weights=weights, **params)
    assert r["sigma_2"] == pytest.approx(expected, abs=6e-5)


def test_phi_matches_card_table():
    # dfedsam.md §5.4, generic values, m = 100
    assert phi(0.5, 100, 1) == pytest.approx(12.0)
    assert phi(0.5, 100, 2) == pytest.approx(2.222722, abs=1e-6)
    assert phi(0.9, 100, 3) == pytest.approx(23.542709, abs=1e-5)
    assert phi(0.99, 10, 2) == pytest.approx(5198.136259, rel=1e-8)
    assert phi(0.0, 100, 1) == 2.0
    assert phi(1.0, 100, 2) == float("inf") and phi_e2(1.0) == float("inf")


def test_ring_phi_row_of_the_card():
    r = analyze("ring", 100, Q=2)
    assert r["Phi"] == pytest.approx(289036, rel=1e-5)
    assert r["phi_E2"] == pytest.approx(577842, rel=1e-5)
    assert r["lambda_Q"] == pytest.approx(r["lambda"] ** 2)


@pytest.mark.parametrize("name", ["ring", "exponential", "code-grid", "full"])
def test_fft_lanczos_dense_agree_on_circulants(name):
    topo = build(name, 300)
    fft = topo.spectrum(method="fft")
    dense = topo.spectrum(method="dense")
    for f in ("lam", "lambda_2", "lambda_min", "sigma_2"):
        assert getattr(fft, f) == pytest.approx(getattr(dense, f), abs=1e-9)
    if name != "full":  # Lanczos needs a nonzero deflated operator
        lz = topo.spectrum(method="lanczos")
        assert lz.lam == pytest.approx(dense.lam, abs=1e-7)
        assert lz.lambda_min == pytest.approx(dense.lambda_min, abs=1e-7)
    assert (fft.method, dense.method) == ("fft", "dense")


def test_fft_matches_dense_on_a_directed_circulant():
    topo = build("code-exp", 64, weights="default")
    fft = topo.spectrum(method="fft")
    dense = spectral.dense_spectrum(topo.matrix())
    assert fft.lam == pytest.approx(dense.lam, abs=1e-10) and fft.sigma_2 == pytest.approx(dense.sigma_2, abs=1e-10)
    assert not fft.symmetric


def test_lanczos_agrees_with_dense_on_watts_strogatz():
    topo = build("watts-strogatz", 600, k=6, p=0.2, seed=1)
    lz = spectral.lanczos_spectrum(topo.sparse_matrix())
    dense = spectral.dense_spectrum(topo.matrix())
    assert lz.lam == pytest.approx(dense.lam, abs=1e-7)
    assert lz.lambda_2 == pytest.approx(dense.lambda_2, abs=1e-7)
    assert lz.lambda_min == pytest.approx(dense.lambda_min, abs=1e-7)


def test_auto_uses_lanczos_for_large_sparse_symmetric():
    W = build("watts-strogatz", 3000, k=4, p=0.3, seed=0).sparse_matrix()
    assert spectrum(W).method == "lanczos"
    assert spectrum(W.toarray()[:50, :50] * 0 + np.eye(50)).method == "dense"


def test_lam_is_slem_and_sigma2_for_nonsymmetric():
    W = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])  # directed 3-cycle, lazy
    s = spectrum(W)
    assert s.lam == pytest.approx(0.5)  # |(1 + e^{2 pi i/3})/2| = 1/2
    assert s.sigma_2 == pytest.approx(np.linalg.norm(W - 1 / 3, 2))
    assert not s.symmetric


def test_bipartite_graph_without_self_weight_has_lambda_one():
    W = np.array([[0.0, 1.0], [1.0, 0.0]])  # eigenvalue -1
    assert lam(W) == 1.0


def test_lambda_of_sparse_input_and_circulant_helpers():
    c = spectral.circulant_first_row(8, [1, -1], 1 / 3, 1 / 3)
    M = spectral.circulant_matrix(c)
    assert np.allclose(M.sum(axis=1), 1) and np.allclose(M, M.T)
    assert lam(sp.csr_array(M)) == pytest.approx(spectral.circulant_spectrum(c).lam)
    assert spectral.circulant_spectrum(c).lam == pytest.approx((1 + 2 * np.cos(2 * np.pi / 8)) / 3)


def test_random_pull_rule_of_the_experiments_matches_the_card():
    # dfedadmm.md §5.5: 10 random in-neighbours, row-stochastic 1/11, ||W - P||_2 ~ 0.554 (range 0.540-0.572)
    r = analyze("random", 100, weights="uniform", k=10, direction="in", horizon=20)
    assert r["row_stochastic"] and not r["column_stochastic"] and r["psi"] is None
    assert 0.53 < r["sigma_2_mean"] < 0.58


def test_phi_stays_finite_for_many_gossip_steps():
    from dfltheory.topology.spectral import phi

    lam = 0.998684  # ring of 100 clients
    big = phi(lam, 100, 200)  # m^(2(Q-1)) overflows a float here
    assert math.isfinite(big)
    lq = lam**200
    assert big == pytest.approx((lq + 1) / (1 - lq) ** 2, rel=1e-12)


@pytest.mark.parametrize("W", [np.zeros((3, 3)), np.ones((3, 3)), np.eye(3) * 0.5,
                               sp.csr_array(np.full((4, 4), 0.3))])
def test_spectrum_of_a_non_stochastic_matrix_is_refused(W):
    """spectrum(0) used to return lambda = 0: a number with no meaning (no eigenvalue 1 to measure against)."""
    with pytest.raises(ValueError, match="neither row- nor column-stochastic .* normalise the rows"):
        spectrum(W)
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        lam(W)
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        spectral.sigma_2(W)
    assert spectrum(W, check=False).method == "dense"  # analysed on purpose


def test_row_or_column_stochastic_matrices_keep_their_spectrum():
    P = build("exponential-directed", 8, weights="push-sum").matrix()  # column-stochastic only after transposing
    assert spectrum(P).lam == pytest.approx(spectrum(P.T).lam)
