"""Every figure the package draws names what is on both axes: each public plotting function and each figure of
the report, drawn on small inputs."""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dfltheory.figures as figures
from dfltheory.figures import report

P = dict(eta=0.01, K=5, T=100, L=2.0, lam=0.5, f0_minus_fstar=3.0, sigma_l=1.5)
SAM = dict(eta=1e-3, K=5, rho=0.01, m=16, Q=1, lam=0.9, L=1.0, sigma_g=1.0, sigma_l=1.0, B=1.0, f0_minus_fstar=2.0)
SWEEP = {"n": 16, "rounds": 10, "theorem": "dfedsam.thm4.1",
         "rows": [{"topology": t, "Q": q, "measured": m, "bound": b}
                  for t, q, m, b in (("ring", 1, 0.1, 1e3), ("ring", 4, 0.05, 1e2), ("full", 1, 0.02, 10.0))]}
RATE = {"n": 16, "corollary": "dfedsam.cor4.1.1.derived", "slopes": {"measured": -1.0, "bound": -1.5, "stated": -0.5},
        "rows": [{"T": T, "measured": 1.0 / T, "bound": 100.0 / T**1.5} for T in (25, 50, 100)]}
ROWS = [{"round": t, "grad_norm_sq": 1.0 / (1 + t)} for t in range(8)]


def _drawings(toy):
    return {
        "plot_bound": lambda: figures.plot_bound([toy], "lam", np.linspace(0, 0.9, 5), P),
        "plot_bound_terms": lambda: figures.plot_bound_terms(toy, "eta", np.linspace(0.001, 0.02, 5), P),
        "plot_topology_constants": lambda: figures.plot_topology_constants(["ring", "exponential"], [8, 16]),
        "plot_predicted_vs_measured": lambda: figures.plot_predicted_vs_measured(
            ROWS, toy, {k: v for k, v in P.items() if k != "T"}),
        "plot_topology_sweep": lambda: figures.plot_topology_sweep(SWEEP),
        "plot_rate_in_T": lambda: figures.plot_rate_in_T(RATE),
        "plot_label_counts": lambda: figures.plot_label_counts([[3, 1], [0, 4], [2, 2]]),
        "plot_partition": lambda: figures.plot_partition({"dataset": "digits", "n": 4}),
    }


def _unlabelled(fig) -> list[str]:
    return [f"axes {i} ({ax.get_title()!r}): " + " and ".join(
        name for name, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if not label.strip())
        for i, ax in enumerate(fig.axes) if not (ax.get_xlabel().strip() and ax.get_ylabel().strip())]


def test_every_plotting_function_is_covered(toy):
    assert set(_drawings(toy)) == set(figures.__all__)  # a new plotting function needs a case here


@pytest.mark.parametrize("name", sorted(figures.__all__))
def test_plotting_function_labels_both_axes(name, toy):
    ax = _drawings(toy)[name]()
    try:
        assert _unlabelled(ax.figure) == []
    finally:
        plt.close(ax.figure)


def test_report_figures_label_both_axes(tmp_path, monkeypatch):
    drawn = {}

    def keep(ax, path, dpi=120):
        drawn[path.name] = _unlabelled(ax.figure)
        plt.close(ax.figure)
        return path

    monkeypatch.setattr("dfltheory.figures.axes.save_figure", keep)
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    training = {"metrics": str(metrics), "theorem": "dfedsam.thm4.1", "constants": SAM}
    names = report.figures(tmp_path, training, {"topology": SWEEP, "rate": RATE})
    assert set(drawn) == set(names) and len(names) == 5
    assert {name: bad for name, bad in drawn.items() if bad} == {}


@given(st.floats(0, 10**5))
def test_a_duration_reads_as_whole_minutes_and_seconds(seconds):
    """Never '4 min 60 s' (299.7 s was written so at the end of a report) nor '60 s'."""
    from dfltheory.figures.format import duration

    text = duration(seconds)
    parts = text.split()
    if "min" in parts and len(parts) == 4:
        assert 1 <= int(parts[0]) <= 9 and 0 <= int(parts[2]) <= 59, text
    elif parts[-1] == "s":
        assert float(parts[0]) < 60, text
    assert duration(299.7) == "5 min 0 s" and duration(59.7) == "1 min 0 s"
