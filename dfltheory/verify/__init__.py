"""Verification: the layer that joins the bounds and training.

Problems whose constants are exact or certified (:mod:`~dfltheory.verify.problems`), the quantity each theorem
bounds read from runs (:mod:`~dfltheory.verify.measures`), what is run for each paper
(:mod:`~dfltheory.verify.plans`), bound-holds verdicts, overlays and rates (:mod:`~dfltheory.verify.holds`),
constants estimated from a user's own run (:mod:`~dfltheory.verify.estimators`), the papers' experimental claims
(:mod:`~dfltheory.verify.claims`, :mod:`~dfltheory.verify.claims_index`) and the papers' worked examples on least
squares (:mod:`~dfltheory.verify.worked_example`). It sits above
:mod:`dfltheory.bounds` and :mod:`dfltheory.empirical` and below :mod:`dfltheory.figures`, which only presents
what it computes.
"""
