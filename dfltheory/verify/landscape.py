"""Sharpness of the training loss at the clients' average model x_bar: DFedSAM's landscape claim (seed 001, Fig. 2,
dfedsam.md §9 "Figures": "FedAvg has a more flat landscape, whereas DFedAvg has a sharper landscape than FedAvg").

Two measures, both of f(x) = (1/m) sum_i f_i(x) on one *fixed evaluation batch* (:func:`evaluation_batch`: b samples
of every client, drawn uniformly with replacement by a seeded generator, so the batch mean is an unbiased estimate
of f with the clients weighted equally, as in f's definition):

* **the top Hessian eigenvalue** lambda_max(nabla^2 f(x_bar)) (:func:`top_eigenvalue`), from Hessian-vector products
  H v = d/dt grad f(x + t v) at t = 0 (:func:`hvp`: forward-mode ``jvp`` of reverse-mode ``grad``, torch.func), by
  Lanczos with full reorthogonalisation (the largest Ritz value; default) or by power iteration (the eigenvalue of
  largest *magnitude*, which is lambda_max only where no negative eigenvalue is larger in magnitude; PyHessian's
  choice). Lanczos stops when the Ritz residual ||H y - theta y|| = beta_j |s_j| is below ``tol`` |theta|.
* **the filter-normalised loss slice** of Li, Xu, Taylor, Studer & Goldstein (2018), "Visualizing the Loss Landscape
  of Neural Nets" §4 (:func:`loss_slice`): f(x_bar + a d1) (1-D) or f(x_bar + a d1 + b d2) (2-D) on a grid of
  [-span, span], with Gaussian directions d whose every filter (a row of a weight matrix, one output channel of a
  convolution: the slice along the first axis) is rescaled to the norm of the model's filter there,
  d_{i,j} <- d_{i,j} ||x_{i,j}|| / ||d_{i,j}|| (:func:`filter_normalized_direction`). Their code offers two readings
  for the one-dimensional parameters (biases, norm scales): ``bias="zero"`` (``--xignore biasbn``: the direction is
  0 there, the setting of their figures; used here) and ``bias="copy"`` (the direction equals the parameter).

:func:`compare_sharpness` trains DFedAvg and FedAvg in the same setting (the ``train`` machinery,
:func:`dfltheory.empirical.runner.run`; seed s of both arms has the same data, partition and initial model) and
tests 'DFL sharper than CFL' on the per-seed lambda_max: paired (the same problems), by a t-test and an exact
sign-flip test (:func:`sign_flip_test`); unpaired, by Welch's t-test and an exact permutation test of the difference
of means (:func:`permutation_test`), reported beside them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch.func import grad, jvp, vmap

Loss = Callable[[torch.Tensor], torch.Tensor]
BIAS = ("zero", "copy")
MAX_POINTS = 201  # per axis: a plane of 201 x 201 is 40,401 losses on the evaluation batch


# -------------------------------------------------------------------------------------------------------- Hessian
def hvp(f: Loss, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H v with H = nabla^2 f(x): the directional derivative of grad f at x along v (forward over reverse)."""
    return jvp(grad(f), (x,), (v,))[1]


