"""Time-varying mixing in the PEP: a sequence W_0, W_1, ... (round t mixes with W_t; push-sum's P_t with the weights
w^{t+1} = P_t w^t), the papers' random topologies. A constant sequence is the fixed matrix; round t uses W_t; concrete
quadratic runs on a random sequence (the per-agent loops of test_soundness and test_pushsum) stay below the value."""

import numpy as np
import pytest

from dfltheory.pep import worst_case
from dfltheory.pep.compare import compare, mixing_lambda, push_sum_constants
from dfltheory.pep.table import random_sequence
from tests.pep.test_pushsum import P as P_DIRECTED
from tests.pep.test_pushsum import simulate_push_sum
from tests.pep.test_soundness import simulate

KW = dict(m=3, K=2, T=3, eta=0.2, sigma_g=1.0, B=2.0)


def W_lam(m, lam):
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


@pytest.mark.parametrize("algorithm, W, extra", [("dfedavg", W_lam(3, 0.5), {}),
                                                 ("dfedsgpm", P_DIRECTED, dict(alpha=0.5))])
def test_constant_sequence_is_the_fixed_matrix(algorithm, W, extra):
    kw = dict(KW, eta=0.02)  # within both theorems' step-size conditions
    fixed = worst_case(algorithm, W=W, **kw, **extra)
    seq = worst_case(algorithm, W=[W, W, W], **kw, **extra)  # one more than T - 1: unused
    assert seq.value == pytest.approx(fixed.value, rel=1e-6)
    assert compare(seq)["bound"] == pytest.approx(compare(fixed)["bound"], rel=1e-6)
    assert "sequence" in seq.settings["mixing"] and len(seq.settings["mixing_args"]["W"]) == 2


def test_round_t_uses_W_t():
    """Rounds 0 and 1 gossip (T = 3), and only W_0 reaches the quantity: W_1 acts on the last round's models, whose
    mean (the metric point) every doubly stochastic W keeps. So [I, J] is I and [J, I] is J, and they differ."""
    I, J = np.eye(3), np.ones((3, 3)) / 3
    values = {name: worst_case("dfedavg", W=W, **KW).value for name, W in
              (("I", I), ("J", J), ("IJ", [I, J]), ("JI", [J, I]))}
    assert values["IJ"] == pytest.approx(values["I"], rel=1e-6) and values["JI"] == pytest.approx(values["J"], rel=1e-6)
    assert values["I"] - values["J"] > 1e-3, values
    assert mixing_lambda(worst_case("dfedavg", W=[J, I], **dict(KW, T=2)).settings) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_gossip_run_on_a_random_sequence_stays_below(seed):
    rng = np.random.default_rng(seed)
    a, c, x0 = rng.uniform(0.2, 1.0, 3), rng.normal(size=(3, 2)), rng.normal(size=2) * 2
    Ws = random_sequence(3, 2, seed, symmetric=True)
    value, delta, sigma_g, B = simulate(a, c, x0, Ws, 2, 3, 0.2)
    r = worst_case("dfedavg", 3, 2, 3, 0.2, Delta=delta, W=Ws, sigma_g=sigma_g * (1 + 1e-9), B=B * (1 + 1e-9))
    assert 0.3 * r.value < value <= r.value * (1 + 1e-6), (value, r.value)


@pytest.mark.parametrize("seed", [0, 1])
def test_push_sum_run_on_a_random_sequence_stays_below(seed):
    """A directed random draw per round: the weights w^t = P_{t-1}...P_0 1 are not 1, the de-biased points x/w
    differ from the numerators."""
    rng = np.random.default_rng(seed)
    a, c, x0 = rng.uniform(0.2, 1.0, 3), rng.normal(size=(3, 2)), rng.normal(size=2) * 2
    Ps = random_sequence(3, 2, seed, symmetric=False)
    assert not np.allclose(Ps[0].sum(axis=1), 1)  # not doubly stochastic: push-sum proper
    value, delta, sigma_g, B = simulate_push_sum(a, c, x0, Ps, 2, 3, 0.3, 0.5)
    r = worst_case("dfedsgpm", 3, 2, 3, 0.3, Delta=delta, W=Ps, sigma_g=sigma_g * (1 + 1e-9), B=B * (1 + 1e-9),
                   alpha=0.5)
    assert 0.3 * r.value < value <= r.value * (1 + 1e-6), (value, r.value)


