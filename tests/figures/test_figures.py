import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from dfltheory.figures import plot_bound, plot_bound_terms, plot_predicted_vs_measured
from dfltheory.figures.training import running_min

P = dict(eta=0.01, K=5, T=100, L=2.0, lam=0.5, f0_minus_fstar=3.0, sigma_l=1.5)


def test_plot_bound_draws_the_evaluated_curve(toy):
    grid = np.linspace(0, 0.9, 11)
    ax = plot_bound([toy], "lam", grid, P)
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), toy.evaluate(**{**P, "lam": grid}))


def test_plot_bound_terms_sum_line_is_the_bound(toy):
    grid = np.linspace(0.001, 0.02, 5)
    ax = plot_bound_terms(toy, "eta", grid, P)
    lines = ax.get_lines()
    assert len(lines) == len(toy.terms) + 1
    np.testing.assert_allclose(lines[-1].get_ydata(), toy.evaluate(**{**P, "eta": grid}))


def test_running_min_and_predicted_curve(toy, tmp_path):
    rows = [{"round": t, "grad_norm_sq": v} for t, v in enumerate([5.0, 3.0, 4.0, 1.0, 2.0])]
    rounds, mins = running_min(rows, "grad_norm_sq")
    assert list(rounds) == [1, 2, 3, 4, 5] and list(mins) == [5, 3, 3, 1, 1]
    ax = plot_predicted_vs_measured(rows, toy, {k: v for k, v in P.items() if k != "T"})
    measured, predicted = ax.get_lines()
    np.testing.assert_allclose(predicted.get_ydata(), toy.evaluate(**{**P, "T": rounds.astype(float)}))
    ax.figure.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000


def test_running_min_names_the_missing_key():
    with pytest.raises(ValueError, match="no measurement 'gn'.*measured keys: \\['loss', 'round'\\]"):
        running_min([{"round": 0, "loss": 1.0}], "gn")
