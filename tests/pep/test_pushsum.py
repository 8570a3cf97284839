"""Push-sum in the PEP (SGP, DFedSGPM = DFedSGPSM at rho = 0, and the unnormalized-ascent variant) on a fixed
column-stochastic P and over the spectral class (symmetric doubly stochastic W: the weights stay 1): the average of
||grad f(x_bar^t)||^2 at the numerators' mean, against concrete quadratic runs (card dfedsgpsm §3.1, by a per-agent
loop) and against dfedsgpsm.thm1 at the measured C, q, delta (the class's: sqrt(m - 1), lambda, 1)."""

import numpy as np
import pytest

from dfltheory.pep import worst_case
from dfltheory.pep.compare import compare
from tests.pep.oracle import local_gradient, measure

P = np.array([[1 / 2, 0, 1 / 3], [1 / 2, 1 / 2, 1 / 3], [0, 1 / 2, 1 / 3]])  # column-stochastic, not symmetric


def simulate_push_sum(a, c, x0, P, K, T, eta, alpha, rho=0.0):
    """Algorithm 1 of seed 000 (normalized ascent replaced by z + rho g) on f_i = (a_i/2)||x - c_i||^2; P one matrix
    or an (S, m, m) sequence, P[t] in round t."""
    m = len(a)
    P = np.asarray(P)
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
        Pt = P[t] if P.ndim == 3 else P
        x = [sum(Pt[i, j] * half[j] for j in range(m)) for i in range(m)]
        w = Pt @ w
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
    (dict(W=np.array([[0.9, 0.5], [0.2, 0.5]])), "not column-stochastic"),
    (dict(alpha=None), "needs the momentum coefficient alpha"),
    (dict(alpha=1.0), r"alpha must be a finite number in \[0, 1\)"),
    (dict(algorithm="sgp", K=2, alpha=None), "sgp is one local step"),
    (dict(algorithm="dfedavg", W=np.eye(2)), "alpha = 0.5 only applies"),
])
def test_bad_push_sum_inputs(kwargs, match):
    kw = dict(algorithm="dfedsgpm", m=2, K=2, T=2, eta=0.1, W=np.array([[0.5, 0.5], [0.5, 0.5]]), alpha=0.5) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)


W_RING = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])  # eigenvalues 1, 0.25, 0.25


def W_lam(m, lam):
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


CLASS = dict(m=3, K=2, T=3, eta=0.2, sigma_g=1.0, B=2.0)


def test_explicit_W_below_its_spectral_class_and_degenerate_class_exact():
    """On a symmetric doubly stochastic W push-sum is gossip of the numerators: every W of the class [-0.5, 0.5] lies
    below the class value; the class [0.4, 0.4] is the single W(0.4) and gives its value."""
    cls = worst_case("dfedsgpm", spectral=(-0.5, 0.5), alpha=0.5, **CLASS).value
    for W in (W_lam(3, 0.5), W_lam(3, -0.4), W_RING):
        assert worst_case("dfedsgpm", W=W, alpha=0.5, **CLASS).value <= cls * (1 + 1e-4)
    explicit = worst_case("dfedsgpm", W=W_lam(3, 0.4), alpha=0.5, **CLASS).value
    degenerate = worst_case("dfedsgpm", spectral=(0.4, 0.4), alpha=0.5, **CLASS).value
    assert degenerate == pytest.approx(explicit, rel=5e-4)


