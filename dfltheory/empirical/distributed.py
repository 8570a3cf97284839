"""The engine over several processes (torch.distributed): the m clients in contiguous blocks, one block per rank.

Every rank builds the same :class:`~dfltheory.empirical.engine.Engine` (data, x^0, W, the sampling generator) and
keeps the rows of its block [lo, hi). A round t on every rank:

1. ``Engine.plan(t)``: the (K, m, b) minibatch indices from the one generator, identical on every rank; the rank
   takes its columns ``idx[:, lo:hi]``, so the batches do not depend on the number of ranks;
2. ``Engine.local_phase`` on the block (the algorithm's local rule, vmapped over the block's clients);
3. the algorithm's communication rule on the block, its products W @ X done by :meth:`DistributedEngine.mix`:
   row i of W X needs x_l for w_il != 0 only, so a rank receives from each other rank the rows of that rank's block
   that its own rows have non-zero weights on (point-to-point, ``batch_isend_irecv``), each row once, and multiplies
   its rows of W (restricted to those columns; CSR when the mixing is sparse) with them. A ring sends 2 rows per
   rank pair and round whatever m is; a dense W (complete graph, ``random`` with many neighbours) needs every row
   on every rank, i.e. the whole model matrix everywhere, which is what that topology means.

Per rule: ``gossip`` / ``multi_gossip`` (one exchange per gossip step, fresh W per step included) and push-sum
(x and the weights w: two exchanges; DFedPGP sends the shared coordinates u only, v never leaves its rank) are
exactly these products. DFedSGPSM-S draws P(t) from all m clients' losses: each rank evaluates its block's and an
all-gather of m numbers gives every rank the same P(t). DFedCata's synchronous rule mixes as gossip; the mean of
the aggregated models ā (its x̄) is an all-reduce of d numbers per round.

Not split (refused with the reason): DFedCata's ``sequential`` schedule (client c aggregates after clients < c have
trained: serial by definition), and the centralized baselines (fedavg, fedprox, fedsam, scaffold: a server round
averages a sampled subset of clients, a reduction to one place rather than a sparse exchange of rows; the engine runs
them in one process).

Measurements and checkpoints: after a round that the run measures or checkpoints (and after a non-finite one), the
blocks are gathered on rank 0 into its Engine, which :func:`dfltheory.empirical.runner.train` then measures and
saves exactly as in one process: the same metrics.jsonl and a checkpoint in the single-process format, so a run
resumes on any number of ranks (or in one process), and a one-process checkpoint resumes on several ranks.

The backend is gloo on CPU and NCCL with ``--device cuda`` (rank r on GPU ``LOCAL_RANK``); the NCCL path is written
for that case but has been run only on CPU (gloo).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from dfltheory import plugins
from dfltheory.empirical.communication import (CommContext, gossip, mix, multi_gossip, nesterov_extrapolation,
                                               push_sum)
from dfltheory.empirical import rundir
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.program_rules import ProgramComm

# push_sum covers loss_selected_push_sum; a program's communication multiplies by W through ctx.mixer
SPLIT_RULES = (gossip, multi_gossip, push_sum, nesterov_extrapolation, ProgramComm)


def blocks(m: int, world: int) -> list[tuple[int, int]]:
    """Contiguous client blocks [lo, hi) of ranks 0..world-1, sizes differing by at most one."""
    if not 1 <= world <= m:
        raise ValueError(f"{world} processes for {m} clients: every process needs at least one client; use at most "
                         f"{m} processes (--nproc) or more clients (--clients)")
    bounds = [r * (m // world) + min(r, m % world) for r in range(world + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def check_splittable(algo, sequential: bool = False) -> None:
    """ValueError naming why ``algo`` (an :class:`~dfltheory.empirical.algorithms.Algorithm`) cannot run on several
    processes (see the module docstring)."""
    if not algo.decentralized or not isinstance(algo.comm, SPLIT_RULES):
        raise ValueError(f"{algo.name} cannot run on several processes: its server round averages a sampled subset of "
                         "clients (a reduction to one place, not an exchange of neighbours' rows); run it in one "
                         "process")
    if sequential:
        raise ValueError("dfedcata --sequential cannot run on several processes: client c aggregates the models "
                         "clients < c trained in the same round, a serial schedule; drop --sequential or run it in "
                         "one process")


@dataclass
class Route:
    """One W's row exchange for this rank: the rows it sends to / receives from each other rank, and its rows of W
    restricted to the columns it holds after the exchange (own block plus received rows, in client order)."""

    send: dict[int, torch.Tensor]  # peer -> local row positions (into the block) to send
    recv: dict[int, int]  # peer -> number of rows to receive (client order within the peer's block)
    W: torch.Tensor  # (hi - lo, columns) in the engine's layout (dense or CSR)


class DistributedEngine:
    """An :class:`Engine` whose clients are split over the ranks of the default process group.

    ``block`` / ``cblock``: this rank's rows of the client state and of the communication state (per-client
    tensors of ``cstate``, those with m rows; the others, such as DFedCata's ā, are global and the same on every
    rank). ``gather_at(t)``: whether the state after round t is gathered on rank 0 (measured or checkpointed).
    Everything else (``t``, ``sent``, ``state``, ``x_bar()``, ``state_dict()``, ...) is the wrapped engine's,
    complete on rank 0 after each gather; that is what :func:`dfltheory.empirical.runner.train` reads.
    """

    def __init__(self, engine: Engine, gather_at=lambda t: True):
        check_splittable(engine.algo, engine.sequential)
        self.engine, self.gather_at = engine, gather_at
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.bounds = blocks(engine.m, self.world)
        self.lo, self.hi = self.bounds[self.rank]
        self.floats_sent = 0  # by this rank, in the communication rule (the measurement gathers not counted)
        self._route_cache: tuple[torch.Tensor, Route] | None = None
        self._split()

    def __getattr__(self, name):
        return getattr(self.__dict__["engine"], name)

    def _split(self) -> None:
        """This rank's rows of the engine's state; the full state is kept on rank 0 only. The per-client tensors of
        ``cstate`` are those of shape (m, d) (DFedCata's a^t; its means are (d,))."""
        e, s = self.engine, slice(self.lo, self.hi)
        self.client_keys = {k for k, v in e.cstate.items() if v.ndim == 2 and v.shape[0] == e.m}
        self.block = {k: v[s].clone() for k, v in e.state.items()}
        self.cblock = {k: v[s].clone() if k in self.client_keys else v for k, v in e.cstate.items()}
        if self.rank != 0:
            e.state, e.cstate = {}, {}

    def load_state_dict(self, sd: dict) -> None:
        """Load a checkpoint in the single-process format (from any number of ranks) and keep this rank's block."""
        self.engine.load_state_dict(sd)
        self._split()

    # ----- collectives -------------------------------------------------------------------------------------
    def _gather_rows(self, v: torch.Tensor) -> torch.Tensor | None:
        """The (m, ...) stack of every rank's rows of ``v`` on rank 0 (None elsewhere); blocks padded to one size."""
        size = max(hi - lo for lo, hi in self.bounds)
        buf = v.new_zeros((size, *v.shape[1:]))
        buf[: len(v)] = v
        parts = [torch.empty_like(buf) for _ in range(self.world)] if self.rank == 0 else None
        dist.gather(buf, parts, dst=0)
        if self.rank != 0:
            return None
        return torch.cat([p[: hi - lo] for p, (lo, hi) in zip(parts, self.bounds)])

    def _all_gather_rows(self, v: torch.Tensor) -> torch.Tensor:
        """The (m, ...) stack of every rank's rows of ``v`` on every rank (DFedSGPSM-S's m losses)."""
        size = max(hi - lo for lo, hi in self.bounds)
        buf = v.new_zeros((size, *v.shape[1:]))
        buf[: len(v)] = v
        parts = [torch.empty_like(buf) for _ in range(self.world)]
        dist.all_gather(parts, buf)
        return torch.cat([p[: hi - lo] for p, (lo, hi) in zip(parts, self.bounds)])

    def _sum_rows(self, v: torch.Tensor) -> torch.Tensor:
        """sum over all m clients of the rows of ``v`` (an all-reduce of one row)."""
        total = v.sum(0)
        dist.all_reduce(total)
        return total

    def gather(self) -> None:
        """Every rank's block into rank 0's engine (``state``, the per-client ``cstate``; the global ones as they are)."""
        e = self.engine
        state = {k: self._gather_rows(v) for k, v in self.block.items()}
        cstate = {k: self._gather_rows(v) if k in self.client_keys else v for k, v in self.cblock.items()}
        if self.rank == 0:
            e.state, e.cstate = state, cstate

    # ----- the row exchange ---------------------------------------------------------------------------------
    def route(self, W: torch.Tensor) -> Route:
        """This rank's exchange for W (cached while the mixing returns the same W: a fixed topology)."""
        if self._route_cache is not None and self._route_cache[0] is W:
            return self._route_cache[1]
        D = (W.to_dense() if W.layout != torch.strided else W).cpu()
        nz = D != 0
        needs = [nz[lo:hi].any(0) for lo, hi in self.bounds]  # needs[s][l]: rank s has a weight on client l
        send, recv, cols = {}, {}, []
        for peer, (lo, hi) in enumerate(self.bounds):
            if peer == self.rank:
                cols.append(torch.arange(lo, hi))
                continue
            rows = torch.nonzero(needs[peer][self.lo : self.hi]).flatten()
            if len(rows):
                send[peer] = rows
            theirs = lo + torch.nonzero(needs[self.rank][lo:hi]).flatten()
            if len(theirs):
                recv[peer] = len(theirs)
                cols.append(theirs)
        # the received rows come in peer order, each peer's in client order: columns in client order throughout
        cols = torch.cat(cols).sort().values
        Wl = D[self.lo : self.hi][:, cols].to(W.device)
        if W.layout != torch.strided:
            Wl = Wl.to_sparse_csr()
        route = Route(send, recv, Wl)
        self._route_cache = (W, route)
        return route

    def mix(self, W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
        """This rank's rows of W @ X_all, X = this rank's rows; exchanges only the rows W needs across ranks.

        With DFedPGP's ``shared`` mask and X the models, only the shared columns are sent and mixed; the others are
        returned as they are (push-sum keeps them: ``torch.where(shared, mixed, x)``)."""
        shared = self.engine.shared
        masked = shared is not None and X.shape[1] == shared.numel()
        Xs = X[:, shared] if masked else X
        r = self.route(W)
        ops, parts = [], {}
        for peer, rows in r.send.items():
            msg = Xs[rows.to(Xs.device)].contiguous()
            ops.append(dist.P2POp(dist.isend, msg, peer))
            self.floats_sent += msg.numel()
        for peer, n in r.recv.items():
            parts[peer] = Xs.new_empty((n, Xs.shape[1]))
            ops.append(dist.P2POp(dist.irecv, parts[peer], peer))
        if ops:
            for req in dist.batch_isend_irecv(ops):
                req.wait()
        X_loc = torch.cat([Xs if peer == self.rank else parts[peer] for peer in range(self.world)
                           if peer == self.rank or peer in parts])
        out = mix(r.W, X_loc)
        if not masked:
            return out
        res = X.clone()
        res[:, shared] = out
        return res

    # ----- one round ----------------------------------------------------------------------------------------
    def round(self, go: bool = True) -> bool:
        """Run round ``t`` on this rank's block (``Engine.round``'s steps); False when rank 0 called :meth:`stop`.

        Returns whether the round ran. The state is gathered on rank 0 when ``gather_at(t + 1)`` or the models are
        not finite on some rank (so that rank 0 sees the divergence)."""
        flag = torch.tensor([1 if go else 0], dtype=torch.int64, device=self._comm_device())
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if not flag.item():
            return False
        e, t = self.engine, self.engine.t
        gather = self.gather_at(t + 1)
        plan = e.plan(t)
        last, w = e.last_batch(plan.idx[:, self.lo : self.hi].to(e.device))  # DFedSGPSM-S's losses
        ctx = CommContext(t, e.m, plan.active.to(e.device), e.mixing, e.algo.comm.draws, shared=e.shared,
                          losses=lambda X: self._all_gather_rows(e.model.batched_loss(
                              X, e.x_train[last], e.y_train[last], w, self.block.get("running_stats"))),
                          mixer=self.mix)
        if gather:  # x_bar^t, kept for the auxiliary sequences (Engine.round keeps it every round)
            xbar = self._x_bar()
            if self.rank == 0:
                e.xbar_prev = xbar
        self.block = e.local_phase(self.block, plan.idx[:, self.lo : self.hi], plan.lr)
        e.algo.comm.apply(self.block, self.cblock, ctx)
        if isinstance(e.algo.comm, nesterov_extrapolation):  # the rule took the block's mean of a: make it global
            self.cblock["agg_mean"] = self._sum_rows(self.cblock["agg"]) / e.m
        e.t += 1
        e.sent += ctx.sent  # from the full W: the models the algorithm sends, whatever the split
        finite = torch.tensor([int(torch.isfinite(self.block["x"]).all())], device=self._comm_device())
        dist.all_reduce(finite, op=dist.ReduceOp.MIN)
        if gather or not finite.item():
            self.gather()
        return True

    def stop(self) -> None:
        """Rank 0 ends the run early (divergence found by a measurement): the other ranks' next round returns False."""
        self.round(go=False)

    def _x_bar(self) -> torch.Tensor:
        """x_bar of the current blocks: the mean of the rows (an all-reduce), or the algorithm's own average
        (DFedCata's ā, global on every rank)."""
        e = self.engine
        if e.algo.averaged is not None:  # the mean of a state slot over every rank's rows (DFedCata's aggregates)
            return self._sum_rows(self.block[e.algo.averaged]) / e.m
        if e.algo.x_bar is not None:
            return e.algo.average(self.block, self.cblock).clone()
        return self._sum_rows(self.block["x"]) / e.m

    def _comm_device(self) -> torch.device:
        return self.engine.device if dist.get_backend() == "nccl" else torch.device("cpu")


# ----- launching ---------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init(rank: int, world: int, device: str = "cpu") -> str:
    """Join the default process group (env:// rendezvous: MASTER_ADDR, MASTER_PORT); gloo on CPU, NCCL on CUDA
    (rank on GPU ``LOCAL_RANK``). Returns the device this rank computes on.

    ``torch.distributed.nn.functional`` is imported first, while no group exists: its ten functions take
    ``group=group.WORLD`` as a default argument, evaluated at import (torch/distributed/nn/functional.py, torch 2.14).
    Imported after ``init_process_group`` (torch._dynamo imports it; ``torch.func.grad`` imports torch._dynamo on its
    first call, a rank's first local step), the defaults hold the group past ``destroy_process_group``: gloo's worker
    threads then run into interpreter shutdown, and one that drops its last work there (``~AsyncBarrierWork``: a
    tensor's Python object, whose decref takes the GIL) is ended by ``take_gil`` -> ``pthread_exit`` inside that C++
    destructor: "terminate called without an active exception", SIGABRT at the rank's exit (a core dump's stack).
    Imported first, the defaults are None, and ``destroy_process_group`` frees the group, joining its workers while
    the interpreter is whole."""
    import torch.distributed.nn.functional  # noqa: F401  (before the group exists: see above)

    if torch.device(device).type == "cuda":
        local = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
        torch.cuda.set_device(local)
        dist.init_process_group("nccl", rank=rank, world_size=world)
        return f"cuda:{local}"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    return device


def worker(rank: int, world: int, cfg: dict, resume: bool) -> dict | None:
    """One rank of ``dfltheory train``: rank 0 runs :func:`runner.run` (measures, writes the run directory) on a
    :class:`DistributedEngine`; the other ranks run the same rounds. Returns rank 0's summary (None elsewhere)."""
    from dfltheory.empirical import runner
    from dfltheory.empirical.allocator import keep_freed_memory

    keep_freed_memory()  # a spawned rank starts a fresh process: as `dfltheory` does at start
    plugins.load_inherited()  # and loads the plugins the command loaded (a user's algorithm)
    torch.set_num_threads(cfg.get("threads") or 1)
    cfg = {**cfg, "device": init(rank, world, cfg.get("device", "cpu")), "threads": torch.get_num_threads(),
           "nproc": world, "data_seed": runner.data_seed(cfg)}  # resolved as runner.run does: the same problem
    rounds, every, ckpt = cfg["rounds"], cfg.get("eval_every", 1), cfg.get("checkpoint_every", 10)

    def wrap(engine: Engine) -> DistributedEngine:
        return DistributedEngine(engine, lambda t: t % every == 0 or t % ckpt == 0 or t == rounds)

    try:
        if rank == 0:
            d = None

            def keep(engine):
                nonlocal d
                d = wrap(engine)
                return d

            summary = runner.run(cfg, resume=resume, wrap=keep)
            if d.t < rounds:  # stopped early: release the other ranks
                d.stop()
            dist.barrier()  # no rank tears the group down while another still has messages in flight
            return summary
        runner.check_config(cfg)  # as rank 0's runner.run: the options and their ranges
        d = wrap(runner.build(cfg, initial=not resume)[0])
        if resume:
            d.load_state_dict(rundir.load_checkpoint(Path(cfg["out"]) / "checkpoint.pt", "--resume",
                                                     "start the run again without --resume"))
        while d.t < rounds and d.round():
            pass
        dist.barrier()
        return None
    finally:
        dist.destroy_process_group()


def run(cfg: dict, resume: bool = False) -> dict | None:
    """``dfltheory train`` on several processes: under torchrun (``WORLD_SIZE`` set) this process is one rank;
    otherwise ``cfg['nproc']`` ranks are spawned here (torch.multiprocessing, gloo, MASTER_ADDR 127.0.0.1, a free
    port). Returns the run's summary where rank 0 ran (None on the other torchrun ranks)."""
    import json

    import torch.multiprocessing as mp

    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.runner import ALGO_KEYS

    check_splittable(A.make(cfg["algo"], **{k: cfg.get(k) for k in ALGO_KEYS}), cfg.get("sequential", False))
    if "WORLD_SIZE" in os.environ:
        return worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), cfg, resume)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(free_port())
    try:
        mp.spawn(worker, args=(cfg["nproc"], cfg, resume), nprocs=cfg["nproc"])
    except mp.ProcessRaisedException as err:  # a user error on a rank: one line, as in one process
        lines = [ln for ln in str(err).splitlines() if ln.startswith("ValueError: ")]
        if lines:
            raise ValueError(lines[-1][len("ValueError: "):]) from None
        raise
    return json.loads((Path(cfg["out"]) / "summary.json").read_text())
