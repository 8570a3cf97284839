"""The papers' assumption constants estimated from a user's own run: L, sigma_l, sigma_g, B, f(x^0) - f* and each
paper's own forms (DFedSAM's beta, DFedCata's (G, B), DFedPGP's block constants). Cards: ``../shared/spec/*.md`` §4.

Every estimate is **local and trajectory-based**: the largest value of the assumption's quantity over a few points
of the run, hence a lower estimate of the constant the assumption needs (a supremum over every x), never a
certified global constant. A run keeps one checkpoint (the last), so the points are drawn from
{x^0, the final client models, their mean x_bar, points on the segments from x^0 to them}
(:func:`run_points`); x^0 is the model's initialisation by the config's seed (``runner.build``).

A point is an (m, d) matrix whose row i is where client i's f_i is evaluated: every row equal (all papers but
DFedPGP, whose assumptions hold "for all x"), or for DFedPGP the same shared part u on every row and each client's
own personal part v_i (its objective is F_i(u, v_i), card dfedpgp §4). At each point, for every client i
(vmapped over clients, in chunks of clients and samples; float64 for small problems, else float32):

* L (the L-smoothness assumption): max_i ||H_i(x)||, the largest |eigenvalue| of the Hessian of f_i, by Lanczos on
  Hessian-vector products (jvp of grad; :func:`lanczos_norm`). A Ritz value lies in [lambda_min, lambda_max] (up to
  rounding), so it never exceeds the true ||H_i(x)||, and equals it once the steps reach the rank.
* L_u, L_v (DFedPGP A2): the same on the blocks H_uu, H_vv (u the shared coordinates, v the personal ones; the
  engine's ``shared`` mask, ``Algorithm.split``). L_uv, L_vu: ||H_uv|| = ||H_vu|| (H is symmetric, so the two are
  equal at every point), by Lanczos on [[0, H_uv], [H_vu, 0]] whose extreme eigenvalues are +-||H_uv||.
* sigma_l^2 (bounded variance): E||g_i(x; batch) - grad f_i(x)||^2 = V_i(x) / b exactly, with
  V_i(x) = (1/n_i) sum_j ||grad l_j(x) - grad f_i(x)||^2 over all of client i's samples (exact, not sampled): the
  engine draws b samples with replacement (``ClientSampler``); 0 for full local batches. sigma_u^2, sigma_v^2
  (DFedPGP A3): the same on the u and v coordinates.
* sigma_g^2, mean form (DFedSAM A2): (1/m) sum_i ||grad f_i(x) - grad f(x)||^2, grad f = (1/m) sum_i grad f_i.
  Per-client form (DFedSGPSM A4, whose proof uses it, seed 000 L335; DFedADMM A3): max_i ||grad f_i - grad f||^2.
  DFedPGP A4: max_i ||grad_u F_i(u, v_i) - grad_u F(u, V)||^2 (per client, u-gradient only). ``sigma_g`` is the
  paper's form (:func:`sigma_g_form`); both forms are reported as diagnostics.
* beta (DFedSAM Definition 2, ``beta_h``): max_i ||grad f_i(x) - grad f(x)||.
* G of DFedCata A3 (``G_het``): (1/m) sum_i ||grad f_i||^2 <= G^2 + B^2 ||grad f||^2, read at B = 1 (``B_het``,
  chosen; the card fixes no B). Since (1/m) sum_i ||grad f_i||^2 = sigma_g^2(x) + ||grad f(x)||^2, the least G valid
  at every point is then the mean-form sigma_g; B = 1 is the smallest B for which G need not grow with ||grad f||
  ((1/m) sum_i ||grad f_i||^2 >= ||grad f||^2 always). :func:`g_het` gives G at any other B.
* B (bounded gradient): max_i ||grad f_i(x)||.
* f(x^0) - f* (``f0_minus_fstar``): f(x^0) from metrics.jsonl's round 0 (computed if absent) minus f*: f* = 0 by
  default (the losses, cross-entropy, half squared error and Cauchy, are >= 0: an upper estimate of the gap), the user's
  value, or ``'best'``, the best train_loss of the run (a lower estimate of the gap).

Each :class:`Estimate` carries the value (max over points), its spread over points (min / median / max of the
per-point values) and the number of points. For ``f0_minus_fstar`` the spread is the interval the gap lies in:
[f(x^0) - best loss of the run, f(x^0) - 0].
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from torch.func import grad, jvp, vmap

from dfltheory.empirical import budget
from dfltheory.empirical.runner import check_threads, load_run
from dfltheory.plugins import Registry



def _from_plans() -> None:
    """:data:`FAMILY` and :data:`SYMBOLS` from the verification plans (``run_constants``, ``runs_read_as``)."""
    from dfltheory.verify.plans import plans

    for paper, plan in plans().items():
        if plan.run_constants:
            dict.__setitem__(SYMBOLS, paper, tuple(plan.run_constants))
            for algo in plan.runs_read_as:
                dict.__setitem__(FAMILY, algo, paper)
    FAMILY.loaded()
    SYMBOLS.loaded()


#: algorithm -> paper whose assumptions its run is read against (its plan's ``runs_read_as``); read when first used
FAMILY: dict[str, str] = Registry("algorithm's assumption family", load=_from_plans)
#: paper -> the catalog symbols its theorems use that :meth:`RunConstants.values` returns (its plan's
#: ``run_constants``)
SYMBOLS: dict[str, tuple[str, ...]] = Registry("paper's run constants", load=_from_plans)
#: an algorithm no plan names is read as DFedAvg's runs are (the generic assumptions)
GENERIC = "dfedavg"


def paper_of(algo: str | None) -> str:
    """The paper whose assumptions a run of ``algo`` is read against."""
    return FAMILY.get(algo, FAMILY[GENERIC])


def sigma_g_form(paper: str) -> str:
    """The form of sigma_g a run's estimate takes for ``paper`` (module table): its catalog form, the per-client one
    on the shared block for a personal form, the mean one where the paper states none."""
    from dfltheory.bounds.catalog import sigma_g_form as declared

    form = declared(paper)
    return {"personal": "client", None: "mean"}.get(form, form)
LOCAL = "a local, trajectory-based estimate (max over the points), not a global constant"
MEMORY = 2**25  # elements a chunk of clients may hold (per-sample gradients, Lanczos vectors): 128 MB in float32
EXACT = 2**22  # parameters x training samples up to which the estimates are computed in float64


@dataclass(frozen=True)
class Estimate:
    """One constant: ``value`` (the max over points), its spread ``low``/``mid``/``high`` (min / median / max over
    points), the number of ``points``, ``what`` it is in one line and the ``caveat`` (what kind of estimate)."""

    symbol: str
    value: float
    low: float
    mid: float
    high: float
    points: int
    what: str
    caveat: str = LOCAL


@dataclass(frozen=True)
class PointMeasure:
    """What is measured at one point: per-client (m,) tensors in ``per_client`` ('hess' = ||H_i||, 'var1' = the
    single-sample gradient variance V_i; DFedPGP: 'hess_uu', 'hess_vv', 'hess_uv', 'var1', 'var1_u', 'var1_v') and
    the clients' full gradients ``grads`` (m, d), row i = grad f_i at row i of the point."""

    label: str
    per_client: dict
    grads: torch.Tensor


