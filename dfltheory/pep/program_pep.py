"""The PEP interpreter of a step program (:mod:`dfltheory.program`): its rounds over PEPit points.

A client-stacked point is a :class:`Stack`, one PEPit point per agent (or :data:`ZERO`, the exact zero of a slot
initialised at 0, so that no zero term enters the SDP: DFedADMM's ghat^{-1} = 0, a momentum's v = 0). The steps:
``grad`` queries f_i at row i (through the caller's ``query``, which imposes sigma_g = 0 exactly, see
``problem._oracle``), ``gossip`` is W^Q (an explicit W or sequence: exact linear combinations; the spectral class:
new points under its conditions, ``consensus``), ``push_sum`` is P with the weights w^{t+1} = P_t w^t kept as
numbers (so ``debias``, x_i / w_i, is the linear combination (1/w_i) x_i: exact for that P), ``normalize`` is not
expressible (:class:`dfltheory.program.NotExpressible`), and so is every torch-only step of the algebra's table
(:data:`dfltheory.program.TORCH_ONLY`: a server's average, the personal/shared masks, clipping, ...).

:func:`rounds` runs the fixed-T PEP's T - 1 rounds (``problem._build``), :func:`one_round` one round from a free
state (the certificate's, ``certify._one_round``): every slot carried across rounds is a new point per agent, and
a previous mean that the metric reads is one new common point.
"""

from __future__ import annotations

import numpy as np

from dfltheory.pep.mixing import ExplicitMixing, PushSumMixing
from dfltheory.program import TORCH_ONLY, NotExpressible, Params, Program

__all__ = ["ZERO", "Stack", "components", "one_round", "rounds"]


class _Zero:
    """The exact zero point (a slot initialised at 0): absorbed by every linear combination."""

    def __repr__(self):
        return "ZERO"


ZERO = _Zero()


def _add(a, b):
    if a is ZERO:
        return b
    if b is ZERO:
        return a
    return a + b


def _neg(a):
    return a if a is ZERO else -1 * a


def _sub(a, b):
    if a is b:
        return ZERO  # x - x: the first local step's penalty, a consensual start's extrapolation
    if b is ZERO:
        return a
    if a is ZERO:
        return _neg(b)
    return a - b


def _scale(c, a):
    return a if a is ZERO else c * a


class Stack:
    """m points, one per agent, with the linear combinations of the program's algebra (scalar coefficients)."""

    __slots__ = ("rows",)

    def __init__(self, rows):
        self.rows = list(rows)

    def __add__(self, other):
        return Stack(_add(a, b) for a, b in zip(self.rows, other.rows))

    def __sub__(self, other):
        return Stack(_sub(a, b) for a, b in zip(self.rows, other.rows))

    def __neg__(self):
        return Stack(_neg(a) for a in self.rows)

    def __mul__(self, c):
        if isinstance(c, Stack):
            raise NotExpressible("a product of two points is not a linear combination (no PEP expresses it)")
        return Stack(_scale(c, a) for a in self.rows)

    __rmul__ = __mul__

    def __truediv__(self, c):
        return self * (1 / c)

    def mean(self):
        """(1/m) sum of the rows; the point itself when all rows are one object (a consensual start)."""
        return _mean(self.rows)


def _sum(exprs):
    total = exprs[0]
    for e in exprs[1:]:
        total = total + e
    return total


def _combine(weights, points):
    """sum_j weights[j] points[j], skipping zero weights."""
    terms = [(w, p) for w, p in zip(weights, points) if w != 0]
    if len(terms) == 1 and terms[0][0] == 1:
        return terms[0][1]
    total = terms[0][0] * terms[0][1]
    for w, p in terms[1:]:
        total = total + w * p
    return total


def _mean(points):
    """(1/m) sum of PEPit points; the point itself when all are the same object (x^0 before the first round)."""
    if all(p is points[0] for p in points):
        return points[0]
    points = [p for p in points if p is not ZERO]
    if not points:
        return ZERO
    return (1 / len(points)) * _sum(points) if len(points) > 1 else points[0]


def _same(p, q, tol=1e-12) -> bool:
    """p and q are one point of the PEP: their coefficients on the leaf points agree to ``tol`` (relative)."""
    if p is q:
        return True
    a, b = p.decomposition_dict, q.decomposition_dict
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) <= tol * max(1.0, abs(a.get(k, 0.0))) for k in a.keys() | b.keys())


