"""Seconds per round of DFedCata: the engine against the authors' public code and a compute ceiling, in one run.

Same problem, same number of SGD steps (K per client and round, batch b), ring topology, one torch thread:

* ``authors``: their ``Server.train`` (``../shared/reference/dfedcata-official``, through
  :mod:`dfltheory.testing.official`, which replaces their data loading by one sampled minibatch per local epoch:
  ``local_epochs = K``); the seconds are their own per-round clock (``Server.time``). Skipped where absent;
* ``engine``: the vectorized engine (``vmap(grad)`` over the m clients, gossip as a sparse product with W);
* ``engine --compile``: the same with each local step one ``torch.compile``d function (``Engine(compile=True)``; the
  warm-up round compiles);
* ``engine --sequential``: the engine's code mode, the authors' Gauss-Seidel schedule client by client;
* ``ceiling``: the round's whole arithmetic with no engine around it: K steps of forward/backward with their SGD
  updates, each followed by DFedCata's vector operations on an (m, d) state (anchor pull, per-client clip, weight
  decay), and the round's gossip with its extrapolation (``cata_arithmetic``), the fastest of: the module's plain
  forward/backward over all m*b samples at once (shared weights: the same FLOPs, one large GEMM or convolution per
  layer); the same over m batches of b, one after the other (what fits the caches when the activations are large);
  for the MLP a hand-written batched matmul chain (``bmm`` forward and backward over the m clients' own weights,
  checked against ``vmap(grad)``), each with the vector operations eager or ``torch.compile``d. The ``reference:`` rows are the same without DFedCata's vector operations and
  the gossip (forward/backward FLOPs and SGD updates only), printed beside.

Cases: ``mlp-20`` / ``mlp-100`` (digits, MLP 64-128-10, b = 16), ``lenet-20`` (the code's LeNet on CIFAR-shaped fake
data 3x32x32, b = 16), and with ``--device cuda`` ``resnet18-100`` and ``resnet18-imagenet-100`` (CIFAR-10-shaped fake
data, the engine's CIFAR ResNet-18 and its copy of the DFedCata code's ResNet-18, ImageNet stem, both with GroupNorm,
for both sides: the code's own class loads pretrained weights; m = 100, b = 32, client chunk 25), which say so and
stop where no CUDA device exists. Every time is the fastest of ``--rounds`` rounds after a warm-up round (the machine
is shared: the least disturbed round), each ratio between times of the same run. ``--breakdown`` splits the engine's
round (mean seconds in plan, gradients, the rest of the local steps, the communication rule) for dfedavg, dfedsam
(SAM's second pass) and dfedcata; ``--profile`` prints torch.profiler's top operators; ``--proposals`` times the
engine changes that docs/benchmarks.md proposes, patched in here (the code mode's one-row gradient by plain autograd,
a per-client autograd loop for convolutional models on CPU, and for the MLP the client state per layer with a
compiled step, written out for DFedCata).

    .venv/bin/python benchmarks/bench_official.py [--cases mlp-20 mlp-100 lenet-20] [--rounds 3] [--breakdown]
    .venv/bin/python benchmarks/bench_official.py --device cuda
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from dfltheory.empirical import algorithms as A
from dfltheory.empirical.allocator import keep_freed_memory
from dfltheory.empirical import data as D
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine, compile_failures
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn, make_model
from dfltheory.testing import official
from dfltheory.topology import build as build_topology

HP = {"lam_pen": 0.05, "beta": 0.9, "weight_decay": 5e-4}
LR = 0.01


@dataclass
class Case:
    model: str  # 'mlp' (64-128-10), 'lenet' (the code's LeNet), 'resnet18', 'resnet18-imagenet'
    m: int
    batch: int = 16
    K: int = 5
    chunk: int | None = None


CPU_CASES = {"mlp-20": Case("mlp", 20), "mlp-100": Case("mlp", 100), "lenet-20": Case("lenet", 20)}
GPU_CASES = {"resnet18-100": Case("resnet18", 100, batch=32, chunk=25),
             "resnet18-imagenet-100": Case("resnet18-imagenet", 100, batch=32, chunk=25)}


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))


def problem(case: Case, seed=0) -> D.FederatedData:
    """Digits for the MLP; CIFAR-shaped fake data (32 samples per client) for the image models."""
    if case.model == "mlp":
        return D.load("digits", case.m, partition="iid", seed=seed)
    g = torch.Generator().manual_seed(seed)
    n = 32 * case.m
    x, y = torch.randn(n, 3, 32, 32, generator=g), torch.randint(10, (n,), generator=g)
    return D.FederatedData(x, y, x[:64], y[:64], list(torch.arange(n).split(32)), 10, (3, 32, 32), "fake-cifar")


def factory(case: Case, modules=None):
    """The model builder both sides call (the same initial weights at every call); the LeNet is the authors' class
    on their side (``modules``) and the engine's ``cnn`` (the same layers) on the engine's."""
    def build():
        with torch.random.fork_rng():
            torch.manual_seed(0)
            if case.model == "mlp":
                return mlp()
            if case.model == "lenet":
                return modules.models.client_model("LeNet") if modules else make_model("cnn", (3, 32, 32), 10)
            return make_model(case.model, (3, 32, 32), 10)
    return build


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(step, rounds, device):
    """The fastest of ``rounds`` rounds after one warm-up round: on a shared machine the least disturbed one."""
    step()
    times = []
    for _ in range(rounds):
        sync(device)
        start = time.perf_counter()
        step()
        sync(device)
        times.append(time.perf_counter() - start)
    return min(times)


def engine(case: Case, data, device, algo="dfedcata", sequential=False, compile=False) -> Engine:
    flat = FlatModel(factory(case)(), loss_fn(data.task))
    hp = {"mode": "A", "clip": official.MAX_NORM, **HP} if algo == "dfedcata" else {}
    W = build_topology("ring", case.m, weights="metropolis", seed=0)  # 1/3 on i, i +- 1: their mean of 3
    return Engine(flat, data, A.make(algo, **hp), Mixing(W), K=case.K, lr=LR, batch_size=case.batch, seed=0,
                  device=device, sequential=sequential, client_chunk=case.chunk, compile=compile)


def authors(case: Case, data, device, rounds) -> float | None:
    """Their seconds per round: the fastest of ``rounds`` rounds after one warm-up round, by their own clock."""
    if not official.available():
        return None
    loader = official.sampled_loader(torch.Generator().manual_seed(0))
    with official.official_modules(loader) as modules:
        build = factory(case, modules)
        ours = [p.shape for p in factory(case)().parameters()]
        assert [p.shape for p in build().parameters()] == ours, "the authors' model is not the engine's"
        x0 = torch.cat([p.detach().reshape(-1) for p in build().parameters()])
        srv = official.dfedcata_server(modules, build, x0, [data.x_train[ix] for ix in data.client_indices],
                                       [data.y_train[ix] for ix in data.client_indices], rounds=1 + rounds,
                                       K=case.K, batch_size=case.batch, lr=LR, device=device, **HP)
        with contextlib.redirect_stdout(None):  # one line per round and client
            srv.train()
    return float(srv.time[1:].min())


# ----- the compute ceiling -------------------------------------------------------------------------------------
def bmm_mlp(params, X, Y, lr):
    """One SGD step of every client's MLP 64-128-10 by hand: forward and backward as batched matmuls over the
    clients' own weights (m, ...); X (m, b, 64), Y (m, b). Returns the gradients (for the check) after the update."""
    W1, b1, W2, b2 = params
    pre = torch.baddbmm(b1.unsqueeze(1), X, W1.transpose(1, 2))  # (m, b, 128)
    h = pre.clamp_min(0)
    z = torch.baddbmm(b2.unsqueeze(1), h, W2.transpose(1, 2))  # (m, b, 10)
    dz = torch.softmax(z, -1)
    dz.scatter_add_(2, Y.unsqueeze(2), torch.full_like(dz[..., :1], -1.0)).div_(X.shape[1])
    gW2, gb2 = torch.bmm(dz.transpose(1, 2), h), dz.sum(1)
    dh = torch.bmm(dz, W2).mul_(pre > 0)
    gW1, gb1 = torch.bmm(dh.transpose(1, 2), X), dh.sum(1)
    grads = (gW1, gb1, gW2, gb2)
    for p, g in zip(params, grads):
        p.sub_(g, alpha=lr)
    return grads


