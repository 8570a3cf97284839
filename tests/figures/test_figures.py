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


def test_bound_is_not_drawn_where_its_conditions_fail(toy):
    grid = np.array([0.01, 0.02, 0.04, 0.08])  # eta <= 1/(4 K L) = 0.025 fails for the last two
    ax = plot_bound([toy], "eta", grid, P)
    y = ax.get_lines()[0].get_ydata()
    assert np.isfinite(y[:2]).all() and np.isnan(y[2:]).all()
    assert any("eta <= 1/(4*K*L)" in t.get_text() for t in ax.texts)


def test_plot_command_writes_figures(tmp_path, capsys):
    from dfltheory.cli import main

    sam = ["eta=0.001", "K=5", "T=1000", "L=1", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "f0_minus_fstar=2.3",
           "Q=1", "m=100"]
    assert main(["plot", "bound", "dfedsam.thm4.1", "--x", "lam", "--range", "0", "0.999", "--set", *sam,
                 "--out", str(tmp_path / "b.png")]) == 0
    assert main(["plot", "bound", "dfedsam.thm4.1", "--terms", "--x", "eta", "--log-x", "--range", "1e-5", "1e-2",
                 "--set", *[a for a in sam if not a.startswith("eta")], "lam=0.9",
                 "--out", str(tmp_path / "t.pdf")]) == 0
    assert main(["plot", "topology", "ring", "exponential", "--n", "8", "16", "--out", str(tmp_path / "g.svg")]) == 0
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("b.png", "t.pdf", "g.svg"))
    assert main(["plot", "bound", "dfedsam.thm4.1", "--x", "lam", "--range", "0", "0.9", "--set", "eta=0.1",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert "missing value(s)" in capsys.readouterr().err


def test_plot_run_takes_hyper_parameters_from_the_run(tmp_path):
    from dfltheory.cli import main
    from dfltheory.verify.report_data import run_values

    run = tmp_path / "run"
    assert main(["train", "--algo", "dfedsam", "--dataset", "synthetic-quadratic", "--n", "6", "--rounds", "3",
                 "--K", "2", "--lr", "0.001", "--out", str(run), "--no-progress", "--no-local-eval"]) == 0
    v = run_values(run)
    assert v["eta"] == 0.001 and v["K"] == 2 and v["m"] == 6 and v["Q"] == 1 and v["rho"] > 0
    assert 0 < v["lam"] < 1
    assert main(["plot", "run", str(run), "dfedsam.thm4.1", "--set", "L=1", "sigma_l=1", "sigma_g=1", "B=1",
                 "f0_minus_fstar=1", "--out", str(tmp_path / "r.png")]) == 0
    assert (tmp_path / "r.png").exists()


def test_plot_run_estimates_the_constants_nobody_gave(tmp_path, capsys):
    from dfltheory.cli import main

    run = tmp_path / "run"
    assert main(["train", "--algo", "dfedsam", "--dataset", "synthetic-quadratic", "--n", "4", "--rounds", "3",
                 "--K", "2", "--lr", "0.001", "--out", str(run), "--no-progress", "--no-local-eval",
                 "--threads", "1"]) == 0
    capsys.readouterr()
    assert main(["plot", "run", str(run), "dfedsam.thm4.1", "--set", "B=5", "--out", str(tmp_path / "r.png")]) == 0
    said = capsys.readouterr().out
    assert "estimated from the run: " in said and "L = " in said and "B = " not in said  # B was given
    assert (tmp_path / "r.png").exists()


def test_run_values_follow_the_run_not_the_defaults(tmp_path):
    from dfltheory.cli import main
    from dfltheory.verify.report_data import run_values
    from dfltheory.topology import analyze

    common = ["--dataset", "synthetic-quadratic", "--n", "10", "--rounds", "1", "--no-progress", "--no-local-eval"]
    assert main(["train", "--algo", "dpsgd", *common, "--out", str(tmp_path / "d")]) == 0
    assert run_values(tmp_path / "d")["K"] == 1  # D-PSGD forces one local step whatever --K says
    assert main(["train", "--algo", "dfedsam", *common, "--topology", "erdos-renyi", "--topology-params", "p=0.9",
                 "--out", str(tmp_path / "e")]) == 0
    erdos_renyi = analyze("erdos-renyi", 10, weights="default", p=0.9)
    assert run_values(tmp_path / "e")["lam"] == pytest.approx(erdos_renyi["lambda"])
    assert main(["train", "--algo", "dfedadmm", *common, "--out", str(tmp_path / "a")]) == 0
    v = run_values(tmp_path / "a")
    assert v["lam_pen"] == 0.1 and v["lam"] < 1  # the run's ADMM penalty is lam_pen, lam stays spectral
