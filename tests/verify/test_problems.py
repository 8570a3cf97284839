"""The problems' constants against direct computation: no sampled point (random, or along a short training run)
exceeds a bound; exact constants are attained; sigma_l at batch b is the one-sample variance / b; bad inputs are
refused with the fix."""

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import grad, hessian, vmap

from dfltheory.bounds import get
from dfltheory.empirical import data as D
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import cauchy_loss, loss_fn, make_model
from dfltheory.empirical.runner import build
from dfltheory.verify.problems import PROBLEMS, Constant, theorem_constants

SMALL = {"dim": 4, "n_per_client": 40}
TOL = 1e-9


def _arrays(fd):
    """(m, n, D) features (flattened) and (m, n) targets of every client, float64."""
    A = torch.stack([fd.client_data(i)[0].double().reshape(len(fd.client_indices[i]), -1) for i in range(fd.n_clients)])
    b = torch.stack([fd.client_data(i)[1].double() for i in range(fd.n_clients)])
    return A, b


def _sample_loss(x, a, y):
    return cauchy_loss(a @ x, y)


def _client_loss(x, A, b):
    return cauchy_loss(A @ x, b)


def _stats(A, b, x):
    """At one point x: client gradients (m, D), per-sample gradients (m, n, D), client Hessians (m, D, D); the
    oracle is autograd through the training loss, independent of the closed forms in data.py."""
    per = vmap(vmap(grad(_sample_loss), in_dims=(None, 0, 0)), in_dims=(None, 0, 0))(x, A, b)
    H = vmap(hessian(_client_loss), in_dims=(None, 0, 0))(x, A, b)
    return per.mean(1), per, H


def _trajectory(problem, algo, extra=None, rounds=6):
    """Client models along a short training run on the problem (float64 copies of the engine's rows)."""
    cfg = {"algo": algo, **PROBLEMS[problem].config, "data_params": {**PROBLEMS[problem].config["data_params"],
           **SMALL}, "n": 4, "K": 2, "lr": 0.3, "batch_size": 4, "seed": 1, "rounds": rounds, "out": None,
           "topology": "ring", **(extra or {})}
    engine, _ = build(cfg)
    rows = [engine.client_models().double().clone()]
    for _ in range(rounds):
        engine.round()
        rows.append(engine.client_models().double().clone())
    return torch.cat(rows)


def _points(c, A, n_random=12, seed=0):
    gen = torch.Generator().manual_seed(seed)
    d = A.shape[-1]
    rand = torch.cat([s * torch.randn(n_random, d, generator=gen, dtype=torch.float64) for s in (0.3, 1.0, 4.0)])
    return torch.cat([rand, c["x_client_star"], c["x_best"][None]])


# torch.func.hessian's forward mode calls torch.jit.script internally, which warns in torch 2.14
@pytest.mark.filterwarnings(r"ignore:.*torch\.jit\.script.*deprecated:FutureWarning")
@pytest.mark.parametrize("problem,algo,extra", [
    ("synthetic-robust", "dfedsam", None),
    ("synthetic-personal", "dfedavg", {"model": "linear"}),  # one shared x = (u, v) on the flattened (a_u, a_v)
])
def test_robust_bounds_hold_at_random_points_and_along_training(problem, algo, extra):
    fd = D.load(PROBLEMS[problem].config["dataset"], 4, seed=0, **SMALL)
    c = fd.constants
    A, b = _arrays(fd)
    points = torch.cat([_points(c, A), _trajectory(problem, algo, extra)])
    for x in points:
        g, per, H = _stats(A, b, x)
        eig = torch.linalg.eigvalsh(H)
        assert eig.max() <= c["L"] * (1 + TOL) and eig.min() >= -c["weak_convexity"] * (1 + TOL)
        assert g.norm(dim=1).max() <= c["B"] + TOL
        assert per.norm(dim=2).max() <= c["B_sample"] + TOL
        assert ((per - g[:, None]) ** 2).sum(2).mean(1).max() <= c["sigma_l2_bound"] + TOL
        dev = ((g - g.mean(0)) ** 2).sum(1)
        assert dev.mean() <= c["sigma_g2_bound"] + TOL and dev.max() <= c["sigma_g2_client_bound"] + TOL
        assert (g**2).sum(1).mean() <= c["G_het"] ** 2 + c["B_het"] ** 2 * (g.mean(0) ** 2).sum() + TOL
        f = float(vmap(_client_loss, in_dims=(None, 0, 0))(x, A, b).mean())
        assert f >= c["f_star_lower"] and f >= c["f_star_best"] - 1e-9
    # L is attained at the client optima (noise 0): the top Hessian eigenvalue there is L to rounding
    top = max(float(torch.linalg.eigvalsh(_stats(A, b, x)[2]).max()) for x in c["x_client_star"])
    assert top == pytest.approx(c["L"], rel=1e-9) and c["L_exact"]
    assert c["weak_convexity"] == pytest.approx(c["L"] / 8)