def cata_arithmetic(eng: Engine, device, compiled: bool = False):
    """DFedCata's vector arithmetic around the gradients, on an (m, d) state, in eager in-place operations: per step
    (``step(G)``, G the (m, d) gradients) the anchor pull, the per-client clip and weight decay with the update
    x <- x - lr (clip(g - lam_pen y) + (lam_pen + wd) x); per round (``comm()``) the gossip a = W X (the engine's sparse W)
    and the extrapolation y = a + beta (a - x), with the mean of a. The same operations as the engine and the
    authors' code, written as cheaply as eager PyTorch allows; ``compiled``: each of the two through
    ``torch.compile``, which fuses them into a few loops over the state (the engine's ``--compile`` does the same)."""
    from dfltheory.empirical.rules import TORCH_CLIP_EPS

    X, W = eng.state["x"].clone(), eng.mixing.at(0)
    anchor, lam_pen, decay = X.clone(), HP["lam_pen"], HP["lam_pen"] + HP["weight_decay"]

    def step(G):
        d = torch.sub(G, anchor, alpha=lam_pen)
        scale = torch.linalg.vector_norm(d, dim=1, keepdim=True).add_(TORCH_CLIP_EPS)
        scale = torch.clamp(official.MAX_NORM / scale, max=1.0)
        d.mul_(scale).add_(X, alpha=decay)
        X.sub_(d, alpha=LR)

    def comm():
        a = torch.sparse.mm(W, X)
        X.sub_(a).mul_(-HP["beta"]).add_(a)  # a + beta (a - x)
        anchor.copy_(X)
        a.mean(0)

    if compiled:
        return torch.compile(step, dynamic=False), torch.compile(comm, dynamic=False)
    return step, comm


