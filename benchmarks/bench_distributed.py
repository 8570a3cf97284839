"""Seconds per round of the distributed engine at 1 and 2 ranks (gloo, one torch thread each; ``--worlds 1 2 4``
for more), against the single-process engine measured in the same run, and its communication volume per round: the
floats the ranks send in the communication rule, against the edges of W times the model size (what the algorithm
sends, one model per edge, and what a full gather of every neighbour's model would move).

    .venv/bin/python benchmarks/bench_distributed.py [--algo dfedavg] [--m 40] [--rounds 5] [--topologies ring ...]
                                                     [--worlds 1 2]

Seconds per round: the fastest of the timed rounds, each between barriers, without measurements (no gather on rank
0).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import torch
import torch.multiprocessing as mp

from dfltheory.empirical import distributed as D
from dfltheory.empirical import runner
from dfltheory.empirical.allocator import keep_freed_memory
from dfltheory.empirical.communication import links


def config(args, topology):
    weights = "push-sum" if args.algo in ("dfedsgpsm", "sgp", "dfedpgp") else "default"
    return {"algo": args.algo, "dataset": "digits", "n": args.m, "topology": topology, "weights": weights,
            "K": args.K, "batch_size": args.batch_size, "lr": 0.05, "seed": 0}


def timed(step, rounds, barrier=lambda: None):
    """The fastest of ``rounds`` rounds after a warm-up round, each between barriers (on a shared machine the least
    disturbed round; with several ranks the slowest rank's time of that round, as the barrier waits for it)."""
    step()  # warm-up
    times = []
    for _ in range(rounds):
        barrier()
        start = time.perf_counter()
        step()
        barrier()
        times.append(time.perf_counter() - start)
    return min(times)


def ranks(rank, world, port, args, path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    keep_freed_memory()  # as every dfltheory process (a spawned rank starts afresh)
    torch.set_num_threads(1)
    D.init(rank, world)
    rows = {}
    for topology in args.topologies:
        d = D.DistributedEngine(runner.build(config(args, topology))[0], gather_at=lambda t: False)
        seconds = timed(d.round, args.rounds, torch.distributed.barrier)
        sent = torch.tensor([float(d.floats_sent)])
        torch.distributed.all_reduce(sent)
        rows[topology] = (seconds, float(sent) / (args.rounds + 1))
    if rank == 0:
        torch.save(rows, path)
    torch.distributed.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--algo", default="dfedavg")
    p.add_argument("--m", type=int, default=40)
    p.add_argument("--K", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--topologies", nargs="+", default=["ring", "exponential", "full"])
    p.add_argument("--worlds", nargs="+", type=int, default=[1, 2], help="rank counts (more ranks than cores "
                   "oversubscribe them)")
    args = p.parse_args(argv)
    keep_freed_memory()
    torch.set_num_threads(1)
    single = {}
    for topology in args.topologies:
        engine = runner.build(config(args, topology))[0]
        W = engine.mixing.at(0)
        single[topology] = (timed(engine.round, args.rounds), links(W), engine.model.dim)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for world in args.worlds:
            path = os.path.join(tmp, f"{world}.pt")
            mp.spawn(ranks, args=(world, D.free_port(), args, path), nprocs=world)
            results[world] = torch.load(path)
    print(f"{args.algo}, digits MLP, m = {args.m}, K = {args.K}, batch {args.batch_size}, one torch thread per "
          f"process, {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f} at the end")
    split = [w for w in args.worlds if w > 1]
    print(f"{'topology':<12} {'edges':>6} {'d':>7} {'1 process':>10} "
          + " ".join(f"{f'{w} rank' + 's' * (w > 1):>8}" for w in args.worlds)
          + "".join(f" {f'speed-up {w}':>11} {f'floats/round ({w})':>18} {'/ edges x d':>11}" for w in split))
    for topology in args.topologies:
        s1, edges, dim = single[topology]
        line = f"{topology:<12} {edges:>6} {dim:>7} {s1:>9.3f}s " + " ".join(
            f"{results[w][topology][0]:>7.3f}s" for w in args.worlds)
        for w in split:
            seconds, floats = results[w][topology]
            line += f" {s1 / seconds:>10.2f}x {floats:>18.0f} {floats / (edges * dim):>11.3f}"
        print(line)

if __name__ == "__main__":
    main()
