"""The paper DFedSGPSM, *Asymmetrically Decentralized Federated Learning* (seed 000, card ``dfedsgpsm.md``): one module
per pillar, each with a ``register()`` that hands its part to that pillar's public ``register_*`` function
(:mod:`dfltheory.papers`).

* :mod:`.theorems`: its theorems, corollaries and lemmas (``dfltheory.bounds.register_paper``);
* :mod:`.algorithms`: the algorithms it introduces (``dfltheory.empirical.algorithms.register_algorithm``);
* :mod:`.plan`: how ``verify`` tests its theorems (``dfltheory.verify.plans.register_plan``);
* :mod:`.claims`: its experimental claims (``dfltheory.verify.claims.register_claims``).
"""

PAPER = "dfedsgpsm"
TITLE = "seed 000: DFedSGPSM (push-sum + SAM + momentum on directed graphs)"
