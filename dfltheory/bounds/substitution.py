"""Topology constants of a named topology, as the values of a theorem's symbols."""

from __future__ import annotations

from dfltheory.bounds.theorem import Theorem


def topology_values(theorem: Theorem, topology: str, n: int | None, weights: str = "default", seed: int = 0,
                    Q: int = 1, **params) -> tuple[dict, dict]:
    """Values of the theorem's topology symbols (those with a ``topology_key``: lambda, psi, m, C, q, delta, ...)
    for a named topology, and the full :func:`dfltheory.topology.analyze` report they come from.

    >>> values, report = topology_values(get("dfedsam.thm4.1"), "ring", 100)   # doctest: +SKIP
    >>> values                                                                  # doctest: +SKIP
    {'lam': 0.99868..., 'm': 100.0}
    """
    from dfltheory.topology import analyze

    if n is None:
        raise ValueError("a named topology needs n, the number of clients (--n on the command line)")
    report = analyze(topology, n, weights=weights, seed=seed, Q=Q, **params)
    out = {}
    for var in theorem.variables:
        if var.topology_key is None or var.name not in theorem.required + theorem.condition_symbols:
            continue
        value = report.get(var.topology_key)
        if value is None:
            raise ValueError(f"{theorem.id} needs {var.name} ({var.meaning}), which topology {topology!r} with "
                             f"weights {weights!r} does not define (key {var.topology_key!r} is missing)")
        out[var.name] = float(value)
    return out, report