# ----------------------------------------------------------------------------------------------- per-client maths
class ClientLosses:
    """The clients' objectives f_i(x) = (1/n_i) sum_{j in client i} l(x; xi_j) as functions batched over clients.

    Client data are padded to the largest client (weight 1/n_i on real samples, 0 on padding) so that one vmap
    runs all clients of a chunk; samples are summed in chunks of ``sample_chunk``. ``dtype`` None: float64 where
    it is cheap (parameters x training samples <= ``EXACT``, e.g. the synthetic problems), float32 otherwise.
    """

    def __init__(self, model, x_train, y_train, client_indices, dtype=None, sample_chunk: int = 256):
        if getattr(model, "n_stats", 0):
            raise ValueError("the model keeps running statistics (BatchNorm), and the constants are estimated from "
                             "losses at points between the run's models (x0, the client models, their mean), which "
                             "have no statistics of their own; estimate the constants on a run of a model without "
                             "them (GroupNorm, as the papers' models)")
        if dtype is None:
            dtype = torch.float64 if model.dim * len(x_train) <= EXACT else torch.float32
        self.model, self.dtype, self.sample_chunk = model, dtype, sample_chunk
        self.x = x_train.to(dtype) if x_train.is_floating_point() else x_train
        self.y = y_train.to(dtype) if y_train.is_floating_point() else y_train
        sizes = [len(ix) for ix in client_indices]
        self.m, n_max = len(sizes), max(sizes)
        self.idx = torch.zeros(self.m, n_max, dtype=torch.long, device=self.x.device)
        self.w = torch.zeros(self.m, n_max, dtype=dtype, device=self.x.device)
        for i, ix in enumerate(client_indices):
            self.idx[i, : sizes[i]] = torch.as_tensor(ix, dtype=torch.long).to(self.x.device)
            self.w[i, : sizes[i]] = 1.0 / sizes[i]

    def _sample_loss(self, x, a, b):
        return self.model.loss_at(x, a[None], b[None])

    def _weighted(self, x, a, b, w):
        out = self.model.forward(x, a)  # one batched forward; the loss per sample
        return (vmap(lambda o, t: self.model.loss(o[None], t[None]))(out, b) * w).sum()

    def _chunks(self, rows, step):
        """(k, inputs, targets, weights) in chunks of ``step`` samples: k indexes the clients of ``rows`` that have
        samples in the chunk (padding-only rows are skipped)."""
        for s in range(0, self.idx.shape[1], step):
            w = self.w[rows, s : s + step]
            k = torch.nonzero((w > 0).any(1)).flatten()
            if len(k):
                ix = self.idx[rows[k], s : s + step]
                yield k, self.x[ix], self.y[ix], w[k]

    def grad(self, X, rows) -> torch.Tensor:
        """grad f_i(X[k]) for i = rows[k]: (c, d)."""
        out = torch.zeros_like(X)
        for k, a, b, w in self._chunks(rows, self.sample_chunk):
            out.index_add_(0, k, vmap(grad(self._weighted))(X[k], a, b, w))
        return out

    def hvp(self, X, V, rows) -> torch.Tensor:
        """H_i(X[k]) V[k] for i = rows[k] (forward-over-reverse: jvp of grad)."""
        def one(x, v, a, b, w):
            return jvp(lambda y: grad(self._weighted)(y, a, b, w), (x,), (v,))[1]

        out = torch.zeros_like(X)
        with warnings.catch_warnings():  # torch's jvp uses torch.jit.script internally, which warns (torch 2.14)
            warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*deprecated", category=FutureWarning)
            for k, a, b, w in self._chunks(rows, self.sample_chunk):
                out.index_add_(0, k, vmap(one)(X[k], V[k], a, b, w))
        return out

    def variances(self, X, rows, mean_grads, masks) -> list[torch.Tensor]:
        """(1/n_i) sum_j ||(grad l_j(X[k]) - grad f_i(X[k]))[mask]||^2, i = rows[k], for each mask (None: all
        coordinates), from the per-sample gradients (vmap of grad, chunked to bound memory): each (c,)."""
        per_sample = vmap(grad(self._sample_loss), in_dims=(None, 0, 0))
        ones = torch.ones(X.shape[1], dtype=X.dtype, device=X.device)
        M = torch.stack([ones if mask is None else mask.to(X.dtype) for mask in masks], 1)  # (d, masks)
        step = max(1, min(self.sample_chunk, MEMORY // max(1, len(rows) * X.shape[1])))
        out = torch.zeros(len(rows), len(masks), dtype=torch.float64, device=X.device)
        for k, a, b, w in self._chunks(rows, step):
            D = (vmap(per_sample)(X[k], a, b) - mean_grads[k, None, :]).square_()  # (c, s, d)
            out.index_add_(0, k, ((D @ M) * w[..., None]).sum(1).double())
        return list(out.T)


def lanczos_norm(op, V0: torch.Tensor, iters: int) -> torch.Tensor:
    """max |Ritz value| of the symmetric operator ``op`` (row-wise: op maps (c, d) to (c, d), row k its own
    matrix) after ``iters`` Lanczos steps from the rows of V0. Plain three-term recurrence (local
    re-orthogonalisation only): memory and time O(c d) per step. Lost orthogonality makes copies of converged
    Ritz values, never values outside the spectrum beyond rounding (Paige 1980), so the result does not exceed the
    spectral norm (up to rounding) and equals it once the steps reach the rank (exact arithmetic). A row whose
    Krylov space is exhausted (beta ~ 0) stops there."""
    Q = V0 / V0.norm(dim=1, keepdim=True).clamp_min(1e-300)
    alphas, betas = [], []
    q_prev, beta_prev = torch.zeros_like(Q), torch.zeros(len(Q), dtype=Q.dtype, device=Q.device)
    scale = torch.zeros_like(beta_prev)
    for _ in range(iters):
        W = op(Q)
        alpha = (W * Q).sum(1)
        W = W - alpha[:, None] * Q - beta_prev[:, None] * q_prev
        W = W - (W * Q).sum(1, keepdim=True) * Q - (W * q_prev).sum(1, keepdim=True) * q_prev  # local, once more
        beta = W.norm(dim=1)
        scale = torch.maximum(scale, alpha.abs() + beta)
        alive = beta > 1e-10 * scale
        beta = torch.where(alive, beta, torch.zeros_like(beta))
        alphas.append(alpha)
        betas.append(beta)
        q_prev, Q = Q, torch.where(alive[:, None], W / beta.clamp_min(1e-300)[:, None], torch.zeros_like(W))
        beta_prev = beta
    a, b = torch.stack(alphas, 1), torch.stack(betas, 1)[:, :-1]
    T = torch.diag_embed(a) + torch.diag_embed(b, 1) + torch.diag_embed(b, -1)
    return torch.linalg.eigvalsh(T).abs().amax(1)


#: from this many points on, ``constants`` shows its progress (on stderr)
PROGRESS_POINTS = 50


def measure_points(losses: ClientLosses, points, *, shared: torch.Tensor | None = None, iters: int = 20,
                   seed: int = 0, client_chunk: int | None = None) -> list[PointMeasure]:
    """Per-client Hessian norms, single-sample variances and gradients at every ``(label, X)`` of ``points`` (X:
    (m, d), row i client i's argument). With ``shared`` (DFedPGP's (d,) mask of u) the Hessian is measured by
    blocks only (H_uu, H_vv, H_uv; the whole H is no constant of DFedPGP's and would cost a fourth Lanczos run)."""
    if iters < 1:
        raise ValueError(f"iters (Lanczos steps) must be >= 1, got {iters}")
    gen = torch.Generator().manual_seed(seed)
    m = losses.m
    out = []
    from tqdm import tqdm

    for label, X in tqdm(points, desc="points", unit="point", leave=False, disable=len(points) < PROGRESS_POINTS):
        X = X.to(losses.dtype)
        chunk = client_chunk or max(1, min(m, MEMORY // max(1, 8 * X.shape[1])))
        parts: dict[str, list[torch.Tensor]] = {}
        for start in range(0, m, chunk):
            rows = torch.arange(start, min(m, start + chunk), device=X.device)
            Xc = X[rows]
            V0 = torch.randn(Xc.shape, generator=gen, dtype=X.dtype).to(X.device)

            def H(V, Xc=Xc, rows=rows):
                return losses.hvp(Xc, V, rows)

            g = losses.grad(Xc, rows)
            found = {"grads": g}
            if shared is None:
                found["hess"] = lanczos_norm(H, V0, iters)
                found["var1"], = losses.variances(Xc, rows, g, [None])
            else:
                u, v = shared.to(X.dtype), (~shared).to(X.dtype)
                found["hess_uu"] = lanczos_norm(lambda V: u * H(u * V), V0 * u, iters)
                found["hess_vv"] = lanczos_norm(lambda V: v * H(v * V), V0 * v, iters)
                found["hess_uv"] = lanczos_norm(lambda V: u * H(v * V) + v * H(u * V), V0, iters)
                found["var1"], found["var1_u"], found["var1_v"] = losses.variances(Xc, rows, g,
                                                                                   [None, shared, ~shared])
            for key, value in found.items():
                parts.setdefault(key, []).append(value)
        cat = {k: torch.cat(v) for k, v in parts.items()}
        bad = sorted(k for k, v in cat.items() if not bool(torch.isfinite(v).all()))
        if bad:
            raise ValueError(f"non-finite {', '.join(bad)} at the point {label!r}: the loss overflows there (a "
                             "diverged run, or a segment through a region where it blows up); retrain with a smaller "
                             "learning rate, or measure at fewer points (--points)")
        grads = cat.pop("grads")
        out.append(PointMeasure(label, cat, grads))
    return out


def heterogeneity(grads: torch.Tensor, shared: torch.Tensor | None = None) -> torch.Tensor:
    """||grad f_i(x) - grad f(x)||^2 per client (DFedPGP: on the u coordinates), grad f the mean of the rows."""
    G = grads if shared is None else grads[:, shared]
    return ((G - G.mean(0)) ** 2).sum(1)


# ----------------------------------------------------------------------------------------------- the points of a run
def _check_points(n) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"--points must be an integer >= 1, got {n!r}")


def run_points(x0: torch.Tensor, xbar: torch.Tensor, Z: torch.Tensor, n: int, seed: int = 0,
               shared: torch.Tensor | None = None) -> list[tuple[str, torch.Tensor]]:
    """``n`` points (label, (m, d)) of a run: x^0, then the ends x_bar and the client models (in an order drawn by
    ``seed``) each followed by the midpoint of its segment from x^0, then points at 1/4, 3/4, 1/8, ... of the
    segments. With ``shared`` (DFedPGP) a point sets the shared part u on every row and keeps each client's own
    final personal part v_i (x^0 keeps v^0)."""
    _check_points(n)
    m = Z.shape[0]

    def full(u):
        return u.expand(m, -1).clone() if shared is None else torch.where(shared, u, Z)

    X0 = x0.expand(m, -1).clone()
    order = torch.randperm(m, generator=torch.Generator().manual_seed(seed)).tolist()
    ends = [("x_bar", full(xbar))] + [(f"client {i}", full(Z[i])) for i in order]
    pts = [("x0", X0)]
    for label, E in ends:
        pts += [(label, E), (f"1/2 of x0 -> {label}", 0.5 * (X0 + E))]
    k = 2
    while len(pts) < n:
        k *= 2
        for j in range(1, k, 2):
            pts += [(f"{j}/{k} of x0 -> {label}", X0 + j / k * (E - X0)) for label, E in ends]
    return pts[:n]


# ----------------------------------------------------------------------------------------------- a run's constants
@dataclass
class RunConstants:
    """The estimated constants of one run (see the module docstring). ``values()`` gives the catalog symbols the
    run's paper uses; ``estimates`` holds those and the diagnostics (both forms of sigma_g, B and sigma_l of DFedPGP)."""

    run_dir: str
    algo: str
    paper: str
    batch_size: int | None
    points: tuple[str, ...]
    estimates: dict[str, Estimate]
    notes: tuple[str, ...]
    seconds: float

    def values(self) -> dict[str, float]:
        """{symbol: value} for the catalog symbols of the run's paper (dfltheory.bounds)."""
        return {s: self.estimates[s].value for s in SYMBOLS[self.paper] if s in self.estimates}

    def to_dict(self) -> dict:
        return {"run_dir": self.run_dir, "algo": self.algo, "paper": self.paper, "batch_size": self.batch_size,
                "points": list(self.points), "values": self.values(),
                "estimates": {k: asdict(e) for k, e in self.estimates.items()}, "notes": list(self.notes),
                "seconds": self.seconds}

    def text(self) -> str:
        head = [f"constants of {self.run_dir} ({self.algo}; read against {self.paper}'s assumptions, card §4)",
                f"points ({len(self.points)}): {', '.join(self.points)}", ""]
        rows = [("symbol", "value", "spread over points (min / median / max)", "points", "what it is")]
        for s in list(SYMBOLS[self.paper]) + sorted(set(self.estimates) - set(SYMBOLS[self.paper])):
            if s not in self.estimates:
                continue
            e = self.estimates[s]
            spread = "-" if e.points == 0 else f"{e.low:.4g} / {e.mid:.4g} / {e.high:.4g}"
            rows.append((s + ("" if s in SYMBOLS[self.paper] else " *"), f"{e.value:.4g}", spread, str(e.points),
                         e.what + ("" if e.caveat == LOCAL else f" ({e.caveat})")))
        widths = [max(len(r[k]) for r in rows) for k in range(4)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 10)
        tail = ["", "* diagnostic: not a symbol of this paper's theorems",
                f"unless stated otherwise in its row, each value is {LOCAL}"] + [f"note: {n}" for n in self.notes]
        return "\n".join(head + lines + tail + [f"({self.seconds:.1f} s)"])


def over_points(symbol: str, per_point, what: str, caveat: str = LOCAL) -> Estimate:
    """The estimate of the per-point values ``per_point``: their max, with min / median / max as the spread."""
    t = [float(v) for v in per_point]
    return Estimate(symbol, max(t), min(t), statistics.median(t), max(t), len(t), what, caveat)


def g_het(measures: list[PointMeasure], B: float) -> list[float]:
    """Per point, the least G^2 of DFedCata's A3 at multiplier B there: (1/m) sum_i ||grad f_i||^2 - B^2 ||grad f||^2
    (at least 0)."""
    out = []
    for p in measures:
        g = p.grads.double()
        out.append(max(0.0, float((g**2).sum(1).mean() - B**2 * (g.mean(0) ** 2).sum())))
    return out


def summarize(measures: list[PointMeasure], *, batch_size: int | None, paper: str,
              shared: torch.Tensor | None = None, B_het: float = 1.0) -> dict[str, Estimate]:
    """The estimates (module table) from the per-point measures; sigma's are standard deviations (as the catalog's
    sigma_l, sigma_g), sigma_l at the run's batch size b (V_i / b; 0 for full local batches); DFedCata's G at the
    multiplier ``B_het`` (default 1, module table)."""
    scale = 0.0 if batch_size is None else 1.0 / batch_size
    batch = "full local batches: no sampling noise" if batch_size is None else \
        f"batch size b = {batch_size}, drawn with replacement"
    est = {}

    def add(symbol, key, what, reduce=lambda t: t.max()):
        est[symbol] = over_points(symbol, [reduce(key(p)) for p in measures], what)

    def sigma(name):
        return lambda p: (p.per_client[name].double() * scale).sqrt()

    if shared is None:
        add("L", lambda p: p.per_client["hess"], "max_i ||Hessian of f_i|| (Lanczos on Hessian-vector products)")
    else:
        add("L_u", lambda p: p.per_client["hess_uu"], "max_i ||H_uu||, u the shared coordinates (Lanczos)")
        add("L_v", lambda p: p.per_client["hess_vv"], "max_i ||H_vv||, v the personal coordinates (Lanczos)")
        for s in ("L_uv", "L_vu"):
            add(s, lambda p: p.per_client["hess_uv"], "max_i ||H_uv|| = ||H_vu|| (H is symmetric; Lanczos)")
        add("sigma_u", sigma("var1_u"), f"sqrt(max_i E||g_u - grad_u F_i||^2), exact over the client's data, {batch}")
        add("sigma_v", sigma("var1_v"), f"sqrt(max_i E||g_v - grad_v F_i||^2), exact over the client's data, {batch}")
    add("sigma_l", sigma("var1"),
        f"sqrt(max_i E||g_i(x; batch) - grad f_i(x)||^2), exact over the client's data, {batch}")
    add("B", lambda p: p.grads.norm(dim=1), "max_i ||grad f_i(x)||")
    on = " on u" if shared is not None else ""
    add("sigma_g_mean", lambda p: heterogeneity(p.grads, shared).mean().sqrt(),
        f"sqrt((1/m) sum_i ||grad f_i - grad f||^2){on}: the mean form", reduce=lambda t: t)
    add("sigma_g_client", lambda p: heterogeneity(p.grads, shared).sqrt(),
        f"sqrt(max_i ||grad f_i - grad f||^2){on}: the per-client form")
    src = est[f"sigma_g_{sigma_g_form(paper)}"]
    formula, form = src.what.split(": the ")
    est["sigma_g"] = replace(src, symbol="sigma_g", what=f"{paper}'s {form.replace(' form', '')} form: {formula}")
    if "beta_h" in SYMBOLS.get(paper, ()):
        est["beta_h"] = replace(est["sigma_g_client"], symbol="beta_h",
                                what="Definition 2's beta: max_i ||grad f_i - grad f||")
    if "G_het" in SYMBOLS.get(paper, ()):
        est["G_het"] = over_points("G_het", [math.sqrt(v) for v in g_het(measures, B_het)],
                                 f"G of A3 at B = {B_het:g}: sqrt(max (1/m) sum_i ||grad f_i||^2 - B^2 ||grad f||^2)")
        est["B_het"] = Estimate("B_het", float(B_het), float(B_het), float(B_het), float(B_het), 0,
                                "B of A3", "chosen, not estimated (module docstring)")
    return est


def gap(records, f0_computed, f_star) -> Estimate:
    """f(x^0) - f* (module table): f(x^0) from the round-0 record of ``records`` (else ``f0_computed()``), f* from
    ``f_star`` (None: 0, a number, or 'best'); spread [f(x^0) - best loss of the run, f(x^0) - 0]."""
    first = next((r for r in records if r.get("round") == 0 and r.get("train_loss") is not None), None)
    f0 = float(first["train_loss"]) if first else f0_computed()
    losses = [float(r["train_loss"]) for r in records if isinstance(r.get("train_loss"), (int, float))]
    best = min(losses + [f0])
    src = "metrics.jsonl round 0" if first else "computed at x0"
    if f_star is None:
        value, how = f0, "f* = 0, below every loss of the package: an upper estimate of the gap"
    elif f_star == "best":
        value, how = f0 - best, f"f* = the best train_loss of the run, {best:.4g}: a lower estimate of the gap"
    else:
        value, how = f0 - f_star, f"f* = {f_star:g} as given"
        if value < 0:
            raise ValueError(f"--f-star {f_star:g} is above f(x0) = {f0:.6g}: f* is a lower bound of the loss; give "
                             "a value <= f(x0), 'best', or none (f* >= 0)")
    return Estimate("f0_minus_fstar", value, f0 - best, value, f0, len(losses),
                    f"f(x0) = {f0:.4g} ({src}) minus f*; spread: [f(x0) - best loss of the run, f(x0) - 0]", how)


def _parse_f_star(f_star):
    if f_star is None or f_star == "best":
        return f_star
    try:
        value = float(f_star)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise ValueError(f"--f-star must be a finite number (a lower bound of the loss) or 'best', got {f_star!r}")
    return value


def estimate_run(run_dir, points: int = 6, seed: int = 0, f_star=None, iters: int = 20) -> RunConstants:
    """Estimate the constants of the run in ``run_dir`` at ``points`` points of it (:func:`run_points`), with
    ``iters`` Lanczos steps per Hessian; ``f_star``: None (f* >= 0), a number, or 'best' (module docstring)."""
    from dfltheory.empirical.rundir import read_records

    start = time.perf_counter()
    f_star = _parse_f_star(f_star)
    from dfltheory.empirical.runner import SEED_MAX

    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ValueError(f"--seed must be an integer in [0, {SEED_MAX}] (2^32 - 1, as a run's --seed), got {seed!r}")
    if isinstance(iters, bool) or not isinstance(iters, int) or iters < 1:
        raise ValueError(f"iters (Lanczos steps) must be an integer >= 1, got {iters!r}")
    _check_points(points)  # before the work
    engine, evaluator, cfg, x0 = load_run(run_dir)
    mfile = Path(run_dir) / "metrics.jsonl"
    records = read_records(mfile) if mfile.exists() else []
    paper = paper_of(engine.algo.name)
    shared = engine.shared
    Z = engine.client_models()
    budget.require(points * Z.numel() * Z.element_size(), f"--points {points} (each {Z.shape[0]} client models x "
                   f"{Z.shape[1]:,} parameters)", "measure at fewer points (--points)", Z.device)
    pts = run_points(x0, engine.x_bar(), Z, points, seed, shared)
    losses = ClientLosses(engine.model, engine.x_train, engine.y_train, engine.data.client_indices)
    measures = measure_points(losses, pts, shared=shared, iters=iters, seed=seed)
    est = summarize(measures, batch_size=engine.sampler.batch_size, paper=paper, shared=shared)
    est["f0_minus_fstar"] = gap(records, lambda: evaluator.objective(x0)[0], f_star)
    notes = (
        "every estimate is the max over these points: a lower estimate of the sup over all x that the assumption "
        "needs, not a certified constant",
        f"only the last checkpoint (round {engine.t}) is kept, so the points are x0 (the initialisation by the "
        "config's seed), the final client models, their mean x_bar and points on the segments from x0",
    ) + (("DFedPGP: a point sets the shared u on every row and keeps each client's own v_i",) if shared is not None
         else ()) + (("push-sum: the client models are the de-biased z_i = x_i / w_i",)
                     if "ps_weight" in engine.state else ())
    return RunConstants(str(run_dir), engine.algo.name, paper, engine.sampler.batch_size,
                        tuple(label for label, _ in pts), est, notes, time.perf_counter() - start)


# ----------------------------------------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``dfltheory constants RUN_DIR``."""
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by `dfltheory train --out`")
    parser.add_argument("--json", action="store_true", help="print the estimates as JSON")
    parser.add_argument("--points", type=int, default=6,
                        help="number of points of the run the constants are measured at (default 6)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the clients chosen as points and of the "
                        "Lanczos start vectors")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="torch CPU threads (default: torch's); on shared cores use 1, as for train")
    parser.add_argument("--f-star", default=None, metavar="VALUE",
                        help="a lower bound of the loss (default 0: the loss is nonnegative), or 'best' for the "
                        "run's best train_loss")


def command(args) -> int:
    """``dfltheory constants``: print the table (or JSON) of :func:`estimate_run`; 0 on success."""
    threads = getattr(args, "threads", None)
    if threads is not None:
        check_threads(threads)
        torch.set_num_threads(threads)
    result = estimate_run(args.run_dir, points=args.points, seed=args.seed, f_star=args.f_star)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.text())
    return 0