def ceilings(case: Case, eng: Engine, device) -> dict[str, callable]:
    """Round functions of the ceiling variants, K steps each on the engine's minibatches of one round: each variant's
    forward/backward with its SGD update, then DFedCata's vector arithmetic (:func:`cata_arithmetic`) on an (m, d)
    state at every step and its gossip at the end of the round, so that a ceiling does the round's whole arithmetic.
    The rows named ``reference:`` leave that arithmetic out (forward/backward and SGD update only, the ceiling's
    earlier definition); they are printed, not taken as the ceiling."""
    idx = eng.plan(0).idx
    xs, ys = eng.x_train[idx.to(device)], eng.y_train[idx.to(device)]  # (K, m, b, ...)
    m, b = case.m, case.batch
    module = factory(case)().to(device)
    G = torch.randn_like(eng.state["x"]).mul_(0.01)  # stands for the rows of gradients the variants compute

    def plain(k):
        loss = F.cross_entropy(module(xs[k].reshape(m * b, *xs.shape[3:])), ys[k].reshape(-1)) * m
        grads = torch.autograd.grad(loss, list(module.parameters()))
        with torch.no_grad():
            for p, g in zip(module.parameters(), grads):
                p.sub_(g, alpha=LR)

    def per_client(k):
        for i in range(m):
            loss = F.cross_entropy(module(xs[k, i]), ys[k, i])
            grads = torch.autograd.grad(loss, list(module.parameters()))
            with torch.no_grad():
                for p, g in zip(module.parameters(), grads):
                    p.sub_(g, alpha=LR)

    steps = {"plain fwd/bwd over m*b": plain, "plain fwd/bwd, m batches": per_client}
    if case.model == "mlp":
        flat = eng.state["x"].clone()
        params = [t.reshape(m, *s).clone() for t, s in zip(flat.split(eng.model.numels, 1), eng.model.shapes)]
        X, Y = xs.reshape(case.K, m, b, -1), ys
        check = bmm_mlp([p.clone() for p in params], X[0], Y[0], LR)
        ref = eng.model.batched_grad(flat, xs[0], ys[0]).split(eng.model.numels, 1)
        err = max(float((g.reshape(m, -1) - r).abs().max()) for g, r in zip(check, ref))
        assert err < 1e-5, f"the bmm chain's gradients differ from vmap(grad) by {err}"
        steps["bmm chain, own weights"] = lambda k: bmm_mlp(params, X[k], Y[k], LR)
    out = {}
    variants = [(name, fwd_bwd, False) for name, fwd_bwd in steps.items()]
    variants += [(f"{name}, vector ops compiled", steps[name], True) for name in steps if "m batches" not in name]
    for name, fwd_bwd, compiled in variants:
        cata_step, cata_comm = cata_arithmetic(eng, device, compiled)

        def whole(fwd_bwd=fwd_bwd, cata_step=cata_step, cata_comm=cata_comm):
            for k in range(case.K):
                fwd_bwd(k)
                cata_step(G)
            cata_comm()

        def bare(fwd_bwd=fwd_bwd):
            for k in range(case.K):
                fwd_bwd(k)

        out[f"ceiling: {name}"] = whole
        if not compiled:
            out[f"reference: {name}, no DFedCata vector ops, no gossip"] = bare
    return out