def test_class_is_dfedavg_with_momentum():
    """Over the class, DFedSGPM is DFedAvg with local heavy-ball momentum on the same points (one Gram matrix order);
    without momentum its average bounds DFedAvg's min; a DFedAvgM run on a W of the class (the per-agent loop, w
    stays 1) stays below the class value and reaches a good part of it."""
    kw = dict(CLASS, spectral=(-0.5, 0.5))
    push = worst_case("dfedsgpm", alpha=0.0, **kw)
    dfedavg = worst_case("dfedavg", **kw)
    assert push.size.gram == dfedavg.size.gram and dfedavg.value <= push.value * (1 + 1e-6)
    rng = np.random.default_rng(3)
    a, c, x0 = rng.uniform(0.2, 1.0, 3), rng.normal(size=(3, 2)), rng.normal(size=2) * 2
    value, delta, sigma_g, B = simulate_push_sum(a, c, x0, W_RING, 2, 3, 0.2, 0.5)
    r = worst_case("dfedsgpm", 3, 2, 3, 0.2, Delta=delta, spectral=(-0.5, 0.5), sigma_g=sigma_g * (1 + 1e-9),
                   B=B * (1 + 1e-9), alpha=0.5)
    assert 0.3 * r.value < value <= r.value * (1 + 1e-6), (value, r.value)


def test_theorem_over_the_class_uses_every_W_constants():
    """dfedsgpsm.thm1 over the class: delta = 1, q = lambda, C = sqrt(m - 1) (e(t) <= sqrt(m - 1) lambda^t for every
    W of the class): above the worst case, and at least the bound of W(lambda) (C = 2(m - 1)/m, the same q)."""
    from dfltheory.pep.compare import push_sum_constants

    kw = dict(m=3, K=2, T=2, eta=0.02, sigma_g=1.0, B=2.0, alpha=0.5)
    cls = worst_case("dfedsgpm", spectral=(-0.5, 0.5), **kw)
    c = compare(cls)
    assert push_sum_constants(cls.settings["mixing_args"], 2, 3) == {"delta": 1.0, "C": pytest.approx(2 ** 0.5),
                                                                     "q": 0.5}
    assert c["bound"] > cls.value and not c["finding"] and c["lam"] == 0.5
    explicit = compare(worst_case("dfedsgpm", W=W_lam(3, 0.5), **kw))
    assert explicit["bound"] < c["bound"]
    assert push_sum_constants({"W": W_lam(3, 0.5).tolist()}, 2, 3)["C"] == pytest.approx(4 / 3, rel=1e-6)


def test_best_rate_is_the_smallest_valid_C_over_one_minus_q():
    from dfltheory.pep.compare import best_rate

    e = 4 / 3 * 0.5 ** np.arange(30)
    C, q = best_rate(e)
    assert C == pytest.approx(4 / 3, rel=1e-6) and q == pytest.approx(0.5, rel=1e-5)
    assert np.all(e <= C * q ** np.arange(30) * (1 + 1e-9))
    assert best_rate(np.array([4 / 3, 0.0, 0.0])) == (4 / 3, 0.0)  # exact consensus after one round
    C, q = best_rate(np.array([1.0, 1.0, 1e-13]))  # consensus after two rounds: e(1) <= C q
    assert C * q >= 1.0 - 1e-9 and C / (1 - q) == pytest.approx(4.0, rel=1e-4)  # C = 2, q = 1/2


@pytest.mark.parametrize("P", [np.eye(3), np.array([[1, 0, 0], [0, 0.5, 0.5], [0, 0.5, 0.5]])],
                         ids=["identity", "disconnected"])
def test_mixing_that_never_reaches_consensus_gets_no_push_sum_bound(P):
    """A P whose e(t) does not decay admits no e(t) <= C q^t with q < 1: no (C, q) is fitted to the horizon, and the
    theorem gives no bound (it used to print ~2e4 from a q = 0.99 fitted over 100 rounds)."""
    from dfltheory.pep.compare import best_rate, push_sum_constants

    assert best_rate(np.full(100, 4 / 3)) == (np.inf, 1.0)
    assert np.isinf(push_sum_constants({"W": P}, 4, 3)["C"])
    r = worst_case("dfedsgpm", 3, 2, 3, 0.02, W=P, sigma_g=1, B=2, alpha=0.5)
    out = compare(r)
    assert out["bound"] is None and "never reaches consensus" in out["reason"]
