"""Communication rules: what happens to the stacked client state after the local phase of a round.

Every rule is a matrix product with a mixing matrix W (dense or sparse, fixed or drawn per round from a
time-varying topology) or with the server matrix ``1 p^T`` (p uniform over the round's participants).
Rules count the models they send (one per non-zero off-diagonal entry of W per gossip step; 2|S| per server
round: |S| uploads and |S| downloads) in ``ctx.sent``. DFedSGPSM-S draws its W from the clients' losses each round
(:class:`loss_selected_push_sum`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from dfltheory.empirical.rules import debias


class Mixing:
    """Mixing matrices for the engine: one fixed W, or ``topology.matrix(t)`` drawn per round.

    ``source``: an (m, m) array/tensor, or an object with ``matrix(t) -> ndarray`` and ``time_varying``
    (:func:`dfltheory.topology.build`). ``sparse=True`` multiplies with a torch sparse CSR matrix, ``False``
    with a dense one, ``None`` (default) picks sparse when at most ``SPARSE_DENSITY`` of the entries of the
    first W are non-zero (ring, grid, exponential at m = 100) and dense otherwise.
    """

    SPARSE_DENSITY = 0.1

    def __init__(self, source, *, sparse: bool | None = None, device="cpu", dtype=torch.float32):
        self.source, self.device, self.dtype = source, torch.device(device), dtype
        if sparse is None:
            first = np.asarray(self._raw(0))
            sparse = bool(np.count_nonzero(first) <= self.SPARSE_DENSITY * first.size)
        self.sparse = sparse
        self.time_varying = bool(getattr(source, "time_varying", False))
        self._fixed = None if self.time_varying else self._convert(self._raw(0))
        self.m = self.at(0).shape[0]

    def to(self, device=None, dtype: torch.dtype | None = None) -> Mixing:
        """This mixing on ``device`` in ``dtype`` (itself when both already match). The engine converts its
        mixing to the models' dtype, so a float64 run multiplies with W in float64 (w = 1/3 exactly rounded)."""
        device = self.device if device is None else torch.device(device)
        dtype = self.dtype if dtype is None else dtype
        if device == self.device and dtype == self.dtype:
            return self
        return Mixing(self.source, sparse=self.sparse, device=device, dtype=dtype)

    def _raw(self, t: int):
        return self.source.matrix(t) if hasattr(self.source, "matrix") else self.source

    def _convert(self, W) -> torch.Tensor:
        W = torch.as_tensor(np.asarray(W, dtype=np.float64)).to(self.dtype)
        if W.ndim != 2 or W.shape[0] != W.shape[1]:
            raise ValueError(f"a mixing matrix must be square, got shape {tuple(W.shape)}")
        if not torch.isfinite(W).all():
            raise ValueError("the mixing matrix has NaN/inf entries; check the topology weights")
        W = W.to(self.device)
        if not self.sparse:
            return W
        with warnings.catch_warnings():  # "sparse CSR support is in beta"
            warnings.simplefilter("ignore", UserWarning)
            return W.to_sparse_csr()

    def at(self, t: int) -> torch.Tensor:
        """W for draw ``t`` (round t, or round t's q-th gossip step for per-step draws)."""
        return self._fixed if self._fixed is not None else self._convert(self._raw(t))

    def redrawn(self, t: int, **params) -> torch.Tensor:
        """W of round t of the source topology rebuilt with ``params`` (DFedSGPSM-S: ``losses``)."""
        from dfltheory.topology import Topology

        src = self.source
        return self._convert(Topology(src.name, src.n, src.weights, src.seed, {**src.params, **params}).matrix(t))


