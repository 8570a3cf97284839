"""Planted errors (issue 33 item 3): the mutants, the detection threshold c*, and the planted-error pair in CI: a
bound divided by c* x 1.5 comes out caught, divided by c* / 1.5 not, for one theorem of every paper."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dfltheory.bounds import get
from dfltheory.verify import mutations as MU
from dfltheory.verify.horizons import largest_inside
from dfltheory.verify.instances import SIZES, problem_instances, run_config, theorem_values
from dfltheory.verify.judging import informative_verdicts
from dfltheory.verify.plans import plans
from dfltheory.verify.replicated import replicated_terms

#: a small PEP grid: one horizon, one step (seconds per solve)
GRID = {"T": (2,), "lam": (0.5,), "B": (1.0,), "fractions": (1.0,)}


def _scaled(thm, c: float):
    return dataclasses.replace(thm, id=f"{thm.id}.over_{c:.4g}", variant=f"test: / {c:.4g}",
                               terms={k: v / c for k, v in thm.terms.items()})


def test_mutants_plant_each_error_once_and_keep_the_conditions():
    thm = get("dfedsam.thm4.1")
    found = dict(MU.mutants(thm))
    assert {"bound x 1/2", "bound x 1/10", "T exponent changed: T -> T^(3/2)",
            "K exponent changed: K -> K^(3/2)"} <= set(found)
    assert {f"term '{k}' dropped" for k in thm.terms} <= set(found)
    gap = found["gap exponent halved: (1 - lam) -> (1 - lam)^(1/2)"]
    values = {"eta": 1e-3, "K": 4, "T": 1000, "L": 1.0, "m": 8, "Q": 1, "rho": 0.01, "sigma_l": 0.1, "sigma_g": 0.5,
              "B": 1.0, "lam": 0.9, "f0_minus_fstar": 0.2}
    values = {k: v for k, v in values.items() if k in thm.symbols}
    b = MU.value(thm, values)
    assert MU.value(found["bound x 1/10"], values) == pytest.approx(b / 10, rel=1e-12)
    assert MU.value(gap, values) < b  # (1 - lam)^(1/2) > (1 - lam): a smaller topology term
    assert all(m.conditions == thm.conditions for m in found.values())
    assert sum(MU.shares(thm, values).values()) == pytest.approx(1.0)


def test_c_star_is_the_best_instruments_factor():
    assert MU.c_star(10.0, {"training": 2.0, "pep": 4.0}) == {"factor": 2.5, "instrument": "pep"}
    assert MU.c_star(None, {"training": 2.0}) == {"factor": None, "instrument": None}
    assert MU.c_star(1.0, {"training": -0.1}) == {"factor": None, "instrument": None}  # an interval below 0 proves none


@pytest.mark.parametrize("theorem", ["dfedsam.thm4.1", "dfedsgpsm.thm1", "dfedcata.thm1", "dfedadmm.thm1"])
def test_the_planted_pair_around_c_star_by_pep(theorem):
    """bound / (c* x 1.5) is below the exact worst case of the theorem's class, bound / (c* / 1.5) is not."""
    pep = MU.pep_instrument(theorem, GRID)
    assert pep is not None and not pep["failed"] and pep["worst"] > 0
    thm = get(theorem)
    c = MU.value(thm, pep["values"]) / pep["worst"]
    assert c == pytest.approx(pep["ratio"]) and c >= 1  # the theorem itself holds on its worst case
    table = MU.table(_scaled(thm, c * 1.5), {"pep": (pep["values"], pep["worst"])})
    assert MU.value(_scaled(thm, c * 1.5), pep["values"]) < pep["worst"] < MU.value(_scaled(thm, c / 1.5),
                                                                                     pep["values"])
    assert table["theorem"].startswith(thm.id)
    # with one instrument, a mutant is caught exactly when it is more than c* times smaller than the bound
    for row in MU.table(thm, {"pep": (pep["values"], pep["worst"])})["rows"]:
        assert (row["caught_by"] == "pep") == (row["factor"] > c), row


