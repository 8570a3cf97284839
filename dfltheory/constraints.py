"""Input constraints declared as data, and the one check that enforces them (scikit-learn's ``Interval`` and
``StrOptions`` of ``sklearn.utils._param_validation``, read as one-line ValueErrors).

A constraint is a value: :class:`Interval` (numbers between two ends, each open or closed, integers only if asked),
:class:`Options` (one of a few values) or :class:`OfType` (any value of some types). A pillar declares each of its
constraints once, in a table beside the code that reads the input, and its Python API and its command line both
call :func:`check` with it, so that they accept and refuse the same values with the same words::

    check("--lr", nan, Interval(0, INF, closed="neither", meaning="the learning rate eta"))
    ValueError: --lr must be a finite number > 0 (the learning rate eta), got nan

A bottom-layer module, like :mod:`dfltheory.parsing`: it imports no pillar and nothing heavy (a pillar passes
numpy's number types in ``kind`` where it accepts them), so any layer may declare its constraints with it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

INF = math.inf

#: Interval's ``closed``: which ends belong to the interval (scikit-learn's values)
CLOSED = ("both", "left", "right", "neither")


def closed_ends(low_open: bool, high_open: bool) -> str:
    """``closed`` of the interval with the given open ends: (False, True) -> 'left'."""
    return CLOSED[2 * low_open + high_open]


def _with_meaning(allowed: str, meaning: str) -> str:
    return f"{allowed} ({meaning})" if meaning else allowed


def _end(x) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"  # a seed's 4294967295 in full, a float as 0.998


@dataclass(frozen=True)
class Interval:
    """The finite numbers x with low <= x <= high, ``closed`` saying which ends belong ('both', 'left', 'right',
    'neither'); integers only with ``integer``. ``kind``: the accepted types (default numbers.Integral for an
    integer, numbers.Real otherwise; bools are never numbers here). ``meaning``: what the number is, for the error."""

    low: float = -INF
    high: float = INF
    closed: str = "both"
    integer: bool = False
    meaning: str = ""
    kind: type | tuple = ()

    def __post_init__(self):
        if self.closed not in CLOSED:
            raise ValueError(f"Interval closed={self.closed!r} is not one of {CLOSED}; give one of them")

    @property
    def low_open(self) -> bool:
        return self.closed in ("right", "neither")

    @property
    def high_open(self) -> bool:
        return self.closed in ("left", "neither")

    def within(self, x):
        """Whether x lies between the ends (elementwise on a numpy array; type and finiteness are not asked)."""
        inside = (x > self.low) if self.low_open else (x >= self.low)
        return inside & ((x < self.high) if self.high_open else (x <= self.high))

    def accepts(self, value) -> bool:
        kind = self.kind or (numbers.Integral if self.integer else numbers.Real)
        if isinstance(value, bool) or not isinstance(value, kind):
            return False
        if not self.integer:
            try:  # float(10**400) overflows: no finite float
                if not math.isfinite(float(value)):
                    return False
            except OverflowError:
                return False
        return bool(self.within(value))

    def brackets(self) -> str:
        """'[0, 1)', '(0, inf)': the interval in bracket notation, whatever its ends."""
        return (f"{'(' if self.low_open else '['}{_end(self.low)}, {_end(self.high)}"
                f"{')' if self.high_open else ']'}")

    def range_text(self) -> str:
        """'> 0', '>= 1', 'in [0, 1)'; '' for the whole line."""
        if self.high == INF and self.low == -INF:
            return ""
        if self.high == INF:
            return f"{'>' if self.low_open else '>='} {_end(self.low)}"
        if self.low == -INF:
            return f"{'<' if self.high_open else '<='} {_end(self.high)}"
        return f"in {self.brackets()}"

    def allowed(self) -> str:
        """'a finite number > 0', 'an integer in [0, 9]': the values, without their meaning."""
        return " ".join(filter(None, ("an integer" if self.integer else "a finite number", self.range_text())))

    def describe(self) -> str:
        return _with_meaning(self.allowed(), self.meaning)


@dataclass(frozen=True)
class Options:
    """One of ``values`` (``value in values``: compared with ==, so give bools through :class:`OfType`, True == 1)."""

    values: tuple
    meaning: str = ""

    def accepts(self, value) -> bool:
        return value in self.values

    def allowed(self) -> str:
        return f"one of {self.values}"

    def describe(self) -> str:
        return _with_meaning(self.allowed(), self.meaning)


@dataclass(frozen=True)
class OfType:
    """Any value of ``kind`` (a type or tuple of types), described to the user as ``text`` ('True or False')."""

    kind: type | tuple
    text: str
    meaning: str = ""

    def accepts(self, value) -> bool:
        return isinstance(value, self.kind)

    def allowed(self) -> str:
        return self.text

    def describe(self) -> str:
        return _with_meaning(self.allowed(), self.meaning)


def refusal(name: str, value, constraint, fix: str = "") -> ValueError:
    """The one-line error: ``NAME must be DESCRIPTION, got VALUE[; FIX]``."""
    return ValueError(f"{name} must be {constraint.describe()}, got {value!r}" + (f"; {fix}" if fix else ""))


def check(name: str, value, constraint, fix: str = ""):
    """``value`` if ``constraint`` accepts it, else :func:`refusal`'s ValueError naming ``name`` (the argument, or
    the command-line option), the allowed values, ``value`` and the ``fix``."""
    if not constraint.accepts(value):
        raise refusal(name, value, constraint, fix)
    return value
