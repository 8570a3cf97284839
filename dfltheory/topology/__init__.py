"""Topology pillar: graphs, mixing weights, Definition-1 validation and every topology constant of the papers.

Public API::

    from dfltheory.topology import build, analyze, NAMES, validate, lam
    topo = build("ring", 100, weights="metropolis", seed=0)
    W = topo.matrix(t=0)
    analyze("random", 100, weights="push-sum", k=10)["q_measured"]

See docs/topology.md for every constant, its definition and its citation.
"""

from dfltheory.topology import graphs, pushsum, spectral, weights
from dfltheory.topology.core import KEYS, NAMES, REGISTRY, Topology, analyze, analyze_topology, build
from dfltheory.topology.spectral import lam, lambda_q, phi, phi_e2, sigma_2, spectral_gap, spectrum
from dfltheory.topology.validation import ValidationReport, validate
from dfltheory.topology.weights import RULES, mixing_matrix

__all__ = ["KEYS", "NAMES", "REGISTRY", "RULES", "Topology", "ValidationReport", "analyze", "analyze_topology",
           "build", "graphs", "lam", "lambda_q", "mixing_matrix", "phi", "phi_e2", "pushsum", "sigma_2",
           "spectral", "spectral_gap", "spectrum", "validate", "weights"]
