"""The one validation mechanism (dfltheory.constraints): constraints as data, one message shape."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dfltheory.constraints import INF, Interval, OfType, Options, check, closed_ends


@pytest.mark.parametrize("low_open, high_open, closed", [(False, False, "both"), (False, True, "left"),
                                                         (True, False, "right"), (True, True, "neither")])
def test_closed_ends_names_the_closed_ends(low_open, high_open, closed):
    c = Interval(0, 1, closed_ends(low_open, high_open))
    assert c.closed == closed and (c.low_open, c.high_open) == (low_open, high_open)
    assert c.accepts(0) is not low_open and c.accepts(1) is not high_open and c.accepts(0.5)


@pytest.mark.parametrize("constraint, text", [
    (Interval(0, INF, "neither", meaning="the learning rate eta"), "a finite number > 0 (the learning rate eta)"),
    (Interval(1, integer=True), "an integer >= 1"),
    (Interval(0, 1, "left"), "a finite number in [0, 1)"),
    (Interval(0, 2 ** 32 - 1, integer=True), "an integer in [0, 4294967295]"),
    (Interval(), "a finite number"),
    (Options(("fstar", "last")), "one of ('fstar', 'last')"),
    (OfType(bool, "True or False", "the --compile flag"), "True or False (the --compile flag)"),
])
def test_describe_is_the_allowed_range_in_words(constraint, text):
    assert constraint.describe() == text


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 0, True, "1", None, 10 ** 400])
def test_check_refuses_in_one_line_naming_value_range_and_fix(value):
    c = Interval(0, 1e6, "right", meaning="a radius")
    with pytest.raises(ValueError) as err:
        check("--rho", value, c, fix="give 0.05")
    text = str(err.value)
    assert "\n" not in text and text == f"--rho must be a finite number in (0, 1e+06] (a radius), got {value!r}; give 0.05"


def test_check_returns_an_accepted_value_and_types_are_declared():
    assert check("n", 3, Interval(2, integer=True)) == 3
    assert check("n", np.int64(3), Interval(2, integer=True)) == 3  # numbers.Integral by default
    with pytest.raises(ValueError, match="n must be an integer >= 2, got 2.0"):
        check("n", 2.0, Interval(2, integer=True))
    with pytest.raises(ValueError, match="got np.int64"):
        check("n", np.int64(3), Interval(2, integer=True, kind=int))  # a JSON config takes Python ints only
    with pytest.raises(ValueError, match="got 'ring'"):
        check("gap", "ring", Options(("fstar", "last")))


def test_within_is_elementwise_on_arrays():
    c = Interval(0, 1, "left")
    assert c.within(np.array([-0.1, 0.0, 0.5, 1.0])).tolist() == [False, True, True, False]


def test_a_bad_declaration_is_refused():
    with pytest.raises(ValueError, match="closed='open' is not one of"):
        Interval(0, 1, "open")


def test_allowed_is_the_values_without_their_meaning():
    assert Interval(0, 1, "right", meaning="a fraction").allowed() == "a finite number in (0, 1]"
    assert Options(("a", "b"), "a mode").allowed() == "one of ('a', 'b')"
    assert OfType(bool, "True or False", "a flag").allowed() == "True or False"
