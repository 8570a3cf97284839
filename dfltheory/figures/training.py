"""Predicted rate against measured training: a theorem's bound over the horizon T next to the running
minimum of the quantity it bounds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from dfltheory.bounds import Theorem, get
from dfltheory.empirical.rundir import read_records
from dfltheory.figures.axes import axes_or_new
from dfltheory.figures.bounds import bound_where_valid, mark_invalid


def running_min(rows: Iterable[Mapping], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Rounds (1-based) and the running minimum of ``key`` over them: min_{t <= T} of the measured quantity."""
    pts = [(int(r["round"]), float(r[key])) for r in rows if key in r and r[key] is not None]
    if not pts:
        raise ValueError(f"no measurement {key!r} in the metrics; measured keys: "
                         f"{sorted({k for r in rows for k in r})}")
    rounds, vals = map(np.asarray, zip(*sorted(pts)))
    return rounds + 1 if rounds.min() == 0 else rounds, np.minimum.accumulate(vals)


def plot_predicted_vs_measured(rows, theorem: str | Theorem, values: Mapping[str, float],
                               key: str = "grad_norm_sq", label: str | None = None, ax=None):
    """Measured ``min_{t<=T} key`` of a run and the theorem's bound at horizon T, on log-log axes.

    ``values`` holds every symbol of the bound except T (the horizon is the x axis). The bound is drawn only
    where the theorem's conditions hold; the axes say which condition removed it.
    """
    ax = axes_or_new(ax)
    thm = get(theorem) if isinstance(theorem, str) else theorem
    if isinstance(rows, (str, Path)):
        rows = read_records(rows)
    rounds, measured = running_min(rows, key)
    predicted, failed = bound_where_valid(thm, {**{k: v for k, v in values.items() if k != "T"},
                                                "T": rounds.astype(float)})
    ax.plot(rounds, measured, "o-", ms=3, label=label or f"measured min_t {key}")
    ax.plot(rounds, predicted, "k--", label=f"{thm.id} bound")
    mark_invalid(ax, failed, f"{thm.id} bound")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rounds T")
    ax.set_ylabel(f"min_{{t<=T}} {key}: measured, bound")
    ax.legend(fontsize="small")
    return ax


def plot_topology_sweep(result: Mapping, ax=None):
    """Bars of :func:`dfltheory.verify.worked_example.topology_sweep`: measured error and bound per
    (topology, Q)."""
    ax = axes_or_new(ax)
    rows = result["rows"]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r["measured"] for r in rows], 0.4, label="measured min_t ||grad f||^2")
    ax.bar(x + 0.2, [r["bound"] for r in rows], 0.4, label=f"{result['theorem']} bound")
    ax.set_xticks(x, [f"{r['topology']}\nQ={r['Q']}" for r in rows], fontsize="small")
    ax.set_xlabel("topology and gossip steps Q per round (Metropolis weights)")
    ax.set_ylabel(f"min_{{t<=T}} ||grad f(x_bar^t)||^2, T = {result['rounds']}: measured, bound")
    ax.set_yscale("log")
    ax.set_title(f"DFedSAM(-MGS), n = {result['n']}, T = {result['rounds']}: measured against the bound")
    ax.legend(fontsize="small")
    return ax


def plot_rate_in_T(result: Mapping, ax=None):
    """:func:`dfltheory.verify.worked_example.rate_in_T`: measured and bound against the horizon, with the
    stated O(1/sqrt(KT)) through the first measurement; slopes in the legend."""
    ax = axes_or_new(ax)
    rows, slopes = result["rows"], result["slopes"]
    T = np.array([r["T"] for r in rows], dtype=float)
    measured = np.array([r["measured"] for r in rows])
    ax.plot(T, measured, "o-", label=f"measured min_t ||grad f||^2 (slope {slopes['measured']:.2f})")
    ax.plot(T, [r["bound"] for r in rows], "k--", label=f"{result['corollary']} (slope {slopes['bound']:.2f})")
    ax.plot(T, measured[0] * (T / T[0]) ** -0.5, ":", color="grey", label="stated O(1/sqrt(KT)) (slope -0.5)")
    ax.set(xscale="log", yscale="log", xlabel="horizon T (eta = c/(L sqrt(KT)), rho = r/sqrt(T))",
           ylabel="min_{t<=T} ||grad f(x_bar^t)||^2", title=f"DFedSAM, n = {result['n']}: rate in T")
    ax.set_xticks(T, [str(int(t)) for t in T])
    ax.minorticks_off()
    ax.legend(fontsize="small")
    return ax
