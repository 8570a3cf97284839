"""Figures of a bound as a function of one of its parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dfltheory.bounds import Theorem, get


def _axes(ax):
    if ax is None:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def plot_bound(theorems: Sequence[str | Theorem], x: str, grid, values: Mapping[str, float], ax=None,
               logy: bool = True):
    """One curve per theorem: the bound over ``grid`` values of ``x``, the other symbols fixed at ``values``.

    Theorems that do not use a given symbol ignore it, so the same ``values`` serve several papers.
    """
    ax = _axes(ax)
    grid = np.asarray(grid, dtype=float)
    for t in theorems:
        thm = get(t) if isinstance(t, str) else t
        own = {k: v for k, v in values.items() if k in thm.required}
        if x in thm.required:
            own[x] = grid
        ax.plot(grid, np.broadcast_to(thm.evaluate(**own), grid.shape), label=thm.id)
    ax.set_xlabel(x)
    ax.set_ylabel("bound")
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize="small")
    return ax


def plot_bound_terms(theorem: str | Theorem, x: str, grid, values: Mapping[str, float], ax=None):
    """The named terms of one bound over ``grid`` values of ``x``, and their sum: which term dominates where."""
    ax = _axes(ax)
    thm = get(theorem) if isinstance(theorem, str) else theorem
    grid = np.asarray(grid, dtype=float)
    terms = thm.evaluate_terms(**{k: v for k, v in values.items() if k in thm.required and k != x}, **{x: grid})
    for name, vals in terms.items():
        ax.plot(grid, vals, "--", label=name)
    ax.plot(grid, sum(terms.values()), "k-", label=f"{thm.id} (sum)")
    ax.set_xlabel(x)
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    return ax
