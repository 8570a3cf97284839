"""Constants estimated from a run (dfltheory.verify.estimators): exact on the quadratic, below the certified bounds
of the other synthetic problems, finite for every algorithm family on digits, clear errors on bad run directories."""

import argparse
import json
import math
import shutil

import numpy as np
import pytest
import torch

from dfltheory.empirical import data as D
from dfltheory.empirical import runner
from dfltheory.verify import estimators as E

SMALL = {"n": 4, "rounds": 2, "K": 2, "lr": 0.05, "batch_size": 8, "seed": 1, "progress": False, "threads": 1}


def train(tmp, name, **cfg):
    out = tmp / name
    runner.run({**SMALL, **cfg, "out": str(out)})
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    return {"quadratic": train(tmp, "q", algo="dfedsam", dataset="synthetic-quadratic"),
            "logistic": train(tmp, "l", algo="dfedsam", dataset="synthetic-logistic", lr=0.5, rounds=4)}


def measure_at(run, X, **kw):
    engine, _, _, _ = runner.load_run(run)
    losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    return E.measure_points(losses, [("x", X.expand(engine.m, -1))], **kw)[0]


# ---------------------------------------------------------------------------------------------- the maths
@pytest.mark.parametrize("d, iters", [(6, 6), (6, 10), (30, 8)])
def test_lanczos_gives_the_spectral_norm_and_never_exceeds_it(d, iters):
    g = torch.Generator().manual_seed(d + iters)
    A = torch.randn(3, d, d, generator=g, dtype=torch.float64)
    H = A + A.transpose(1, 2)
    H[0] -= 10 * torch.eye(d, dtype=torch.float64)  # the largest |eigenvalue| negative
    H[2, :, : d // 2] = 0
    H[2, : d // 2, :] = 0  # rank-deficient: the Krylov space ends early
    exact = torch.linalg.eigvalsh(H).abs().amax(1)
    est = E.lanczos_norm(lambda V: torch.einsum("cij,cj->ci", H, V), torch.randn(3, d, generator=g,
                                                                                  dtype=torch.float64), iters)
    assert bool((est <= exact * (1 + 1e-12)).all())
    if iters >= d:
        assert torch.allclose(est, exact, rtol=1e-10)
    else:
        assert bool((est >= 0.7 * exact).all())


def test_points_are_x0_the_ends_and_their_segments():
    x0, xbar, Z = torch.zeros(3), torch.ones(3), torch.arange(6.0).reshape(2, 3)
    pts = E.run_points(x0, xbar, Z, 9, seed=0)
    labels = [p[0] for p in pts]
    assert labels[:3] == ["x0", "x_bar", "1/2 of x0 -> x_bar"] and len(pts) == 9
    assert labels[7:] == ["1/4 of x0 -> x_bar", "1/4 of x0 -> client 0"] or labels[7].startswith("1/4")
    clients = [x for label, x in pts if label.startswith("client")]
    assert sorted(int(x[0, 0] // 3) for x in clients) == [0, 1]  # every client model, rows all equal
    assert all(torch.equal(x[0], x[1]) for _, x in pts)
    shared = torch.tensor([True, True, False])
    pgp = dict(E.run_points(x0, xbar, Z, 3, shared=shared))
    assert torch.equal(pgp["x_bar"], torch.tensor([[1.0, 1.0, 2.0], [1.0, 1.0, 5.0]]))  # u shared, v_i own
    with pytest.raises(ValueError, match="--points must be an integer >= 1"):
        E.run_points(x0, xbar, Z, 0)


# ---------------------------------------------------------------------------------------------- exact problems
def test_quadratic_L_is_exact_and_the_variances_at_x_star(runs):
    c = D.load("synthetic-quadratic", SMALL["n"], seed=SMALL["seed"]).constants
    result = E.estimate_run(runs["quadratic"])
    assert result.values()["L"] == pytest.approx(c["L"], rel=1e-6)  # constant Hessian: attained everywhere
    assert result.estimates["L"].low == pytest.approx(c["L"], rel=1e-6)
    at = measure_at(runs["quadratic"], c["x_star"])
    est = E.summarize([at], batch_size=1, paper="dfedsam")
    assert est["sigma_l"].value ** 2 == pytest.approx(c["sigma_l2_star"], rel=1e-6)
    assert est["sigma_g_mean"].value ** 2 == pytest.approx(c["sigma_g2_star"], rel=1e-6)
    if "sigma_g2_client_star" in c:
        assert est["sigma_g_client"].value ** 2 == pytest.approx(c["sigma_g2_client_star"], rel=1e-6)
    # at a run's batch size b the variance is V / b
    assert E.summarize([at], batch_size=8, paper="dfedsam")["sigma_l"].value ** 2 == pytest.approx(
        c["sigma_l2_star"] / 8, rel=1e-6)


def test_quadratic_heterogeneity_stays_below_its_bound_along_the_run(runs):
    """(1/m) sum_i ||grad f_i - grad f||^2 <= (sqrt(sigma_g2_star) + sqrt(zeta2) ||x - x*||)^2 at every point, and
    DFedCata's G at the certified B below the certified G."""
    c = D.load("synthetic-quadratic", SMALL["n"], seed=SMALL["seed"]).constants
    engine, _, _, x0 = runner.load_run(runs["quadratic"])
    pts = E.run_points(x0, engine.x_bar(), engine.client_models(), 6)
    losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    measures = E.measure_points(losses, pts)
    for (_, X), p in zip(pts, measures):
        r = float((X[0].double() - c["x_star"]).norm())
        bound = (math.sqrt(c["sigma_g2_star"]) + math.sqrt(c["zeta2"]) * r) ** 2
        assert float(E.heterogeneity(p.grads).mean()) <= bound * (1 + 1e-9)
    if "G_het" in c:
        assert max(E.g_het(measures, c["B_het"])) <= c["G_het"] ** 2 * (1 + 1e-9)


def test_logistic_estimates_stay_below_the_upper_bounds(runs):
    c = D.load("synthetic-logistic", SMALL["n"], seed=SMALL["seed"]).constants
    result = E.estimate_run(runs["logistic"], points=8)
    v = result.values()
    assert 0 < v["L"] <= c["L"] and 0 < v["B"] <= c["B"]
    assert v["sigma_l"] ** 2 * SMALL["batch_size"] <= c["sigma_l2_bound"]
    assert v["sigma_g"] ** 2 <= c["sigma_g2_bound"]
    if "sigma_g2_client_bound" in c:
        assert result.estimates["sigma_g_client"].value ** 2 <= c["sigma_g2_client_bound"]
    if "G_het" in c:  # DFedCata's A3 at the certified B
        engine, _, _, x0 = runner.load_run(runs["logistic"])
        losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
        measures = E.measure_points(losses, E.run_points(x0, engine.x_bar(), engine.client_models(), 4), iters=2)
        assert 0 < max(E.g_het(measures, c["B_het"])) <= c["G_het"] ** 2
    assert result.estimates["L"].points == 8
    assert result.estimates["L"].low <= result.estimates["L"].mid <= result.estimates["L"].high == v["L"]
    e = E.over_points("x", [1.0, 4.0], "")
    assert (e.value, e.low, e.mid, e.high, e.points) == (4.0, 1.0, 2.5, 4.0, 2)  # the median of an even count


# ---------------------------------------------------------------------------------------------- every family on digits
FAMILIES = {  # the MLP where the model matters (DFedPGP's u/v split needs two layers), else logreg for time
    "dfedsam": {},
    "dfedsgpsm": {"weights": "push-sum", "model": "logreg"},
    "dfedpgp": {"weights": "push-sum"},
    "dfedadmm": {"lam_pen": 1.0, "model": "logreg"},
    "dfedcata": {"model": "logreg"},
}


@pytest.mark.parametrize("algo", FAMILIES)
def test_every_family_on_digits_gives_finite_positive_constants(tmp_path, algo):
    run = train(tmp_path, algo, algo=algo, dataset="digits", topology="ring", **FAMILIES[algo])
    result = E.estimate_run(run, points=2, iters=3)
    values = result.values()
    assert set(values) == set(E.SYMBOLS[algo])
    assert all(math.isfinite(x) and x > 0 for x in values.values()), values
    assert json.loads(json.dumps(result.to_dict()))["values"] == values
    assert "not a global constant" in result.text() and "x0" in result.points
    if algo == "dfedpgp":
        assert values["L_uv"] == values["L_vu"] and "L" not in result.estimates
    if algo == "dfedcata":
        assert values["B_het"] == 1 and result.estimates["B_het"].points == 0


def test_push_sum_points_are_the_debiased_client_models(tmp_path):
    run = train(tmp_path, "sgpsm", algo="dfedsgpsm", dataset="synthetic-logistic", topology="random",
                topology_params="k=1", rounds=3)
    engine, _, _, _ = runner.load_run(run)
    w = engine.state["ps_weight"]
    assert not torch.allclose(w, torch.ones_like(w))  # the de-biasing matters on this run
    Z = engine.client_models()
    assert torch.allclose(Z, engine.state["x"] / w)
    pts = dict(E.run_points(engine.state["x"][0], engine.x_bar(), Z, 4, seed=0))
    client = next(label for label in pts if label.startswith("client"))
    assert torch.equal(pts[client][0], Z[int(client.split()[1])])
    assert any("z_i = x_i / w_i" in n for n in E.estimate_run(run, points=2, iters=3).notes)


# ---------------------------------------------------------------------------------------------- f* and the command
def test_f_star_choices(runs):
    records = [{"round": 0, "train_loss": 2.0}, {"round": 1, "train_loss": 1.5}]
    assert E.gap(records, None, None).value == 2.0
    assert E.gap(records, None, "best").value == pytest.approx(0.5)
    assert E.gap(records, None, 1.25).value == pytest.approx(0.75)
    e = E.gap(records, None, None)
    assert (e.low, e.high) == (pytest.approx(0.5), 2.0) and "upper estimate" in e.caveat
    assert E.gap([], lambda: 3.0, None).value == 3.0  # no metrics: computed at x0
    with pytest.raises(ValueError, match="above f\\(x0\\)"):
        E.gap(records, None, 2.5)
    with pytest.raises(ValueError, match="--f-star must be a finite number"):
        E.estimate_run(runs["logistic"], f_star="nan")


def test_command_prints_the_table_and_json(runs, capsys):
    ns = argparse.Namespace(run_dir=str(runs["logistic"]), json=True, points=2, seed=3, f_star="best")
    assert E.command(ns) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["values"]) == set(E.SYMBOLS["dfedsam"]) and len(out["points"]) == 2
    assert "lower estimate" in out["estimates"]["f0_minus_fstar"]["caveat"]
    assert E.command(argparse.Namespace(**{**vars(ns), "json": False})) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[3].split()[:2] == ["symbol", "value"] and "sigma_g_client *" in text
    with pytest.raises(ValueError, match="--threads must be an integer from 1 to"):
        E.command(argparse.Namespace(**{**vars(ns), "threads": 0}))
    parser = argparse.ArgumentParser()
    E.add_arguments(parser)
    args = parser.parse_args([str(runs["logistic"]), "--points", "3", "--f-star", "0.1", "--json"])
    assert (args.points, args.f_star, args.json) == (3, "0.1", True)


# ---------------------------------------------------------------------------------------------- bad inputs
def test_bad_run_directories(tmp_path, runs):
    with pytest.raises(ValueError, match="is not a directory: give a run directory"):
        E.estimate_run(tmp_path / "missing")
    with pytest.raises(ValueError, match="has no config.json"):
        E.estimate_run(tmp_path)
    bad = tmp_path / "bad"
    shutil.copytree(runs["logistic"], bad)
    (bad / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json is damaged: not valid JSON .* restore it"):
        E.estimate_run(bad)
    (bad / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="config.json is damaged: it holds a JSON list, not an object"):
        E.estimate_run(bad)
    (bad / "config.json").write_text('{"algo": "dfedsam"}')
    with pytest.raises(ValueError, match="config.json is damaged: not a run configuration"):
        E.estimate_run(bad)
    shutil.copy(runs["logistic"] / "config.json", bad / "config.json")
    (bad / "checkpoint.pt").write_bytes(b"\x00" * 10)
    with pytest.raises(ValueError, match="checkpoint.pt is damaged .* train the run again"):
        E.estimate_run(bad)
    (bad / "checkpoint.pt").unlink()
    with pytest.raises(ValueError, match="has no checkpoint.pt .* --resume"):
        E.estimate_run(bad)
    shutil.copy(runs["logistic"] / "checkpoint.pt", bad / "checkpoint.pt")
    (bad / "metrics.jsonl").write_text('{"round": 0, "train_loss": 1.0}\n{cut')
    with pytest.raises(ValueError, match="metrics.jsonl is damaged at line 2"):
        E.estimate_run(bad)
    for kw, match in [({"points": 0}, "--points must be an integer >= 1"), ({"seed": -1}, "--seed must be"),
                      ({"iters": 0}, "iters .* must be an integer >= 1")]:
        with pytest.raises(ValueError, match=match):
            E.estimate_run(runs["logistic"], **kw)


def test_a_non_finite_point_is_an_error_naming_it(runs):
    engine, _, _, x0 = runner.load_run(runs["logistic"])
    losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    X = torch.full((engine.m, engine.model.dim), math.nan)
    with pytest.raises(ValueError, match="non-finite .* at the point 'far'"):
        E.measure_points(losses, [("x0", x0.expand(engine.m, -1)), ("far", X)], iters=2)


def test_a_checkpoint_of_another_model_is_refused(tmp_path, runs):
    bad = tmp_path / "other"
    shutil.copytree(runs["logistic"], bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "model": "mlp"}))
    with pytest.raises(ValueError, match="does not match config.json"):
        E.estimate_run(bad)
    assert np.isfinite(E.estimate_run(runs["logistic"], points=1, iters=2).values()["L"])


# ---------------------------------------------------------------------------------------------- certified problems
def test_robust_regression_stays_below_its_certified_bounds_and_attains_L_at_the_client_optima(tmp_path):
    run = train(tmp_path, "robust", algo="dfedsam", dataset="synthetic-robust", lr=0.2, rounds=4)
    c = D.load("synthetic-robust", SMALL["n"], seed=SMALL["seed"]).constants
    result = E.estimate_run(run, points=6)
    v, est = result.values(), result.estimates
    assert 0 < v["L"] <= c["L"] * (1 + 1e-9) and 0 < v["B"] <= c["B"]
    assert v["sigma_l"] ** 2 * SMALL["batch_size"] <= c["sigma_l2_bound"]
    assert est["sigma_g_mean"].value ** 2 <= c["sigma_g2_bound"]
    assert est["sigma_g_client"].value ** 2 <= c["sigma_g2_client_bound"]
    engine, _, _, x0 = runner.load_run(run)
    losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    measures = E.measure_points(losses, E.run_points(x0, engine.x_bar(), engine.client_models(), 4), iters=4)
    assert max(E.g_het(measures, c["B_het"])) <= c["G_het"] ** 2
    assert c["L_exact"]  # noise 0: at x_i* every residual of client i is 0 and grad^2 f_i = A_i^T A_i / n_i
    stars = [(f"x_{i}*", x.expand(engine.m, -1)) for i, x in enumerate(c["x_client_star"])]
    at = E.measure_points(losses, stars)
    assert max(float(p.per_client["hess"][i]) for i, p in enumerate(at)) == pytest.approx(c["L"], rel=1e-6)


def test_personal_problem_block_constants_below_their_bounds_and_exact_at_the_personal_optima(tmp_path):
    run = train(tmp_path, "personal", algo="dfedpgp", dataset="synthetic-personal", lr=0.2, rounds=4,
                topology="ring", weights="push-sum")
    c = D.load("synthetic-personal", SMALL["n"], seed=SMALL["seed"]).constants
    v = E.estimate_run(run, points=6).values()
    b = SMALL["batch_size"]
    for s in ("L_u", "L_v", "L_uv", "L_vu"):
        assert 0 < v[s] <= c[s] * (1 + 1e-9), s
    assert v["sigma_u"] ** 2 * b <= c["sigma_u2_bound"] and v["sigma_v"] ** 2 * b <= c["sigma_v2_bound"]
    assert v["sigma_g"] ** 2 <= c["sigma_g2_personal_bound"]
    # noise 0: at the personal optima (u*, v_i*) every residual is 0, so H_uu, H_vv attain L_u, L_v and
    # ||H_uv|| = max_i ||A_u^T A_v / n|| (L_uv_at_optimum)
    engine, _, _, _ = runner.load_run(run)
    losses = E.ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    at = E.measure_points(losses, [("(u*, v_i*)", c["x_client_star"])], shared=engine.shared)[0].per_client
    assert float(at["hess_uu"].max()) == pytest.approx(c["L_u"], rel=1e-6)
    assert float(at["hess_vv"].max()) == pytest.approx(c["L_v"], rel=1e-6)
    assert float(at["hess_uv"].max()) == pytest.approx(c["L_uv_at_optimum"], rel=1e-6)


def test_a_model_with_running_statistics_is_refused():
    """Points between the run's models have no BatchNorm statistics of their own: refused, naming the fix."""
    from torch import nn

    from dfltheory.empirical.functional import FlatModel
    from dfltheory.verify.estimators import ClientLosses

    model = FlatModel(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)), nn.functional.cross_entropy)
    with pytest.raises(ValueError, match="running statistics .*no statistics of their own.*GroupNorm"):
        ClientLosses(model, torch.zeros(4, 3), torch.zeros(4, dtype=torch.long), [[0, 1], [2, 3]])