# ----- where the engine's time goes ------------------------------------------------------------------------------
def breakdown(eng: Engine, rounds: int) -> dict[str, float]:
    """Seconds per round in: plan (minibatch draws), gradients (every ``vmap(grad)`` call), the communication rule,
    and the rest (the rules' other transforms, the update, per-step Python)."""
    spent = {"plan": 0.0, "gradients": 0.0, "communication": 0.0}

    def clock(name, fn):
        def wrapped(*a, **kw):
            start = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - start
        return wrapped

    eng.round()  # warm-up
    eng.plan = clock("plan", eng.plan)
    eng.model.batched_grad = clock("gradients", eng.model.batched_grad)
    eng.algo.comm.apply = clock("communication", eng.algo.comm.apply)
    start = time.perf_counter()
    for _ in range(rounds):
        eng.round()
    total = time.perf_counter() - start
    out = {k: v / rounds for k, v in spent.items()}
    out["rest"] = total / rounds - sum(out.values())
    out["total"] = total / rounds
    return out


# ----- proposed engine changes, patched in here to measure them (docs/benchmarks.md) ----------------------------------
def autograd_rows(eng: Engine, max_rows: int) -> Engine:
    """Gradients of blocks of at most ``max_rows`` rows as one plain ``torch.autograd.grad`` per row (no functorch):
    ``max_rows = 1`` for the code mode (its local phase is one row), ``m`` for a per-client loop over the block."""
    model, vmapped = eng.model, eng.model.batched_grad

    def grads(X, inputs, targets, chunk=None):
        if X.shape[0] > max_rows:
            return vmapped(X, inputs, targets, chunk)
        out = []
        for x, xb, yb in zip(X, inputs, targets):
            x = x.detach().requires_grad_()
            out.append(torch.autograd.grad(model.loss_at(x, xb, yb), x)[0])
        return torch.stack(out)

    model.batched_grad = grads
    return eng


