"""Worst case and bound along lambda or T, and their figure (issue 14 section 4).

Along lambda the mixing is either the explicit W(lam) = lam I + (1 - lam) 11^T/m (every nonunit eigenvalue equal
to lam, so its second largest eigenvalue modulus is lam) or the spectral class [-lam, lam] (every W whose
lambda is at most lam); along T it is the mixing given.
"""

from __future__ import annotations

import numpy as np

from dfltheory.pep.compare import compare
from dfltheory.pep.problem import MAX_GRAM, worst_case

__all__ = ["W_lambda", "sweep", "plot"]

SWEEPABLE = ("lambda", "T")


def W_lambda(m: int, lam: float) -> np.ndarray:
    """lam I + (1 - lam) 11^T/m: symmetric doubly stochastic (for -1/(m-1) <= lam <= 1), nonunit spectrum {lam}."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= MAX_GRAM:
        raise ValueError(f"m must be an integer in [1, {MAX_GRAM}] (the number of agents; a PEP's Gram matrix, of "
                         f"order > m, is limited to {MAX_GRAM}), got {m!r}")
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)) or not (
            -1.0 / max(m - 1, 1) <= lam < 1.0):
        raise ValueError(f"lambda = {lam} gives no doubly stochastic lam I + (1 - lam) 11^T/m for m = {m}; "
                         f"use -1/(m-1) <= lambda < 1")
    return lam * np.eye(m) + (1 - lam) * np.ones((m, m)) / m


def sweep(name: str, values, algorithm: str, m: int, K: int, T: int, eta: float, *, lam: float | None = None,
          W=None, spectral=None, cls: bool = False, **kw) -> list[dict]:
    """One row per value of ``name`` ('lambda' or 'T'): the value, the worst case, the bound, the ratio, seconds.

    Along 'lambda' the mixing is W_lambda(m, value), or the class [-value, value] with ``cls``; along 'T' it is
    ``W`` (a matrix or a sequence, one per round) or ``spectral``, with ``lam`` their lambda for the bound (None:
    taken from each PEP's mixing, e.g. the largest over a sequence's rounds used)."""
    if name not in SWEEPABLE:
        raise ValueError(f"--sweep {name!r}: one of {SWEEPABLE} can be swept")
    rows = []
    for v in values:
        if name == "lambda":
            mix = dict(spectral=(-v, v)) if cls else dict(W=W_lambda(m, v))
            r = worst_case(algorithm, m, K, T, eta, **mix, **kw)
            at = abs(v)
        else:
            if not float(v).is_integer():
                raise ValueError(f"--sweep T: {v} is not an integer")
            r = worst_case(algorithm, m, K, int(v), eta, W=W, spectral=spectral, **kw)
            at = lam
        c = compare(r, at)
        rows.append(dict(name=name, value=v, worst_case=r.value, theorem=c["theorem"], bound=c["bound"],
                         ratio=c["ratio"], finding=c["finding"], reason=c["reason"], seconds=r.seconds,
                         status=r.status))
    return rows


def plot(rows: list[dict], path, title: str = "") -> None:
    """Worst case and bound (log scale) against the swept value, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["value"] for r in rows]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(xs, [r["worst_case"] for r in rows], "o-", label="PEP worst case")
    bounds = [(x, r["bound"]) for x, r in zip(xs, rows) if r["bound"] is not None]
    if bounds:
        ax.plot(*zip(*bounds), "s--", label=f"{rows[0]['theorem']} (sigma_l = 0)")
    ax.set_yscale("log")
    ax.set_xlabel(rows[0]["name"] if rows else "")
    ax.set_ylabel("worst case of the theorem's quantity")
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
