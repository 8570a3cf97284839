"""Push-sum in the PEP (SGP, DFedSGPM = DFedSGPSM at rho = 0, and the unnormalized-ascent variant) on a fixed
column-stochastic P: the average of ||grad f(x_bar^t)||^2 at the numerators' mean, against concrete quadratic runs
(card dfedsgpsm §3.1, by a per-agent loop) and against dfedsgpsm.thm1 at the measured C, q, delta."""

import numpy as np
import pytest

from dfltheory.pep import worst_case
from dfltheory.pep.compare import compare
from tests.pep.oracle import local_gradient, measure

P = np.array([[1 / 2, 0, 1 / 3], [1 / 2, 1 / 2, 1 / 3], [0, 1 / 2, 1 / 3]])  # column-stochastic, not symmetric


def simulate_push_sum(a, c, x0, P, K, T, eta, alpha, rho=0.0):
    """Algorithm 1 of seed 000 (normalized ascent replaced by z + rho g) on f_i = (a_i/2)||x - c_i||^2."""
    m = len(a)
    grad = [lambda x, i=i: a[i] * (x - c[i]) for i in range(m)]
    x = [x0.copy() for _ in range(m)]
    w = np.ones(m)
    metric, het, queried = [], [], []
    for t in range(T):
        xbar = np.mean(x, axis=0)
        measure(grad, xbar, metric, het, queried)
        if t == T - 1:
            break
        half = []
        for i in range(m):
            y, v = x[i].copy(), np.zeros_like(x0)
            for _ in range(K):
                z = y / w[i]
                gz = local_gradient(grad[i], z, rho, queried)
                v = alpha * v + gz
                y = y - eta * v
            half.append(y)
        x = [sum(P[i, j] * half[j] for j in range(m)) for i in range(m)]
        w = P @ w
    abar = np.mean(a)
    cstar = sum(a[i] * c[i] for i in range(m)) / (m * abar)
    f = lambda v: np.mean([a[i] / 2 * (v - c[i]) @ (v - c[i]) for i in range(m)])
    return np.mean(metric), f(x0) - f(cstar), np.sqrt(max(het)), np.sqrt(max(queried))


@pytest.mark.parametrize("seed, algorithm, K, alpha, rho", [(0, "dfedsgpm", 2, 0.5, 0.0), (1, "sgp", 1, None, 0.0),
                                                            (2, "dfedsgpsm-unnormalized", 2, 0.3, 0.1)])
def test_pep_value_bounds_a_concrete_push_sum_run(seed, algorithm, K, alpha, rho):
    rng = np.random.default_rng(seed)
    m, T, L, eta = 3, 2, 1.0, 0.3
    a = rng.uniform(0.2, 1.0, m) * L
    c = rng.normal(size=(m, 2))
    x0 = rng.normal(size=2) * 2
    value, delta, sigma_g, B = simulate_push_sum(a, c, x0, P, K, T, eta, alpha or 0.0, rho)
    r = worst_case(algorithm, m, K, T, eta, L=L, Delta=delta, W=P, sigma_g=sigma_g * (1 + 1e-9), B=B * (1 + 1e-9),
                   alpha=alpha, rho=rho)
    assert value <= r.value * (1 + 1e-6), (value, r.value)
    assert value > 0.3 * r.value


def test_doubly_stochastic_P_without_momentum_is_dfedavg_on_the_average():
    """A symmetric doubly stochastic P keeps w = 1: push-sum is DFedAvg; the average over t < T of ||grad f||^2 at
    x_bar^t is at least the min, DFedAvg's quantity, and equal at T = 1."""
    W = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    kw = dict(m=3, K=2, eta=0.2, W=W, sigma_g=1.0)
    push = worst_case("dfedsgpm", T=2, alpha=0.0, **kw).value
    dfedavg = worst_case("dfedavg", T=2, **kw).value
    assert dfedavg <= push * (1 + 1e-6) and push < 2.0


def test_theorem_at_measured_constants_holds():
    r = worst_case("dfedsgpm", 3, 2, 2, 0.02, W=P, sigma_g=1.0, B=2.0, alpha=0.5)
    c = compare(r, None)
    assert c["theorem"] == "dfedsgpsm.thm1" and c["bound"] > r.value and not c["finding"]
    assert {v["theorem"] for v in c["variants"]} == {"dfedsgpsm.thm1.corrected", "dfedsgpsm.thm1.consistent",
                                                     "dfedsgpsm.thm1.alpha_tilde"}
    sgp = compare(worst_case("sgp", 3, 1, 2, 0.02, W=P, sigma_g=1.0, B=2.0), None)
    assert sgp["bound"] is None and "K >= 2" in sgp["reason"]  # the theorem needs K >= 2 and alpha > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(spectral=(-0.5, 0.5), W=None), "explicit column-stochastic P"),
    (dict(W=np.array([[0.9, 0.5], [0.2, 0.5]])), "not column-stochastic"),
    (dict(alpha=None), "needs the momentum coefficient alpha"),
    (dict(alpha=1.0), r"alpha must be a number in \[0, 1\)"),
    (dict(algorithm="sgp", K=2, alpha=None), "sgp is one local step"),
    (dict(algorithm="dfedavg", W=np.eye(2)), "alpha = 0.5 only applies"),
])
def test_bad_push_sum_inputs(kwargs, match):
    kw = dict(algorithm="dfedsgpm", m=2, K=2, T=2, eta=0.1, W=np.array([[0.5, 0.5], [0.5, 0.5]]), alpha=0.5) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)
