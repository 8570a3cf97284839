"""Rounds per second of the vectorized engine against the per-client reference loop, measured in the same run.

CPU (default): m = 100 clients, MLP on digits, K = 5 local steps, ring topology; target >= 5x.
    .venv/bin/python benchmarks/bench_engine.py [--algo dfedavg] [--m 100] [--rounds 5]
GPU: CIFAR-10 + VGG-11 (GroupNorm) at m = 100, seconds per round of the engine (the loop is skipped unless
--with-loop); needs the CIFAR-10 files under --data-root (or --download).
    .venv/bin/python benchmarks/bench_engine.py --gpu [--data-root DIR] [--download]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import data as D
from dfltheory.empirical import models as M
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.reference import ReferenceRun
from dfltheory.testing.matrices import ring_matrix as ring


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(step, rounds, device):
    step()  # warm-up (compilation of vmap paths, allocator)
    sync(device)
    start = time.perf_counter()
    for _ in range(rounds):
        step()
    sync(device)
    return (time.perf_counter() - start) / rounds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", default="dfedavg", choices=A.names())
    p.add_argument("--m", type=int, default=100)
    p.add_argument("--K", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--gpu", action="store_true", help="CIFAR-10 + VGG-11 on CUDA")
    p.add_argument("--with-loop", action="store_true", help="--gpu: also time the per-client loop (slow)")
    p.add_argument("--data-root", default=None)
    p.add_argument("--download", action="store_true")
    p.add_argument("--sparse", default=None, action=argparse.BooleanOptionalAction, help="W sparse/dense (auto)")
    p.add_argument("--client-chunk", type=int, default=None, help="clients per vmap call (--gpu default: 25)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.gpu:
        if not torch.cuda.is_available():
            raise SystemExit("--gpu needs CUDA, which is not available here")
        device = torch.device("cuda")
        data = D.load("cifar10", args.m, seed=0, root=args.data_root, download=args.download)
        model_name, batch = "vgg11", 128 if args.batch_size == 16 else args.batch_size
    else:
        device = torch.device("cpu")
        data = D.load("digits", args.m, seed=0)
        model_name, batch = "mlp", args.batch_size
    torch.manual_seed(0)
    module = M.make_model(model_name, data.input_shape, data.num_classes)
    model = FlatModel(module, M.loss_fn(data.task))
    algo = A.make(args.algo)
    mixing = Mixing(ring(args.m), device=device, sparse=args.sparse) if algo.decentralized else None
    chunk = args.client_chunk or (25 if args.gpu else None)
    engine = Engine(model, data, algo, mixing, K=args.K, lr=0.05, batch_size=batch, seed=0, device=device,
                    client_chunk=chunk)
    plans = []
    original = engine.plan
    engine.plan = lambda t: plans.append(original(t)) or plans[-1]
    t_vec = timed(engine.round, args.rounds, device)

    rows = [("vectorized engine (vmap)", t_vec)]
    if not args.gpu or args.with_loop:
        ref = ReferenceRun(args.algo, module.to(device), model.loss, engine.x_train, engine.y_train,
                           engine.state["x"][0].clone(), args.m, engine.K)
        W = mixing.at(0) if mixing is not None else None
        t_loop = timed(lambda: ref.round(plans[-1], lambda q: W), args.rounds, device)
        rows.append(("per-client loop (reference)", t_loop))
    print(f"# {args.algo}, {'CIFAR-10 + VGG-11' if args.gpu else 'digits + MLP'}, m = {args.m}, K = {engine.K}, "
          f"batch = {batch}, d = {model.dim}, client chunk = {chunk}, device = {device}, "
          f"torch threads = {torch.get_num_threads()}")
    print(f"{'method':<30} {'s/round':>10} {'rounds/s':>10}")
    for name, t in rows:
        print(f"{name:<30} {t:>10.4f} {1 / t:>10.2f}")
    if len(rows) == 2:
        print(f"speed-up (loop / engine): {rows[1][1] / rows[0][1]:.1f}x (target >= 5x)")


if __name__ == "__main__":
    main()
