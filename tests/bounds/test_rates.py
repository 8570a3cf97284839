import sympy as sp

from dfltheory.bounds.rates import leading, verify
from dfltheory.bounds import COMMON

K, T, c, L = (COMMON[k].symbol for k in ("K", "T", "c", "L"))


def test_leading_power_and_coefficient():
    coef, p = leading(3 / sp.sqrt(T) + 5 / T + K / T**2, T)
    assert p == sp.Rational(-1, 2) and coef == 3
    assert leading(K * 7, T) == (7 * K, 0)


def test_verify_finds_the_dropped_noise_term(toy, toy_corollary):
    rep = verify(toy_corollary, parent=toy)
    # noise term eta*L*sig^2 = c L sig^2 / sqrt(K T): order T^-1/2 with K^-1/2, covered by D/sqrt(KT)
    orders = {(p.term, p.T_exp) for p in rep.derived}
    assert ("noise", sp.Rational(-1, 2)) in orders and ("consensus", -1) in orders
    assert rep.derived_rate == sp.Rational(-1, 2) == rep.stated_rate
    # consensus eta^2 L^2 K^2/(1-lam)^2 = c^2 L^2 K/(T (1-lam)^2): topology at T^-1, stated has no topology term
    assert any("no topology term" in f for f in rep.findings)
    cond = {d["text"]: d["under_schedule"] for d in rep.conditions}
    # c/sqrt(K T) <= 1/(4 K L)  <=>  T >= 16 c^2 K L^2
    assert cond["step size"] == f"T >= {sp.sstr(16 * K * L**2 * c**2)}"


def test_verify_flags_a_slower_theorem(toy, toy_corollary):
    from dataclasses import replace

    fast_claim = replace(toy_corollary, terms={"optimization": 1 / T})
    rep = verify(fast_claim, parent=toy)
    assert any(f.startswith("slower than stated") for f in rep.findings)
    assert any(f.startswith("dropped") for f in rep.findings)


def test_verify_reports_constants_the_statement_hides(toy, toy_corollary):
    rep = verify(toy_corollary, parent=toy)
    # the noise piece c L sigma_l^2/sqrt(KT) is covered in order by D/sqrt(KT), but sigma_l is hidden
    hidden = [f for f in rep.findings if f.startswith("constants differ") and "'noise'" in f]
    assert hidden and "sigma_l" in hidden[0]


def test_pieces_that_cancel_fall_back_on_the_whole_term():
    from dfltheory.bounds.rates import _pieces

    (piece,) = _pieces("gap", sp.sqrt(T + 1) - sp.sqrt(T), T, K)
    assert piece.T_exp == sp.Rational(-1, 2) and piece.coef == sp.Rational(1, 2)