def _gossip(mixing, z, Q, consensus, t=0):
    """Q gossip steps on the messages z of round t: W_t^Q z with an explicit W (or sequence), or new points under the
    spectral class's constraints (each step's deviations appended to ``consensus``)."""
    from PEPit import Point

    m = len(z)
    if not isinstance(mixing, PushSumMixing) and all(_same(zi, z[0]) for zi in z[1:]):
        return [z[0]] * m  # agents in consensus stay there (W 1 = 1 for every W; for the class, Y = 0 when X = 0)
    if isinstance(mixing, (ExplicitMixing, PushSumMixing)):
        WQ = mixing.power(Q, t) if isinstance(mixing, ExplicitMixing) else mixing.matrix(t)
        out = []
        for i in range(m):  # equal rows (to 1e-12) give the same point: no duplicate the SDP must reconcile
            same = next((j for j in range(i) if np.allclose(WQ[i], WQ[j], rtol=0, atol=1e-12)), None)
            out.append(out[same] if same is not None else _combine(WQ[i], z))
        return out
    for _ in range(Q):
        zbar = _mean(z)
        d = [Point() for _ in range(m - 1)]
        d.append(-1 * _combine(np.ones(m - 1), d))
        consensus.append(([zi - zbar for zi in z], d))
        z = [zbar + di for di in d]
    return z


class _Ops:
    """The steps of a round on PEPit points (module docstring). ``last``: the round whose outputs enter the quantity
    only through their means (the fixed-T PEP's last simulated round over the class: no new points)."""

    def __init__(self, query, mixing, m, eta, consensus):
        self.query, self.mixing, self.m, self.eta, self.consensus = query, mixing, m, eta, consensus
        self.weights = np.ones(m)  # push-sum weights w^t = P_{t-1}...P_0 1 (numbers fixed by P)
        self.t, self.last, self.anchor = 0, False, None

    def grad(self, X):
        return Stack(self.query(i, p)[0] for i, p in enumerate(X.rows))

    def __getattr__(self, name):
        """A torch-only step of the algebra's table (:data:`dfltheory.program.TORCH_ONLY`): refused by name."""
        if name in TORCH_ONLY:
            raise NotExpressible(f"the program's step ops.{name} ({TORCH_ONLY[name]}) is torch only: no PEP expresses "
                                 f"it; train the program (dfltheory train), or ask the PEP of a variant without it")
        raise AttributeError(name)

    def normalize(self, G):
        raise NotExpressible("the normalised step g/||g|| is not a linear combination of points and gradients, so "
                             "no PEP expresses it; use the program's unnormalized variant (a named relaxation)")

    def debias(self, X):
        return Stack(p if w == 1 else (1 / w) * p for p, w in zip(X.rows, self.weights))

    def gossip(self, X, Q=1):
        if self.last:  # only the mean of the outputs reaches the quantity (the class keeps it)
            return Stack([X.mean()] * self.m)
        return Stack(_gossip(self.mixing, X.rows, Q, self.consensus, self.t))

    def push_sum(self, X):
        out = self.gossip(X, 1)
        if isinstance(self.mixing, PushSumMixing):  # over the class (doubly stochastic W) w stays 1
            self.weights = self.mixing.matrix(self.t) @ self.weights
        return out


def _start(program: Program, ops, s, p):
    if program.start is not None:
        s["x"] = program.start(ops, s, p)


def _metric_point(program: Program, s, prev, c):
    """p = mean + c (mean - prev) (prev None: the mean itself, mean^{-1} = mean^0)."""
    metric = program.metric
    mean = s[metric.slot].mean()
    if metric.prev is not None:
        prev = s[metric.prev].mean()
    if prev is None or not c or prev is mean:
        return mean
    return mean + c * (mean - prev)