def top_eigenvalue(f: Loss, x: torch.Tensor, iters: int = 50, tol: float = 1e-3, seed: int = 0,
                   method: str = "lanczos") -> dict:
    """The largest eigenvalue of nabla^2 f(x) from Hessian-vector products (module docstring).

    Returns ``eigenvalue``, ``iterations`` (Hessian-vector products), ``residual`` (||H y - lambda y|| for the unit
    Ritz vector y, measured with one more product) and ``vector`` y. ``method``: 'lanczos' (the algebraically
    largest eigenvalue) or 'power' (the eigenvalue of largest magnitude)."""
    if method not in ("lanczos", "power"):
        raise ValueError(f"method must be 'lanczos' or 'power', got {method!r}")
    if int(iters) != iters or iters < 1:
        raise ValueError(f"iters must be a positive integer (Hessian-vector products), got {iters!r}")
    if not tol > 0:
        raise ValueError(f"tol must be > 0 (relative residual), got {tol!r}")
    x = x.detach()
    gen = torch.Generator(device="cpu").manual_seed(seed)
    q = torch.randn(x.numel(), generator=gen, dtype=x.dtype).to(x.device).reshape(x.shape)
    q = q / q.norm()
    if method == "power":
        lam, n = 0.0, 0
        for n in range(1, int(iters) + 1):
            w = hvp(f, x, q)
            new = float(torch.dot(w.reshape(-1), q.reshape(-1)))
            q = w / w.norm()
            if n > 1 and abs(new - lam) <= tol * abs(new):
                lam = new
                break
            lam = new
        y = q
    else:
        Q, alphas, betas, n = [q], [], [], 0
        for n in range(1, int(iters) + 1):
            w = hvp(f, x, Q[-1]).reshape(-1)
            alphas.append(float(torch.dot(w, Q[-1].reshape(-1))))
            basis = torch.stack([v.reshape(-1) for v in Q])
            for _ in range(2):  # full reorthogonalisation, twice ("twice is enough")
                w = w - basis.T @ (basis @ w)
            T = np.diag(alphas) + np.diag(betas, 1) + np.diag(betas, -1)
            theta, S = np.linalg.eigh(T)
            beta = float(w.norm())
            if beta * abs(S[-1, -1]) <= tol * abs(theta[-1]) or beta <= 1e-12 * max(1.0, abs(theta[-1])):
                break
            betas.append(beta)
            Q.append((w / beta).reshape(x.shape))
        lam = float(theta[-1])
        y = (basis.T @ torch.as_tensor(S[:, -1], dtype=basis.dtype, device=basis.device)).reshape(x.shape)
        y = y / y.norm()
    residual = float((hvp(f, x, y) - lam * y).norm())
    return {"eigenvalue": lam, "iterations": n, "residual": residual, "vector": y, "method": method}


# ---------------------------------------------------------------------------------------------------- the slices
def filter_normalized_direction(model, x: torch.Tensor, seed: int = 0, bias: str = "zero") -> torch.Tensor:
    """A Gaussian direction in the flat parameter space of ``model`` (a :class:`FlatModel`) with every filter
    rescaled to the norm of ``x``'s filter (Li et al. 2018 §4); one-dimensional parameters per ``bias``."""
    if bias not in BIAS:
        raise ValueError(f"bias must be one of {', '.join(BIAS)} (Li et al.'s readings for biases), got {bias!r}")
    gen = torch.Generator(device="cpu").manual_seed(seed)
    d = torch.randn(model.dim, generator=gen, dtype=x.dtype).to(x.device)
    parts = []
    for shape, w, r in zip(model.shapes, x.detach().split(model.numels), d.split(model.numels)):
        if len(shape) <= 1:
            parts.append(torch.zeros_like(w) if bias == "zero" else w.clone())
            continue
        w2, r2 = w.reshape(shape[0], -1), r.reshape(shape[0], -1)
        parts.append((r2 * (w2.norm(dim=1, keepdim=True) / (r2.norm(dim=1, keepdim=True) + 1e-10))).reshape(-1))
    return torch.cat(parts)


def loss_slice(f: Loss, x: torch.Tensor, directions: Sequence[torch.Tensor], span: float = 1.0, points: int = 21,
               chunk: int = 16) -> dict:
    """f along one direction (``loss`` of shape (points,)) or on the plane of two ((points, points), row a, column
    b) through ``x``, at coefficients ``coords`` = linspace(-span, span, points); ``f`` is vmapped over ``chunk``
    points at a time."""
    if len(directions) not in (1, 2):
        raise ValueError(f"give one direction (a 1-D slice) or two (a 2-D slice), got {len(directions)}")
    if int(points) != points or not 2 <= points <= MAX_POINTS:
        raise ValueError(f"points must be an integer from 2 to {MAX_POINTS} (grid points per axis), got {points!r}")
    if not (math.isfinite(span) and span > 0):
        raise ValueError(f"span must be a finite number > 0 (the grid covers [-span, span]), got {span!r}")
    coords = torch.linspace(-span, span, int(points), dtype=x.dtype, device=x.device)
    grids = torch.meshgrid(*([coords] * len(directions)), indexing="ij")
    C = torch.stack([g.reshape(-1) for g in grids], 1)  # (P, k)
    D = torch.stack([d.detach() for d in directions])  # (k, d)
    batched = vmap(f)
    with torch.no_grad():
        loss = torch.cat([batched(x.detach() + c @ D) for c in C.split(int(chunk))])
    return {"coords": coords.cpu().numpy(), "loss": loss.reshape(grids[0].shape).cpu().numpy(),
            "center": float(f(x.detach())), "span": float(span), "dims": len(directions)}


