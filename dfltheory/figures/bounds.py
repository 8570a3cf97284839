"""Figures of a bound as a function of one of its parameters."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dfltheory.bounds import Theorem, get
from dfltheory.figures.axes import axes_or_new


def bound_where_valid(thm: Theorem, values: Mapping[str, object]) -> tuple[np.ndarray, list[str]]:
    """The bound at ``values`` with NaN (a gap in a curve) wherever one of its conditions fails, and the
    relations that fail somewhere: outside its conditions the formula is no bound (it can even be negative)."""
    y = np.asarray(thm.evaluate(**values), dtype=float)
    ok = np.broadcast_to(thm.valid(**{k: v for k, v in values.items() if k in thm.condition_symbols}), y.shape)
    failed = []
    for cond in thm.conditions:
        holds = cond.holds_at({k: np.asarray(v, dtype=float) for k, v in values.items()})
        if not np.all(holds):
            failed.append(str(cond.relation))
    return np.where(ok, y, np.nan), failed


def mark_invalid(ax, failed: Sequence[str], name: str) -> None:
    """Say on the axes which conditions cut a curve short (nothing drawn silently)."""
    if failed:
        ax.text(0.01, 0.01, f"{name} not drawn where {'; '.join(failed)} fails", transform=ax.transAxes,
                fontsize="x-small", color="firebrick", va="bottom", wrap=True)


def plot_bound(theorems: Sequence[str | Theorem], x: str, grid, values: Mapping[str, float], ax=None,
               logy: bool = True):
    """One curve per theorem: the bound over ``grid`` values of ``x``, the other symbols fixed at ``values``.

    Theorems that do not use a given symbol ignore it, so the same ``values`` serve several papers. A curve
    has a gap where a condition of its theorem fails; the axes say which.
    """
    ax = axes_or_new(ax)
    grid = np.asarray(grid, dtype=float)
    theorems = [get(t) if isinstance(t, str) else t for t in theorems]
    for thm in theorems:
        own = {k: v for k, v in values.items() if k in thm.required + thm.condition_symbols}
        if x in thm.required + thm.condition_symbols:
            own[x] = grid
        y, failed = bound_where_valid(thm, own)
        ax.plot(grid, np.broadcast_to(y, grid.shape), label=thm.id)
        mark_invalid(ax, failed, thm.id)
    ax.set_xlabel(x)
    quantities = {thm.quantity for thm in theorems}  # the y axis is in the units of what the bounds bound
    ax.set_ylabel(f"bound on {quantities.pop()}" if len(quantities) == 1 else "bound, each on its theorem's quantity")
    if logy:
        ax.set_yscale("log")
    ax.legend(fontsize="small")
    return ax


def plot_bound_terms(theorem: str | Theorem, x: str, grid, values: Mapping[str, float], ax=None):
    """The named terms of one bound over ``grid`` values of ``x``, and their sum: which term dominates where."""
    ax = axes_or_new(ax)
    thm = get(theorem) if isinstance(theorem, str) else theorem
    grid = np.asarray(grid, dtype=float)
    own = {k: v for k, v in values.items() if k in thm.required + thm.condition_symbols and k != x}
    terms = thm.evaluate_terms(**{k: v for k, v in own.items() if k in thm.required}, **{x: grid})
    for name, vals in terms.items():
        ax.plot(grid, vals, "--", label=name)
    total, failed = bound_where_valid(thm, {**own, x: grid})
    ax.plot(grid, total, "k-", label=f"{thm.id} (sum)")
    mark_invalid(ax, failed, thm.id)
    ax.set_xlabel(x)
    ax.set_ylabel(f"term of the bound on {thm.quantity}")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    return ax
