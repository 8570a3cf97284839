"""The worst-case example behind a PEP value: extracted from the SDP solution and checked independently (L-smooth
interpolation, the quantity recomputed, the assumptions at the points)."""

import numpy as np
import pytest

from dfltheory.pep import interpolation, worst_case


@pytest.mark.parametrize("algorithm, kw", [
    ("dfedavg", dict(spectral=(-0.5, 0.5))),
    ("dfedadmm", dict(W=np.full((2, 2), 0.5), lam_pen=0.4)),
    ("dfedcata-b", dict(W=np.full((2, 2), 0.5), lam_pen=0.5, beta=0.4)),
])
def test_every_worst_case_example_is_interpolable(algorithm, kw):
    r = worst_case(algorithm, 2, 2, 3, 0.2, sigma_g=1.0, B=2.0, **kw)
    i = r.diagnostics["interpolation"]
    assert i["interpolable"] and i["smoothness"] <= 1e-6 and i["quantity"] <= 1e-6
    assert i["recomputed"] == pytest.approx(r.value, rel=1e-6) and i["points"] >= 2 * 3


def example(L=1.0):
    """f(x) = (L/2)||x||^2 at three points: interpolable with constant L, not with a smaller one."""
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    g, f = L * x, 0.5 * L * np.sum(x * x, 1)
    return {"functions": [{"x": x, "g": g, "f": f}],
            "metric": [{"grad": g[1], "f": f[1], "grads": g[1:2]}], "fstar": 0.0}


def test_check_accepts_a_true_instance_and_rejects_a_false_one():
    kw = dict(Delta=1.0, value=1.0, metric="average", sigma_g=0.0, B=3.0)
    assert interpolation.check(example(), L=1.0, **kw)["interpolable"]
    too_curved = interpolation.check(example(), L=0.5, **kw)  # curvature 1 is not 0.5-smooth
    assert not too_curved["interpolable"] and too_curved["smoothness"] > 1e-3
    assert not interpolation.check(example(), L=1.0, **(kw | dict(value=2.0)))["interpolable"]  # wrong quantity
    assert not interpolation.check(example(), L=1.0, **(kw | dict(B=0.5)))["interpolable"]  # ||g|| = 2 > B


def test_a_finding_reports_the_check_and_the_realized_value():
    """Plumbing of a candidate counter-example: a result whose certified value is (artificially) above the bound
    carries the interpolation verdict and the value its example realizes, which here stays below the bound."""
    from dataclasses import replace

    from dfltheory.pep.compare import compare
    from dfltheory.pep.sweep import W_lambda

    r = worst_case("dfedadmm", 3, 2, 2, 0.005, W=W_lambda(3, 0.5), sigma_g=1.0, B=2.0, lam_pen=0.01)
    fake = replace(r, value=1e6)
    c = compare(fake, 0.5)
    assert c["finding"] and c["interpolable"] and c["realized"] == pytest.approx(r.primal, rel=1e-6)
    assert c["realized"] < c["bound"]  # the real example does not beat the bound: no counter-example


def test_realize_mixing_finds_a_W_of_the_class_and_rejects_a_non_kronecker_map():
    rng = np.random.default_rng(0)
    m, r = 3, 4
    W = 0.5 * np.eye(m) + 0.5 * np.ones((m, m)) / m  # nonunit eigenvalues 0.5
    X = rng.normal(size=(2, m, r))
    X -= X.mean(axis=1, keepdims=True)  # deviations: zero mean over agents
    Y = np.einsum("ij,sjr->sir", W - np.ones((m, m)) / m, X)
    assert interpolation.realize_mixing(X, Y, -0.5, 0.5) <= 1e-6
    assert interpolation.realize_mixing(X, Y, -0.2, 0.2) > 1e-3  # 0.5 lies outside [-0.2, 0.2]
    Z = Y.copy()
    Z[:, :, 0] *= -1  # a different map on one coordinate: not of the form W kron I
    assert interpolation.realize_mixing(X, Z, -0.5, 0.5) > 1e-3


def test_class_examples_report_whether_one_W_realizes_them():
    r = worst_case("dfedcata-b", 3, 2, 3, 0.2, spectral=(-0.5, 0.5), sigma_g=1.0, lam_pen=0.5, beta=0.4)
    i = r.diagnostics["interpolation"]
    assert i["interpolable"] and "mixing" in i and i["realizable_mixing"] == (i["mixing"] <= i["tol"])
    explicit = worst_case("dfedcata-b", 3, 2, 3, 0.2, W=np.full((3, 3), 1 / 3), sigma_g=1.0, lam_pen=0.5, beta=0.4)
    assert "mixing" not in explicit.diagnostics["interpolation"]
