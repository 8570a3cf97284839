"""Validation of the decentralized PEP: reductions to known cases, monotonicity, the two mixing representations,
and the refusals (too large, bad inputs, inaccurate solves). Small instances only (m <= 3, K <= 2, T <= 3)."""

import numpy as np
import pytest

from dfltheory.pep import PEPSolveError, estimate_size, worst_case
from dfltheory.pep import problem as pep_problem

REL = 1e-5


def W_lam(m, lam):
    """lam I + (1 - lam) 11^T/m: symmetric doubly stochastic, every nonunit eigenvalue equal to lam."""
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("gamma, n", [(1.0, 2), (0.5, 3)])
def test_one_agent_is_pepit_gradient_descent(gamma, n):
    """m = 1, K = 1: gradient descent; with PEPit's own initial condition f(x_0) - f(x_n) <= 1 the value is that of
    PEPit's example (n steps = T - 1 rounds, the metric over the T round-start points x_0..x_n)."""
    from PEPit.examples.nonconvex_optimization.gradient_descent import wc_gradient_descent

    ref, _ = wc_gradient_descent(L=1.0, gamma=gamma, n=n, wrapper="cvxpy", solver="CLARABEL", verbose=-1)
    r = worst_case("dfedavg", m=1, K=1, T=n + 1, eta=gamma, W=np.eye(1), gap="last")
    assert close(r.value, ref), (r.value, ref)


def test_consensus_matrix_is_gradient_descent_on_f():
    """W = 11^T/m with K = 1 and identical functions (sigma_g = 0): every agent runs gradient descent on f, so the
    worst case is PEPit's centralized one, whatever m."""
    from PEPit.examples.nonconvex_optimization.gradient_descent import wc_gradient_descent

    ref, _ = wc_gradient_descent(L=1.0, gamma=1.0, n=2, wrapper="cvxpy", solver="CLARABEL", verbose=-1)
    r = worst_case("dfedavg", m=2, K=1, T=3, eta=1.0, W=W_lam(2, 0.0), sigma_g=0.0, gap="last")
    assert close(r.value, ref), (r.value, ref)


def test_sigma_g_zero_is_imposed_exactly():
    """sigma_g = 0 with heterogeneity at every point: every f_i has the gradient of f wherever it is queried, so the
    agents run one trajectory, gradient descent on f: 100/89 at eta = 0.1, T = 5 (the audit's MATLAB PEP toolbox:
    1.1235955; the inequality sum of squares <= 0 stopped Clarabel at 'optimal_inaccurate' on 1.123899). The single
    agent's PEP (no elimination, no heterogeneity constraint) is the independent check."""
    r = worst_case("dfedavg", m=2, K=1, T=5, eta=0.1, W=W_lam(2, 0.5), sigma_g=0.0, heterogeneity_at="all")
    one = worst_case("dfedavg", m=1, K=1, T=5, eta=0.1, W=np.eye(1))
    assert abs(r.value - 100 / 89) <= 1e-6 and abs(one.value - 100 / 89) <= 1e-6, (r.value, one.value)
    assert r.diagnostics["interpolation"]["interpolable"] and r.size.gram < one.size.gram + 2  # one trajectory


@pytest.mark.parametrize("heterogeneity_at", ["all", "averages"])
def test_worst_case_is_non_decreasing_in_sigma_g_from_zero(heterogeneity_at):
    """A larger sigma_g allows more functions: the value cannot decrease, from the exact sigma_g = 0 on (which was
    2.7e-4 too high, above the values at small sigma_g > 0)."""
    values = [worst_case("dfedavg", m=2, K=1, T=5, eta=0.1, W=W_lam(2, 0.5), sigma_g=s,
                         heterogeneity_at=heterogeneity_at).value for s in (0.0, 0.01, 0.1, 0.5)]
    assert abs(values[0] - 100 / 89) <= 1e-6 and values[-1] > values[0] + 1e-2
    assert all(a <= b * (1 + 1e-7) for a, b in zip(values, values[1:])), values