# ------------------------------------------------------------------------------------------------------- a run
def evaluation_batch(evaluator, per_client: int = 128, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``per_client`` training samples of every client (uniform with replacement, seeded), concatenated: their mean
    loss is an unbiased estimate of f = (1/m) sum_i f_i."""
    if int(per_client) != per_client or per_client < 1:
        raise ValueError(f"per_client must be a positive integer (samples per client), got {per_client!r}")
    gen = torch.Generator(device="cpu").manual_seed(seed)
    picks = [ix.cpu()[torch.randint(len(ix), (int(per_client),), generator=gen)] for ix in evaluator.clients]
    ix = torch.cat(picks).to(evaluator.x_train.device)
    return evaluator.x_train[ix], evaluator.y_train[ix]


def batch_loss(model, inputs: torch.Tensor, targets: torch.Tensor, stats: torch.Tensor | None = None) -> Loss:
    """x -> the mean loss of ``model`` (a FlatModel) with parameters x on the batch (eval mode, statistics
    ``stats``)."""
    return lambda x: model.loss_at(x, inputs, targets, stats=stats)


def _average_model(run_dir):
    from dfltheory.empirical.runner import load_run

    engine, evaluator, cfg, _ = load_run(run_dir)
    stats = engine.state.get("running_stats")
    return engine.model, evaluator, cfg, engine.x_bar().detach(), None if stats is None else stats.mean(0)


def run_sharpness(run_dir, per_client: int = 128, iters: int = 50, tol: float = 1e-3, seed: int = 0) -> dict:
    """lambda_max of f's Hessian at the run's x_bar (its checkpoint) on :func:`evaluation_batch`, and f there."""
    model, evaluator, cfg, x, stats = _average_model(run_dir)
    f = batch_loss(model, *evaluation_batch(evaluator, per_client, seed), stats)
    top = top_eigenvalue(f, x, iters=iters, tol=tol, seed=seed)
    return {"run": str(run_dir), "algo": cfg["algo"], "seed": cfg.get("seed", 0), "lambda_max": top["eigenvalue"],
            "residual": top["residual"], "hvps": top["iterations"], "loss": float(f(x)),
            "batch": int(per_client) * len(evaluator.clients)}


def run_landscape(run_dir, dims: int = 2, points: int = 21, span: float = 1.0, per_client: int = 128,
                  seed: int = 0, bias: str = "zero") -> dict:
    """The filter-normalised slice (:func:`loss_slice`) of the run's f at x_bar, directions drawn with seeds
    ``seed``, ``seed + 1``; with the run's ``algo`` and ``dataset``."""
    if dims not in (1, 2):
        raise ValueError(f"dims must be 1 or 2 (a line or a plane), got {dims!r}")
    model, evaluator, cfg, x, stats = _average_model(run_dir)
    f = batch_loss(model, *evaluation_batch(evaluator, per_client, seed), stats)
    directions = [filter_normalized_direction(model, x, seed + j, bias) for j in range(dims)]
    return {**loss_slice(f, x, directions, span, points), "algo": cfg["algo"], "dataset": cfg["dataset"],
            "run": str(run_dir), "bias": bias}


# ---------------------------------------------------------------------------------------------- the comparison
def permutation_test(a: Sequence[float], b: Sequence[float], max_exact: int = 200_000, seed: int = 0) -> dict:
    """One-sided test of 'mean(a) > mean(b)': the share of the relabellings of the pooled values (all of them when
    there are at most ``max_exact``, else that many at random) whose difference of means is at least the observed
    one (the observed labelling counts, so p >= 1 / C(n_a + n_b, n_a))."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    pooled, na = np.concatenate([a, b]), len(a)
    observed = a.mean() - b.mean()
    total = math.comb(len(pooled), na)
    if total <= max_exact:
        splits = (list(c) for c in itertools.combinations(range(len(pooled)), na))
    else:
        rng = np.random.default_rng(seed)
        splits = (rng.permutation(len(pooled))[:na] for _ in range(max_exact))
    hits = count = 0
    for ix in splits:
        mask = np.zeros(len(pooled), bool)
        mask[ix] = True
        hits += pooled[mask].mean() - pooled[~mask].mean() >= observed - 1e-12 * max(1.0, abs(observed))
        count += 1
    return {"difference": float(observed), "p_one_sided": hits / count, "relabellings": count,
            "exact": total <= max_exact}


def sign_flip_test(a: Sequence[float], b: Sequence[float], max_exact: int = 16, samples: int = 200_000,
                   seed: int = 0) -> dict:
    """One-sided paired test of 'mean(a - b) > 0' where seed s of both arms ran the same problem: the share of the
    2^n sign patterns of the differences (all when n <= ``max_exact``, else ``samples`` at random) whose mean is at
    least the observed one (so p >= 2^-n: 5 seeds reach 1/32)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a paired test needs two arms of equal length >= 2, got {len(a)} and {len(b)}")
    observed = d.mean()
    if len(d) <= max_exact:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(d))))
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(samples, len(d)))
    means = (signs * d).mean(1)
    hits = int((means >= observed - 1e-12 * max(1.0, abs(observed))).sum())
    return {"difference": float(observed), "p_one_sided": hits / len(signs), "patterns": len(signs),
            "exact": len(d) <= max_exact, "positive": int((d > 0).sum()), "pairs": len(d)}


