"""Trivial levels: what an algorithm meets without training, so that a bound above them says nothing (issue 21).

A bound on a quantity that is at most S everywhere the iterates can go is met by *every* algorithm once the bound is
>= S; a bound >= the quantity's value at x^0 is met by the algorithm that never moves. A verdict "holds" is
**informative** only where the bound is below the smaller of the two levels; otherwise it is labelled trivial with
the level it exceeds.

For the measures of :mod:`dfltheory.verify.measures`:

| measure            | per-round quantity                       | certified supremum (over all x)                       |
|--------------------|------------------------------------------|-------------------------------------------------------|
| min, avg, avg_p, avg_w | ||grad f(z)||^2 at x_bar^t, p^t, w^t | B^2: ||grad f|| <= (1/m) sum_i ||grad f_i|| <= B       |
| avg_pgp            | Delta_ubar/L_u + Delta_v/L_v             | B_u^2/L_u + B_v^2/L_v: ||grad_u F|| <= max_k B_u,k, and (1/m) sum_i ||grad_v F_i||^2 <= max_i B_v,i^2 (``dfltheory.empirical.data.personal_constants``) |

A min or an average over t of a quantity is at most its supremum and, for an algorithm that stays at x^0, equals its
value at x^0 (DFedPGP: Delta_ubar(ubar^0, V^0)/L_u + Delta_v(X^0)/L_v). Where no constant certifies the supremum
(the least-squares problem has no finite B) the level is a numeric maximum over points sampled around x^0, the
clients' optima and the runs' own trajectories, labelled ``numeric``; the numeric maximum is also reported beside a
certified one, with their ratio.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

GRADIENT_MEASURES = ("min", "avg", "avg_p", "avg_w")


@dataclass(frozen=True)
class TrivialLevel:
    """The levels a bound must be below to say something: ``at_x0`` (an algorithm that never moves) and ``sup``
    (every algorithm), ``sup_kind`` 'certified' or 'numeric', with where the supremum comes from."""

    measure: str
    at_x0: float
    sup: float
    sup_kind: str
    sup_source: str
    numeric_sup: float = math.nan  # the best numeric estimate of the supremum (beside a certified one)

    @property
    def level(self) -> float:
        """The smaller trivial level: a bound below it can fail."""
        return min(self.at_x0, self.sup)

    def informative(self, bound: float | None) -> bool:
        return bound is not None and math.isfinite(bound) and bound < self.level

    def label(self, bound: float | None) -> str:
        """'informative', or the trivial level the bound exceeds."""
        if bound is None or not math.isfinite(bound):
            return "no bound"
        if bound >= self.sup:
            return f"trivial: bound >= sup {self.sup:.3g} ({self.sup_kind}; any algorithm meets it)"
        if bound >= self.at_x0:
            return f"trivial: bound >= {self.at_x0:.3g} at x^0 (an algorithm that never moves meets it)"
        return "informative"

    def with_numeric(self, value: float) -> TrivialLevel:
        """The level with a numeric supremum estimate ``value`` (a larger one than known so far replaces it; where
        the supremum is numeric it becomes the level)."""
        best = value if not math.isfinite(self.numeric_sup) else max(value, self.numeric_sup)
        if self.sup_kind == "numeric":
            return TrivialLevel(self.measure, self.at_x0, best, "numeric", self.sup_source, best)
        return TrivialLevel(self.measure, self.at_x0, self.sup, self.sup_kind, self.sup_source, best)

    def to_dict(self) -> dict:
        ratio = self.sup / self.numeric_sup if self.numeric_sup > 0 and math.isfinite(self.numeric_sup) else None
        return {"measure": self.measure, "at_x0": self.at_x0, "sup": self.sup, "sup_kind": self.sup_kind,
                "sup_source": self.sup_source, "numeric_sup": self.numeric_sup, "level": self.level,
                "sup_over_numeric": ratio}


def certified_sup(measure: str, consts: Mapping) -> tuple[float, str] | None:
    """(supremum, its source) of the measure's per-round quantity from the problem's certified constants
    (:func:`dfltheory.verify.problems.theorem_constants` values), or None where none certifies it."""
    def value(key):
        c = consts.get(key)
        return None if c is None or not getattr(c, "certified", True) else float(getattr(c, "value", c))

    if measure in GRADIENT_MEASURES:
        B = value("B")
        return None if B is None else (B**2, "B^2 (||grad f|| <= B, Assumption: bounded gradients)")
    if measure == "avg_pgp":
        parts = [value(k) for k in ("B_u", "B_v", "L_u", "L_v")]
        if None in parts:
            return None
        B_u, B_v, L_u, L_v = parts
        return B_u**2 / L_u + B_v**2 / L_v, "B_u^2/L_u + B_v^2/L_v (per-block gradient bounds)"
    raise ValueError(f"unknown measure {measure!r}")


def quantity(measure: str, evaluator, X, values: Mapping[str, float], shared=None) -> float:
    """The measure's per-round quantity at a state that stays put: the clients' models X (m, d) (the gradient
    measures take their mean; DFedPGP: ``shared`` the mask of shared coordinates, L_u and L_v from ``values``)."""
    import torch

    if measure in GRADIENT_MEASURES:
        return float((evaluator.objective(X.mean(0))[1] ** 2).sum())
    ubar = torch.where(shared, X.mean(0), X)
    delta_u = float((evaluator.client_objectives(ubar)[1].mean(0)[shared] ** 2).sum())
    delta_v = float((evaluator.client_objectives(X)[1][:, ~shared] ** 2).sum(1).mean())
    return delta_u / values["L_u"] + delta_v / values["L_v"]


def level_at_start(measure: str, evaluator, X0, consts: Mapping, values: Mapping[str, float],
                   shared=None) -> TrivialLevel:
    """The trivial level of ``measure`` for runs that start at X0 (m, d): the value at x^0 and the certified
    supremum (numeric: the value at x^0 until :func:`numeric_sup` adds samples)."""
    at_x0 = quantity(measure, evaluator, X0, values, shared)
    sup = certified_sup(measure, consts)
    if sup is None:
        return TrivialLevel(measure, at_x0, at_x0, "numeric", "maximum over sampled points and the runs", at_x0)
    return TrivialLevel(measure, at_x0, sup[0], "certified", sup[1])


def sample_points(X0, centres: Sequence, samples: int = 64, seed: int = 0, personal: bool = False):
    """``samples`` states (m, d) around x^0 and each of ``centres`` (rows of the clients' optima): Gaussian steps at
    radii 0.1, 0.3, 1 and 3 times the spread of the centres (without centres, of ||x^0||, or 1 at x^0 = 0); every
    client at the same point, or each at its own perturbation (``personal``: DFedPGP)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    base = torch.stack([X0.mean(0), *[torch.as_tensor(c, dtype=X0.dtype) for c in centres]])
    scale = float(base.std(0).norm()) if len(base) > 1 else float(base[0].norm())
    scale = scale if math.isfinite(scale) and scale > 0 else 1.0
    radii = (0.1, 0.3, 1.0, 3.0)
    for n in range(samples):
        centre = base[n % len(base)]
        r = radii[(n // len(base)) % len(radii)] * scale
        step = torch.randn(X0.shape, generator=gen, dtype=X0.dtype) * (r / math.sqrt(X0.shape[1]))
        yield centre + (step if personal else step[0].expand_as(X0))


def numeric_sup(measure: str, evaluator, X0, centres: Sequence, values: Mapping[str, float], shared=None,
                samples: int = 64, seed: int = 0) -> float:
    """A numeric maximum of the measure's per-round quantity over :func:`sample_points`."""
    return max(quantity(measure, evaluator, X, values, shared)
               for X in sample_points(X0, centres, samples, seed, personal=measure == "avg_pgp"))


def trajectory_max(terms: np.ndarray) -> float:
    """The largest per-round quantity the runs met (``terms`` as :func:`dfltheory.verify.measures.per_round`)."""
    terms = np.asarray(terms, dtype=float)
    return float(np.nanmax(terms)) if terms.size else math.nan
