"""Every registry a plugin extends, saved and restored: :func:`isolated` lets a test (a user's too) load plugins
without leaving their papers, algorithms, plans, step programs and PEP models behind for the next test."""

from __future__ import annotations

import contextlib
import os


def _registries() -> list[dict | list]:
    import importlib

    from dfltheory import plugins, program
    from dfltheory.empirical import algorithms
    from dfltheory.pep import problem
    from dfltheory.verify import claims, claims_index, plans

    catalog = importlib.import_module("dfltheory.bounds.catalog")  # the module (the package exports its function)
    compare = importlib.import_module("dfltheory.pep.compare")  # the module (the package exports its function)
    catalog.catalog(), plans.plans()  # the built-in entries are registered before the snapshot
    return [catalog.PAPERS, catalog.EXPERIMENTS, catalog.SIGMA_G_FORM, catalog.TOPOLOGY_KEYS, catalog._THEOREMS,
            algorithms.ALGORITHMS,
            plans.PLANS, claims.PAPERS, claims.CLAIMS, claims.PAPER_BASE, claims.PAPER_ROUNDS, claims.QUANTITY,
            claims.DEVIATIONS, claims.PAPER_SETTING, claims.DATA_OPTIONS, claims_index.CARDS,
            problem.ALGORITHMS, problem.METRICS, problem._POINT, problem.LIKE, problem.THEOREM_OF, program.PROGRAMS,
            compare.BOUNDS,
            plugins._LOADED]


@contextlib.contextmanager
def isolated():
    """Within the block, registrations are kept; after it, every registry is as it was before."""
    from dfltheory import plugins

    saved = [(registry, registry.copy()) for registry in _registries()]
    env = os.environ.get(plugins.ENV)
    try:
        yield
    finally:
        for registry, before in saved:
            if isinstance(registry, list):
                registry.clear()
                registry.extend(before)
            else:  # the added entries removed (a Registry refuses to clear its built-in ones)
                for key in [k for k in registry if k not in before]:
                    del registry[key]
                registry.update(before)
        if env is None:
            os.environ.pop(plugins.ENV, None)
        else:
            os.environ[plugins.ENV] = env
