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
``ops.decay``               the learning-rate decay so far, eta^t / eta^0 (a second step  torch only: the PEP
                            size that decays like eta: DFedPGP's eta_v)                   has no such step
``ops.personal(X)``,        X on the personal (resp. shared) coordinates, 0 on the        torch only (no PEP
``ops.shared(X)``           others (DFedPGP's v and u; the mask is the model's split)     model of a split yet)
``ops.personal_phase``      this local step moves the personal part (the first ``K_v``    torch only
                            local units of the round; ``Program.personal``)
``ops.clip(D, c, eps)``     D_i min(1, c / (||D_i|| + eps)) (clipping; **nonlinear**)     torch only
``ops.server_average(X)``   every row <- the (weighted) mean of the round's participants'  torch only (no PEP
                            rows (FedAvg's server round, global lr 1; ``mixing="server"``) model of a server)
``ops.server_sum(X)``       every row <- the sum of the participants' rows (SCAFFOLD's     torch only
                            control update); ``ops.m`` the number of clients
``ops.K``                   the local steps of this round (per client with local epochs)  torch only
``ops.push_sum_by_loss(X)`` ``ops.push_sum`` with P(t) drawn from the clients' losses at    torch only (P is no
                            z = x/w (the topology's ``losses`` parameter; DFedSGPSM-S)      fixed matrix)
==========================  ==========================================================  =======================

The torch-only steps are :data:`TORCH_ONLY`: the PEP interpreter refuses each by name (:class:`NotExpressible`).

Push-sum on a model with personal coordinates mixes and de-biases the shared ones only (``ops.push_sum``,
``ops.debias``). A "torch only" step is none of the PEP interpreter's: a program that takes one (fedavg, fedprox,
fedsam, scaffold, dfedpgp, dfedsgpsm-s; DFedCata's with ``clip``) trains but is no PEP model.

A :class:`Program` names its state (:class:`Slot`: x, momentum, dual, the aggregates, each with its initial value),
the local step's direction d (x <- x - eta d, K times per round), what happens after the K steps (``round_end``) and
the communication; ``start`` rebuilds the round-start x from the other slots where x is not itself carried (DFedCata
reading B). The measured quantity is declared (:class:`Metric`: min, average or last iterate of ||grad f(p^t)||^2
at p^t = mean + c (mean - previous mean)). The interpreters live in their pillars:
:mod:`dfltheory.empirical.program_rules` (torch: the engine's rules), :mod:`dfltheory.pep.program_pep` (the
fixed-T PEP and the one-round certificate). The baselines' programs and the building blocks they share are in
:mod:`dfltheory.program.library`; a paper's own are in ``dfltheory/papers/<id>/programs.py``, registered through
:func:`register_program` when :data:`PROGRAMS` is first read.

This module imports neither torch nor cvxpy nor PEPit.
"""

from __future__ import annotations

from dfltheory.plugins import Registry, load_builtin, load_once
from dfltheory.program.algebra import KINDS, METRIC_KINDS, TORCH_ONLY, Metric, NotExpressible, Params, Program, Slot

__all__ = ["KINDS", "METRIC_KINDS", "Metric", "NotExpressible", "PROGRAMS", "Params", "Program", "Slot", "TORCH_ONLY",
           "register_program"]


def _load_builtins() -> None:
    """The built-in programs, registered when the table is first read: the baselines'
    (:data:`dfltheory.program.library.BASELINES`), then each built-in paper's own (``dfltheory/papers/<id>/
    programs.py``, :func:`dfltheory.plugins.load_builtin`), each through :func:`register_program`; then fixed."""
    def register():
        from dfltheory.program.library import BASELINES

        for program in BASELINES.values():
            register_program(program, origin="dfltheory.program.library")
        load_builtin("programs")

    load_once(_LOADING, register, PROGRAMS)  # a plugin adds programs; it cannot replace or remove a built-in one


_LOADING: list[bool] = []
#: every program: name -> Program (the built-in ones, the baselines' and the papers', fixed, then a plugin's)
PROGRAMS: dict[str, Program] = Registry("program", load=_load_builtins)


def register_program(program: Program, *, origin: str = "") -> None:
    """Add ``program`` to :data:`PROGRAMS` (the pillars' registration functions call this: ``dfltheory.pep.
    register_program`` also makes it an algorithm of ``train``, ``pep`` and ``certify``)."""
    where = f"{origin}: " if origin else ""
    if not isinstance(program, Program):
        raise ValueError(f"{where}register_program needs a dfltheory.program.Program, got {type(program).__name__}")
    if program.name in PROGRAMS:
        raise ValueError(f"{where}program {program.name!r} is already registered; choose another name")
    PROGRAMS[program.name] = program