def mix(W: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """Row i of the result: sum_l w_il X[l] (eq. (4) of seed 001: x^{t+1}(i) = sum_l w_il z^t(l))."""
    W = W.to(X.dtype)
    return torch.sparse.mm(W, X) if W.layout != torch.strided else W @ X


def links(W: torch.Tensor) -> int:
    """Models sent by one gossip step: the non-zero off-diagonal entries of W."""
    D = W.to_dense() if W.layout != torch.strided else W
    return int((D != 0).sum().item() - (D.diagonal() != 0).sum().item())


@dataclass
class CommContext:
    t: int
    m: int
    active: torch.Tensor  # indices of the clients that trained this round
    mixing: Mixing | None
    draws_per_round: int = 1  # gossip draws per round for time-varying mixing (multi_gossip fresh)
    shared: torch.Tensor | None = None  # (d,) bool: the coordinates push-sum mixes (DFedPGP's u); None: all
    losses: Callable[[torch.Tensor], torch.Tensor] | None = None  # stacked models -> each client's minibatch loss
    sent: int = 0
    extra: dict = field(default_factory=dict)
    # (W, rows) -> the product W @ X for these rows: :func:`mix` here, the row exchange of a distributed engine
    # (:mod:`dfltheory.empirical.distributed`), where the state holds one contiguous block of clients
    mixer: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = mix

    def W(self, q: int = 0) -> torch.Tensor:
        if self.mixing is None:
            raise ValueError("this algorithm gossips and needs a topology; pass --topology")
        return self.mixing.at(self.t * self.draws_per_round + q)


class CommRule:
    name = "comm"
    draws = 1  # mixing matrices drawn per round
    sequential = False  # it also runs one client at a time, in place (the engine's sequential schedule)

    def init(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """The rule's own tensors (``cstate``)."""
        return {}

    def init_state(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Per-client rows the rule adds to the client state (push-sum weights)."""
        return {}

    def apply(self, state: dict, cstate: dict, ctx: CommContext) -> None:
        raise NotImplementedError

    def sequential_row(self, rows, X: torch.Tensor, W: torch.Tensor, state: dict, cstate: dict) -> torch.Tensor:
        """The sequential (Gauss-Seidel) schedule's communication for clients ``rows`` (an index tensor), where
        ``sequential``: ``X`` the current models (rows already trained this round and the others), ``W`` dense;
        returns their round-start models and updates their rows of the rule's state."""
        raise ValueError(f"{self.name} has no sequential (in-place) schedule; drop --sequential")

    def sequential_end(self, state: dict, cstate: dict) -> None:
        """After a sequential round's last client (the rule's averages over all rows)."""


class gossip(CommRule):
    """X^{t+1} = W Z^t (seed 001 eq. (4)/(9); seed 004 eq. (8), line 18)."""

    name = "gossip"

    def apply(self, state, cstate, ctx):
        W = ctx.W()
        state["x"] = ctx.mixer(W, state["x"])
        ctx.sent += links(W)


class parallel_gossip(gossip):
    """D-PSGD as Lian et al. 2017 wrote it (NeurIPS 2017, arXiv:1705.09056, Algorithm 1 lines 2-4; in their matrix
    form, whose columns are the nodes, X_{k+1} = X_k W - gamma dF(X_k; xi_k)): mixing and the local step run in
    parallel from the same models X^t, the gradient taken at the unmixed point. Row i:

        x_i^{t+1} = sum_l w_il x_l^t + (z_i^t - x_i^t),    z_i^t = the local phase's result from x_i^t,

    so with one SGD step x_i^{t+1} = sum_l w_il x_l^t - eta grad F_i(x_i^t; xi_i^t) (cards dfedcata §3.3 and
    dfedsgpsm §3.3: x_i <- sum_j w_ij x_j - eta g_i). The round-start models X^t are a row of the client state
    (``x_start``). :class:`gossip` after the local phase is the other order, step then mix (``dpsgd-atc``).
    """

    name = "parallel_gossip"

    def init_state(self, x):
        return {"x_start": x.clone()}

    def apply(self, state, cstate, ctx):
        W = ctx.W()
        start = state["x_start"]
        state["x"] = ctx.mixer(W, start) + (state["x"] - start)
        state["x_start"] = state["x"]  # X^{t+1}, where the next round starts (read only, never changed in place)
        ctx.sent += links(W)


class multi_gossip(CommRule):
    """Q gossip steps, X^{t+1} = W^Q Z^t (DFedSAM-MGS, seed 001 eq. (5)/(14), card dfedsam §3.1).

    ``fresh=True`` draws a new W for each step from a time-varying topology, X^{t+1} = W_{t,Q} ... W_{t,1} Z^t,
    the experiments' protocol (seed 001 L307, card dfedsam §3.2).
    """

    name = "multi_gossip"

    def __init__(self, Q: int, fresh: bool = False):
        if Q < 1:
            raise ValueError(f"the number of gossip steps Q must be >= 1, got {Q}")
        self.Q, self.fresh = Q, fresh
        self.draws = Q if fresh else 1

    def apply(self, state, cstate, ctx):
        x = state["x"]
        for q in range(self.Q):
            W = ctx.W(q if self.fresh else 0)
            x = ctx.mixer(W, x)
            ctx.sent += links(W)
        state["x"] = x


class nesterov_extrapolation(CommRule):
    """DFedCata's aggregation with Nesterov extrapolation (card dfedcata §3.1, seed 002 L9, L38 "line 3").

    a^{t+1} = W X_K^t, then
      mode "A" (pre/post-aggregation; the public code):  y = a + beta (a - X_K^t)   = ((1+beta)W - beta I) X_K^t
      mode "B" (Catalyst-consecutive; the proof):         y = a + beta (a - a^t)
    with a^0 = x^0. ``cstate`` keeps a (needed by B) and the means a_bar^{t+1}, a_bar^t (for p^t, card §6.1).
    """

    name = "nesterov"
    sequential = True

    def __init__(self, beta: float, mode: str = "A"):
        if mode not in ("A", "B"):
            raise ValueError(f"nesterov mode must be 'A' (pre/post-aggregation) or 'B' (consecutive), got {mode!r}")
        if not 0 <= beta < 1:
            raise ValueError(f"beta must be in [0, 1), got {beta}")
        self.beta, self.mode = beta, mode

    def init(self, x):
        a = x.clone()
        return {"agg": a, "agg_mean": a.mean(0), "agg_mean_prev": a.mean(0)}

    def _extrapolate(self, a, own_last, a_prev):
        return a + self.beta * (a - (own_last if self.mode == "A" else a_prev))

    def apply(self, state, cstate, ctx):
        W = ctx.W()
        a = ctx.mixer(W, state["x"])
        state["x"] = self._extrapolate(a, state["x"], cstate["agg"])
        cstate["agg_mean_prev"], cstate["agg_mean"] = cstate["agg_mean"], a.mean(0)
        cstate["agg"] = a
        ctx.sent += links(W)

    def aggregate_row(self, c, X: torch.Tensor, W: torch.Tensor, cstate: dict) -> torch.Tensor:
        """The public code's sequential (Gauss-Seidel) aggregation for client(s) ``c`` (an index tensor of rows;
        card dfedcata §3.2 item 1).

        ``X`` holds the current models: rows j < c already trained this round, rows j >= c from the last round;
        ``W`` is dense. Returns the starting points y_c (one row per index) and records a_c.
        """
        a = W[c] @ X
        y = self._extrapolate(a, X[c], cstate["agg"][c])
        cstate["agg"][c] = a
        return y

    def sequential_row(self, rows, X, W, state, cstate):
        return self.aggregate_row(rows, X, W, cstate)

    def sequential_end(self, state, cstate):
        cstate["agg_mean_prev"], cstate["agg_mean"] = cstate["agg_mean"], cstate["agg"].mean(0)


class push_sum(CommRule):
    """Push-sum mixing with a column-stochastic P: x <- P x, w <- P w (card dfedsgpsm §3.1 lines 14-16).

    ``x`` holds the numerators; local rules take gradients at z = x / w (``StepContext.point``). With
    w^0 = 1, sum_i w_i = m at every round. Each link carries the pair (x, w), counted as one model. With
    ``ctx.shared`` only those coordinates are mixed: DFedPGP's u_i^{t+1} = sum_j p_ij u_j^{t+1/2},
    mu_i^{t+1} = sum_j p_ij mu_j^t, v never sent (seed 003 Algorithm 1 lines 13-17, card dfedpgp §3.1).
    """

    name = "push_sum"

    def init_state(self, x):
        return {"ps_weight": torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)}

    def matrix(self, state: dict, ctx: CommContext) -> torch.Tensor:
        return ctx.W()

    def apply(self, state, cstate, ctx):
        P = self.matrix(state, ctx)
        mixed = ctx.mixer(P, state["x"])
        state["x"] = mixed if ctx.shared is None else torch.where(ctx.shared, mixed, state["x"])
        state["ps_weight"] = ctx.mixer(P, state["ps_weight"])
        ctx.sent += links(P)


class loss_selected_push_sum(push_sum):
    """DFedSGPSM-S: push-sum whose P(t) follows the clients' losses (seed 000 App. A.1 eq. (2), L285-289; card
    dfedsgpsm §3.2): client i picks its out-neighbours j with p(b_ij) = e^{|f_i - f_j|} / sum_j e^{|f_i - f_j|}
    (topology 'neighbour-selection': k draws without replacement, self-loop kept, p_ji = 1/|N_i^out|).

    f_i: the loss of client i's de-biased model z_i^{t+1/2} = x_i^{t+1/2} / w_i^t on its last local minibatch,
    all clients in one batched call (the paper does not say which loss; card dfedsgpsm §11 item 32).
    """

    name = "loss_selected_push_sum"

    def matrix(self, state, ctx):
        losses = ctx.losses(debias(state["x"], state["ps_weight"]))
        return ctx.mixing.redrawn(ctx.t, losses=losses.detach().cpu().double().numpy())


class server_average(CommRule):
    """Centralized server round with global lr 1: x <- sum_{i in S} p_i x_i, sent back to all clients.

    FedAvg / FedProx / FedSAM / SCAFFOLD (cards dfedsam §3.3, dfedcata §3.3). ``weights`` (length m, e.g. the
    clients' sample counts) gives the weighted average; default uniform over the participants S.
    """

    name = "server_average"

    def __init__(self, weights=None):
        self.weights = None if weights is None else torch.as_tensor(np.asarray(weights, dtype=np.float64))

    def apply(self, state, cstate, ctx):
        x = state["x"]
        p = torch.ones(len(ctx.active), dtype=x.dtype, device=x.device)
        if self.weights is not None:
            p = self.weights[ctx.active.cpu()].to(x.dtype).to(x.device)
        p = p / p.sum()
        avg = p @ x[ctx.active]
        state["x"] = avg.expand_as(x).clone()
        ctx.sent += 2 * len(ctx.active)


class scaffold_control(CommRule):
    """SCAFFOLD server control update c <- c + (1/m) sum_{i in S} (c_i^+ - c_i), broadcast (Karimireddy et al. 2020)."""

    name = "scaffold_control"

    def apply(self, state, cstate, ctx):
        c = state["c_global"][0] + state["c_delta"][ctx.active].sum(0) / ctx.m
        state["c_global"] = c.expand_as(state["c_global"]).clone()
        state["c_delta"] = torch.zeros_like(state["c_delta"])
        ctx.sent += 2 * len(ctx.active)


class chain_comm(CommRule):
    """Apply communication rules in order."""

    name = "chain_comm"

    def __init__(self, *rules: CommRule):
        self.rules = rules
        self.draws = max(r.draws for r in rules)

    def init(self, x):
        out = {}
        for r in self.rules:
            out.update(r.init(x))
        return out

    def init_state(self, x):
        out = {}
        for r in self.rules:
            out.update(r.init_state(x))
        return out

    def apply(self, state, cstate, ctx):
        for r in self.rules:
            r.apply(state, cstate, ctx)
