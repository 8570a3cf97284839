"""Topology pillar: graphs, mixing weights, Definition-1 validation and every topology constant of the papers.

Public API::

    from dfltheory.topology import build, analyze, NAMES, validate, lam
    topo = build("ring", 100, weights="metropolis", seed=0)
    W = topo.matrix(t=0)
    analyze("random", 100, weights="push-sum", k=10)["q_measured"]
    analyze_matrix("W.csv")           # a user's W or push-sum P from .npy, .csv or .mtx (load_matrix reads it)
    n_eff(W, [0.5, 0.9, 0.99]); generalized_gap(P, "column")   # beyond the spectral gap (beyond_gap.py)

See docs/topology.md for every constant, its definition and its citation.
"""

from dfltheory.topology import beyond_gap, graphs, memory, pushsum, spectral, weights
from dfltheory.topology.beyond_gap import generalized_gap, n_eff, perron_vector
from dfltheory.topology.core import (KEYS, NAMES, REGISTRY, MatrixTopology, Topology, analyze, analyze_matrix,
                                     analyze_topology, build, from_matrix)
from dfltheory.topology.files import load_matrix
from dfltheory.topology.spectral import lam, lambda_q, phi, phi_e2, sigma_2, spectral_gap, spectrum
from dfltheory.topology.validation import ValidationReport, validate
from dfltheory.topology.weights import RULES, mixing_matrix

__all__ = ["KEYS", "NAMES", "REGISTRY", "RULES", "MatrixTopology", "Topology", "ValidationReport", "analyze",
           "analyze_matrix", "analyze_topology", "beyond_gap", "build", "from_matrix", "generalized_gap", "graphs",
           "lam", "lambda_q", "load_matrix", "memory", "mixing_matrix", "n_eff", "perron_vector", "phi", "phi_e2",
           "pushsum", "sigma_2", "spectral", "spectral_gap", "spectrum", "validate", "weights"]
