"""Verification: the layer that joins the bounds and training.

Problems whose constants are exact or certified (:mod:`~dfltheory.verify.problems`), the quantity each theorem
bounds read from runs (:mod:`~dfltheory.verify.measures`), what is run for each paper
(:mod:`~dfltheory.verify.plans`), the bound-holds experiments (:mod:`~dfltheory.verify.holds` runs the stages:
the sizes and instances of :mod:`~dfltheory.verify.instances`, the grid of :mod:`~dfltheory.verify.holds_grid`
judged by :mod:`~dfltheory.verify.judging`, the T* rows of :mod:`~dfltheory.verify.horizon_rows`, the informative
runs of :mod:`~dfltheory.verify.informative` on :mod:`~dfltheory.verify.replicated` engines, the rate in T of
:mod:`~dfltheory.verify.measured_rate`, in the processes of :mod:`~dfltheory.verify.processes`),
constants estimated from a user's own run (:mod:`~dfltheory.verify.estimators`), the papers' experimental claims
(:mod:`~dfltheory.verify.claims`, :mod:`~dfltheory.verify.claims_index`) and the papers' worked examples on least
squares (:mod:`~dfltheory.verify.worked_example`). It sits above
:mod:`dfltheory.bounds` and :mod:`dfltheory.empirical` and below :mod:`dfltheory.figures`, which only presents
what it computes.
"""
