"""Empirical pillar: federated data, models and batched (vmap) training of the papers' algorithms.

Public API (imported lazily, so ``dfltheory`` subcommands that do not train do not load torch)::

    from dfltheory.empirical import make_algorithm, Engine, Mixing, FlatModel, Evaluator, train, build_run
    algo = make_algorithm("dfedsam", rho=0.01)          # a local rule composed with a communication rule
    engine = Engine(FlatModel(module, loss), data, algo, Mixing(topology), K=5, lr=0.1)
    engine.round()

Local rules (``rules``): gradient, sam, proximal, admm_dual, scaffold_correction, momentum, weight_decay, clip,
chain, sgd. Communication rules (``communication``): gossip, multi_gossip, nesterov_extrapolation,
push_sum, server_average, scaffold_control, chain_comm. See docs/empirical.md.
"""

import importlib

_EXPORTS = {
    "make_algorithm": ("algorithms", "make"), "ALGORITHMS": ("algorithms", "ALGORITHMS"),
    "Algorithm": ("algorithms", "Algorithm"), "Engine": ("engine", "Engine"),
    "ClientSampler": ("engine", "ClientSampler"), "Mixing": ("communication", "Mixing"),
    "FlatModel": ("functional", "FlatModel"), "Evaluator": ("metrics", "Evaluator"),
    "measure": ("metrics", "measure"), "train": ("runner", "train"), "build_run": ("runner", "build"),
    "run": ("runner", "run"), "ReferenceRun": ("reference", "ReferenceRun"),
    "register_algorithm": ("algorithms", "register_algorithm"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(f"dfltheory.empirical.{module}"), attr)
    raise AttributeError(f"module 'dfltheory.empirical' has no attribute {name!r}")
