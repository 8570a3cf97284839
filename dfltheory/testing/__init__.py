"""Public test helpers: hypothesis strategies for graphs and mixing matrices (:mod:`dfltheory.testing.strategies`)."""
