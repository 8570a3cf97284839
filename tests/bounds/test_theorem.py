import math

import numpy as np
import pytest
import sympy as sp

from dfltheory.bounds import COMMON, Condition, DomainError, Source, Theorem

P = dict(eta=0.01, K=5, T=100, L=2.0, lam=0.5, f0_minus_fstar=3.0, sigma_l=1.5)
eta = COMMON["eta"].symbol


def by_hand(eta, K, T, L, lam, f0_minus_fstar, sigma_l):
    return f0_minus_fstar / (eta * K * T) + eta * L * sigma_l**2 + eta**2 * L**2 * K**2 / (1 - lam) ** 2


def test_evaluate_matches_hand_computation(toy):
    assert toy.evaluate(**P) == pytest.approx(by_hand(**P), rel=1e-12)


def test_terms_sum_to_bound_and_dominant_term(toy):
    terms = toy.evaluate_terms(**P)
    assert sum(terms.values()) == pytest.approx(toy.evaluate(**P))
    assert toy.dominant_term(**P)[0] == "optimization"
    assert toy.dominant_term(**{**P, "lam": 0.999})[0] == "consensus"


def test_terms_evaluate_over_grids(toy):
    etas = np.linspace(1e-3, 2e-2, 7)[:, None]
    lams = np.array([0.0, 0.9, 1.0])[None, :]  # lam = 1: the consensus term is inf, as the bound
    terms = toy.evaluate_terms(**{**P, "eta": etas, "lam": lams})
    assert all(v.shape == (7, 3) for v in terms.values())
    np.testing.assert_allclose(sum(terms.values()), toy.evaluate(**{**P, "eta": etas, "lam": lams}))
    assert np.isinf(terms["consensus"][:, 2]).all()
    assert np.isfinite(terms["optimization"]).all()  # it does not involve lam


def test_valid_marks_where_every_condition_holds(toy):
    etas = np.array([0.01, 1 / 40, 0.03])  # eta <= 1/(4 K L) = 1/40: holds, holds on its edge, fails
    np.testing.assert_array_equal(toy.valid(**{**P, "eta": etas}), [True, True, False])
    assert toy.valid(**P) is True


def test_grid_evaluation_broadcasts(toy):
    etas = np.linspace(1e-3, 2e-2, 7)[:, None]
    lams = np.linspace(0, 0.9, 5)[None, :]
    grid = toy.evaluate(**{**P, "eta": etas, "lam": lams})
    assert grid.shape == (7, 5)
    assert grid[3, 2] == pytest.approx(by_hand(**{**P, "eta": etas[3, 0], "lam": lams[0, 2]}))


def test_check_verdicts_and_margins(toy):
    ok = toy.check(**P)
    assert ok.ok and [v.holds for v in ok.conditions] == [True, True]
    assert ok.conditions[0].margin == pytest.approx(1 / 40 - 0.01)
    assert ok.conditions[0].relative_margin == pytest.approx((1 / 40 - 0.01) * 40)
    bad = toy.check(**{**P, "eta": 0.04})
    assert [v.holds for v in bad.conditions] == [False, True]
    assert bad.conditions[0].margin == pytest.approx(1 / 40 - 0.04)
    assert len(bad.violated) == 1 and not bad.ok
    d = bad.to_dict()
    assert set(d) >= {"id", "value", "terms", "conditions"}
    assert set(d["conditions"][0]) >= {"text", "holds", "margin"}


def test_strict_condition_fails_at_equality(toy):
    res = toy.check(**{**P, "eta": 0.05})  # eta K L = 0.5 exactly
    assert res.conditions[1].holds is False and res.conditions[1].margin == pytest.approx(0)


def test_lambda_one_is_documented_infinity(toy):
    res = toy.check(**{**P, "lam": 1.0})
    assert math.isinf(res.value) and "not connected" in res.infinite_reason
    assert toy.evaluate(**{**P, "lam": np.array([0.5, 1.0])})[1] == math.inf


@pytest.mark.parametrize("name,value,match", [
    ("lam", 1.2, "lam = 1.2 is outside its domain"),
    ("eta", 0.0, "eta = 0 is outside"),
    ("eta", -0.1, "eta = -0.1 is outside"),
    ("K", 0, "K = 0 is outside"),
    ("K", 2.5, "give an integer"),
])
def test_domain_errors_name_symbol_and_fix(toy, name, value, match):
    with pytest.raises(DomainError, match=match):
        toy.evaluate(**{**P, name: value})


def test_unknown_and_missing_symbols_are_listed(toy):
    with pytest.raises(KeyError, match=r"unknown symbol\(s\) \['etaa'\].*valid symbols are .*eta \(local"):
        toy.evaluate(**P, etaa=1)
    with pytest.raises(KeyError, match=r"missing value\(s\) for \['T'\]"):
        toy.evaluate(**{k: v for k, v in P.items() if k != "T"})