def layered_dfedcata(eng: Engine) -> Engine:
    """DFedCata (mode A, clip, weight decay: the benchmark's HP) with the client state kept per layer, one contiguous
    (m, *shape) tensor per parameter, each local step ``torch.compile``d, the gossip W @ X done layer by layer (the
    same products). The state layout docs/benchmarks.md proposes, written out for this one algorithm to measure it
    (the engine's rules work on flat rows); ``eng.state['x']`` is refreshed after every round for the comparison."""
    from torch.func import functional_call, grad, vmap

    from dfltheory.empirical.communication import mix
    from dfltheory.empirical.rules import TORCH_CLIP_EPS

    model, m, lam, wd = eng.model, eng.m, HP["lam_pen"], HP["weight_decay"]
    grads = vmap(grad(lambda p, x, y: model.loss(functional_call(model.module, (p, model.buffers), (x,)), y)))

    def step(P, A, xb, yb, lr):  # x <- x - lr (clip(g - lam_pen y) + (lam_pen + wd) x), the clip over the whole row
        g = grads(P, xb, yb)
        d = {n: g[n] - lam * A[n] for n in P}
        norm = torch.sqrt(sum((v.reshape(m, -1) ** 2).sum(1) for v in d.values()))
        scale = torch.clamp(official.MAX_NORM / (norm + TORCH_CLIP_EPS), max=1.0)
        return {n: P[n] - lr * (d[n] * scale.view(m, *[1] * (d[n].ndim - 1)) + (lam + wd) * P[n]) for n in P}

    cstep = torch.compile(step, dynamic=False)
    layers = {"P": {n: t.reshape(m, *s).contiguous()
                    for n, t, s in zip(model.names, eng.state["x"].split(model.numels, 1), model.shapes)}}

    def round():
        plan = eng.plan(eng.t)
        idx, W = plan.idx.to(eng.device), eng.mixing.at(eng.t)
        lr = torch.tensor(plan.lr, dtype=eng.state["x"].dtype, device=eng.device)
        P = A = layers["P"]
        for k in range(eng.K):
            P = cstep(P, A, eng.x_train[idx[k]], eng.y_train[idx[k]], lr)
        flat = {n: v.reshape(m, -1) for n, v in P.items()}  # a = W X, y = a + beta (a - X) = lerp(X, a, 1 + beta)
        layers["P"] = {n: torch.lerp(v, mix(W, v), 1 + HP["beta"]).reshape(P[n].shape) for n, v in flat.items()}
        eng.state["x"] = torch.cat([v.reshape(m, -1) for v in layers["P"].values()], 1)
        eng.t += 1

    eng.round = round
    return eng


def proposals(case: Case, data, device, rounds) -> dict[str, tuple[float, float]]:
    """Seconds per round of the patched engines and their largest difference from the unpatched one after 2 rounds
    (float32; the patches change no arithmetic, so any difference is summation order)."""
    variants = {"code mode, one-row autograd": (True, lambda e: autograd_rows(e, 1)),
                "engine, per-client autograd loop": (False, lambda e: autograd_rows(e, case.m))}
    if case.model == "mlp":
        variants["per-layer state, compiled step"] = (False, layered_dfedcata)
    out = {}
    for name, (sequential, patch) in variants.items():
        plain, patched = engine(case, data, device, sequential=sequential), patch(engine(case, data, device,
                                                                                         sequential=sequential))
        for _ in range(2):
            plain.round()
            patched.round()  # the first call compiles
        diff = float((plain.state["x"] - patched.state["x"]).abs().max())
        out[name] = (timed(patched.round, rounds, device), diff)
    return out