def test_the_planted_pair_around_c_star_by_training_on_dfedpgp(tmp_path):
    """DFedPGP (no PEP model): on a short replicated run of its explicit variant, the verdict of the bound divided
    by c* x 1.5 is violated and of the bound divided by c* / 1.5 is not (c* = bound / the interval's lower end)."""
    plan = plans()["dfedpgp"]
    size = SIZES["quick"]
    problem, insts = problem_instances(plan, size, plan.targets[0], plan.topologies[:1], size.T)
    inst = insts[-1]
    thm = get("dfedpgp.thm1.explicit")
    T = 400
    values = {**inst.values, "T": T}
    vals = {k: v for k, v in theorem_values(thm, values).items() if k != "eta_u"}
    eta = 0.5 * largest_inside(thm, "eta_u", vals)
    cfg = run_config(plan, problem, plan.targets[0], inst.topo, {**values, "eta_u": eta}, eta, plan.K, T, size, 0)
    terms, _ = replicated_terms(cfg, 5, "avg_pgp", values, T, tmp_path, compile=False)
    (v,) = informative_verdicts([thm], terms, "avg_pgp", values, "eta_u", eta, T, inst.trivial["avg_pgp"])
    star = v["at"]["c_star"]
    assert star["instrument"] == "training" and star["factor"] == pytest.approx(v["at"]["bound"] / v["at"]["ci"][0])
    c = star["factor"]
    rows = {w["theorem"]: w["at"] for w in informative_verdicts([_scaled(thm, c * 1.5), _scaled(thm, c / 1.5)], terms,
                                                                  "avg_pgp", values, "eta_u", eta, T,
                                                                  inst.trivial["avg_pgp"])}
    assert rows[f"{thm.id}.over_{c * 1.5:.4g}"]["verdict"] == "violated"
    assert rows[f"{thm.id}.over_{c / 1.5:.4g}"]["verdict"] != "violated"
    assert math.isfinite(c) and np.isfinite(terms).all()


def test_dfedsam_is_judged_on_the_printed_min_and_on_the_proofs_average():
    """Issue 33 item 1: the printed statement bounds the min over t, the proof the average; both verdicts, labelled,
    on the same per-round terms (the average is the larger)."""
    thm = get("dfedsam.thm4.1")
    terms = np.array([[0.04, 0.01, 0.02, 0.03]] * 2) + np.array([[0.0], [0.002]])
    values = {"K": 4, "L": 1.0, "m": 8, "Q": 1, "rho": 0.01, "sigma_l": 0.1, "sigma_g": 0.5, "B": 1.0, "lam": 0.5,
              "f0_minus_fstar": 0.2}
    from dfltheory.verify.trivial import TrivialLevel

    level = TrivialLevel("min", at_x0=1.0, sup=2.0, sup_kind="certified", sup_source="B^2")
    out = informative_verdicts([thm], terms, "min", values, "eta", 1e-3, 4, level,
                                 plans()["dfedsam"].proof_measure)
    printed, proof = out
    assert not printed["proof_functional"] and proof["proof_functional"]
    assert printed["functional"].startswith("min_") and "proof" in proof["functional"]
    assert printed["at"]["measured"] == pytest.approx(0.011) and proof["at"]["measured"] == pytest.approx(0.026)


@pytest.mark.parametrize("theorem", ["dfedsam.thm4.1", "dfedadmm.thm1"])
def test_the_certificate_bounds_the_worst_case_from_above_and_no_mutant_above_it_is_caught(theorem):
    """The third instrument works from above: a proved certificate is >= the exact worst case at the PEP instance,
    so c* by PEP >= bound / certificate, and a mutant at or above the certificate is caught by no instrument there."""
    pep = MU.pep_instrument(theorem, {"T": (4,), "lam": (0.5,), "B": (1.41,), "fractions": (1.0,)})
    thm = get(theorem)
    cert = MU.certificate_floor(thm, pep)
    assert cert["bound"] is not None and cert["bound"] >= pep["worst"] * (1 - 1e-6)
    assert 1 <= cert["floor"] <= pep["ratio"] * (1 + 1e-6)
    planted = _scaled(thm, cert["floor"] * 0.99)  # just above the certificate: a valid bound there, not caught
    assert MU.value(planted, pep["values"]) >= cert["bound"]
    assert MU.value(planted, pep["values"]) >= pep["worst"]  # so the PEP does not catch it either


def test_the_mutation_table_marks_the_mutants_the_certificate_proves_out_of_reach():
    """mutation_tables with no informative run (PEP and certificate only, DFedADMM at T = 4): a row marked
    holds_by_certificate is caught by nothing, and 'bound x 1/2' (far below the floor of 35) is marked."""
    (tab,) = MU.mutation_tables([{"theorem": "dfedadmm.thm1", "status": "no run", "note": "test"}], (4,))
    cert = tab["certificate"]
    assert cert["bound"] is not None and cert["floor"] > 2
    rows = {r["mutation"]: r for r in tab["rows"]}
    assert rows["bound x 1/2"]["holds_by_certificate"] and rows["bound x 1/2"]["caught_by"] is None
    assert all(r["caught_by"] is None for r in tab["rows"] if r.get("holds_by_certificate"))
    assert any(not r.get("holds_by_certificate") for r in tab["rows"])  # the term 'optimization' dropped is caught