def test_largest_admissible_step_size(toy):
    others = {k: v for k, v in P.items() if k != "eta"}
    assert toy.largest("eta", **others) == pytest.approx(1 / 40)
    assert toy.admissible("eta", **others).contains(sp.Rational(1, 40)) == sp.true
    with pytest.raises(KeyError, match="give values for"):
        toy.admissible("eta", K=5)


@pytest.mark.parametrize("L", [2.2777364412413803, 1 / 3, 7.0, 1e-3])
def test_largest_step_size_passes_the_check_in_floating_point(L):
    """sup = 1/(10 K L) rounds to a float just above the threshold for some L; largest() stays inside."""
    from dfltheory.bounds import get

    thm = get("dfedsam.thm4.1")
    fixed = dict(K=5, L=L, rho=0.01, Q=1, lam=0.5, m=16)
    eta = thm.largest("eta", **fixed)
    assert eta == pytest.approx(1 / (50 * L), rel=1e-14)
    assert thm.valid(eta=eta, **fixed)


def test_undeclared_symbol_is_rejected_at_construction():
    x = sp.Symbol("x", positive=True)
    with pytest.raises(ValueError, match=r"symbols \['x'\] are used but not declared"):
        Theorem(id="bad.thm", paper="bad", kind="theorem", title="", quantity="", terms={"a": x},
                variables=(COMMON["eta"],), source=Source("0", "L0"))


def test_bad_provenance_tag_and_kind():
    with pytest.raises(ValueError, match="unknown provenance tag"):
        Source("0", "L0", tag="GUESS")
    with pytest.raises(ValueError, match="kind"):
        Theorem(id="b", paper="b", kind="conjecture", title="", quantity="", terms={"a": COMMON["eta"].symbol},
                variables=(COMMON["eta"],), source=Source("0", "L0"))


def test_condition_must_be_an_inequality():
    eta = COMMON["eta"].symbol
    with pytest.raises(TypeError, match="inequality"):
        Condition(sp.Eq(eta, 1), "eq").margin


def test_describe_mentions_source_and_conditions(toy):
    text = toy.describe()
    assert "seed 999 L1-2, eq. (1)" in text and "step size" in text and "[SEED]" in text


@pytest.mark.parametrize("value,message", [(None, "is not a number"), ("abc", "is not a number"),
                                           ([1e-3, 2e-3], "are arrays"), (np.array([1e-3]), "are arrays")])
def test_check_refuses_what_is_not_one_number(toy, value, message):
    """Issue 11 §4: a list, an array or None gave a TypeError; now one clear error (evaluate() takes arrays)."""
    with pytest.raises(ValueError, match=message):
        toy.check(**{**P, "eta": value})


def test_evaluate_and_valid_take_lists_elementwise(toy):
    out = toy.evaluate(**{**P, "eta": [1e-3, 2e-3]})
    assert out.shape == (2,) and out[0] == pytest.approx(toy.evaluate(**{**P, "eta": 1e-3}))
    assert list(toy.valid(**{**P, "eta": [1e-3, 1.0]})) == [True, False]


def test_get_refuses_a_non_string_id():
    from dfltheory.bounds import get

    with pytest.raises(TypeError, match="a theorem id is a string"):
        get(None)


def test_a_condition_the_toolkit_adds_must_say_why():
    with pytest.raises(ValueError, match="say why"):
        Condition(eta <= 1, "made up", Source("0", "L0", tag="DERIVED"))
    assert Condition(eta <= 1, "stated", Source("0", "L0")).origin == "paper"
    with pytest.raises(ValueError, match="origin"):
        Condition(eta <= 1, "x", origin="mine")


def test_partial_gives_evaluate_and_valid_with_the_fixed_values_validated_once():
    """Theorem.partial (the T* searches' evaluation): the bound and the conditions' mask equal evaluate and valid at
    the same values, over arrays of steps; a bad fixed value is refused when the function is made."""
    import numpy as np
    import pytest

    from dfltheory.bounds import get
    from dfltheory.bounds.symbols import DomainError

    thm = get("dfedsam.thm4.1")
    fixed = {"K": 4, "L": 1.0, "rho": 0.01, "sigma_l": 0.1, "sigma_g": 0.5, "B": 0.0, "lam": 0.5, "m": 8, "Q": 1,
             "f0_minus_fstar": 0.2}
    fixed = {k: v for k, v in fixed.items() if k in thm.symbols}
    f = thm.partial("all", **fixed)
    eta = np.geomspace(1e-6, 1.0, 9)
    out, ok = f(T=1000, eta=eta)
    np.testing.assert_array_equal(ok, thm.valid("all", **fixed, T=1000, eta=eta))
    np.testing.assert_allclose(out, thm.evaluate(**fixed, T=1000, eta=eta), rtol=0, atol=0)
    assert ok.any() and not ok.all()  # the comparison covers both sides of a condition
    with pytest.raises(DomainError):
        thm.partial("all", **{**fixed, "K": -1})
