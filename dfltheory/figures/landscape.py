"""The filter-normalised loss landscape of a run at its average model x_bar (Li et al. 2018; DFedSAM's Fig. 2): a
line for a 1-D slice, filled contours for a 2-D one, from :func:`dfltheory.verify.landscape.run_landscape`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dfltheory.figures.axes import axes_or_new


def plot_landscape(result: Mapping, ax=None, levels: int = 20, label: str | None = None):
    """``result``: a :func:`~dfltheory.verify.landscape.loss_slice` dict (``coords``, ``loss``, ``dims``; ``algo``
    and ``dataset`` name the title when present). 1-D: f(x_bar + a d) against a (several runs may share ``ax``);
    2-D: contours of f(x_bar + a d1 + b d2) with x_bar marked."""
    ax = axes_or_new(ax)
    coords, loss = np.asarray(result["coords"]), np.asarray(result["loss"])
    if not np.isfinite(loss).all():
        raise ValueError("the slice has non-finite losses (the model diverged along the directions); plot a "
                         "smaller span")
    name = label or result.get("algo", "x_bar")
    if result["dims"] == 1:
        ax.plot(coords, loss, "-", label=name)
        ax.set_xlabel("a (filter-normalised direction d)")
        ax.set_ylabel("f(x_bar + a d) on the evaluation batch")
        ax.legend(fontsize="small")
    else:
        filled = ax.contourf(coords, coords, loss.T, levels=levels, cmap="viridis")
        ax.contour(coords, coords, loss.T, levels=levels, colors="k", linewidths=0.3)
        ax.figure.colorbar(filled, ax=ax, label="f(x_bar + a d1 + b d2)")
        ax.plot([0], [0], "w+", ms=10)
        ax.set_xlabel("a (direction d1)")
        ax.set_ylabel("b (direction d2)")
        ax.set_aspect("equal")
    where = f" on {result['dataset']}" if "dataset" in result else ""
    ax.set_title(f"{name}{where}: filter-normalised loss slice at x_bar (Li et al. 2018)", fontsize="small")
    return ax


def plot_run_landscape(run, out, dims: int = 2, points: int = 21, span: float = 1.0, per_client: int = 128,
                       seed: int = 0, bias: str = "zero", sharpness: bool = False) -> tuple[Path, dict | None]:
    """``dfltheory plot landscape RUN``: the run's slice at x_bar drawn and saved to ``out``; with ``sharpness``
    also :func:`~dfltheory.verify.landscape.run_sharpness` (lambda_max, on the same evaluation batch), written in
    the figure's corner and returned."""
    from dfltheory.figures.axes import save_figure
    from dfltheory.verify.landscape import run_landscape, run_sharpness

    ax = plot_landscape(run_landscape(run, dims=dims, points=points, span=span, per_client=per_client, seed=seed,
                                      bias=bias))
    top = run_sharpness(run, per_client=per_client, seed=seed) if sharpness else None
    if top is not None:
        ax.figure.text(0.01, 0.005, f"lambda_max(Hessian of f at x_bar) = {top['lambda_max']:.4g} "
                       f"(Lanczos, residual {top['residual']:.2g}, batch {top['batch']})", fontsize=6, va="bottom")
    return save_figure(ax, out), top