def _ascent(objective, start, steps=150, lr=0.05):
    """The largest value of ``objective`` (batched over rows of x) that Adam ascent reaches from ``start``."""
    x = start.clone().requires_grad_(True)
    opt = torch.optim.Adam([x], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        (-objective(x).sum()).backward()
        opt.step()
    return float(objective(x.detach()).max())


def _cauchy_grads(A, b, X):
    r = torch.einsum("mnd,sd->smn", A, X) - b
    per = (r / (1 + r * r))[..., None] * A  # phi'(r) a, checked against autograd above
    return per.mean(2), per


def test_robust_bounds_are_tight_within_stated_factors():
    """Measured suprema (ascent from 32 starts) against the bounds at the default problem: B within 1.5x,
    sigma_l^2 within 1.5x, sigma_g^2 (average form) within 4x, per-client within 6x."""
    fd = PROBLEMS["synthetic-robust"].load()
    c = fd.constants
    A, b = _arrays(fd)
    X0 = torch.randn(32, A.shape[-1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    B = _ascent(lambda X: _cauchy_grads(A, b, X)[0].norm(dim=-1).max(-1).values, X0)
    var = _ascent(lambda X: (lambda g, p: ((p - g[:, :, None]) ** 2).sum(-1).mean(-1).max(-1).values)(
        *_cauchy_grads(A, b, X)), X0)
    dev = lambda X: ((lambda g: ((g - g.mean(1, keepdim=True)) ** 2).sum(-1))(_cauchy_grads(A, b, X)[0]))  # noqa: E731
    avg, client = _ascent(lambda X: dev(X).mean(-1), X0), _ascent(lambda X: dev(X).max(-1).values, X0)
    assert B <= c["B"] <= 1.5 * B
    assert var <= c["sigma_l2_bound"] <= 1.5 * var
    assert avg <= c["sigma_g2_bound"] <= 4 * avg
    assert client <= c["sigma_g2_client_bound"] <= 6 * client


def test_personal_block_constants_hold_and_the_exact_ones_are_attained():
    fd = D.load("synthetic-personal", 4, seed=0, **SMALL)
    c = fd.constants
    A, b = _arrays(fd)
    d = SMALL["dim"]
    gen = torch.Generator().manual_seed(2)
    star = c["x_client_star"]  # rows (u*, v_i*)
    traj = _trajectory("synthetic-personal", "dfedpgp", {"topology": "exponential-directed", "weights": "push-sum",
                                                          "K_v": 2, "lr_v": 0.3})
    points = [star + s * torch.randn(star.shape, generator=gen, dtype=torch.float64) for s in (0.0, 0.3, 1.0, 4.0)]
    points += list(traj.reshape(-1, 4, 2 * d))  # every round's (u_i, v_i) of the four clients
    at_optimum = True
    for X in points:  # row i: client i's (u_i, v_i); u_i differ, which Assumptions 2-4 allow
        H = torch.stack([hessian(_client_loss)(x, a, y) for x, a, y in zip(X, A, b)])
        Huu, Hvv, Huv = H[:, :d, :d], H[:, d:, d:], H[:, :d, d:]
        assert torch.linalg.matrix_norm(Huu, 2).max() <= c["L_u"] * (1 + TOL)
        assert torch.linalg.matrix_norm(Hvv, 2).max() <= c["L_v"] * (1 + TOL)
        assert torch.linalg.matrix_norm(Huv, 2).max() <= c["L_uv"] * (1 + TOL)
        if at_optimum:  # the personal optima: D = I, so L_u, L_v are attained and L_uv meets its attained part
            assert float(torch.linalg.eigvalsh(Huu).max()) == pytest.approx(c["L_u"], rel=1e-9)
            assert float(torch.linalg.eigvalsh(Hvv).max()) == pytest.approx(c["L_v"], rel=1e-9)
            assert float(torch.linalg.matrix_norm(Huv, 2).max()) == pytest.approx(c["L_uv_at_optimum"], rel=1e-9)
            assert float(vmap(_client_loss)(X, A, b).mean()) < 1e-12 and c["F_star"] == 0
            at_optimum = False
        per = torch.stack([vmap(grad(_sample_loss), in_dims=(None, 0, 0))(x, a, y) for x, a, y in zip(X, A, b)])
        g = per.mean(1)
        for blk, key in ((slice(0, d), "sigma_u2_bound"), (slice(d, 2 * d), "sigma_v2_bound")):
            assert ((per[..., blk] - g[:, None, blk]) ** 2).sum(2).mean(1).max() <= c[key] + TOL
        # A4 with the shared u = u_0 for every client and the V of the row: ||grad_u F_i(u, v_i) - grad_u F(u, V)||
        U = X[0, :d].expand(4, d)
        gu = torch.stack([grad(_client_loss)(torch.cat([U[i], X[i, d:]]), A[i], b[i])[:d] for i in range(4)])
        assert ((gu - gu.mean(0)) ** 2).sum(1).max() <= c["sigma_g2_personal_bound"] + TOL


def test_split_linear_model_is_u_shared_and_v_personal():
    fd = D.load("synthetic-personal", 3, seed=0, dim=3, n_per_client=5)
    model = FlatModel(make_model("split-linear", fd.input_shape, 1).double(), loss_fn(fd.task))
    personal = model.parameter_mask([model.last_linear()])
    assert model.dim == 6 and personal.tolist() == [False] * 3 + [True] * 3
    x = torch.arange(6, dtype=torch.float64)
    a, y = fd.client_data(1)
    expected = cauchy_loss(a.double().reshape(5, 6) @ x, y.double())
    assert float(model.loss_at(x, a.double(), y.double())) == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("b", [1, 2, 3])
def test_sigma_l_at_batch_b_is_the_one_sample_variance_over_b(b):
    """All n^b equally likely batches drawn with replacement, enumerated: the variance of the minibatch gradient
    (the engine's FlatModel.batched_grad) is the one-sample variance / b exactly."""
    fd = D.load("synthetic-robust", 2, seed=0, dim=3, n_per_client=4)
    model = FlatModel(make_model("linear", (3,), 1).double(), loss_fn(fd.task))
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    for i in range(2):
        a, y = (t.double() for t in fd.client_data(i))
        batches = torch.tensor(list(itertools.product(range(4), repeat=b)))
        G = model.batched_grad(x.expand(len(batches), 3), a[batches], y[batches])
        one = model.batched_grad(x.expand(4, 3), a[:, None], y[:, None])
        var_b = float(((G - G.mean(0)) ** 2).sum(1).mean())
        var_1 = float(((one - one.mean(0)) ** 2).sum(1).mean())
        assert var_b == pytest.approx(var_1 / b, rel=1e-10)
        assert var_1 <= fd.constants["sigma_l2_bound"]
    sigma = theorem_constants(fd, b)["sigma_l"]
    assert sigma.value == pytest.approx(math.sqrt(fd.constants["sigma_l2_bound"] / b)) and sigma.kind == "bound"
    full = theorem_constants(fd, None)["sigma_l"]  # full local batches: no sampling noise
    assert full.value == 0.0 and full.kind == "exact"


_QUAD = {"distinct": D.load("synthetic-quadratic", 5, seed=0, **SMALL),
         "shared": D.load("synthetic-quadratic", 5, seed=0, shared_design=True, **SMALL)}


@settings(max_examples=25)
@given(scale=st.floats(-2, 2), seed=st.integers(0, 2**16))
def test_quadratic_heterogeneity_pair_holds_everywhere(scale, seed):
    """DFedCata A3 with the exact (G_het, B_het) of the quadratic, at x* + 10^scale * random direction."""
    fd = _QUAD["distinct"]
    c, (A, b) = fd.constants, _arrays(fd)
    x = c["x_star"] + 10**scale * torch.randn(A.shape[-1], generator=torch.Generator().manual_seed(seed),
                                              dtype=torch.float64)
    g = torch.einsum("mnd,mn->md", A, torch.einsum("mnd,d->mn", A, x) - b) / A.shape[1]
    lhs, rhs = float((g**2).sum(1).mean()), c["G_het"] ** 2 + c["B_het"] ** 2 * float((g.mean(0) ** 2).sum())
    assert lhs <= rhs * (1 + 1e-9)


def test_quadratic_heterogeneity_pair_is_attained():
    """The least G for B_het: the inequality is an equality at y* = (B^2 I - P)^{-1} q (a direct recomputation);
    with one design matrix it is the identity mean ||grad f_i||^2 = ||grad f||^2 + sigma_g2_star."""
    for key, fd in _QUAD.items():
        c, (A, b) = fd.constants, _arrays(fd)
        n = A.shape[1]
        Hi = torch.einsum("mnd,mne->mde", A, A) / n
        H = Hi.mean(0)
        gi = torch.einsum("mnd,mn->md", A, torch.einsum("mnd,d->mn", A, c["x_star"]) - b) / n
        M = Hi @ torch.linalg.inv(H)
        P = torch.einsum("mba,mbc->ac", M, M) / len(M)
        q = torch.einsum("mba,mb->a", M, gi) / len(M)
        y = torch.linalg.solve(c["B_het"] ** 2 * torch.eye(len(P), dtype=torch.float64) - P, q)
        x = c["x_star"] + torch.linalg.solve(H, y) + (1.0 if key == "shared" else 0.0)
        g = torch.einsum("mnd,mn->md", A, torch.einsum("mnd,d->mn", A, x) - b) / n
        lhs, rhs = float((g**2).sum(1).mean()), c["G_het"] ** 2 + c["B_het"] ** 2 * float((g.mean(0) ** 2).sum())
        assert lhs == pytest.approx(rhs, rel=1e-8)
    assert _QUAD["shared"].constants["B_het"] == pytest.approx(1.0)


def test_certified_f_star_lower_bound_is_below_every_local_minimum():
    """cauchy_lower_bound is > 0 (better than phi >= 0) and below the minima BFGS reaches from 100 random starts."""
    from scipy.optimize import minimize

    fd = D.load("synthetic-robust", 4, seed=3, **SMALL)
    c = fd.constants
    A, b = (t.numpy() for t in _arrays(fd))

    def fg(x):
        r = np.einsum("mnd,d->mn", A, x) - b
        return 0.5 * np.log1p(r * r).mean(), np.einsum("mnd,mn->d", A, r / (1 + r * r)) / r.size

    starts = np.random.default_rng(0).standard_normal((100, A.shape[-1])) * 2
    found = min(minimize(fg, x0, jac=True, method="BFGS").fun for x0 in starts)
    assert 0 < c["f_star_lower"] <= found and c["f_star_lower"] <= c["f_star_best"] <= found + 1e-9
    assert theorem_constants(fd, 8)["f_star_lower"].value == c["f_star_lower"]
    assert D.load("synthetic-robust", 4, seed=3, noise=0.1, **SMALL).constants["f_star_lower"] == 0  # no x_i*


def test_common_optimum_problem_has_exact_f_star():
    fd = PROBLEMS["synthetic-robust-common"].load(4)
    c = fd.constants
    A, b = _arrays(fd)
    assert c["f_star"] == 0 and c["f_star_best"] < 1e-12
    assert float(vmap(_client_loss, in_dims=(None, 0, 0))(c["x_client_star"][0], A, b).mean()) < 1e-12
    assert theorem_constants(fd, 8)["f_star_lower"].kind == "exact"


MAIN = {"dfedsgpsm.thm1": "synthetic-robust", "dfedsam.thm4.1": "synthetic-robust", "dfedcata.thm1": "synthetic-robust",
        "dfedpgp.thm1": "synthetic-personal", "dfedadmm.thm1": "synthetic-robust"}
ASSUMPTION_SYMBOLS = {"L", "B", "sigma_l", "sigma_g", "G_het", "B_het", "L_u", "L_v", "L_uv", "L_vu", "sigma_u",
                      "sigma_v"}


@pytest.mark.parametrize("theorem", sorted(MAIN))
def test_every_main_theorem_gets_all_its_problem_constants_certified(theorem):
    consts = theorem_constants(MAIN[theorem], 8, theorem=theorem, m=4)
    thm = get(theorem)
    needed = ASSUMPTION_SYMBOLS & {str(v.symbol) for v in thm.variables}
    assert needed <= set(consts), needed - set(consts)
    assert all(consts[k].certified and consts[k].value >= 0 and math.isfinite(consts[k].value) for k in needed)
    assert consts["f_star_lower"].certified


def test_sigma_g_takes_each_papers_form():
    fd = PROBLEMS["synthetic-personal"].load(4)
    c = fd.constants
    forms = {t: theorem_constants(fd, 8, theorem=t)["sigma_g"].value ** 2
             for t in ("dfedsam.thm4.1", "dfedsgpsm", "dfedadmm.thm1", "dfedpgp.thm1")}
    assert forms["dfedsam.thm4.1"] == pytest.approx(c["sigma_g2_bound"])
    assert forms["dfedsgpsm"] == forms["dfedadmm.thm1"] == pytest.approx(c["sigma_g2_client_bound"])
    assert forms["dfedpgp.thm1"] == pytest.approx(c["sigma_g2_personal_bound"])
    assert theorem_constants(fd, 8)["sigma_g"].value ** 2 == pytest.approx(max(forms.values()))  # valid for all
    f_star = theorem_constants(fd, 8, theorem="dfedpgp.thm1")["f_star_lower"]  # F* of the personalized objective
    assert f_star.value == 0.0 and f_star.kind == "exact"


def test_quadratic_is_labelled_measured():
    consts = theorem_constants("synthetic-quadratic", 8, m=4)
    assert not PROBLEMS["synthetic-quadratic"].certified and all(p.certified for k, p in PROBLEMS.items()
                                                                 if k != "synthetic-quadratic")
    assert "B" not in consts and consts["sigma_l"].kind == "measured" and consts["sigma_g"].kind == "measured"
    assert consts["L"].kind == consts["f_star_lower"].kind == consts["G_het"].kind == "exact"


def test_logistic_L_is_exact_and_the_rest_certified():
    consts = theorem_constants("synthetic-logistic", 4, m=4)
    assert consts["L"].kind == "exact" and consts["B"].kind == consts["sigma_g"].kind == "bound"
    assert consts["B"].value <= consts["B_sample"].value


def test_every_problem_trains_and_lowers_its_loss():
    """A 20-round run on every problem (the defaults: m = 8) finishes and lowers the loss."""
    for name, problem in PROBLEMS.items():
        algo, extra = ("dfedpgp", {"topology": "exponential-directed", "weights": "push-sum"}) \
            if name == "synthetic-personal" else ("dfedavg", {})
        engine, evaluator = build({"algo": algo, **problem.config, "n": problem.m, "K": 2, "lr": 0.05,
                                   "batch_size": 8, "seed": 0, "out": None, **extra})
        before = evaluator.objective(engine.x_bar())[0]
        for _ in range(20):
            engine.round()
        assert evaluator.objective(engine.x_bar())[0] < before


@pytest.mark.parametrize("call,match", [
    (lambda: cauchy_loss(torch.zeros(2), torch.zeros(2), c=-1.0), "c must be a finite number > 0"),
    (lambda: D.load("synthetic-robust", 3, dim=0), "dim must be an integer >= 1"),
    (lambda: D.load("synthetic-personal", 3, n_per_client=0), "n_per_client must be an integer >= 1"),
    (lambda: D.load("synthetic-robust", 3, heterogeneity=-1.0), "heterogeneity must be a finite number >= 0"),
    (lambda: D.load("synthetic-personal", 3, noise=float("nan")), "noise must be a finite number >= 0"),
    (lambda: D.load("synthetic-robust", 3, c=2.0), "unexpected keyword"),
    (lambda: make_model("split-linear", (10,), 1), "needs input_shape \\(2, d\\)"),
    (lambda: theorem_constants("nope", 8), "unknown problem 'nope'; valid problems"),
    (lambda: theorem_constants("synthetic-robust", 0, m=2), "batch_size must be a positive integer"),
    (lambda: theorem_constants("synthetic-robust", 8, theorem="fedavg.thm1", m=2), "unknown theorem"),
    (lambda: theorem_constants("synthetic-robust", 8, theorem="dfedpgp.thm1", m=2), "need the 'synthetic-personal'"),
    (lambda: theorem_constants(D.load("digits", 2), 8), "real data have no known constants"),
    (lambda: Constant(1.0, "guess", ""), "kind must be one of"),
])
def test_bad_inputs_name_the_fix(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_constants_are_independent_of_the_minibatch_seed_and_fixed_by_the_data_seed():
    a, b = (D.load("synthetic-robust", 3, seed=s, **SMALL).constants for s in (0, 1))
    again = D.load("synthetic-robust", 3, seed=0, **SMALL).constants
    assert a["L"] == again["L"] and a["f_star_best"] == again["f_star_best"] and a["L"] != b["L"]
    assert np.isfinite([a[k] for k in ("B", "sigma_l2_bound", "sigma_g2_bound")]).all()
