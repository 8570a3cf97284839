"""An algorithm written once: a step program over an abstract point algebra (issue 35 item 2).

A decentralized algorithm is a local rule composed with a communication rule (docs/CONVENTIONS.md). Here both are
written once, as Python functions over **client-stacked points**: objects that support linear combinations
(``X + Y``, ``X - Y``, ``c * X``, ``X / c`` with scalar c, the same for every client) and nothing else. Everything
else a round does is a call on the interpreter's ``ops``:

==========================  ==========================================================  =======================
step                        meaning (row i: client i)                                    in a PEP
==========================  ==========================================================  =======================
``ops.grad(X)``             grad f_i(X_i), one oracle call per client                    exact (interpolation)
``ops.gossip(X, Q)``        W^Q X, a symmetric doubly stochastic W (a new W per round     exact (W), relaxed (class)
                            on a time-varying topology)
``ops.push_sum(X)``         P X and w <- P w, a column-stochastic P                       exact (w are numbers)
``ops.debias(X)``           X_i / w_i, the push-sum weight's division (**nonlinear**)     exact: w_i known numbers
``ops.normalize(G)``        G_i / ||G_i|| (SAM's ascent; **nonlinear**)                   not expressible: refused
``ops.anchor``              the round-start x (the centre of proximal / ADMM terms)       a point
``ops.eta``                 the local step size of this round                             a number
==========================  ==========================================================  =======================

A :class:`Program` names its state (:class:`Slot`: x, momentum, dual, the aggregates, each with its initial value),
the local step's direction d (x <- x - eta d, K times per round), what happens after the K steps (``round_end``) and
the communication; ``start`` rebuilds the round-start x from the other slots where x is not itself carried (DFedCata
reading B). The measured quantity is declared (:class:`Metric`: min, average or last iterate of ||grad f(p^t)||^2
at p^t = mean + c (mean - previous mean)). The interpreters live in their pillars:
:mod:`dfltheory.empirical.program_rules` (torch: the engine's rules), :mod:`dfltheory.pep.program_pep` (the
fixed-T PEP and the one-round certificate). The built-in programs are in :mod:`dfltheory.program.library`.

This module imports neither torch nor cvxpy nor PEPit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dfltheory.plugins import Registry

__all__ = ["KINDS", "METRIC_KINDS", "Metric", "NotExpressible", "PROGRAMS", "Params", "Program", "Slot",
           "register_program"]

#: a slot's kind: a model ("point", moves with translations of the problem) or a "vector" (a dual variable, a
#: momentum: its mean is part of the state, unlike a model's, which the potential sees through f)
KINDS = ("point", "vector")
#: what a PEP model bounds: min over t < T, the average over t < T, or the last round's value (t = T - 1)
METRIC_KINDS = ("min", "average", "last")


class NotExpressible(ValueError):
    """A step that the interpreter cannot express (SAM's normalisation in a PEP): the program's PEP-able relaxation
    (a named variant) is the one to use."""


@dataclass(frozen=True)
class Slot:
    """A per-client state entry: its ``name``, initial value (``"x0"``, the common start, or ``"zero"``), its kind
    (:data:`KINDS`) and whether it restarts at its initial value every round (``reset``: local momentum, never
    carried from one round to the next); ``symbol`` names it in formulas (a certificate's components)."""

    name: str
    init: str = "x0"
    kind: str = "point"
    reset: bool = False
    symbol: str = ""  # the name in formulas and in a certificate's components (default: ``name``)

    @property
    def sym(self) -> str:
        return self.symbol or self.name

    def __post_init__(self):
        if self.init not in ("x0", "zero"):
            raise ValueError(f"slot {self.name!r}: init must be 'x0' or 'zero', got {self.init!r}")
        if self.kind not in KINDS:
            raise ValueError(f"slot {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")


@dataclass(frozen=True)
class Metric:
    """The measured quantity: ``kind`` (:data:`METRIC_KINDS`) of ||grad f(p^t)||^2 at

        p^t = mean(slot)^t + c (mean(slot)^t - prev^t),    c = ``extrapolation(params)`` (0 when None),

    prev^t the mean of the slot ``prev`` or, when ``prev`` is None, the previous round's mean(slot) (mean^{-1} =
    mean^0); ``name`` names p (the engine's auxiliary point) and ``text`` says it in words."""

    kind: str = "min"
    slot: str = "x"
    extrapolation: Callable | None = None
    prev: str | None = None
    name: str = "x_bar"
    text: str = "x_bar^t, the models' mean"

    def __post_init__(self):
        if self.kind not in METRIC_KINDS:
            raise ValueError(f"metric kind must be one of {METRIC_KINDS}, got {self.kind!r}")

    def coefficient(self, params) -> float:
        return 0.0 if self.extrapolation is None else float(self.extrapolation(params))


class Params(dict):
    """The hyper-parameters a program reads (``p.eta`` or ``p["eta"]``); a missing one is a ValueError naming it."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __missing__(self, key):
        raise ValueError(f"the program needs the hyper-parameter {key!r}; give it")


def _nothing(ops, s, p):
    return None


@dataclass(frozen=True)
class Program:
    """An algorithm written once (module docstring).

    ``direction(ops, s, p) -> d``: the local step x <- x - eta d (``s`` the state, a dict slot -> stacked point;
    ``p`` the :class:`Params`); ``round_end(ops, s, p)`` after the K steps, ``communicate(ops, s, p)`` then (both
    update ``s`` in place); ``start(ops, s, p) -> x`` where x is not carried (built from the other slots at every
    round start). ``params``: the hyper-parameters read, with their defaults (None: required). ``queries``: gradient
    calls per local step (at the given params), ``K``: a fixed number of local steps (None: the run's),
    ``mixing``: "gossip" (a symmetric doubly stochastic W) or "push-sum" (a column-stochastic P, weights w);
    ``keeps_start``: the communication reads ``ops.anchor``, the round-start x (the torch rules keep it a round)."""

    name: str
    description: str
    direction: Callable
    communicate: Callable
    slots: tuple[Slot, ...] = (Slot("x"),)
    round_end: Callable = _nothing
    start: Callable | None = None
    metric: Metric = field(default_factory=Metric)
    params: dict = field(default_factory=dict)
    queries: Callable | int = 1
    K: int | None = None
    mixing: str = "gossip"
    keeps_start: bool = False

    def __post_init__(self):
        names = [s.name for s in self.slots]
        if len(set(names)) != len(names):
            raise ValueError(f"program {self.name!r}: slot names repeat: {names}")
        if ("x" in names) == (self.start is not None):
            raise ValueError(f"program {self.name!r}: x is either a slot or built by start=, not both nor neither")
        if self.metric.slot not in names + ["x"] or (self.metric.prev is not None and self.metric.prev not in names):
            raise ValueError(f"program {self.name!r}: the metric reads slots {self.metric.slot!r}, "
                             f"{self.metric.prev!r} that are not among {names}")
        if self.mixing not in ("gossip", "push-sum"):
            raise ValueError(f"program {self.name!r}: mixing must be 'gossip' or 'push-sum', got {self.mixing!r}")

    def bind(self, **given) -> Params:
        """The program's :class:`Params` from ``given`` (unknown names refused, defaults filled in)."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            raise ValueError(f"program {self.name!r} reads {sorted(self.params) or 'no hyper-parameters'}, not "
                             f"{unknown}")
        values = {k: given.get(k, v) for k, v in self.params.items()}
        missing = [k for k, v in values.items() if v is None]
        if missing:
            raise ValueError(f"program {self.name!r} needs {', '.join(missing)}; give {missing[0]}=...")
        return Params(values)

    def queries_per_step(self, params) -> int:
        return self.queries(params) if callable(self.queries) else self.queries

    @property
    def carried(self) -> tuple[Slot, ...]:
        """The slots carried from one round to the next (not the ones reset every round)."""
        return tuple(s for s in self.slots if not s.reset)


#: every program: name -> Program (the built-in ones of :mod:`dfltheory.program.library`, then a plugin's)
PROGRAMS: dict[str, Program] = Registry("program")


def register_program(program: Program, *, origin: str = "") -> None:
    """Add ``program`` to :data:`PROGRAMS` (the pillars' registration functions call this: ``dfltheory.pep.
    register_program`` also makes it an algorithm of ``train``, ``pep`` and ``certify``)."""
    where = f"{origin}: " if origin else ""
    if not isinstance(program, Program):
        raise ValueError(f"{where}register_program needs a dfltheory.program.Program, got {type(program).__name__}")
    if program.name in PROGRAMS:
        raise ValueError(f"{where}program {program.name!r} is already registered; choose another name")
    PROGRAMS[program.name] = program
