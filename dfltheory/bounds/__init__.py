"""Every theorem, corollary and key lemma of the five papers, symbolic (sympy) and numeric.

>>> from dfltheory.bounds import get, ids
>>> thm = get("dfedsam.thm4.1")                      # doctest: +SKIP
>>> thm.check(eta=1e-3, K=20, ...).to_dict()         # doctest: +SKIP
"""

from dfltheory.bounds.catalog import PAPERS, catalog, get, ids, register_paper
from dfltheory.bounds.substitution import topology_values
from dfltheory.bounds.symbols import COMMON, DomainError, Var
from dfltheory.bounds.theorem import Check, Condition, Source, Theorem, Verdict

__all__ = ["PAPERS", "catalog", "get", "ids", "register_paper", "COMMON", "DomainError", "Var", "Check", "Condition",
           "Source", "Theorem", "Verdict", "topology_values"]
