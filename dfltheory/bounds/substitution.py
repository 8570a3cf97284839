"""Topology constants of a named topology, as the values of a theorem's symbols."""

from __future__ import annotations

from dfltheory.bounds.theorem import Theorem


MEASURED = {"q": "q_measured", "C": "C_measured"}  # push-sum constants measured over the horizon instead


def topology_values(theorem: Theorem, topology: str, n: int | None, weights: str = "default", seed: int = 0,
                    Q: int = 1, push_sum: str = "theory", **params) -> tuple[dict, dict]:
    """Values of the theorem's topology symbols (those with a ``topology_key``: lambda, psi, m, C, q, delta, ...)
    for a named topology, and the full :func:`dfltheory.topology.analyze` report they come from.

    ``push_sum="theory"`` takes C and q from Assran et al.'s Lemma 3 (what the theorems cite, often vacuous);
    ``"measured"`` takes the rate and constant fitted to the products P(t:s) over the horizon (what the
    network really does). delta is always the measured minimum push-sum weight.

    >>> values, report = topology_values(get("dfedsam.thm4.1"), "ring", 100)   # doctest: +SKIP
    >>> values                                                                  # doctest: +SKIP
    {'lam': 0.99868..., 'm': 100.0}
    """
    from dfltheory.topology import analyze

    if push_sum not in ("theory", "measured"):
        raise ValueError(f"push_sum must be 'theory' or 'measured', got {push_sum!r}")
    if n is None:
        raise ValueError("a named topology needs n, the number of clients (--n on the command line)")
    report = analyze(topology, n, weights=weights, seed=seed, Q=Q, **params)
    out = {}
    for var in theorem.variables:
        if var.topology_key is None or var.name not in theorem.required + theorem.condition_symbols:
            continue
        key = MEASURED.get(var.topology_key, var.topology_key) if push_sum == "measured" else var.topology_key
        value = report.get(key)
        if value is None:
            raise ValueError(f"{theorem.id} needs {var.name} ({var.meaning}), which topology {topology!r} with "
                             f"weights {weights!r} does not define (key {key!r} is missing)")
        out[var.name] = float(value)
    return out, report