def compare_sharpness(base: dict, out, seeds: Sequence[int] = (0, 1, 2), arms: Sequence[str] = ("dfedavg", "fedavg"),
                      per_client: int = 128, iters: int = 50, tol: float = 1e-3) -> dict:
    """Train every arm (``base`` with ``algo`` = arm, ``seed`` = s; into ``out/<arm>-seed<s>``, a finished run is
    reused) and measure :func:`run_sharpness` at each run's x_bar. The claim 'arms[0] sharper than arms[1]' is
    tested on the per-seed lambda_max. Seed s of both arms has the same data, partition and initial model, so the
    deciding tests are paired: ``paired`` (t-test, two-sided, :mod:`dfltheory.verify.stats`) and ``sign_flip``
    (exact one-sided, :func:`sign_flip_test`); ``agrees`` when the mean difference is > 0 and both one-sided p
    (the paired t's p / 2) are below ``ALPHA``. The unpaired ``welch`` and ``permutation`` (:func:`permutation_test`)
    are reported beside them: they ignore the pairing, and the spread between problems swamps them."""
    from dfltheory.empirical import rundir, runner
    from dfltheory.verify.stats import ALPHA, paired, welch

    if len(arms) != 2:
        raise ValueError(f"give two arms (the one claimed sharper first), got {list(arms)}")
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError(f"give at least two distinct seeds, got {list(seeds)}")
    out = Path(out)
    values = {}
    for arm in arms:
        values[arm] = []
        for s in seeds:
            run = out / f"{arm}-seed{s}"
            cfg = {**base, "algo": arm, "seed": int(s), "out": str(run), "progress": False}
            if not rundir.complete(run, int(cfg.get("rounds", 0))):
                runner.run(cfg)
            values[arm].append(run_sharpness(run, per_client, iters, tol))
    sharp = {arm: [v["lambda_max"] for v in values[arm]] for arm in arms}
    a, b = sharp[arms[0]], sharp[arms[1]]
    test_p, test_w = paired(a, b), welch(a, b)
    test_perm, flips = permutation_test(a, b), sign_flip_test(a, b)
    agrees = test_p["difference"] > 0 and flips["p_one_sided"] < ALPHA and test_p["p"] / 2 < ALPHA
    return {"claim": f"{arms[0]} sharper than {arms[1]} (lambda_max of the Hessian of f at x_bar)",
            "seeds": list(seeds), "runs": values, "lambda_max": sharp, "paired": test_p, "sign_flip": flips,
            "welch": test_w, "permutation": test_perm, "agrees": bool(agrees)}