def _round(program: Program, ops, s, p, K):
    """One round in place: K local steps x <- x - eta d, the round's end, the communication, x rebuilt."""
    ops.anchor = s["x"]
    for slot in program.slots:
        if slot.reset:
            s[slot.name] = Stack([ZERO] * ops.m) if slot.init == "zero" else s["x"]
    for _ in range(K):
        s["x"] = s["x"] - ops.eta * program.direction(ops, s, p)
    program.round_end(ops, s, p)
    program.communicate(ops, s, p)
    _start(program, ops, s, p)
    for slot in program.slots:
        if slot.reset:
            del s[slot.name]


def rounds(program: Program, params: Params, query, mixing, m, K, T, eta, x0, consensus, on_round, last_mean=False):
    """The fixed-T PEP's rounds from the common start ``x0``: ``on_round(t, p^t)`` at t = 0..T-1 (the caller queries
    the metric point there), the T - 1 rounds between (the last round's local steps do not reach the quantity).
    ``last_mean``: over the spectral class the last simulated round's gossip keeps only the means (see _Ops). Returns
    the consensus errors (1/m) sum_i ||x_i - x_bar||^2 of the round-start models after each round (DFedCata's Xi)."""
    ops = _Ops(query, mixing, m, eta, consensus)
    K = program.K or K
    p = Params(params, eta=eta, K=K)
    c = program.metric.coefficient(p)
    s = {slot.name: Stack([x0] * m if slot.init == "x0" else [ZERO] * m) for slot in program.carried}
    _start(program, ops, s, p)
    xi, prev = [], None
    for t in range(T):
        point = _metric_point(program, s, prev, c)
        on_round(t, point)
        if t == T - 1:
            break
        prev = s[program.metric.slot].mean()
        ops.t, ops.last = t, last_mean and t == T - 2
        _round(program, ops, s, p, K)
        xbar = s["x"].mean()
        xi.append((1 / m) * _sum([(xi_ - xbar) ** 2 for xi_ in s["x"].rows]))
    return xi


def components(program: Program):
    """The potential's components of ``program``'s state (``certify.POTENTIALS``): per agent the deviation of each
    carried slot from its mean; common the metric's mean minus its previous mean (where the metric extrapolates) and
    the mean of each carried vector slot (a dual's mean; a model's mean enters through f)."""
    agent = tuple(f"{s.sym}_i - {s.sym}_bar" for s in program.state)
    common = []
    metric = program.metric
    if metric.extrapolation is not None:
        sym = _slot(program, metric.slot).sym
        common.append(f"{sym}_bar - {sym}_bar_prev" if metric.prev is None else
                      f"{sym}_bar - {_slot(program, metric.prev).sym}_bar")
    common += [f"{s.sym}_bar" for s in program.state if s.kind == "vector"]
    return agent, tuple(common)


def _slot(program, name):
    return next(s for s in program.slots if s.name == name)


def one_round(program: Program, params: Params, query, mixing, m, K, eta):
    """One round from a free state (new points): (p^t, p^{t+1}, (u^t, c^t), (u^{t+1}, c^{t+1}), consensus), u the
    per-agent components (one list of m points each), c the common ones (:func:`components`), consensus the class's
    (X_s, Y_s) of the round's gossip steps."""
    from PEPit import Point

    consensus = []
    ops = _Ops(query, mixing, m, eta, consensus)
    K = program.K or K
    p = Params(params, eta=eta, K=K)
    c = program.metric.coefficient(p)
    metric = program.metric
    s = {slot.name: Stack(Point() for _ in range(m)) for slot in program.state}
    prev = Point() if metric.extrapolation is not None and metric.prev is None else None
    _start(program, ops, s, p)
    s.update({slot.name: s["x"] for slot in program.carried if slot.output})  # an output starts at x (Slot)
    state0 = dict(s)
    p0 = _metric_point(program, s, prev, c)
    mean0 = s[metric.slot].mean()
    _round(program, ops, s, p, K)
    p1 = _metric_point(program, s, mean0, c)

    def state(st, before):
        dev = []
        for slot in program.state:
            bar = st[slot.name].mean()
            dev.append([_sub(r, bar) for r in st[slot.name].rows])
        common = []
        if metric.extrapolation is not None:
            mean = st[metric.slot].mean()
            common.append(mean - (before if metric.prev is None else st[metric.prev].mean()))
        common += [st[slot.name].mean() for slot in program.state if slot.kind == "vector"]
        return dev, common

    return p0, p1, state(state0, prev), state(s, mean0), consensus
