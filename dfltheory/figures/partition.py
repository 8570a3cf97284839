"""The data partition a run trains on: every client's label distribution as a stacked bar chart, its size n_i on
top (``dfltheory plot partition``; docs/figures.md). The counts come from the empirical layer
(:func:`dfltheory.empirical.data.load`, :func:`dfltheory.empirical.data.label_counts`); this module only draws."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dfltheory.figures.axes import axes_or_new

#: clients up to which each bar carries its size as a number
LABELLED_SIZES = 30
#: classes up to which the legend names each one
LEGEND_CLASSES = 20


def plot_label_counts(counts, ax=None, title: str | None = None):
    """Stacked bars of ``counts`` ((m, classes): client i's training samples of each class): bar i is client i,
    its height n_i (written on top for at most :data:`LABELLED_SIZES` clients), one colour per class."""
    import matplotlib

    counts = np.asarray(counts)
    if (counts.dtype.kind not in "iuf" or counts.ndim != 2 or not counts.size or not np.isfinite(counts).all()
            or (counts < 0).any()):
        raise ValueError(f"counts must be a non-empty (clients, classes) array of finite counts >= 0, got "
                         f"{counts.dtype} of shape {counts.shape}")
    ax = axes_or_new(ax)
    m, classes = counts.shape
    cmap = matplotlib.colormaps["tab10" if classes <= 10 else "tab20" if classes <= 20 else "viridis"]
    colours = [cmap(k) for k in range(classes)] if classes <= 20 else cmap(np.linspace(0, 1, classes))
    x, bottom = np.arange(m), np.zeros(m)
    for k in range(classes):
        ax.bar(x, counts[:, k], bottom=bottom, width=0.85, color=colours[k],
               label=f"class {k}" if classes <= LEGEND_CLASSES else None)
        bottom += counts[:, k]
    if m <= LABELLED_SIZES:
        for i, n in enumerate(bottom):
            ax.text(i, n, f"{int(n)}", ha="center", va="bottom", fontsize=6)
    ax.set_xlabel("client i")
    ax.set_ylabel("training samples of each class (bar height n_i)")
    ax.set_xlim(-0.6, m - 0.4)
    if m <= LABELLED_SIZES:
        ax.set_xticks(x)
        ax.tick_params(axis="x", labelsize=6)
    if classes <= LEGEND_CLASSES:
        ax.legend(fontsize="x-small", bbox_to_anchor=(1.01, 1), loc="upper left", title="label")
    sizes = counts.sum(1)
    ax.set_title((title + "\n" if title else "") + f"m = {m} clients, n_i from {sizes.min()} to {sizes.max()} "
                 f"(median {np.median(sizes):g}), {classes} classes"
                 + ("" if classes <= LEGEND_CLASSES else " (colour: class index)"), fontsize="small")
    return ax


def plot_partition(cfg: Mapping, ax=None):
    """The partition of the run config ``cfg`` (keys as ``train``'s options: ``dataset``, ``n``, ``partition``,
    ``alpha``, ``classes_per_client``, ``data_seed`` (default ``seed``), ``data_params``, ``data_root``; the
    command's defaults for the rest, a claim's run config as it is): the clients' label counts as
    :func:`plot_label_counts` draws them, titled with the setting. Returns the axes (``ax.figure``: the figure)."""
    from dfltheory.empirical import data as D
    from dfltheory.empirical.recipes import DEFAULTS
    from dfltheory.empirical.runner import check_options, data_seed

    cfg = {**DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}
    check_options(cfg)
    data = D.load(cfg["dataset"], cfg["n"], partition=cfg["partition"], alpha=cfg["alpha"],
                  classes_per_client=cfg["classes_per_client"], seed=data_seed(cfg), root=cfg.get("data_root"),
                  **(cfg.get("data_params") or {}))
    how = ("generated client by client" if cfg["dataset"].startswith("synthetic-") else
           {"dirichlet": f"Dirichlet, alpha = {cfg['alpha']:g}", "iid": "iid",
            "pathological": f"pathological, {cfg['classes_per_client']} classes per client"}[cfg["partition"]])
    return plot_label_counts(D.label_counts(data), ax, f"{cfg['dataset']}: {how}, data seed {data_seed(cfg)}")
