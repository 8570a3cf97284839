"""dfltheory: put the convergence theory of decentralized federated learning papers to the test.

Pillars
-------
topology   graphs, mixing matrices and every topology constant the bounds use
bounds     every theorem, corollary and key lemma of the five papers, symbolic and numeric
empirical  the papers' algorithms in PyTorch, all clients trained at once
figures    comparison figures and reports
testing    public hypothesis strategies for property-based tests
"""

__version__ = "0.1.0"
