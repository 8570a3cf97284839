"""Figures of topology constants across topologies and sizes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfltheory.figures.axes import axes_or_new


def plot_topology_constants(names: Sequence[str], ns: Sequence[int], key: str = "spectral_gap",
                            weights: str = "metropolis", seed: int = 0, ax=None):
    """``key`` of :func:`dfltheory.topology.analyze` (default the spectral gap 1 - lambda) against the number of
    clients, one curve per topology, on log-log axes."""
    from dfltheory.topology import analyze

    ax = axes_or_new(ax)
    ns = np.asarray(ns, dtype=int)
    for name in names:
        vals = np.array([float(analyze(name, int(n), weights=weights, seed=seed)[key]) for n in ns])
        ax.plot(ns, vals, "o-", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("number of clients n")
    ax.set_ylabel(key.replace("_", " "))
    ax.legend(fontsize="small")
    return ax
