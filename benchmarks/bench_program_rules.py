"""Benchmark: the algorithm table trains from the step programs (issue 35 item 2); the program-derived rules must not
be slower than the hand-written ones they replaced by more than 10 %, as a ratio measured in the same run.

    python benchmarks/bench_program_rules.py [--rounds 2000] [--compile] [ALGO ...]

ALGO is a name of the table or ``dfedcata:A`` / ``dfedcata:B`` (its mode; verify trains B, measuring grad f at
p^t, and A, measuring grad f at a_bar^t). Per algorithm (default dfedpgp, dfedadmm, dfedsgpsm, dfedsam, dfedcata:B,
dfedcata:A): two replicated engines as ``verify`` trains them
(:mod:`dfltheory.empirical.replicas`: 4 copies of m = 8 clients, float64, one thread, the per-round quantity measured),
on verify's least-squares problem (synthetic-quadratic, d = 10; DFedPGP: synthetic-personal, split-linear), one with
the table's program-derived algorithm, one with the hand-written oracle (:mod:`dfltheory.testing.handwritten`),
run in alternating blocks of 100 rounds so that both see the same machine load. Prints both times, their ratio and
the largest difference of the measured terms (0: bit for bit, infinite or nan terms of a diverging run included).
"""

from __future__ import annotations

import argparse
import time

COPIES, CLIENTS, BLOCK = 4, 8, 100
#: the quantity verify measures of an algorithm, where not ||grad f(x_bar)||^2 (DFedCata Thm 1's p^t)
QUANTITY = {"dfedpgp": "delta_pgp", "dfedcata:B": "grad_norm_sq_p"}


def config(spec: str, compiled: bool) -> dict:
    algo, _, mode = spec.partition(":")
    personal = algo.startswith("dfedpgp")
    data = dict(dim=5, n_per_client=100, heterogeneity=1.0) if personal else dict(dim=10, n_per_client=100)
    return {"algo": algo, "dataset": "synthetic-personal" if personal else "synthetic-quadratic",
            "model": "split-linear" if personal else "linear", "data_params": data, "data_seed": 0, "n": CLIENTS,
            "topology": "ring", "weights": "push-sum" if algo in ("dfedsgpsm", "dfedpgp") else None, "K": 5,
            "lr": 0.01, "batch_size": 10, "seed": 0, "compile": compiled, "out": None,
            **({"lam_pen": 0.1} if algo == "dfedadmm" else {}), **({"mode": mode} if mode else {}),
            **({"beta": 0.3} if mode == "A" else {})}  # A's synchronous (1 + beta)W - beta I diverges on the ring at 0.9


def engine(cfg: dict, algo):
    """The replicated float64 engine of ``cfg`` running ``algo``."""
    import torch

    from dfltheory.empirical import runner

    built, default = runner._algorithm, torch.get_default_dtype()
    runner._algorithm = lambda cfg, data: algo
    torch.set_default_dtype(torch.float64)
    try:
        return runner.build(cfg, replicas=COPIES, announce=False)[0]
    finally:
        torch.set_default_dtype(default)
        runner._algorithm = built


def main() -> None:
    import torch

    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.replicas import Replicas
    from dfltheory.empirical.runner import ALGO_KEYS
    from dfltheory.testing import handwritten

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("algos", nargs="*", default=["dfedpgp", "dfedadmm", "dfedsgpsm", "dfedsam", "dfedcata:B",
                                                 "dfedcata:A"])
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--compile", action="store_true", help="compile the local steps, as verify does where it can")
    args = ap.parse_args()
    torch.set_num_threads(1)
    for name in args.algos:
        cfg = config(name, args.compile)
        hp = {k: cfg.get(k) for k in ALGO_KEYS}
        quantity = QUANTITY.get(name, QUANTITY.get(cfg["algo"], "grad_norm_sq"))
        runs = {"hand-written": engine(cfg, handwritten.make(cfg["algo"], **hp)),
                "program": engine(cfg, A.make(cfg["algo"], **hp))}
        meters = {k: Replicas(e, COPIES, quantity) for k, e in runs.items()}
        seconds, terms = dict.fromkeys(runs, 0.0), {k: [] for k in runs}
        with torch.no_grad():
            for k, e in runs.items():
                if quantity == "delta_pgp":  # Replicas.run's first step: Delta_v of round 0
                    X = e.state["x"].reshape(COPIES, CLIENTS, -1)
                    meters[k].pending = (meters[k].full_grads(X)[:, :, ~e.shared] ** 2).sum(2).mean(1)
                e.round()  # warm-up (and compilation), not timed
                terms[k].append(meters[k]._quantity())
            for _ in range(args.rounds // BLOCK):
                for k, e in runs.items():
                    start = time.perf_counter()
                    for _ in range(BLOCK):
                        e.round()
                        terms[k].append(meters[k]._quantity())
                    seconds[k] += time.perf_counter() - start
        ours, theirs = torch.stack(terms["program"]), torch.stack(terms["hand-written"])
        same = (ours == theirs) | (ours.isnan() & theirs.isnan())  # a diverging run (DFedCata A on a ring): inf, nan
        diff = 0.0 if same.all() else (ours - theirs)[~same].abs().max().item()
        hand, prog = seconds["hand-written"], seconds["program"]
        print(f"{name:10s} {'compiled' if args.compile else 'eager':8s} {args.rounds} rounds: hand-written "
              f"{hand:7.2f}s  program-derived {prog:7.2f}s  ratio {prog / hand:.3f}  max|terms diff| {diff:.1e}",
              flush=True)


if __name__ == "__main__":
    main()
