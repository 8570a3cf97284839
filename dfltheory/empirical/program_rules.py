"""The torch interpreter of a step program (:mod:`dfltheory.program`): the engine's local and communication rules.

A client-stacked point is a tensor of shape (m, d) (rows = clients). :class:`ProgramRule` is a
:class:`~dfltheory.empirical.rules.Transform`: its ``direction`` runs the program's local step on ``ctx`` (the
engine applies x <- x - eta d), ``round_start`` restarts the slots reset every round, ``round_end`` runs the
program's. :class:`ProgramComm` is a :class:`~dfltheory.empirical.communication.CommRule` running its
communication: ``ops.gossip`` multiplies by W (Q times), ``ops.push_sum`` by P with the weights w (``ps_weight``),
``ops.debias`` divides by w, ``ops.normalize`` is the row-wise g / (||g|| + EPS) of :class:`rules.sam`; the
other steps of the algebra's table (``personal``/``shared`` masks, ``clip``, the server's ``server_average`` and
``server_sum``, ``push_sum_by_loss``) are the hand-written rules' operations, in their order, so that a derived
algorithm equals its hand-written oracle bit for bit (``tests/empirical/test_program.py``).
:func:`algorithm` composes them into an :class:`~dfltheory.empirical.composed.Algorithm`;
:func:`dfltheory.empirical.algorithms.register_program` makes a program an algorithm of ``train``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R
from dfltheory.empirical.composed import Algorithm
from dfltheory.program import Program

__all__ = ["ProgramComm", "ProgramRule", "algorithm"]


class _LocalOps:
    """The steps of the local phase on the engine's :class:`rules.StepContext`; ``personal_phase``: this step moves
    the personal coordinates only (:attr:`ProgramRule.phase`)."""

    def __init__(self, ctx: R.StepContext, personal_phase: bool = False):
        self.ctx, self.anchor, self.eta, self.decay, self.K = ctx, ctx.anchor, ctx.lr, ctx.decay, ctx.K
        self.personal_phase = personal_phase

    def grad(self, X):
        return self.ctx.grad(X)

    def normalize(self, G):
        return G / (G.norm(dim=1, keepdim=True) + R.EPS)

    def debias(self, X):
        return R.debias(X, self.ctx.state.get("ps_weight"), self.ctx.shared)

    def personal(self, X):
        return torch.where(~self._mask(), X, 0.0)

    def shared(self, X):
        return torch.where(self._mask(), X, 0.0)

    def clip(self, D, max_norm, eps=R.EPS):
        """:class:`rules.clip`'s d min(1, c / (||d|| + eps))."""
        return R.clip(max_norm, eps).direction(D, self.ctx)

    def _mask(self):
        if self.ctx.shared is None:
            raise ValueError("this program splits the model into shared and personal coordinates, but the run has no "
                             "split; give the algorithm a split (Algorithm(split=...))")
        return self.ctx.shared

    def gossip(self, X, Q=1):
        raise ValueError("gossip is communication: write it in the program's communicate, not in its local step")

    push_sum = gossip