@pytest.mark.parametrize("mixing", [dict(W=W_lam(3, 0.5)), dict(W=np.eye(3)), dict(spectral=(-0.5, 0.5)),
                                    dict(spectral=(-0.5, 0.5), time_varying=True)], ids=["W", "I", "class", "tv"])
def test_sigma_g_zero_everywhere_makes_the_mixing_irrelevant(mixing):
    """Identical gradients at every point: identical agents, whose gossip changes nothing (the class adds no
    consensus step when the deviations are 0): one agent's value, K = 2 steps a round."""
    r = worst_case("dfedavg", m=3, K=2, T=4, eta=0.1, sigma_g=0.0, heterogeneity_at="all", **mixing)
    one = worst_case("dfedavg", m=1, K=2, T=4, eta=0.1, W=np.eye(1))
    assert close(r.value, one.value), (r.value, one.value)


def test_fstar_gap_is_tighter_than_last_point_gap():
    """f(x^0) - f* <= Delta implies f(x^0) - f(x^{T-1}) <= Delta: the f* PEP is the smaller one."""
    kw = dict(algorithm="dfedavg", m=1, K=1, T=3, eta=1.0, W=np.eye(1))
    fstar, last = worst_case(**kw).value, worst_case(gap="last", **kw).value
    assert fstar <= last * (1 + REL) and fstar < last - 1e-3


def test_single_round_is_two_L_delta():
    """T = 1: the metric is ||grad f(x^0)||^2 with f(x^0) - f* <= Delta, whose worst case is 2 L Delta."""
    r = worst_case("dfedavg", m=2, K=2, T=1, eta=0.1, L=2.0, Delta=3.0, W=W_lam(2, 0.5))
    assert close(r.value, 12.0)


def test_non_increasing_in_T():
    """min over t < T of ||grad f(x_bar^t)||^2: one more round adds a point to the min."""
    W = W_lam(3, 0.5)
    values = [worst_case("dfedavg", m=3, K=2, T=T, eta=0.05, W=W, sigma_g=1.0).value for T in (1, 2, 3)]
    assert all(b <= a * (1 + REL) for a, b in zip(values, values[1:])), values
    assert values[-1] < values[0] - 1e-3, values


def test_identity_W_decouples_agents_with_identical_functions():
    """W = I and sigma_g = 0 (identical local functions at x_bar^t): each agent runs K gradient steps alone per
    round; with m = 1 this is plain local GD, and m = 2 agents do not help the worst case (they can all follow
    the same worst trajectory), nor hurt it beyond m = 1's (x_bar^t = x^t when they agree)."""
    one = worst_case("dfedavg", m=1, K=2, T=3, eta=0.2, W=np.eye(1)).value
    two = worst_case("dfedavg", m=2, K=2, T=3, eta=0.2, W=np.eye(2), sigma_g=0.0).value
    assert two >= one * (1 - REL)


def test_explicit_W_below_its_spectral_class():
    """A W whose nonunit eigenvalues lie in [lo, hi] belongs to the class: its value is at most the class's."""
    m, lam = 3, 0.5
    kw = dict(algorithm="dfedavg", m=m, K=1, T=3, eta=0.1, sigma_g=1.0)
    explicit = worst_case(W=W_lam(m, lam), **kw).value
    W_ring = np.array([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])  # eigenvalues 1, 0.25, 0.25
    ring = worst_case(W=W_ring, **kw).value
    spectral = worst_case(spectral=(-lam, lam), **kw).value
    assert explicit <= spectral * (1 + 1e-4) and ring <= spectral * (1 + 1e-4), (explicit, ring, spectral)


def test_degenerate_spectral_class_is_exact():
    """The class [lam, lam] holds the single W = lam I + (1 - lam) 11^T/m, and its LMI forces Y = lam X: the
    relaxation is exact there (up to the solver's accuracy on this degenerate LMI)."""
    kw = dict(algorithm="dfedavg", m=3, K=1, T=3, eta=0.2, sigma_g=1.0)
    explicit = worst_case(W=W_lam(3, 0.4), **kw).value
    spectral = worst_case(spectral=(0.4, 0.4), **kw).value
    assert close(explicit, spectral, 5e-4), (explicit, spectral)


