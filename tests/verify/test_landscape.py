"""Sharpness at x_bar: the top Hessian eigenvalue on quadratics with known spectra, Hessian-vector products against
the exact Hessian of a tiny network, Li et al.'s filter normalisation and slices, the permutation test, the figure,
and the DFedAvg/FedAvg comparison end to end on a tiny synthetic problem."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn
from dfltheory.verify import landscape as L


def _quadratic(eigenvalues, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(len(eigenvalues), len(eigenvalues), generator=gen, dtype=torch.float64))
    A = q @ torch.diag(torch.tensor(eigenvalues, dtype=torch.float64)) @ q.T
    b = torch.randn(len(eigenvalues), generator=gen, dtype=torch.float64)
    return (lambda x: 0.5 * x @ A @ x - b @ x), torch.randn(len(eigenvalues), generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("eigenvalues", [[5.0, 3.0, 1.0, 0.5, 0.1, -2.0], [0.3, 0.29, -0.1], [2.0, -6.0, 1.0, 0.0],
                                         list(np.linspace(-1, 7, 40))])
def test_lanczos_finds_the_largest_eigenvalue_of_a_quadratic(eigenvalues):
    f, x = _quadratic(eigenvalues)
    top = L.top_eigenvalue(f, x, iters=len(eigenvalues) + 2, tol=1e-10)
    assert top["eigenvalue"] == pytest.approx(max(eigenvalues), rel=1e-8, abs=1e-10)
    assert top["residual"] < 1e-7 and top["iterations"] <= len(eigenvalues) + 1


def test_power_iteration_finds_the_largest_magnitude():
    f, x = _quadratic([2.0, -6.0, 1.0])  # power iteration converges to -6, not to lambda_max = 2
    assert L.top_eigenvalue(f, x, iters=500, tol=1e-12, method="power")["eigenvalue"] == pytest.approx(-6.0, 1e-6)
    f, x = _quadratic([5.0, 3.0, 1.0])
    assert L.top_eigenvalue(f, x, iters=500, tol=1e-12, method="power")["eigenvalue"] == pytest.approx(5.0, 1e-6)
    with pytest.raises(ValueError, match="method must be 'lanczos' or 'power'"):
        L.top_eigenvalue(f, x, method="arnoldi")


def _tiny():
    torch.manual_seed(0)
    model = FlatModel(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)), loss_fn("classification"))
    inputs, targets = torch.randn(16, 3), torch.randint(0, 3, (16,))
    return model, model.initial(), L.batch_loss(model, inputs, targets)


def test_hessian_vector_products_match_the_exact_hessian_of_a_tiny_network():
    model, x, f = _tiny()
    H = torch.func.hessian(f)(x)
    v = torch.randn(model.dim)
    assert torch.allclose(L.hvp(f, x, v), H @ v, atol=1e-5)
    top = L.top_eigenvalue(f, x, iters=model.dim, tol=1e-6)
    assert top["eigenvalue"] == pytest.approx(float(torch.linalg.eigvalsh(H.double()).max()), rel=1e-4)


def test_filter_normalised_directions_have_the_model_filter_norms():
    model, x, _ = _tiny()
    d = L.filter_normalized_direction(model, x, seed=1)
    for shape, w, r in zip(model.shapes, x.split(model.numels), d.split(model.numels)):
        if len(shape) == 1:
            assert torch.equal(r, torch.zeros_like(r))  # biases: Li et al.'s --xignore biasbn
        else:
            assert torch.allclose(r.reshape(shape[0], -1).norm(dim=1), w.reshape(shape[0], -1).norm(dim=1), rtol=1e-5)
    copy = L.filter_normalized_direction(model, x, seed=1, bias="copy")
    assert torch.equal(copy.split(model.numels)[1], x.split(model.numels)[1])
    assert not torch.equal(d, L.filter_normalized_direction(model, x, seed=2))
    with pytest.raises(ValueError, match="bias must be one of zero, copy"):
        L.filter_normalized_direction(model, x, bias="keep")


def test_slices_evaluate_the_loss_on_the_grid():
    model, x, f = _tiny()
    d1, d2 = (L.filter_normalized_direction(model, x, seed=s) for s in (1, 2))
    line = L.loss_slice(f, x, [d1], span=0.5, points=5)
    assert line["loss"].shape == (5,) and line["coords"].tolist() == pytest.approx([-0.5, -0.25, 0, 0.25, 0.5])
    assert line["loss"][2] == pytest.approx(line["center"]) and line["center"] == pytest.approx(float(f(x)))
    plane = L.loss_slice(f, x, [d1, d2], span=1.0, points=3, chunk=4)
    assert plane["loss"].shape == (3, 3)
    assert plane["loss"][0, 2] == pytest.approx(float(f(x - d1 + d2)), rel=1e-6)  # row a = -1, column b = +1
    with pytest.raises(ValueError, match="give one direction .* or two"):
        L.loss_slice(f, x, [d1, d2, d1])
    with pytest.raises(ValueError, match="span must be a finite number > 0"):
        L.loss_slice(f, x, [d1], span=math.inf)


def test_permutation_test_is_exact_for_small_arms():
    assert L.permutation_test([3.0, 4.0, 5.0], [0.0, 1.0, 2.0]) == {
        "difference": 3.0, "p_one_sided": pytest.approx(1 / 20), "relabellings": 20, "exact": True}
    assert L.permutation_test([1.0, 1.0], [1.0, 1.0])["p_one_sided"] == 1.0
    assert L.permutation_test([0.0, 1.0, 2.0], [3.0, 4.0, 5.0])["p_one_sided"] == 1.0


def test_sign_flip_test_is_exact_for_paired_arms():
    res = L.sign_flip_test([2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 1.5, 3.0, 4.5, 5.9])
    assert res["p_one_sided"] == pytest.approx(1 / 32) and res["patterns"] == 32 and res["positive"] == 5
    assert L.sign_flip_test([1.0, 0.0], [0.0, 1.0])["p_one_sided"] == 0.75  # d = (1, -1): 3 of 4 means >= 0
    with pytest.raises(ValueError, match="two arms of equal length"):
        L.sign_flip_test([1.0], [0.0])


def test_the_figure_draws_both_slices(tmp_path):
    from dfltheory.figures.axes import save_figure
    from dfltheory.figures.landscape import plot_landscape

    model, x, f = _tiny()
    d1, d2 = (L.filter_normalized_direction(model, x, seed=s) for s in (1, 2))
    for dirs in ([d1], [d1, d2]):
        ax = plot_landscape({**L.loss_slice(f, x, dirs, points=5), "algo": "dfedavg", "dataset": "toy"})
        assert "dfedavg on toy" in ax.get_title()
        assert save_figure(ax, tmp_path / f"{len(dirs)}.png").stat().st_size > 1000


def test_compare_sharpness_trains_both_arms_and_reuses_finished_runs(tmp_path, monkeypatch):
    from dfltheory.empirical import runner

    base = {"dataset": "synthetic-logistic", "n": 3, "rounds": 2, "K": 2, "lr": 0.1, "batch_size": 8,
            "data_params": {"dim": 4, "n_per_client": 20}}
    res = L.compare_sharpness(base, tmp_path, seeds=(0, 1), per_client=8, iters=5)
    assert set(res["lambda_max"]) == {"dfedavg", "fedavg"}
    assert all(len(v) == 2 and all(math.isfinite(s) and s > 0 for s in v) for v in res["lambda_max"].values())
    assert res["permutation"]["relabellings"] == 6 and {"p", "difference"} <= set(res["paired"])
    assert res["sign_flip"]["patterns"] == 4 and isinstance(res["agrees"], bool)
    from dfltheory.figures.landscape import plot_run_landscape

    path, top = plot_run_landscape(tmp_path / "fedavg-seed1", tmp_path / "l.png", dims=1, points=3, per_client=8,
                                   sharpness=True)
    assert path.stat().st_size > 1000  # more Lanczos steps from the same start: a Ritz value at least as large
    assert top["lambda_max"] >= res["lambda_max"]["fedavg"][1] - 1e-6
    monkeypatch.setattr(runner, "run", lambda cfg: pytest.fail("a finished run was trained again"))
    assert L.compare_sharpness(base, tmp_path, seeds=(0, 1), per_client=8, iters=5)["lambda_max"] == res["lambda_max"]
    with pytest.raises(ValueError, match="at least two distinct seeds"):
        L.compare_sharpness(base, tmp_path, seeds=(0,))