class _CommOps:
    """The steps of the communication on the engine's :class:`communication.CommContext`."""

    def __init__(self, state: dict, ctx: C.CommContext, fresh: bool, weights: torch.Tensor | None = None):
        self.state, self.ctx, self.fresh, self.weights = state, ctx, fresh, weights
        self.anchor = state.get("x_start")

    def gossip(self, X, Q=1):
        for q in range(Q):
            W = self.ctx.W(q if self.fresh else 0)
            X = self.ctx.mixer(W, X)
            self.ctx.sent += C.links(W)
        return X

    @property
    def m(self) -> int:
        return self.ctx.m

    def server_sum(self, X):
        """x_i <- sum_{j in S} x_j for every i, the participants' sum sent back to all (2|S| models sent)."""
        active = self.ctx.active
        self.ctx.sent += 2 * len(active)
        return X[active].sum(0).expand_as(X).clone()

    def server_average(self, X):
        """x_i <- sum_{j in S} p_j x_j for every i, p uniform over the participants S or the ``weights`` (length m)
        normalised on S; 2|S| models sent (:class:`communication.server_average`)."""
        active = self.ctx.active
        p = torch.ones(len(active), dtype=X.dtype, device=X.device)
        if self.weights is not None:
            p = self.weights[active.cpu()].to(X.dtype).to(X.device)
        p = p / p.sum()
        self.ctx.sent += 2 * len(active)
        return (p @ X[active]).expand_as(X).clone()

    def push_sum(self, X, P=None):
        P = self.ctx.W() if P is None else P
        mixed = self.ctx.mixer(P, X)
        self.state["ps_weight"] = self.ctx.mixer(P, self.state["ps_weight"])
        self.ctx.sent += C.links(P)
        return mixed if self.ctx.shared is None else torch.where(self.ctx.shared, mixed, X)

    def push_sum_by_loss(self, X):
        """Push-sum with P(t) redrawn from the clients' losses at their de-biased models z = x/w
        (:class:`communication.loss_selected_push_sum`)."""
        losses = self.ctx.losses(R.debias(X, self.state["ps_weight"]))
        return self.push_sum(X, self.ctx.mixing.redrawn(self.ctx.t, losses=losses.detach().cpu().double().numpy()))

    def debias(self, X):
        return R.debias(X, self.state.get("ps_weight"), self.ctx.shared)

    def grad(self, X):
        raise ValueError("a gradient is a local step: write it in the program's direction, not in its communicate")

    normalize = _LocalOps.normalize


class _RowOps:
    """The communication of clients ``rows`` alone, in place (``Program.sequential``; card dfedcata §3.2 item 1):
    ``ops.gossip`` of the rows' models is W[rows] X, X the current models of every client (rows < c already trained
    this round, the others from the last round)."""

    def __init__(self, X: torch.Tensor, W: torch.Tensor, rows: torch.Tensor, own: torch.Tensor):
        self.X, self.W, self.rows, self.own = X, W, rows, own

    def gossip(self, Y, Q=1):
        if Q != 1:
            raise ValueError(f"the sequential schedule mixes once per round; give Q=1 (got Q={Q}) or drop --sequential")
        if Y is not self.own:
            raise ValueError("the sequential schedule mixes the clients' own models (ops.gossip(s['x'])), nothing else")
        return self.W[self.rows] @ self.X


def _initial(slot, x):
    return x.clone() if slot.init == "x0" else torch.zeros_like(x)


class ProgramRule(R.Transform):
    """The program's local rule (module docstring), then ``extras``: transforms of the engine's
    :mod:`~dfltheory.empirical.rules` applied to the program's direction in order (weight decay, clipping: options of
    a run, not of the algorithm)."""

    def __init__(self, program: Program, params, extras: tuple[R.Transform, ...] = ()):
        self.program, self.params, self.name, self.extras = program, params, program.name, tuple(extras)
        self._reset = tuple(s for s in program.slots if s.reset)
        self._direction, self._round_end = program.direction, program.round_end
        self._personal_units = params[program.personal] if program.personal else 0
        if self._personal_units < 0:
            raise ValueError(f"{program.personal} (personal local units per round) must be >= 0, got "
                             f"{self._personal_units}")

    def init(self, x):
        out = {s.name: _initial(s, x) for s in self.program.carried if s.name != "x"}
        for t in self.extras:
            out.update(t.init(x))
        return out

    def round_start(self, ctx):
        for s in self._reset:
            ctx.state[s.name] = _initial(s, ctx.x)
        for t in self.extras:
            t.round_start(ctx)

    def direction(self, d, ctx):
        d = self._direction(_LocalOps(ctx, ctx.k < self._personal_units * ctx.unit), ctx.state, self.params)
        for t in self.extras:
            d = t.direction(d, ctx)
        return d

    def round_end(self, ctx):
        self._round_end(_LocalOps(ctx), ctx.state, self.params)
        for t in self.extras:
            t.round_end(ctx)
        for s in self._reset:
            del ctx.state[s.name]

    def phase(self, k, unit):
        """The personal phase (k < K_v local units) where the program has one, and the extras' phases."""
        own = (k < self._personal_units * unit,) if self.program.personal else ()
        return (*own, *(t.phase(k, unit) for t in self.extras)) or None

    def __repr__(self):
        return " -> ".join([self.name, *(t.name for t in self.extras)])


