"""Which theorem bounds which PEP model is the papers' declaration (``dfltheory/papers/<id>/pep.py``, registered with
:func:`dfltheory.pep.compare.register_pep_bound`), not a table of pep's own (issue 35 item 1)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dfltheory.pep import W_lambda, worst_case
from dfltheory.pep.problem import MODELS
from dfltheory.testing.registries import isolated

C = importlib.import_module("dfltheory.pep.compare")  # the module (the package exports the function compare)

#: the theorem each built-in model was compared with before the papers declared it
BEFORE = {"dpsgd": "dfedsam.thm4.1", "dpsgd-atc": "dfedsam.thm4.1", "dfedavg": "dfedsam.thm4.1",
          "dfedavg-mgs": "dfedsam.thm4.1", "dfedsam-unnormalized": "dfedsam.thm4.1", "dfedadmm": "dfedadmm.thm1",
          "dfedadmm-sam-unnormalized": "dfedadmm.thm1", "sgp": "dfedsgpsm.thm1", "dfedsgpm": "dfedsgpsm.thm1",
          "dfedsgpsm-unnormalized": "dfedsgpsm.thm1", "dfedcata-a": "dfedcata.thm1.A", "dfedcata-b": "dfedcata.thm1"}


def test_every_built_in_model_is_covered_by_the_theorem_its_paper_declares():
    assert set(C.BOUNDS) == set(MODELS) == set(BEFORE)
    assert {m: C.theorem_for(m) for m in MODELS} == BEFORE
    assert C.main_reading("dfedcata-a") == "dfedcata.thm1.A@Xi=0" and C.main_reading("dfedcata-b") == "dfedcata.thm1"
    assert C.BOUNDS["dfedavg"].readings[0] == "dfedsam.thm4.1" and len(C.BOUNDS["dfedavg"].readings) == 7


def test_the_readings_a_declaration_names_are_compared_where_they_apply():
    W = W_lambda(2, 0.5)
    one = C.compare(worst_case("dfedavg", 2, 2, 3, 0.05, W=W, sigma_g=1, B=2), lam=0.5)
    two = C.compare(worst_case("dfedavg-mgs", 2, 2, 3, 0.05, W=W, sigma_g=1, B=2, Q=2), lam=0.5)
    assert len(one["variants"]) == 6 and len(two["variants"]) == 4  # Lemma E.2's two readings need Q = 1
    admm = C.compare(worst_case("dfedadmm-sam-unnormalized", 2, 2, 3, 0.01, W=W, sigma_g=1, B=2, lam_pen=0.01,
                                rho=0.05), lam=0.5)
    assert [v["theorem"] for v in admm["variants"]] == ["dfedadmm.thm1.corrected", "dfedadmm.thm1.normalized"]


def test_a_bound_is_refused_with_the_problem_named():
    never = lambda s, lam: (None, "never")  # noqa: E731
    with isolated():
        with pytest.raises(ValueError, match="'mine' is not a built-in PEP model"):
            C.register_pep_bound(C.PEPBound(("mine",), "dfedsam.thm4.1", never))
        with pytest.raises(ValueError, match=r"'dfedavg' already has a theorem \(dfedsam.thm4.1\)"):
            C.register_pep_bound(C.PEPBound(("dfedavg",), "dfedsam.thm4.1", never))
        with pytest.raises(ValueError, match="mine.py: PEP bound 'dfedsam.thm4.1': theorem 'nope.thm' is not in"):
            C.register_pep_bound(C.PEPBound(("dfedavg",), "dfedsam.thm4.1", never, ("nope.thm",)), origin="mine.py")
        with pytest.raises(ValueError, match="not a dfltheory.pep.compare.PEPBound"):
            C.register_pep_bound(("dfedavg", "dfedsam.thm4.1"))
    assert np.isfinite(C.compare(worst_case("dpsgd-atc", 2, 1, 3, 0.1, W=W_lambda(2, 0.5), sigma_g=1, B=2))["bound"])


def test_a_pep_bound_with_a_string_for_its_models_or_a_non_string_reading_is_refused_by_name():
    """A string for the models would be read letter by letter, a number for a reading crashed in partition: both are
    one ValueError naming the field."""
    import pytest

    from dfltheory.pep.compare import PEPBound, register_pep_bound

    with pytest.raises(ValueError, match="models must be a tuple of PEP model names, got 'dfedavg'"):
        register_pep_bound(PEPBound(models="dfedavg", theorem="dfedsam.thm4.1", values=lambda s: {}))
    with pytest.raises(ValueError, match="readings must be theorem ids"):
        register_pep_bound(PEPBound(models=("x",), theorem="dfedsam.thm4.1", values=lambda s: {}, readings=(3,)))
