"""S independent copies of one run in one engine: seeds as an extra batch axis (issue 21, item 3).

A theorem bounds an expectation over the minibatches; its estimate needs S runs that differ only in their sampling.
On a tiny problem (d ~ 10, m = 8) a round is launch-bound, so S separate runs cost S times one. Here the S copies
are S m clients of one engine: copy s holds clients s m .. s m + m - 1, each with client (i mod m)'s data, and the
mixing matrix is the block-diagonal I_S (x) W_t (the same graph, fixed or redrawn per round, in every copy), so no
information passes between copies. Every client draws its own minibatches from the engine's one generator, so the
copies' samples are independent; copy s is *not* the run ``seed = s`` of the single-copy engine (the draws are
interleaved), and a replicated run is reproducible from its own seed.

:class:`Replicas` measures the per-round quantity of every copy at once (the full local gradients of all S m rows
in one vmapped call) and keeps them on the engine's device; :func:`replicate` builds the data and the mixing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

#: the quantities a replicated run can measure per round (dfltheory.verify.measures names them)
QUANTITIES = ("grad_norm_sq", "grad_norm_sq_p", "grad_norm_sq_w", "delta_pgp")


@dataclass(frozen=True)
class BlockDiagonal:
    """The mixing source of S copies: ``matrix(t)`` = diag(W_t^(1), ..., W_t^(S)) of ``sources`` (each an (m, m)
    array or an object with ``matrix(t)`` and ``time_varying``, as
    :class:`dfltheory.empirical.communication.Mixing` takes); S copies of one source give I_S (x) W_t."""

    sources: tuple

    @property
    def time_varying(self) -> bool:
        return any(getattr(s, "time_varying", False) for s in self.sources)

    def matrix(self, t: int) -> np.ndarray:
        from scipy.linalg import block_diag

        return block_diag(*(np.asarray(s.matrix(t) if hasattr(s, "matrix") else s, dtype=np.float64)
                            for s in self.sources))


def replicate(data, copies: int, parts=None):
    """``data`` with its clients repeated ``copies`` times (client s m + i holds client i's indices), or with the
    clients of ``parts`` (one data set per copy, the same samples split otherwise) one after the other."""
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ValueError(f"replicas must be a positive integer (independent copies of the run), got {copies!r}")
    parts = [data] * copies if parts is None else list(parts)
    tests = [p.client_test_indices for p in parts]
    return replace(data, client_indices=[ix for p in parts for ix in p.client_indices],
                   client_test_indices=None if tests[0] is None else [ix for t in tests for ix in t])


class Copy:
    """Copy ``s`` of a replicated engine seen as a run of its own (rows s m .. s m + m - 1): the attributes
    :func:`dfltheory.empirical.metrics.measure` reads, with ``xbar_prev`` that copy's average of the last round."""

    def __init__(self, engine, s: int, m: int, xbar_prev: torch.Tensor | None = None):
        self.engine, self.rows = engine, slice(s * m, (s + 1) * m)
        self.t, self.shared, self.sent = engine.t, engine.shared, engine.sent * m // engine.m  # mean over copies
        self.lr_at = engine.lr_at
        n = engine.m
        self.state = {k: v[self.rows] for k, v in engine.state.items() if torch.is_tensor(v) and v.dim()
                      and v.shape[0] == n}
        self.cstate = {k: v[self.rows] for k, v in engine.cstate.items() if torch.is_tensor(v) and v.dim()
                       and v.shape[0] == n}
        self.xbar_prev = self.x_bar() if xbar_prev is None else xbar_prev  # x_bar^{-1} := x_bar^0, as the engine's

    def x_bar(self) -> torch.Tensor:
        if self.engine.sequential:  # the trained local models' mean, as Engine.x_bar
            return self.state["x"].mean(0)
        return self.engine.algo.average(self.state, self.cstate)

    def client_models(self) -> torch.Tensor:
        return self.engine.algo.client_models(self.state, self.shared)

    def aux_points(self) -> dict[str, torch.Tensor]:
        e = self.engine
        if e.algo.aux is None:
            return {}
        K = e.K if not e.epochs else float(e.local_steps[self.rows].double().mean())
        return e.algo.aux(self.x_bar(), self.xbar_prev, self.cstate, e.lr_at(max(e.t - 1, 0)), K)


class Replicas:
    """Per-round measurement of the S copies of a replicated engine (:func:`dfltheory.empirical.runner.build` with
    ``replicas=S``): ``measure()`` after each round returns the (S,) per-round quantity named ``quantity``:

    * ``grad_norm_sq``: ||grad f(x_bar_s^t)||^2 of each copy's average model (``Algorithm.average`` on its rows);
    * ``grad_norm_sq_p`` / ``grad_norm_sq_w``: the same at the algorithm's auxiliary point p or w (DFedCata,
      DFedADMM), from each copy's x_bar^t and x_bar^{t-1};
    * ``delta_pgp``: DFedPGP's Delta_ubar^t/L_u + Delta_v^t/L_v (:mod:`dfltheory.empirical.metrics`; Delta_ubar^t
      is measured once round t has produced V^{t+1}), with ``scales`` = (L_u, L_v).

    The full gradient of f at S points is one ``vmap(grad)`` over the S m rows with each client's whole data (all
    clients must hold the same number of samples, as the synthetic problems do).
    """

    def __init__(self, engine, copies: int, quantity: str, scales: tuple[float, float] = (1.0, 1.0)):
        if quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {quantity!r}; choose one of {', '.join(QUANTITIES)}")
        self.engine, self.S, self.quantity, self.scales = engine, copies, quantity, scales
        self.m = engine.m // copies
        if self.m * copies != engine.m:
            raise ValueError(f"the engine has {engine.m} clients, not a multiple of {copies} copies")
        pools = [torch.as_tensor(ix) for ix in engine.data.client_indices]
        if len({len(ix) for ix in pools}) != 1:
            raise ValueError("a replicated run measures the full gradient of every client in one batch, which needs "
                             "equal client sizes; use a synthetic problem (equal n_per_client)")
        idx = torch.stack(pools).to(engine.device)
        self.inputs, self.targets = engine.x_train[idx], engine.y_train[idx]
        grads = engine.model.vmapped_grad
        self._grads = torch.compile(grads, dynamic=False) if engine.compiled else grads  # as the engine's steps
        # DFedPGP's two point sets in one call: every client's data twice (the other quantities need no copy)
        self._twice = ((torch.cat([self.inputs] * 2), torch.cat([self.targets] * 2)) if quantity == "delta_pgp"
                       else None)
        self.prev = self.averages()  # x_bar_s^{t-1} (DFedCata: a_bar_s) of every copy
        self.pending = None  # DFedPGP's Delta_v^t / L_v, paired with the next round's Delta_ubar^t

    def averages(self) -> torch.Tensor:
        """(S, d): each copy's average model (``Algorithm.average``; the mean of its rows of x, or of the state slot
        the algorithm averages (``Algorithm.averaged``: DFedCata's aggregates), in one call)."""
        e = self.engine
        averaged = "x" if e.algo.x_bar is None or e.sequential else e.algo.averaged  # a slot's mean (Algorithm)
        if averaged is not None:
            return e.state[averaged].reshape(self.S, self.m, -1).mean(1)
        return torch.stack([Copy(e, s, self.m).x_bar() for s in range(self.S)])

    def full_grads(self, P: torch.Tensor) -> torch.Tensor:
        """(S, m, d): grad f_i at P[s, i] on client i's whole data."""
        S, m, d = P.shape
        g = self._grads(P.reshape(S * m, d), self.inputs, self.targets)
        return g.reshape(S, m, d)

    def _quantity(self) -> torch.Tensor:
        """(S,) the quantity at the engine's current state (DFedPGP: Delta_ubar of the round just run over L_u; its
        Delta_v/L_v waits in ``self.pending`` for the next round, whose Delta_ubar pairs with it)."""
        e, S, m = self.engine, self.S, self.m
        xbar = self.averages()
        if self.quantity == "delta_pgp":
            s_mask, X = e.shared, e.state["x"].reshape(S, m, -1)
            # one batched call at both point sets: (u_bar^t, v_i^{t+1}) for Delta_ubar, (u_i, v_i) for Delta_v
            P = torch.cat([torch.where(s_mask, self.prev[:, None, :], X), X])
            G = self._grads(P.reshape(2 * S * m, -1), *self._twice).reshape(2 * S, m, -1)
            g_u, g_v = G[:S].mean(1)[:, s_mask], G[S:][:, :, ~s_mask]
            out = (g_u**2).sum(1) / self.scales[0] + self.pending
            self.pending = (g_v**2).sum(2).mean(1) / self.scales[1]
        else:
            if self.quantity == "grad_norm_sq":
                Z = xbar
            else:
                lr, K = e.lr_at(max(e.t - 1, 0)), e.K
                Z = torch.stack([next(iter(e.algo.aux(xbar[s], self.prev[s], Copy(e, s, m, self.prev[s]).cstate, lr,
                                                      K).values()), xbar[s]) for s in range(S)])
            g = self.full_grads(Z[:, None, :].expand(S, m, Z.shape[1]).contiguous()).mean(1)
            out = (g**2).sum(1)
        self.prev = xbar
        return out.double()

    @torch.no_grad()
    def run(self, rounds: int, terms: torch.Tensor | None = None, on_round=None) -> torch.Tensor:
        """The (S, rounds) per-round terms g_t, t = 0..rounds-1, of :func:`dfltheory.verify.measures.per_round`:
        the gradient quantities at the records t = 0 (x^0) .. rounds-1, DFedPGP's Delta_ubar^t/L_u + Delta_v^t/L_v.
        ``terms``: the first n terms of a resumed run, its engine restored at round n - 1 (DFedPGP: at round n, its
        pending Delta_v recomputed); ``on_round(t, terms)`` after each round (checkpoints,
        progress)."""
        e = self.engine
        done = 0 if terms is None else terms.shape[1]
        out = torch.empty(self.S, rounds, dtype=torch.float64, device=e.device)
        if done:
            out[:, :done] = terms.to(e.device)
        pgp = self.quantity == "delta_pgp"
        self.prev = self.averages()
        if pgp:
            X = e.state["x"].reshape(self.S, self.m, -1)
            self.pending = (self.full_grads(X)[:, :, ~e.shared] ** 2).sum(2).mean(1) / self.scales[1]
        t = done
        if not pgp and t == 0:
            out[:, 0], t = self._quantity(), 1
        while t < rounds:
            e.round()
            out[:, t] = self._quantity()
            t += 1
            if on_round is not None:
                on_round(t, out[:, :t])
        return out
