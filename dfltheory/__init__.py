"""dfltheory: put the convergence theory of decentralized federated learning papers to the test.

Pillars
-------
topology   graphs, mixing matrices and every topology constant the bounds use
bounds     theorems as sympy data, their catalog (``register_paper``), checks, solves and rates
empirical  algorithms in PyTorch (a local rule composed with a communication rule), all clients trained at once
pep        performance estimation: exact worst cases of small instances
verify     problems with exact constants, bound-holds runs, estimators, experimental claims
papers     the five built-in papers, one folder each (``papers/<id>/``: theorems, algorithms, programs, plan,
           claims, pep)
program    an algorithm written once as a step program: the engine trains from it (``empirical.program_rules``),
           the PEP and the certificate are derived from it (``pep.program_pep``)
figures    comparison figures and reports
testing    public hypothesis strategies for property-based tests, and the oracles (``testing.handwritten``: the
           hand-written rules the programs are checked against, bit for bit)

At the bottom (layer 0): ``parsing`` (the command line's text helpers), ``constraints`` (an input's allowed values,
declared once and checked by the command line and the API alike), ``records`` (typed records of every dict written
as JSON or hashed; docs/schema.md is generated from them), ``plugins`` (the registries' loading).

A paper is one folder: each module of ``dfltheory/papers/<id>/`` declares the paper's data and hands it, in its
``register()``, to the public ``register_*`` function of one pillar, the one a user's plugin calls
(docs/extending.md). The pillars never import the papers; each registry loads its part of every built-in paper by
module name when it is first read (:func:`dfltheory.plugins.load_builtin`), as :func:`dfltheory.plugins.load` loads
a plugin.
"""

__version__ = "0.1.0"