def test_theorems_read_the_sequence():
    """dfedsam.thm4.1's lambda is the largest over the rounds used; dfedsgpsm.thm1's delta, C, q are those of the
    sequence (continued periodically), here exact consensus after the second round."""
    Ws = [W_lam(3, 0.2), W_lam(3, 0.6)]
    r = worst_case("dfedavg", 3, 2, 3, 0.05, W=Ws, sigma_g=1.0, B=2.0)
    c = compare(r)
    assert c["lam"] == pytest.approx(0.6) and c["bound"] > r.value
    Ps = [P_DIRECTED, np.ones((3, 3)) / 3]
    consts = push_sum_constants({"W": [P.tolist() for P in Ps]}, 3, 3)
    assert consts["delta"] == pytest.approx(min(P_DIRECTED.sum(axis=1)))  # w^1 = P_0 1, then w = 1
    assert consts["q"] < 1 and consts["C"] >= 4 / 3 - 1e-9


@pytest.mark.parametrize("kwargs, match", [
    (dict(W=[np.eye(3)]), "has 1 matrices but T = 3"),
    (dict(W=[np.eye(3), np.array([[0.5, 0.5, 0], [0.2, 0.3, 0.5], [0.3, 0.2, 0.5]])]), "round 1: W is not symmetric"),
    (dict(W=np.zeros((2, 3, 4))), "square"),
    (dict(algorithm="dfedsgpm", alpha=0.5, W=[P_DIRECTED, np.zeros((3, 3))]), "round 1: P is not column-stochastic"),
])
def test_bad_sequences_are_refused(kwargs, match):
    kw = dict(algorithm="dfedavg", m=3, K=1, T=3, eta=0.1) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)


def test_time_varying_class_bounds_every_sequence_of_the_class():
    """The time-varying class (a new W of the class at each step: each step's own condition only) lies above the
    one-W class and above an explicit random sequence whose W_t are all in it; with one consensus step (T = 3) the
    two classes are the same; its degenerate class [0.4, 0.4] is W(0.4) at every step."""
    from dfltheory.pep import estimate_size

    kw = dict(m=3, K=1, eta=0.2, sigma_g=1.0, B=2.0)
    Ws = random_sequence(3, 3, 1, symmetric=True)  # lambda(W_t) = 2/3 each
    explicit = worst_case("dfedavg", T=4, W=Ws, **kw).value
    fixed = worst_case("dfedavg", T=4, spectral=(-2 / 3, 2 / 3), **kw).value
    varying = worst_case("dfedavg", T=4, spectral=(-2 / 3, 2 / 3), time_varying=True, **kw)
    assert explicit <= varying.value * (1 + 1e-5) and fixed <= varying.value * (1 + 1e-5), (explicit, fixed, varying)
    assert varying.size.gram == estimate_size("dfedavg", 3, 1, 4, spectral=True, sigma_g=True, B=True,
                                              time_varying=True).gram
    assert varying.settings["mixing_args"] == {"spectral": [-2 / 3, 2 / 3], "time_varying": True}
    one = [worst_case("dfedavg", T=3, spectral=(-0.5, 0.5), time_varying=tv, **kw).value for tv in (False, True)]
    assert one[1] == pytest.approx(one[0], rel=1e-5)
    degenerate = worst_case("dfedavg", T=4, spectral=(0.4, 0.4), time_varying=True, **kw).value
    assert degenerate == pytest.approx(worst_case("dfedavg", T=4, W=W_lam(3, 0.4), **kw).value, rel=5e-4)
    with pytest.raises(ValueError, match="time_varying applies to the spectral class"):
        worst_case("dfedavg", T=4, W=Ws, time_varying=True, **kw)
