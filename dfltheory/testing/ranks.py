"""Test harness for the distributed engine: start a gloo rank, record an engine's rounds on it, compare snapshots.

The tests spawn ranks with ``torch.multiprocessing.spawn(worker, args=(world, free_port(), path), nprocs=world)``;
each worker calls :func:`start_rank`, wraps its engines in ``DistributedEngine``, records the gathered state with
:func:`record_rounds` (rank 0) and saves it for the parent to compare with a single-process engine by
:func:`max_diff` of :func:`snapshot`.
"""

from __future__ import annotations

import os

import torch

from dfltheory.empirical import distributed


def start_rank(rank: int, world: int, port: int) -> None:
    """This process as gloo rank ``rank`` of ``world`` on localhost:``port``, one torch thread."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    distributed.init(rank, world)


def snapshot(engine) -> dict:
    """What the equality tests compare after a round: client and communication state, x_bar, auxiliary points and
    the models sent."""
    return {"state": {k: v.clone() for k, v in engine.state.items()},
            "cstate": {k: v.clone() for k, v in engine.cstate.items()}, "x_bar": engine.x_bar().clone(),
            "aux": {k: v.clone() for k, v in engine.aux_points().items()}, "sent": engine.sent}


def record_rounds(d, rounds: int, rank: int) -> list[dict]:
    """Run ``rounds`` rounds of the distributed engine ``d``; rank 0 returns the gathered snapshot after each."""
    steps = []
    for _ in range(rounds):
        d.round()
        if rank == 0:
            steps.append(snapshot(d.engine))
    return steps


def max_diff(a, b) -> float:
    """Largest absolute difference between two snapshots (their keys, shapes and counts must agree)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        return max([max_diff(a[k], b[k]) for k in a], default=0.0)
    if isinstance(a, torch.Tensor):
        assert a.shape == b.shape
        return float((a - b).abs().max())
    assert a == b
    return 0.0