def test_no_heterogeneity_bound_no_progress():
    """Without sigma_g and with W = I the agents drift apart freely: the worst case stays at T = 1's 2 L Delta."""
    r = worst_case("dfedavg", m=2, K=2, T=3, eta=0.2, W=np.eye(2))
    assert close(r.value, 2.0, 1e-4)


def test_multiple_gossip_steps_in_the_class():
    """Q = 2 consensus steps with one unknown W of the class bound those with a given W of the class."""
    kw = dict(algorithm="dfedavg-mgs", m=2, K=1, T=3, eta=0.2, Q=2, sigma_g=1.0)
    explicit = worst_case(W=W_lam(2, 0.6), **kw).value
    spectral = worst_case(spectral=(-0.6, 0.6), **kw).value
    assert explicit <= spectral * (1 + 1e-4), (explicit, spectral)


def test_heterogeneity_everywhere_is_tighter():
    """sigma_g at every queried point is more constraints than at the averages only: a smaller or equal value."""
    kw = dict(algorithm="dfedavg", m=2, K=2, T=3, eta=0.2, W=W_lam(2, 0.5), sigma_g=0.5)
    everywhere = worst_case(heterogeneity_at="all", **kw)
    averages = worst_case(**kw)
    assert everywhere.value <= averages.value * (1 + 1e-5) and everywhere.size.gram > averages.size.gram


def test_sam_unnormalized_rho_zero_is_dfedavg():
    W = W_lam(2, 0.3)
    a = worst_case("dfedavg", m=2, K=1, T=3, eta=0.1, W=W, sigma_g=0.5).value
    b = worst_case("dfedsam-unnormalized", m=2, K=1, T=3, eta=0.1, W=W, sigma_g=0.5, rho=0.0).value
    assert close(a, b)


def test_mgs_equals_one_gossip_with_W_power():
    """Q gossip steps with W are one step with W^Q (DFedAvg-MGS)."""
    W = W_lam(2, 0.6)
    a = worst_case("dfedavg-mgs", m=2, K=1, T=3, eta=0.1, W=W, Q=2, sigma_g=0.5).value
    b = worst_case("dfedavg", m=2, K=1, T=3, eta=0.1, W=W @ W, sigma_g=0.5).value
    assert close(a, b)


def test_dual_certificate_is_feasible():
    r = worst_case("dfedsam-unnormalized", m=2, K=1, T=2, eta=0.1, rho=0.05, W=W_lam(2, 0.5), sigma_g=1.0, B=2.0)
    d = r.diagnostics
    assert d["residual_min_eig"] >= -1e-6 and d["dual_min"] >= -1e-6 and d["proof_error"] <= 1e-4
    assert abs(r.value - r.primal) <= 1e-5 * max(1.0, r.value)
    assert r.size.gram >= 1 and r.solver == "CLARABEL" and r.status in ("optimal", "optimal_inaccurate")


def test_estimate_matches_built_size():
    r = worst_case("dfedavg", m=3, K=2, T=3, eta=0.05, W=W_lam(3, 0.5), sigma_g=1.0, B=2.0)
    est = estimate_size("dfedavg", 3, 2, 3, sigma_g=True, B=True)
    assert r.size.gram == est.gram


