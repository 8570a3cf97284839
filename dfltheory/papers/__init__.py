"""The built-in papers, one package each: ``dfltheory/papers/<id>/`` holds everything that is the paper's own.

=============  =============================================================================================
module         what it declares, and the public function its ``register()`` hands it to
=============  =============================================================================================
``__init__``   ``PAPER`` (the id) and ``TITLE``; it registers nothing (reading it is cheap)
``theorems``   the theorems, corollaries and lemmas as sympy data (``dfltheory.bounds.register_paper``)
``algorithms`` the algorithms the paper introduces (``dfltheory.empirical.algorithms.register_algorithm``);
               the baselines it compares with (D-PSGD, DFedAvg, SGP, FedAvg, ...) stay in ``dfltheory.empirical``
``plan``       how ``verify`` tests its theorems, with the paper's own constants (``dfltheory.verify.plans``)
``claims``     its experimental claims (``dfltheory.verify.claims.register_claims``) and its card's §10 items
               (``dfltheory.verify.claims_index.register_card``)
``pep``        which PEP models its theorems bound, and their symbols at a PEP's settings
               (``dfltheory.pep.compare.register_pep_bound``)
=============  =============================================================================================

A built-in paper is written like a user's plugin (docs/extending.md): data declared with the public classes and
handed to the same public ``register_*`` functions. Only the moment differs: a plugin registers when it is loaded;
a built-in paper's part is registered when its pillar's registry is first read, by
:func:`dfltheory.plugins.load_builtin` (``load_builtin("theorems")`` from the catalog, ``"algorithms"`` from the
algorithm table, ``"plan"`` from the plans, ``"claims"`` from the claims, ``"pep"`` from the PEP bounds), which imports
``dfltheory.papers.<id>.<part>`` for every id of :data:`BUILTIN` and calls its ``register()``. So reading a theorem
does not import torch, and importing a paper's module (a test, a plugin reading its expressions) registers nothing.

The layer: above ``verify`` and ``pep`` (a paper's modules import the pillars they register into), below
``figures`` and ``cli``. The pillars never import it: the one name of it below is the loader's (tests/test_layers.py).
"""

#: the built-in papers, in the seed order (the order of every listing)
BUILTIN = ("dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm")
