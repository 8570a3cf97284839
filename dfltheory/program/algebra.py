"""The step-program algebra's records (:mod:`dfltheory.program` documents them): :class:`Program`, its state
:class:`Slot` s, the measured :class:`Metric`, the bound hyper-parameters :class:`Params`, and the refusal
:class:`NotExpressible`. Pure Python."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["KINDS", "METRIC_KINDS", "Metric", "NotExpressible", "Params", "Program", "Slot", "TORCH_ONLY"]

#: a slot's kind: a model ("point", moves with translations of the problem) or a "vector" (a dual variable, a
#: momentum: its mean is part of the state, unlike a model's, which the potential sees through f)
KINDS = ("point", "vector")
#: what a PEP model bounds: min over t < T, the average over t < T, or the last round's value (t = T - 1)
METRIC_KINDS = ("min", "average", "last")
#: how a program's clients communicate (``Program.mixing``)
MIXINGS = ("gossip", "push-sum", "server")
#: the steps of the algebra's table that only the torch interpreter has (:mod:`dfltheory.program`'s table, "torch
#: only"): step -> what it is; a PEP of a program that takes one is refused (:class:`NotExpressible`)
TORCH_ONLY = {
    "decay": "the learning-rate decay eta^t / eta^0, a second step size",
    "personal": "the personal coordinates of a split model",
    "shared": "the shared coordinates of a split model",
    "personal_phase": "the personal phase of a split model's local steps",
    "clip": "the norm clipping D_i min(1, c / (||D_i|| + eps))",
    "server_average": "a server's average of the round's participants",
    "server_sum": "a server's sum of the round's participants",
    "K": "the round's local step count as a number",
    "push_sum_by_loss": "push-sum with P(t) drawn from the clients' losses",
}


class NotExpressible(ValueError):
    """A step that the interpreter cannot express (SAM's normalisation in a PEP): the program's PEP-able relaxation
    (a named variant) is the one to use."""


@dataclass(frozen=True)
class Slot:
    """A per-client state entry: its ``name``, initial value (``"x0"``, the common start, or ``"zero"``), its kind
    (:data:`KINDS`) and whether it restarts at its initial value every round (``reset``: local momentum, never
    carried from one round to the next); ``symbol`` names it in formulas (a certificate's components).

    ``output``: the round writes it before any step reads it, and only the metric reads it (DFedCata reading A's
    aggregate a^{t+1} = W x_K^t, whose mean the theory measures): no state of its own. It starts equal to x; a PEP's
    free state (the one-round certificate) gives it x's points (the same mean under a doubly stochastic W) and no
    component of the potential."""

    name: str
    init: str = "x0"
    kind: str = "point"
    reset: bool = False
    symbol: str = ""  # the name in formulas and in a certificate's components (default: ``name``)
    output: bool = False

    @property
    def sym(self) -> str:
        return self.symbol or self.name

    def __post_init__(self):
        if self.init not in ("x0", "zero"):
            raise ValueError(f"slot {self.name!r}: init must be 'x0' or 'zero', got {self.init!r}")
        if self.kind not in KINDS:
            raise ValueError(f"slot {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.output and (self.init != "x0" or self.kind != "point" or self.reset):
            raise ValueError(f"slot {self.name!r}: an output slot is a model that starts at x (init='x0', "
                             f"kind='point', reset=False)")


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
    ``mixing``: "gossip" (a symmetric doubly stochastic W), "push-sum" (a column-stochastic P, weights w) or
    "server" (a server averages the round's participants: a centralized algorithm);
    ``keeps_start``: the communication reads ``ops.anchor``, the round-start x (the torch rules keep it a round);
    ``personal``: the hyper-parameter that counts the local units, first in each round, that move the personal
    coordinates only (DFedPGP's K_v; the step reads ``ops.personal_phase``), None where every coordinate is shared;
    ``sequential``: the communication can also run one client at a time, in place (the public DFedCata code's
    Gauss-Seidel schedule, card dfedcata §3.2 item 1: client c mixes row c of W with the current models, those of
    clients < c already trained this round; one gossip step per round)."""

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
    personal: str | None = None
    sequential: bool = False

    def __post_init__(self):
        names = [s.name for s in self.slots]
        if len(set(names)) != len(names):
            raise ValueError(f"program {self.name!r}: slot names repeat: {names}")
        if ("x" in names) == (self.start is not None):
            raise ValueError(f"program {self.name!r}: x is either a slot or built by start=, not both nor neither")
        if self.metric.slot not in names + ["x"] or (self.metric.prev is not None and self.metric.prev not in names):
            raise ValueError(f"program {self.name!r}: the metric reads slots {self.metric.slot!r}, "
                             f"{self.metric.prev!r} that are not among {names}")
        if self.personal is not None and self.personal not in self.params:
            raise ValueError(f"program {self.name!r}: personal={self.personal!r} must name one of its hyper-parameters "
                             f"{sorted(self.params)}")
        if self.mixing not in MIXINGS:
            raise ValueError(f"program {self.name!r}: mixing must be one of {MIXINGS}, got {self.mixing!r}")

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

    @property
    def state(self) -> tuple[Slot, ...]:
        """The carried slots that are state: a PEP's free point per agent, a component of the potential (not the
        outputs, :class:`Slot`)."""
        return tuple(s for s in self.carried if not s.output)