def test_too_large_is_refused_before_building():
    with pytest.raises(ValueError, match="too large.*Gram"):
        worst_case("dfedavg", m=20, K=5, T=20, eta=0.01, W=W_lam(20, 0.5))
    with pytest.raises(ValueError, match="expected ~.* s"):  # small Gram, too many constraints for the time limit
        worst_case("dfedavg", m=3, K=2, T=5, eta=0.05, W=W_lam(3, 0.5), max_seconds=1.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(algorithm="sgd"), "unknown algorithm"),
    (dict(eta=0.0), "eta must be a finite number > 0"),
    (dict(eta=float("nan")), "eta must be a finite"),
    (dict(K=0), "K must be an integer"),
    (dict(algorithm="dpsgd", K=2), "dpsgd is one local step"),
    (dict(rho=0.1), "rho = 0.1 only applies"),
    (dict(W=np.array([[0.9, 0.1], [0.2, 0.8]])), "not symmetric"),
    (dict(W=np.eye(3)), "W is 3 x 3 but m = 2"),
    (dict(W=None, spectral=(-0.5, 1.0)), "hi < 1"),
    (dict(gap="last", T=1), "gap='last'"),
])
def test_bad_inputs_are_refused(kwargs, match):
    kw = dict(algorithm="dfedavg", m=2, K=1, T=2, eta=0.1, W=np.eye(2)) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)


def test_any_failed_check_is_retried_with_the_stronger_regularization(monkeypatch):
    """A first answer that fails a residual check (here made to, by its proof error) is retried with
    RETRY_OPTIONS, as a rejected status is, and the retry's answer is the value."""
    plain = worst_case("dfedavg", m=2, K=1, T=3, eta=0.1, W=W_lam(2, 0.5), sigma_g=1.0)
    diagnostics, calls = pep_problem._diagnostics, []

    def first_inaccurate(problem):
        calls.append(diagnostics(problem))
        return dict(calls[-1], proof_error=1.0) if len(calls) == 1 else calls[-1]

    monkeypatch.setattr(pep_problem, "_diagnostics", first_inaccurate)
    r = worst_case("dfedavg", m=2, K=1, T=3, eta=0.1, W=W_lam(2, 0.5), sigma_g=1.0)
    assert len(calls) == 2 and r.diagnostics["solver_options"] == pep_problem.RETRY_OPTIONS
    assert close(r.value, plain.value) and plain.diagnostics["solver_options"] == {}


def test_an_inaccurate_class_answer_is_retried_and_agrees_with_the_explicit_W():
    """DFedAvg over the degenerate class [0.9, 0.9] (m = 3, K = 2, T = 4, eta = 0.1): Clarabel's first answer misses
    the proof tolerance (1.1e-4 on this machine) and was refused; the retry solves it, at W(0.9)'s value (the class
    [lam, lam] is the single W = lam I + (1 - lam) 11^T/m)."""
    kw = dict(m=3, K=2, T=4, eta=0.1, sigma_g=1.0, B=2.0)
    r = worst_case("dfedavg", spectral=(0.9, 0.9), **kw)
    assert close(r.value, worst_case("dfedavg", W=W_lam(3, 0.9), **kw).value, 1e-4)
    assert r.diagnostics["interpolation"]["interpolable"]


def test_a_failed_solve_names_the_cause_and_the_fix(monkeypatch):
    """A solver exception (KeyError('dual') once reached the command line as "error: dual") becomes one line with
    the cause, the retry and the fix."""
    from PEPit import PEP

    def broken(self, *args, **kwargs):
        raise KeyError("dual")

    monkeypatch.setattr(PEP, "solve", broken)
    with pytest.raises(PEPSolveError) as err:
        worst_case("dfedavg", m=2, K=1, T=2, eta=0.1, W=W_lam(2, 0.5), sigma_g=1.0)
    text = str(err.value)
    assert "stopped with an error ('dual')" in text and "the same after a retry with" in text
    assert "try a smaller K or T" in text and len(text.splitlines()) == 1


def test_unbounded_pep_is_an_error_not_a_number():
    """Without f(x^0) - f* <= Delta the quantity is unbounded (scale f): the solve must fail, never return."""
    from PEPit import PEP
    from PEPit.functions import SmoothFunction

    problem = PEP()
    f = problem.declare_function(SmoothFunction, L=1.0)
    x0 = problem.set_initial_point()
    problem.set_performance_metric(f.gradient(x0) ** 2)
    size = estimate_size("dfedavg", 1, 1, 1)
    with pytest.raises(PEPSolveError, match="unbounded.*no worst case is reported: try"):
        pep_problem._solve(problem, "CLARABEL", size, {}, pep_problem.ACCEPTED_STATUSES)
