"""The admissible-set solver can't be silently wrong: every catalog entry, random points inside its domains, and
an oracle that knows nothing of the solver (the conditions evaluated at many points)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfltheory.bounds import catalog, get
from dfltheory.bounds.solve import Solution

IDS = [t.id for t in catalog().values() if t.conditions]


def _value(var, u: float) -> float:
    """A value inside var's domain from u in [0, 1): log-uniform on (1e-3, 1e2) above a lower end, uniform
    inside a bounded domain, small integers for integer symbols."""
    if var.integer:
        return float(max(var.low, 1) + int(u * 40))
    if math.isinf(var.high):
        return var.low + 10 ** (-3 + 5 * u)
    return var.low + (var.high - var.low) * (0.02 + 0.96 * u)


def _member(sol: Solution, x: float) -> bool:
    return any((lo < x or (lc and lo == x)) and (x < hi or (hc and x == hi)) for lo, hi, lc, hc in sol.intervals)


def _probe_points(var, sol: Solution, rng) -> np.ndarray:
    """Points across the whole domain, and around every end of the answer."""
    lo = var.low if var.low > 0 or not var.low_open else 0.0
    pts = list(lo + np.logspace(-12, 12, 300)) + list(lo + 10 ** rng.uniform(-12, 12, 200))
    if math.isfinite(var.high):
        width = var.high - var.low
        pts += list(var.low + width * rng.uniform(0, 1, 200)) + list(var.high - width * np.logspace(-12, 0, 60))
    for a, b, _, _ in sol.intervals:
        for e in (a, b):
            if math.isfinite(e) and e != 0:
                pts += [e * (1 + s) for s in (-1e-3, -1e-7, 1e-7, 1e-3)] + [math.nextafter(e, -math.inf),
                                                                           math.nextafter(e, math.inf)]
    pts = np.array([p for p in pts if np.isfinite(p)])
    if var.integer:
        pts = np.unique(np.round(pts))
    ok = var.within(pts)
    if math.isfinite(var.high) and var.high_open:  # formulas are rounding noise there (see solve's docstring)
        ok &= pts < var.high - 1e-9 * (var.high - var.low)
    return pts[ok]


def _within_rounding(cond, values, shape) -> np.ndarray:
    margin_fn, scale_fn = cond._fns
    args = [np.asarray(values[n], dtype=float) for n in cond.names]
    with np.errstate(all="ignore"):
        margin = np.broadcast_to(np.asarray(margin_fn(*args), dtype=float), shape)
        scale = np.broadcast_to(np.asarray(scale_fn(*args), dtype=float), shape)
    return np.abs(margin) <= 1e-10 * np.maximum(scale, 1.0)


@pytest.mark.parametrize("thm_id", IDS)
@settings(max_examples=2, suppress_health_check=[HealthCheck.too_slow])
@given(u=st.lists(st.floats(0, 1, exclude_max=True), min_size=24, max_size=24), which=st.sampled_from(["all", "paper"]))
def test_the_admissible_set_agrees_with_the_conditions_everywhere(thm_id, u, which):
    thm = get(thm_id)
    chosen = thm.selected_conditions(which)
    names = sorted({n for c in chosen for n in c.names})
    rng = np.random.default_rng(int(u[0] * 2**32))
    for k, name in enumerate(names):
        values = {n: _value(thm.symbols[n], u[(i + k) % len(u)]) for i, n in enumerate(names) if n != name}
        sol = thm.solve(name, which, **values)
        conds = [c for c in chosen if name in c.names]
        pts = _probe_points(thm.symbols[name], sol, rng)
        holds = np.ones(len(pts), dtype=bool)
        rounding = np.zeros(len(pts), dtype=bool)  # where a condition is decided by the last bits of a float
        for c in conds:
            holds &= np.broadcast_to(c.holds_at({**values, name: pts}), pts.shape)
            rounding |= _within_rounding(c, {**values, name: pts}, pts.shape)
        member = np.array([_member(sol, p) for p in pts])
        bad = pts[(holds != member) & ~rounding]
        assert not len(bad), (f"{thm_id} solving {name} at {values}: {sol.text()} [{sol.method}] disagrees with "
                              f"the conditions at {bad[:5]}")
        if sol.empty:
            continue
        # the ends: every condition holds there, and one fails (or the domain ends) just beyond
        var = thm.symbols[name]
        for end, side in ((sol.largest, math.inf), (sol.smallest, -math.inf)):
            if math.isinf(end):
                continue
            assert all(c.holds_at({**values, name: end}) for c in conds)
            beyond = end + (1 if side > 0 else -1) if var.integer else math.nextafter(end, side)
            inside = bool(var.within(beyond))
            assert not inside or not all(c.holds_at({**values, name: beyond}) for c in conds) \
                or _member(sol, beyond)


def test_dfedpgp_u_descent_condition_mis_solved_by_sympy_is_right_now():
    """Issue 11 §1.1: solveset said 'no value' here, and (0, 1/40) at the second point."""
    thm = get("dfedpgp.thm1")
    first = dict(K_u=20, L_u=1, delta=1, C=6, q=0.31, L_vu=0.5, L_v=1, K_v=4, eta_v=1e-3, T=500)
    sol = thm.solve("eta_u", **first)
    assert sol.largest == pytest.approx(3.0e-4, rel=1e-3) and thm.valid(eta_u=2e-4, **first)
    assert sol.method.startswith("numeric")
    second = dict(K_u=5, L_u=0.5, delta=0.5, C=2, q=0.5, L_vu=0.1, L_v=1, K_v=4, eta_v=1e-3, T=1e6)
    for thm_id in ("dfedpgp.thm1", "dfedpgp.thm1.eq33", "dfedpgp.cor1"):
        t = get(thm_id)
        vals = {k: v for k, v in second.items() if k in t.symbols}
        eta = t.largest("eta_u", **vals)
        assert eta == pytest.approx(0.02029, rel=1e-3)
        assert t.valid(eta_u=eta, **vals) and not t.valid(eta_u=0.0204, **vals)
        assert not t.valid(eta_u=float(np.nextafter(eta, 1)), **vals)


def test_paper_conditions_alone_give_the_papers_step_size():
    """Issue 11 §1.3: the toolkit's derived conditions are separate from the paper's."""
    sgpsm = get("dfedsgpsm.thm1")
    v = dict(alpha=0.99, delta=1, K=20, L=1)
    assert sgpsm.largest("eta", "paper", **v) == pytest.approx(1 / 160)     # eta < delta/(8 L K)
    assert sgpsm.largest("eta", **v) == pytest.approx(0.00507, rel=1e-3)    # + L eta alpha~ < 1 (derived)
    admm = get("dfedadmm.thm1")
    v = dict(lam_pen=1e-4, K=20, L=1)
    assert admm.largest("eta", "paper", **v) == pytest.approx(2e-4)         # min(1/(96 K L), 2 lambda)
    assert admm.largest("eta", **v) == pytest.approx(1e-4)                  # + eta <= lambda (derived)
    for thm in catalog().values():
        for c in thm.conditions:
            assert c.origin in ("paper", "derived") and (c.origin == "paper" or c.why), (thm.id, c.text)


def test_no_value_admissible_is_a_clear_error():
    # eta <= 1/(96 K L) = 1.04e-8 and eta >= lambda/K = 1e-6: nothing is left
    with pytest.raises(ValueError, match="no value of eta satisfies every condition"):
        get("dfedadmm.thm1").largest("eta", lam_pen=1e-6, K=1, L=1e6)
    assert get("dfedadmm.thm1").solve("eta", lam_pen=1e-6, K=1, L=1e6).text() == "none"


def test_integer_answers_are_integers():
    sol = get("dfedsgpsm.cor1").solve("T", c=1.0, delta=0.125, K=20, alpha=0.9)
    assert sol.integer and sol.smallest == 4097 and math.isinf(sol.largest)
    assert sol.text() == "T in {4097, 4098, ...}"