class ProgramComm(C.CommRule):
    """The program's communication rule (module docstring); ``fresh``: a new W per gossip step (``Q`` of them per
    round) from a time-varying topology."""

    def __init__(self, program: Program, params, fresh: bool = False, weights=None):
        self.program, self.params, self.fresh, self.name = program, params, fresh, f"{program.name}:communicate"
        self.draws = params.get("Q", 1) if fresh else 1
        self.sequential = program.sequential
        self.weights = None if weights is None else torch.as_tensor(np.asarray(weights, dtype=np.float64))

    def init_state(self, x):
        rows = {"ps_weight": torch.ones(x.shape[0], 1, dtype=x.dtype, device=x.device)} \
            if self.program.mixing == "push-sum" else {}
        if self.program.keeps_start:  # the round-start models X^t, read by the communication (Lian's D-PSGD)
            rows["x_start"] = x.clone()
        return rows

    def apply(self, state, cstate, ctx):
        ops = _CommOps(state, ctx, self.fresh, self.weights)
        self.program.communicate(ops, state, self.params)
        if self.program.start is not None:
            state["x"] = self.program.start(ops, state, self.params)
        if self.program.keeps_start:
            state["x_start"] = state["x"]  # X^{t+1}, where the next round starts (never changed in place)

    def sequential_row(self, rows, X, W, state, cstate):
        """The program's communication for clients ``rows`` alone (:class:`_RowOps`): their slots are updated in
        ``state``; returns their round-start models (x, or ``start``'s)."""
        s = {slot.name: state[slot.name][rows] for slot in self.program.carried if slot.name != "x"}
        s["x"] = own = X[rows]
        ops = _RowOps(X, W, rows, own)
        self.program.communicate(ops, s, self.params)
        if self.program.start is not None:
            s["x"] = self.program.start(ops, s, self.params)
        for name, value in s.items():
            if name != "x":
                state[name][rows] = value
        return s["x"]


def _aux(program: Program, params):
    """The metric point p^t = x_bar^t + c (x_bar^t - x_bar^{t-1}) (the engine's auxiliary sequence; x_bar^{t-1} the
    mean the engine kept before the round, which is also the mean of a ``prev`` slot); none where c is not finite
    (DFedADMM's gamma = 0)."""
    metric = program.metric

    def aux(xbar, xbar_prev, cstate, lr, K):
        c = metric.coefficient(type(params)(params, eta=lr, K=K))
        if not math.isfinite(c):
            return {}
        return {metric.name: xbar + c * (xbar - xbar_prev) if c else xbar.clone()}

    return aux


def algorithm(program: Program, params=None, /, *, fresh: bool = False, name: str | None = None,
              extras: tuple[R.Transform, ...] = (), server_weights=None, **fields):
    """The engine's :class:`~dfltheory.empirical.composed.Algorithm` of ``program`` at ``params`` (a dict of the
    program's hyper-parameters; the program's defaults fill in the others), named ``name`` (default the program's),
    its direction followed by the transforms ``extras``, a server's average weighted by ``server_weights`` (length
    m; None: uniform over the participants); ``fields`` set the Algorithm's other fields (``params``, ``K_v``,
    ``split``, ...) over the ones the program gives (K, stochastic, x_bar, aux, decentralized)."""
    p = program.bind(**(params or {}))
    slot = program.metric.slot
    x_bar = None if slot == "x" else (lambda state, cstate: state[slot].mean(0))
    given = dict(K=program.K, params=dict(p), stochastic="column" if program.mixing == "push-sum" else "row",
                 x_bar=x_bar, averaged=slot, aux=_aux(program, p) if program.metric.name != "x_bar" else None,
                 decentralized=program.mixing != "server")
    return Algorithm(name or program.name, ProgramRule(program, p, extras),
                     ProgramComm(program, p, fresh, server_weights),
                     **{**given, **fields})
