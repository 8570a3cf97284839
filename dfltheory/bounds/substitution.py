"""Topology constants of a named topology, as the values of a theorem's symbols."""

from __future__ import annotations

from dfltheory.bounds.theorem import Theorem


MEASURED = {"q": "q_measured", "C": "C_measured"}  # push-sum constants measured over the horizon instead
SPECTRAL = ("lambda", "psi", "Phi")  # defined for a symmetric doubly stochastic W only (Definition 1)


def topology_values(theorem: Theorem, topology: str | None, n: int | None, weights: str = "default", seed: int = 0,
                    Q: int = 1, push_sum: str = "theory", K_u: int = 1, matrix=None, **params) -> tuple[dict, dict]:
    """Values of the theorem's topology symbols (those with a ``topology_key``: lambda, psi, m, C, q, delta, ...)
    for a named topology (``NAME`` or ``NAME:key=value,...``), or for the user's own ``matrix`` (an array or a
    .npy/.csv/.mtx file, :func:`dfltheory.topology.load_matrix`; ``topology``, ``n``, ``weights`` then unused),
    and the full :func:`dfltheory.topology.analyze` report they come from.

    ``push_sum="theory"`` takes C and q from the lemma the paper cites (Assran et al.'s Lemma 3; DFedPGP's own
    (K_u + 1) Delta B form for its theorems), often vacuous; ``"measured"`` takes the rate and constant fitted to
    the products P(t:s) over the horizon (what the network really does). delta is always the measured minimum
    push-sum weight. lambda and psi are refused for a W that is not symmetric and doubly stochastic (the
    theorems' Definition 1); a disconnected graph gives lambda = 1 and an infinite bound.

    >>> values, report = topology_values(get("dfedsam.thm4.1"), "ring", 100)   # doctest: +SKIP
    >>> values                                                                  # doctest: +SKIP
    {'lam': 0.99868..., 'm': 100.0}
    """
    from dfltheory.bounds.catalog import topology_keys
    from dfltheory.parsing import parse_spec
    from dfltheory.topology import analyze, analyze_matrix

    if push_sum not in ("theory", "measured"):
        raise ValueError(f"push_sum must be 'theory' or 'measured', got {push_sum!r}")
    if matrix is not None:
        if topology is not None:
            raise ValueError("give a named topology or a matrix file, not both (--topology or --matrix)")
        report = analyze_matrix(matrix, Q=Q, K_u=K_u)
        topology = str(matrix) if isinstance(matrix, (str, bytes)) or hasattr(matrix, "__fspath__") else "matrix"
    else:
        if n is None:
            raise ValueError("a named topology needs n, the number of clients (--n on the command line)")
        name, spec_params = parse_spec(topology)
        report = analyze(name, n, weights=weights, seed=seed, Q=Q, K_u=K_u, **{**spec_params, **params})
    rename = MEASURED if push_sum == "measured" else topology_keys(theorem.paper)  # a paper's own lemma's C, q
    out = {}
    for var in theorem.variables:
        if var.topology_key is None or var.name not in theorem.required + theorem.condition_symbols:
            continue
        key = rename.get(var.topology_key, var.topology_key)
        if key in SPECTRAL and not (report["symmetric"] and report["doubly_stochastic"]):
            raise ValueError(
                f"{theorem.id} needs {var.name} ({var.meaning}) of a symmetric doubly stochastic W (Definition 1), "
                f"but {topology!r} with weights {report['weights']!r} gives symmetric = {report['symmetric']}, "
                f"doubly stochastic = {report['doubly_stochastic']}: the theorem does not apply to it; use "
                "--weights metropolis on an undirected graph, or give the value with --set")
        value = report.get(key)
        if value is None:
            raise ValueError(f"{theorem.id} needs {var.name} ({var.meaning}), which topology {topology!r} with "
                             f"weights {weights!r} does not define (key {key!r} is missing)")
        if push_sum == "theory" and key in ("C", "q", "C_pgp", "q_pgp") and value == float("inf"):
            raise ValueError(f"{theorem.id} needs {var.name}, but the push-sum lemma is vacuous on {topology!r}: "
                             f"{report['notes'].get('C' if key in ('C', 'q') else 'q_pgp', '')}; use "
                             "--push-sum measured for the constants the network really has")
        out[var.name] = float(value)
    return out, report
