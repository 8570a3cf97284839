"""Constants beyond the spectral gap (dfltheory.topology.beyond_gap): n_eff (Vogels, Hendrikx & Jaggi 2022) and the
generalized spectral gap / equilibrium skewness (arXiv 2312.04928, 2506.04600) on cases with a closed form."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from dfltheory.cli import main
from dfltheory.topology import KEYS, analyze, analyze_matrix, beyond_gap as bg, build, memory

GAMMAS = (0.0, 0.5, 0.9, 0.99)


def _metropolis(name, n, **params):
    return build(name, n, weights="metropolis", **params).matrix(0)


def _closed_form(eigenvalues, gamma):
    """n_eff = (1/(1-gamma)) / ((1/n) sum_k lambda_k^2/(1 - gamma lambda_k^2)), written out independently."""
    lam2 = np.abs(np.asarray(eigenvalues)) ** 2
    return 1.0 / (1.0 - gamma) / np.mean(lam2 / (1.0 - gamma * lam2))


def _series(mats, gamma, periods):
    """Sigma after the last round of ``periods`` periods of x <- W(t)(sqrt(gamma) x + n), started at x = 0."""
    n = mats[0].shape[0]
    S = np.zeros((n, n))
    for _ in range(periods):
        for W in mats:
            S = W @ (gamma * S + np.eye(n)) @ W.T
    return n / ((1.0 - gamma) * np.trace(S))


@pytest.mark.parametrize("n", [2, 7, 16])
def test_n_eff_of_exact_averaging_is_n_and_of_no_communication_is_one(n):
    J, eye = np.full((n, n), 1.0 / n), np.eye(n)
    for path in (bg.n_eff, lambda W, g: bg.n_eff_sequence([W], g)):  # eigenvalues and the Stein equation
        assert path(J, GAMMAS) == pytest.approx(np.full(len(GAMMAS), n), rel=1e-10)
        assert path(eye, GAMMAS) == pytest.approx(np.ones(len(GAMMAS)), rel=1e-10)


@pytest.mark.parametrize("n", [3, 16, 100])
def test_n_eff_of_the_ring_three_paths_against_the_circulant_closed_form(n):
    ev = (1 + 2 * np.cos(2 * np.pi * np.arange(n) / n)) / 3  # Metropolis ring: weights 1/3
    want = [_closed_form(ev, g) for g in GAMMAS]
    W = _metropolis("ring", n)
    assert bg.n_eff(W, GAMMAS) == pytest.approx(want, rel=1e-10)
    assert bg.n_eff_sequence([W], GAMMAS) == pytest.approx(want, rel=1e-8)
    r = analyze("ring", n)  # FFT path
    assert [r[f"n_eff_{g}"] for g in bg.GAMMAS] == pytest.approx([_closed_form(ev, g) for g in bg.GAMMAS], rel=1e-10)
    assert "FFT" in r["notes"]["n_eff"]


def test_n_eff_of_a_large_ring_goes_through_the_fft():
    n = 100_000
    r = analyze("ring", n)
    ev = (1 + 2 * np.cos(2 * np.pi * np.arange(n) / n)) / 3
    assert r["n_eff_0.99"] == pytest.approx(_closed_form(ev, 0.99), rel=1e-9)
    assert r["beta_pi"] == r["beta_A"] == pytest.approx(r["lambda"]) and r["kappa_pi"] == 1.0


@pytest.mark.parametrize("n", [4, 16, 100])
def test_n_eff_of_the_metropolis_star_closed_form(n):
    # hub weights 1/n, leaves 1 - 1/n on themselves: eigenvalues 1, 0 and 1 - 1/n (n - 2 times)
    ev = np.r_[1.0, 0.0, np.full(n - 2, 1 - 1 / n)]
    assert bg.n_eff(_metropolis("star", n), GAMMAS) == pytest.approx([_closed_form(ev, g) for g in GAMMAS], rel=1e-10)


def test_n_eff_of_a_non_symmetric_matrix_is_the_series_of_the_definition():
    P = build("k-out", 12, weights="push-sum", k=3).matrix(0)
    for g in (0.5, 0.9):
        assert bg.n_eff_sequence([P], g) == pytest.approx(_series([P], g, 800), rel=1e-9)


def test_n_eff_is_the_variance_reduction_of_the_simulated_random_walk():
    A = build("star", 8, weights="uniform").matrix(0)  # row-stochastic, not normal
    rng = np.random.default_rng(0)
    gamma, x = 0.9, np.zeros((8, 40_000))
    for _ in range(200):
        x = A @ (math.sqrt(gamma) * x + rng.standard_normal(x.shape))
    measured = 1.0 / (1.0 - gamma) / x.var(axis=1).mean()
    assert measured == pytest.approx(bg.n_eff(A, gamma), rel=0.03)


@pytest.mark.parametrize("n, p", [(16, 4), (100, 7)])
def test_one_peer_exponential_is_periodic_and_matches_the_series(n, p):
    topo = build("one-peer-exponential", n, weights="push-sum")
    mats = [topo.matrix(t) for t in range(30)]
    assert bg.period(mats) == p == math.ceil(math.log2(n))
    for g in (0.5, 0.9):
        assert bg.n_eff_sequence(mats[:p], g) == pytest.approx(_series(mats[:p], g, 1000 // p), rel=1e-9)
    r = analyze("one-peer-exponential", n, weights="push-sum", horizon=30)
    assert r["n_eff_0.9"] == pytest.approx(bg.n_eff_sequence(mats[:p], 0.9), rel=1e-12)
    assert f"rounds 0..{p - 1} repeated periodically (the period" in r["notes"]["n_eff"]


def test_n_eff_lies_between_one_and_n_for_doubly_stochastic_matrices():
    for name, params in (("ring", {}), ("grid", {}), ("star", {}), ("watts-strogatz", {"k": 4}), ("exponential", {})):
        values = bg.n_eff(_metropolis(name, 16, **params), np.linspace(0, 0.999, 7))
        assert np.all(values >= 1 - 1e-9) and np.all(values <= 16 + 1e-9), name
        assert np.all(np.diff(values) > 0), name  # slower decay (larger gamma) averages over more neighbours


@pytest.mark.parametrize("bad", [1.0, -0.1, float("nan"), True, "0.5", [], [0.5, 1.2]])
def test_gamma_outside_zero_one_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match=r"gamma must be|non-empty list") as err:
        bg.n_eff(np.eye(3), bad)
    assert "\n" not in str(err.value)


def test_lyapunov_above_its_size_limit_is_refused_before_any_work():
    n = memory.LYAPUNOV_MAX_N + 1
    P = sp.csr_array(sp.random_array((n, n), density=3 / n, random_state=0) + sp.eye_array(n))
    P = sp.csr_array(P / P.sum(axis=0)[None, :])
    with pytest.raises(ValueError, match=f"n = {n:,}: n_eff of a non-normal or time-varying W needs a dense"):
        bg.n_eff(P, 0.5)


@pytest.mark.parametrize("n", [3, 16, 100])
def test_symmetric_doubly_stochastic_gives_uniform_pi_and_beta_lambda(n):
    W = _metropolis("ring", n)
    lam = abs((1 + 2 * np.cos(2 * np.pi / n)) / 3) if n > 3 else 0.0
    for kind in ("column", "row"):
        assert bg.perron_vector(W, kind) == pytest.approx(np.full(n, 1 / n), rel=1e-10)
        beta, kappa = bg.generalized_gap(W, kind)
        assert beta == pytest.approx(lam, abs=1e-12) and kappa == pytest.approx(1.0, rel=1e-12)
    r = analyze("ring", n)
    assert r["beta_pi"] == pytest.approx(lam, abs=1e-12) and r["kappa_A"] == 1.0


@pytest.mark.parametrize("n", [5, 16, 100])
def test_directed_ring_with_half_weights(n):
    P = (np.eye(n) + np.roll(np.eye(n), 1, axis=0)) / 2  # i -> i + 1, push weights 1/2: doubly stochastic, normal
    beta, kappa = bg.generalized_gap(P, "column")
    assert beta == pytest.approx(math.cos(math.pi / n), rel=1e-12) and kappa == pytest.approx(1.0)
    r = analyze_matrix(P)
    assert r["beta_pi"] == pytest.approx(beta, rel=1e-12)


@pytest.mark.parametrize("n", [4, 16, 100])
def test_star_with_uniform_row_weights_closed_form(n):
    # A = the papers' 1/(deg+1) row weights: pi_A^T A = pi_A^T gives pi_hub = n/(3n-2), pi_leaf = 2/(3n-2);
    # A is reversible w.r.t. pi_A, so beta_A = its SLEM = 1/2 (leaf differences), kappa_A = n/2.
    A = build("star", n, weights="uniform").matrix(0)
    pi = bg.perron_vector(A, "row")
    assert pi == pytest.approx(np.r_[n / (3 * n - 2), np.full(n - 1, 2 / (3 * n - 2))], rel=1e-12)
    assert bg.generalized_gap(A, "row") == pytest.approx((0.5, n / 2), rel=1e-10)
    r = analyze("star", n, weights="uniform")
    assert (r["beta_A"], r["kappa_A"]) == pytest.approx((0.5, n / 2), rel=1e-10)
    assert r["beta_pi"] is None and "not column-stochastic" in r["notes"]["beta_pi"]
    p = analyze("star", n, weights="push-sum")  # P = A^T on an undirected graph: the same pi, beta and kappa
    assert (p["beta_pi"], p["kappa_pi"]) == pytest.approx((0.5, n / 2), rel=1e-10)
    assert p["beta_A"] is None and "not row-stochastic" in p["notes"]["beta_A"]


def test_beta_bounds_every_power_in_the_pi_norm_and_the_slem():
    P = build("k-out", 30, weights="push-sum", k=6).matrix(0)  # strongly connected (k = 3 leaves a node unreached)
    pi = bg.perron_vector(P)
    beta, kappa = bg.generalized_gap(P)
    assert kappa == pytest.approx(pi.max() / pi.min())
    D, Dinv = np.diag(np.sqrt(pi)), np.diag(1 / np.sqrt(pi))
    for t in (1, 2, 5):
        E = np.linalg.matrix_power(P, t) - np.outer(pi, np.ones(30))
        assert np.linalg.norm(Dinv @ E @ D, 2) <= beta ** t * (1 + 1e-12)
    slem = np.sort(np.abs(np.linalg.eigvals(P)))[-2]
    assert slem <= beta + 1e-12


def test_lanczos_norm_agrees_with_the_definition_above_the_dense_limit():
    n = bg.DENSE_NORM_MAX_N + 100
    P = build("k-out", n, weights="push-sum", k=10).matrix(0)
    pi = bg.perron_vector(P)
    want = np.linalg.norm(np.diag(pi ** -0.5) @ (P - np.outer(pi, np.ones(n))) @ np.diag(pi ** 0.5), 2)
    assert bg.generalized_gap(P)[0] == pytest.approx(want, rel=1e-10)


def test_generalized_gap_errors_name_cause_and_fix():
    A = build("star", 6, weights="uniform").matrix(0)
    with pytest.raises(ValueError, match="not column-stochastic .* or kind='row'"):
        bg.generalized_gap(A, "column")
    with pytest.raises(ValueError, match="kind must be 'column'"):
        bg.generalized_gap(A, "rows")
    with pytest.raises(ValueError, match="not strongly connected"):
        bg.perron_vector(np.eye(4))
    with pytest.raises(ValueError, match=r"n = 2,001: the Perron vector .* dense \(n <= 2,000\)"):
        bg.perron_vector(sp.eye_array(2001, format="csr"))


def test_analyze_keys_and_time_varying_rounds():
    assert {"beta_pi", "kappa_pi", "beta_A", "kappa_A", "n_eff_0.5", "n_eff_0.9", "n_eff_0.99"} <= set(KEYS)
    r = analyze("random", 16, weights="push-sum", horizon=6)
    topo = build("random", 16, weights="push-sum")
    per_round = [bg.generalized_gap(topo.matrix(t)) for t in range(6)]
    assert r["beta_pi"] == max(b for b, _ in per_round) and r["kappa_pi"] == max(k for _, k in per_round)
    assert "largest per-round value" in r["notes"]["beta_pi"] and "no round repeats" in r["notes"]["n_eff"]
    er = analyze("code-er", 16, weights="uniform")  # some rounds of G(16, 0.1): disconnected, not regular
    assert er["beta_A"] is None and "not strongly connected" in er["notes"]["beta_A"]


def test_memory_estimate_counts_the_dense_work():
    parts = memory.topology_bytes("k-out", 1000, {}, horizon=1, weights="push-sum")
    assert parts["beta, kappa and n_eff (Perron vector, weighted norm, Lyapunov solve or eigenvalues)"] == 192e6


def test_cli_prints_them_beside_vacuous_constants_and_in_compare(capsys):
    assert main(["topology", "ring", "--n", "100"]) == 0
    out = capsys.readouterr().out
    assert "vacuous                      True  (finite instead: beta_pi = 0.998684" in out
    assert "n_eff_0.99" in out and "note[n_eff]" in out
    assert main(["topology", "compare", "ring", "random", "code-random", "--n", "16", "--horizon", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-3:] == ["beta_pi|A", "kappa_pi|A", "n_eff(0.9)"]
    assert all(row.split()[-3] != "-" for row in lines[3:])  # push-sum, row-stochastic and doubly stochastic rows
    assert main(["topology", "star", "--n", "10", "--weights", "uniform", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["kappa_A"] == pytest.approx(5.0) and r["beta_pi"] is None and r["n_eff_0.9"] > 1
