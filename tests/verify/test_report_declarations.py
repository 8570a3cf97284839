"""What the report takes from the papers' plans instead of their names (issue 35 item 1): the certificate table's
cases and their order (``PaperPlan.certificate_case``, ``certificate_order``), the symbol a run's option is in its
paper's theorems (``PaperPlan.run_symbols``: DFedPGP's K is K_u) and the worked example (``PaperPlan.example``)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dfltheory.verify.report_data import certificate_cases, run_values, worked_example


def test_the_certificate_cases_are_the_plans_in_their_order():
    assert certificate_cases() == [("dpsgd-atc", {"K": 1, "eta": 0.1}),
                                   ("dfedadmm", {"K": 1, "eta": 0.01, "lam_pen": 0.01}),
                                   ("dfedcata-b", {"K": 1, "eta": 0.1, "lam_pen": 1.0, "beta": 0.3}),
                                   ("dfedsgpm", {"K": 2, "eta": 0.02, "alpha": 0.5})]
    assert certificate_cases(["dfedsgpsm", "dfedadmm"]) == [certificate_cases()[1], certificate_cases()[3]]
    assert certificate_cases(["dfedpgp"]) == []  # its plan declares none


def test_a_plugin_plan_adds_its_certificate_case_in_its_place():
    from dfltheory.bounds import get, register_paper
    from dfltheory.testing.registries import isolated
    from dfltheory.verify.plans import plans, register_plan

    with isolated():
        register_paper("mine", "Mine", [replace(get("dfedsam.thm4.1"), id="mine.thm", paper="mine")])
        register_paper("mine2", "Mine 2", [replace(get("dfedsam.thm4.1"), id="mine2.thm", paper="mine2")])
        plan = replace(plans()["dfedsam"], paper="mine", example=None, certificate_case=("dfedavg", {"K": 2}),
                       certificate_order=1, targets=tuple(replace(t, theorem="mine.thm") for t in
                                                          plans()["dfedsam"].targets[:1]))
        register_plan(plan)
        assert [a for a, _ in certificate_cases()] == ["dpsgd-atc", "dfedadmm", "dfedavg", "dfedcata-b", "dfedsgpm"]
        assert worked_example(["mine"]) is None
        with pytest.raises(ValueError, match="example 'ring' is not valid; give a dfltheory.verify.worked_example"):
            register_plan(replace(plan, paper="mine2", example="ring",
                                  targets=tuple(replace(t, theorem="mine2.thm") for t in plan.targets)))


def test_a_run_states_its_k_as_the_symbol_its_plan_names(tmp_path):
    for algo, key in (("dfedpgp", "K_u"), ("dfedpgp-pull", "K"), ("dfedsam", "K")):
        run = tmp_path / algo
        run.mkdir()
        (run / "config.json").write_text(json.dumps({"algo": algo, "n": 4, "K": 3, "lr": 0.1, "topology": "ring"}))
        values = run_values(run)
        assert values[key] == 3 and ({"K", "K_u"} - {key}).isdisjoint(values), (algo, values)


def test_the_worked_example_is_the_first_plan_that_declares_one():
    paper, example = worked_example()
    assert paper == "dfedsam" and example.theorem == "dfedsam.thm4.1" and example.algorithm == "dfedsam"
    assert worked_example(["dfedpgp", "dfedadmm"]) is None
    eta, rho = example.schedule(100, 5, 2.0, example.largest_c(25, 5), example.r)  # Corollary 4.1.1's schedule
    assert example.largest_c(25, 5) == pytest.approx(0.2236, abs=1e-4)  # T >= 100 c^2 K at T = 25, K = 5
    assert eta == pytest.approx(0.2236 / (2.0 * 500 ** 0.5), rel=1e-4) and rho == pytest.approx(0.005)
    assert eta <= 1 / (10 * 5 * 2.0) + 1e-12  # the corollary's implicit eta <= 1/(10 K L) at the smallest T: 25
