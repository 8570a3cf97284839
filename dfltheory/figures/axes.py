"""Where figures are drawn and how they are saved: every plotting function takes an optional ``Axes``."""

from __future__ import annotations

from pathlib import Path


def axes_or_new(ax=None):
    """``ax``, or the axes of a new 6 x 4 inch figure (the non-interactive Agg backend unless one is set)."""
    if ax is None:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(6, 4))
    return ax


def save_figure(ax, path: str | Path, dpi: int = 120) -> Path:
    """Lay out, save (the type follows the suffix: PNG, PDF, SVG) and close the figure of ``ax``."""
    import matplotlib.pyplot as plt

    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=dpi)
    plt.close(ax.figure)
    return Path(path)
