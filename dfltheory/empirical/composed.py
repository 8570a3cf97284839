"""An algorithm of the engine: a local rule composed with a communication rule, and what the engine needs besides
(docs/CONVENTIONS.md). The table of named algorithms is :mod:`dfltheory.empirical.algorithms`; an algorithm derived
from a step program is built by :func:`dfltheory.empirical.program_rules.algorithm`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from dfltheory.empirical import communication as C
from dfltheory.empirical import rules as R

__all__ = ["Algorithm"]


@dataclass
class Algorithm:
    name: str
    local: R.chain
    comm: C.CommRule
    participation: float = 1.0  # fraction of clients that train (and, centrally, communicate) per round
    K: int | None = None  # forced number of local steps (D-PSGD: 1)
    decentralized: bool = True
    params: dict = field(default_factory=dict)
    # x_bar(state, cstate) -> the average model the theory means; aux(...) -> {name: point} of auxiliary sequences
    x_bar: Callable | None = None
    aux: Callable | None = None
    averaged: str | None = None  # the state entry whose clients' mean x_bar is (a program's metric slot), or None
    stochastic: str = "row"  # W must be row-stochastic (gossip) or column-stochastic (push-sum)
    K_v: int = 0  # personal steps before the K shared ones (DFedPGP)
    split: Callable | None = None  # FlatModel -> (d,) bool mask of the personal coordinates (DFedPGP)
    topology: str | None = None  # the topology the communication rule redraws every round (DFedSGPSM-S)
    unused: tuple[str, ...] = ()  # hyper-parameters given to :func:`make` that this algorithm does not read
    hyper: dict = field(default_factory=dict)  # every hyper-parameter the factory read -> the value it took
    # warning(lr, lr_decay, K, rounds) -> why these step sizes make the algorithm degenerate, or None (printed once)
    warning: Callable | None = None

    def average(self, state, cstate) -> torch.Tensor:
        return self.x_bar(state, cstate) if self.x_bar else state["x"].mean(0)

    def client_models(self, state, shared: torch.Tensor | None = None) -> torch.Tensor:
        """The clients' models: x, or the de-biased z = x / w under push-sum (on the ``shared`` coordinates)."""
        return R.debias(state["x"], state.get("ps_weight"), shared)
