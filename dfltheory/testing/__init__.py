"""Public test helpers: hypothesis strategies for graphs and mixing matrices (:mod:`dfltheory.testing.strategies`);
a harness that runs the DFedCata authors' public code, the code mode's test oracle and the benchmarks' baseline
(:mod:`dfltheory.testing.official`); the registries saved and restored around a test that loads plugins
(:mod:`dfltheory.testing.registries`)."""