def profile(eng: Engine, rounds: int, rows: int = 16) -> str:
    """torch.profiler's operators of ``rounds`` engine rounds by self CPU time, grouped by input shape (an (m, d)
    shape is a pass over the whole client state)."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as prof

    eng.round()
    with prof(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        for _ in range(rounds):
            eng.round()
    return p.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=rows,
                                                           max_name_column_width=30, max_shapes_column_width=60)


def compiled(measure):
    """``measure()``, or None where it needs ``torch.compile`` and that cannot run here (no C++ compiler on the
    CPU, no Triton on the GPU): the row is then printed as skipped, not the whole benchmark stopped. The engine's
    own refusal (``check_compile``) is a ValueError."""
    try:
        return measure()
    except (*compile_failures(), ValueError) as err:
        print(f"(a torch.compile row skipped: {str(err).splitlines()[0][:160]})")
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", nargs="+", default=None, choices=[*CPU_CASES, *GPU_CASES],
                   help="default: the CPU cases, or the GPU case with --device cuda")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--m", type=int, default=None, help="override the cases' client count (smoke runs)")
    p.add_argument("--K", type=int, default=None, help="override the cases' local steps")
    p.add_argument("--device", default="cpu")
    p.add_argument("--breakdown", action="store_true", help="split the engine's round (dfedavg, dfedsam, dfedcata)")
    p.add_argument("--profile", action="store_true", help="torch.profiler's top operators of the engine's round")
    p.add_argument("--proposals", action="store_true", help="time the engine changes docs/benchmarks.md proposes")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--return-freed-memory", action="store_true",
                   help="leave glibc's malloc as it is (freed memory back to the system, pages faulted in again) "
                        "instead of keep_freed_memory(), which the dfltheory commands call")
    args = p.parse_args(argv)
    kept = False if args.return_freed_memory else keep_freed_memory()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device on this machine; the GPU entry (CIFAR-10-shaped ResNet-18, m = 100, "
              "the engine against the authors' code) did not run and reports no number")
        return
    torch.set_num_threads(args.threads)
    cases = GPU_CASES if device.type == "cuda" else CPU_CASES
    names = args.cases or list(cases)
    print(f"# DFedCata (mode A, clip {official.MAX_NORM}, lam {HP['lam_pen']}, beta {HP['beta']}, wd "
          f"{HP['weight_decay']}), ring, device {device}, torch threads {torch.get_num_threads()}, "
          f"{os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.2f} at the start, freed memory "
          f"{'kept (dfltheory.empirical.allocator)' if kept else 'returned to the system'}; "
          f"authors' code {'at ' + str(official.OFFICIAL) if official.available() else 'ABSENT (skipped)'}")
    for name in names:
        case = replace({**CPU_CASES, **GPU_CASES}[name], **{k: v for k, v in (("m", args.m), ("K", args.K)) if v})
        data = problem(case)
        eng = engine(case, data, device)
        rows = {"authors' code": authors(case, data, device, args.rounds),
                "engine (vectorized)": timed(eng.round, args.rounds, device),
                "engine --compile": compiled(lambda: timed(engine(case, data, device, compile=True).round,
                                                           args.rounds, device)),
                "engine --sequential (code mode)": timed(engine(case, data, device, sequential=True).round,
                                                         args.rounds, device)}
        ceil = {k: compiled(lambda f=f: timed(f, args.rounds, device)) for k, f in ceilings(case, eng, device).items()}
        rows.update(ceil)
        ceil = {k: t for k, t in ceil.items() if k.startswith("ceiling:") and t is not None}
        diffs = {}
        if args.proposals:
            for k, (t, diff) in proposals(case, data, device, args.rounds).items():
                rows[f"proposed: {k}"], diffs[f"proposed: {k}"] = t, diff
        ceiling = min(ceil.values())
        ours = rows["authors' code"]
        print(f"\n## {name}: {case.model}, m = {case.m}, K = {case.K}, batch {case.batch}, d = {eng.model.dim}, "
              f"{args.rounds} timed rounds; load average {os.getloadavg()[0]:.2f}")
        print(f"{'method':<60} {'s/round':>9} {'authors / this':>15} {'this / ceiling':>15}")
        for k, t in rows.items():
            if t is None:
                why = "the authors' code is absent" if k == "authors' code" else "torch.compile cannot run here"
                print(f"{k:<60} {'skipped: ' + why:>41}")
                continue
            speed = f"{ours / t:.2f}x" if ours else "-"
            note = f"   (max diff from the engine as it is: {diffs[k]:.1e})" if k in diffs else ""
            print(f"{k:<60} {t:>9.4f} {speed:>15} {t / ceiling:>14.2f}x{note}")
        if args.breakdown:
            print(f"\n{'engine round (s/round)':<22} " + " ".join(f"{k:>13}" for k in
                                                              ("plan", "gradients", "communication", "rest", "total")))
            for algo in ("dfedavg", "dfedsam", "dfedcata"):
                b = breakdown(engine(case, data, device, algo), args.rounds)
                print(f"{algo:<22} " + " ".join(f"{b[k]:>13.4f}" for k in
                                                 ("plan", "gradients", "communication", "rest", "total")))
        if args.profile:
            print(profile(engine(case, data, device), args.rounds))


if __name__ == "__main__":
    main()
