"""Soundness: the PEP value is at least the quantity of any concrete instance of the class. Quadratic local
functions f_i(x) = (a_i/2)||x - c_i||^2 (0 < a_i <= L, so L-smooth; f convex, f* exact) are run through the
algorithm by a per-agent loop (the test oracle); sigma_g, B and Delta are set to what the run attains where the
PEP imposes them, so the instance lies in the PEP's class and its value cannot exceed the PEP's."""

import numpy as np
import pytest

from dfltheory.pep import worst_case
from tests.pep.oracle import local_gradient, measure


def simulate(a, c, x0, W, K, T, eta, rho=0.0, Q=1):
    """The DFedAvg family by a per-agent loop; W one matrix or an (S, m, m) sequence, W[t] in round t."""
    m = len(a)
    W = np.asarray(W)
    grad = [lambda x, i=i: a[i] * (x - c[i]) for i in range(m)]
    x = [x0.copy() for _ in range(m)]
    metric, het, queried = [], [], []
    for t in range(T):
        xbar = np.mean(x, axis=0)
        measure(grad, xbar, metric, het, queried)
        if t == T - 1:
            break
        z = []
        for i in range(m):
            y = x[i].copy()
            for _ in range(K):
                gy = local_gradient(grad[i], y, rho, queried)
                y = y - eta * gy
            z.append(y)
        WQ = np.linalg.matrix_power(W[t] if W.ndim == 3 else W, Q)
        x = [sum(WQ[i, j] * z[j] for j in range(m)) for i in range(m)]
    abar = np.mean(a)
    cstar = sum(a[i] * c[i] for i in range(m)) / (m * abar)
    f = lambda v: np.mean([a[i] / 2 * (v - c[i]) @ (v - c[i]) for i in range(m)])
    return min(metric), f(x0) - f(cstar), np.sqrt(max(het)), np.sqrt(max(queried))


@pytest.mark.parametrize("seed, algorithm, rho", [(0, "dfedavg", 0.0), (1, "dfedavg", 0.0),
                                                  (2, "dfedsam-unnormalized", 0.1)])
def test_pep_value_bounds_a_concrete_instance(seed, algorithm, rho):
    rng = np.random.default_rng(seed)
    m, K, T, eta, L = 3, 2, 3, 0.2, 1.0
    a = rng.uniform(0.2, 1.0, m) * L
    c = rng.normal(size=(m, 2))
    x0 = rng.normal(size=2) * 2
    W = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    value, delta, sigma_g, B = simulate(a, c, x0, W, K, T, eta, rho)
    r = worst_case(algorithm, m, K, T, eta, L=L, Delta=delta, W=W, sigma_g=sigma_g * (1 + 1e-9), B=B * (1 + 1e-9),
                   rho=rho)
    assert value <= r.value * (1 + 1e-6), (value, r.value)
    assert value > 0.3 * r.value  # the instance is not trivial (about half the worst case): the check has teeth
