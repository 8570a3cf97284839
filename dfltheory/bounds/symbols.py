"""Named symbols with meanings and domains, shared by every paper module.

A :class:`Var` couples a sympy symbol with what it means, the interval it lives in and, where a topology
determines it, the key of :func:`dfltheory.topology.analyze` that supplies its value. All paper modules take
their symbols from here (or build extra ones with :class:`Var`), so that the same name is the same sympy
symbol everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from dfltheory.constraints import Interval, closed_ends

__all__ = ["Var", "DomainError", "COMMON"]


class DomainError(ValueError):
    """A value lies outside the domain of the symbol it is given for."""


@dataclass(frozen=True)
class Var:
    """A symbol of a bound: ``name`` is both the sympy name and the key users pass (``--set eta=0.1``).

    The domain is the interval between ``low`` and ``high`` (open or closed at each end), integral when
    ``integer``. ``infinite_at_high`` names the reason when the bound is ``+inf`` at the closed-off upper end
    (e.g. ``lam = 1``: a disconnected graph never reaches consensus); that value is then accepted and the
    bound evaluates to ``inf`` with that reason instead of raising.
    """

    name: str
    meaning: str
    low: float = 0.0
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    integer: bool = False
    infinite_at_high: str | None = None
    topology_key: str | None = None
    latex: str | None = None

    @property
    def symbol(self) -> sp.Symbol:
        """The sympy symbol. Every bound symbol is declared positive (as the cards do) so that sympy can
        simplify and take limits; a closed lower end at 0 (e.g. ``lam = 0``) is still accepted numerically."""
        if self.integer:
            return sp.Symbol(self.name, positive=True, integer=True)
        return sp.Symbol(self.name, positive=True)

    @property
    def constraint(self) -> Interval:
        """The domain as a declared constraint (:class:`dfltheory.constraints.Interval`, the one shared by every
        pillar's checks); integrality and a documented infinite end are :meth:`validate`'s business."""
        return Interval(self.low, self.high, closed_ends(self.low_open, self.high_open), self.integer, self.meaning)

    @property
    def domain_text(self) -> str:
        return f"{'integer in ' if self.integer else ''}{self.constraint.brackets()}"

    def interval(self) -> sp.Interval:
        lo = sp.Float(self.low) if math.isfinite(self.low) else -sp.oo
        hi = sp.Float(self.high) if math.isfinite(self.high) else sp.oo
        return sp.Interval(lo, hi, self.low_open, self.high_open and self.infinite_at_high is None)

    def within(self, arr):
        """Elementwise: whether values lie in the interval between ``low`` and ``high`` with its open or closed
        ends (integrality and a documented infinite end are :meth:`validate`'s business)."""
        return self.constraint.within(arr)

    def validate(self, value) -> str | None:
        """Raise :class:`DomainError` if ``value`` (scalar or array) leaves the domain (NaN is outside every domain).

        Returns the reason text when some value sits on the ``infinite_at_high`` end, else None.
        """
        import numpy as np

        arr = np.asarray(value, dtype=float)
        at_high = arr == self.high
        inside = self.within(arr)
        if self.infinite_at_high is not None:
            inside |= at_high
        if self.integer:
            inside &= arr == np.round(arr)
        if not np.all(inside):
            bad = arr[~inside].ravel()[0]
            raise DomainError(
                f"{self.name} = {bad:g} is outside its domain {self.domain_text} ({self.name} is {self.meaning}); "
                f"give {'an integer' if self.integer else 'a value'} in {self.domain_text.removeprefix('integer in ')}"
            )
        if self.infinite_at_high is not None and np.any(at_high):
            return f"{self.name} = {self.high:g}: {self.infinite_at_high}"
        return None


def _v(name, meaning, **kw) -> Var:
    return Var(name, meaning, **kw)


_ONE_INF = "the graph is not connected (no spectral gap), so consensus never happens and the bound is +inf"

#: Symbols that several papers share. Paper modules use ``COMMON['eta'].symbol`` etc.
COMMON: dict[str, Var] = {
    v.name: v
    for v in [
        _v("eta", "local learning rate", latex=r"\eta"),
        _v("K", "number of local steps per round", low=1, low_open=False, integer=True),
        _v("T", "number of communication rounds", low=1, low_open=False, integer=True),
        _v("L", "smoothness constant (Assumption: L-smooth local losses)"),
        _v("rho", "SAM perturbation radius (rho = 0 is plain SGD)", low=0, low_open=False, latex=r"\rho"),
        _v("sigma_l", "local stochastic-gradient standard deviation", low=0, low_open=False, latex=r"\sigma_l"),
        _v("sigma_g", "global heterogeneity (gradient dissimilarity)", low=0, low_open=False, latex=r"\sigma_g"),
        _v("B", "uniform bound on the gradient norm", low=0, low_open=False),
        _v("lam", "second largest eigenvalue modulus of W (lambda of Definition 1)", low=0, high=1,
           low_open=False, high_open=True, infinite_at_high=_ONE_INF, topology_key="lambda", latex=r"\lambda"),
        _v("psi", "spectral constant psi of W (DFedADMM Definition 1)", low=0, high=1, low_open=False,
           high_open=True, infinite_at_high=_ONE_INF, topology_key="psi", latex=r"\psi"),
        _v("m", "number of clients", low=1, low_open=False, integer=True, topology_key="n"),
        _v("n", "number of clients", low=1, low_open=False, integer=True, topology_key="n"),
        _v("Q", "number of gossip steps per round", low=1, low_open=False, integer=True),
        _v("f0_minus_fstar", "initial optimality gap f(x_bar^1) - f*", low=0, low_open=False, latex=r"f(\bar x^1) - f^*"),
        _v("beta_h", "heterogeneity bound beta of Definition 2 (sigma_g <= beta)", low=0, low_open=False, latex=r"\beta"),
        _v("alpha", "local momentum coefficient", low=0, high=1, low_open=False, high_open=True, latex=r"\alpha"),
        _v("C", "push-sum consensus constant C (Assran et al. 2019, Lemma 3)", topology_key="C"),
        _v("q", "push-sum geometric consensus rate q", low=0, high=1, low_open=False, high_open=True,
           infinite_at_high="push-sum never contracts (q = 1), the bound is +inf", topology_key="q"),
        _v("delta", "minimum push-sum weight (delta <= 1)", low=0, high=1, low_open=True, high_open=False,
           topology_key="delta", latex=r"\delta"),
        _v("c", "constant of the corollary's step-size schedule"),
        _v("r", "constant of the corollary's SAM-radius schedule"),
    ]
}
