"""DFedADMM(-SAM, unnormalized ascent) in the PEP: the average of ||grad f(w^t)||^2 at the auxiliary sequence,
against a concrete quadratic run computed directly (the engine's admm_dual rule, card dfedadmm §3.2, re-derived by a
per-agent loop), and against dfedadmm.thm1 at sigma_l = 0."""

import numpy as np
import pytest

from dfltheory.pep import worst_case
from dfltheory.pep.compare import compare
from dfltheory.pep.problem import admm_gamma
from tests.pep.oracle import local_gradient, measure

W_RING = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])


def W_lam(m, lam):
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


def simulate_admm(a, c, x0, W, K, T, eta, lam_pen, rho=0.0):
    """Algorithm 1 of seed 004 on f_i = (a_i/2)||x - c_i||^2, one agent at a time: returns the average over t < T of
    ||grad f(w^t)||^2, f(x^0) - f*, the largest heterogeneity at the w^t and the largest queried gradient norm."""
    m = len(a)
    grad = [lambda x, i=i: a[i] * (x - c[i]) for i in range(m)]
    gamma = admm_gamma(eta, lam_pen, K)
    x = [x0.copy() for _ in range(m)]
    dual = [np.zeros_like(x0) for _ in range(m)]
    xbar_prev = np.mean(x, axis=0)
    metric, het, queried = [], [], []
    for t in range(T):
        xbar = np.mean(x, axis=0)
        w = xbar + (1 - gamma) / gamma * (xbar - xbar_prev)
        measure(grad, w, metric, het, queried)
        if t == T - 1:
            break
        z = []
        for i in range(m):
            y = x[i].copy()
            for _ in range(K):
                gy = local_gradient(grad[i], y, rho, queried)
                y = y - eta * (gy - dual[i] + (y - x[i]) / lam_pen)
            old = dual[i]
            dual[i] = old - (y - x[i]) / lam_pen
            z.append(y - lam_pen * old)
        xbar_prev = xbar
        x = [sum(W[i, j] * z[j] for j in range(m)) for i in range(m)]
    abar = np.mean(a)
    cstar = sum(a[i] * c[i] for i in range(m)) / (m * abar)
    f = lambda v: np.mean([a[i] / 2 * (v - c[i]) @ (v - c[i]) for i in range(m)])
    return np.mean(metric), f(x0) - f(cstar), np.sqrt(max(het)), np.sqrt(max(queried))


@pytest.mark.parametrize("seed, algorithm, eta, lam_pen, rho", [
    (0, "dfedadmm", 0.2, 0.4, 0.0),  # gamma = 0.75: w^t differs from x_bar^t
    (1, "dfedadmm", 0.3, 0.3, 0.0),  # eta = lam_pen: gamma = 1, w^t = x_bar^t
    (2, "dfedadmm-sam-unnormalized", 0.2, 0.4, 0.1)])
def test_pep_value_bounds_a_concrete_admm_run(seed, algorithm, eta, lam_pen, rho):
    rng = np.random.default_rng(seed)
    m, K, T, L = 3, 2, 2, 1.0
    a = rng.uniform(0.2, 1.0, m) * L
    c = rng.normal(size=(m, 2))
    x0 = rng.normal(size=2) * 2
    value, delta, sigma_g, B = simulate_admm(a, c, x0, W_RING, K, T, eta, lam_pen, rho)
    r = worst_case(algorithm, m, K, T, eta, L=L, Delta=delta, W=W_RING, sigma_g=sigma_g * (1 + 1e-9),
                   B=B * (1 + 1e-9), rho=rho, lam_pen=lam_pen)
    assert r.settings["metric"] == "average"
    assert value <= r.value * (1 + 1e-6), (value, r.value)
    assert value > 0.3 * r.value  # a realized run reaches a good part of the worst case: the check has teeth


def test_one_round_is_two_L_delta_and_more_rounds_help():
    """T = 1: the average is ||grad f(x^0)||^2 <= 2 L Delta, attained. More rounds lower the average."""
    kw = dict(m=3, K=2, eta=0.2, W=W_lam(3, 0.5), sigma_g=1.0, lam_pen=0.4)
    one = worst_case("dfedadmm", T=1, **kw).value
    three = worst_case("dfedadmm", T=3, **kw).value
    assert one == pytest.approx(2.0, rel=1e-5) and three < one - 1e-2


def test_class_value_bounds_its_explicit_W():
    kw = dict(m=3, K=2, T=2, eta=0.2, sigma_g=1.0, B=2.0, lam_pen=0.4)
    explicit = worst_case("dfedadmm", W=W_RING, **kw).value  # eigenvalues 1, 0.25, 0.25
    cls = worst_case("dfedadmm", spectral=(-0.5, 0.5), **kw).value
    assert explicit <= cls * (1 + 1e-4), (explicit, cls)


def test_sam_rho_zero_is_dfedadmm():
    kw = dict(m=2, K=2, T=3, eta=0.2, W=W_lam(2, 0.3), sigma_g=0.5, lam_pen=0.4)
    assert worst_case("dfedadmm-sam-unnormalized", rho=0.0, **kw).value == pytest.approx(
        worst_case("dfedadmm", **kw).value, rel=1e-5)


def test_theorem_bound_above_worst_case_under_its_conditions():
    """eta <= 1/(96 K L), eta <= lam_pen <= K eta: dfedadmm.thm1 applies and must lie above the worst case."""
    r = worst_case("dfedadmm", 3, 2, 2, 0.005, W=W_lam(3, 0.5), sigma_g=1.0, B=2.0, lam_pen=0.01)
    c = compare(r, 0.5)
    assert c["theorem"] == "dfedadmm.thm1" and c["bound"] > r.value and not c["finding"]
    assert [v["theorem"] for v in c["variants"]] == ["dfedadmm.thm1.dfedadmm"]
    s = worst_case("dfedadmm-sam-unnormalized", 3, 2, 2, 0.005, W=W_lam(3, 0.5), sigma_g=1.0, B=2.0, lam_pen=0.01,
                   rho=0.05)
    cs = compare(s, 0.5)
    assert {v["theorem"] for v in cs["variants"]} == {"dfedadmm.thm1.corrected", "dfedadmm.thm1.normalized"}
    assert all(v["bound"] > s.value for v in cs["variants"]) and cs["bound"] > s.value


def test_theorem_conditions_failing_give_no_bound():
    r = worst_case("dfedadmm", 3, 2, 2, 0.2, W=W_lam(3, 0.5), sigma_g=1.0, B=2.0, lam_pen=0.4)
    c = compare(r, 0.5)
    assert c["bound"] is None and "eta <= 1/(96*K*L)" in c["reason"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(lam_pen=None), "needs the ADMM penalty"),
    (dict(lam_pen=0.0), "lam_pen must be"),
    (dict(eta=0.2, lam_pen=0.1), "gamma = 1 - .* is 0"),  # eta/lam_pen = 2, K = 2 even
    (dict(algorithm="dfedavg"), "lam_pen = 0.4 only applies"),
    (dict(rho=0.1), "rho = 0.1 only applies"),
])
def test_bad_admm_inputs(kwargs, match):
    kw = dict(algorithm="dfedadmm", m=2, K=2, T=2, eta=0.1, W=np.eye(2), lam_pen=0.4) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)
