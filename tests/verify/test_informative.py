"""Verdicts that can fail (issue 21): trivial levels, T*, replicated runs, and informative verdicts that catch a
planted too-small bound and label a too-large one trivial."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dfltheory.bounds import get
from dfltheory.empirical.replicas import BlockDiagonal, Replicas, replicate
from dfltheory.empirical.runner import build, run
from dfltheory.verify import holds
from dfltheory.verify import measures as M
from dfltheory.verify.horizon_rows import horizon_rows
from dfltheory.verify.horizons import at, horizon
from dfltheory.verify.informative import finish_informative, informative
from dfltheory.verify.instances import (SIZES, problem_instances, resolve_targets, run_config, start_point,
                                        theorem_values)
from dfltheory.verify.judging import informative_at, informative_verdicts
from dfltheory.verify.plans import plans
from dfltheory.verify.problems import PROBLEMS, theorem_constants
from dfltheory.verify.replicated import replicated_engine, replicated_terms
from dfltheory.verify.trivial import TrivialLevel, certified_sup, level_at_start, numeric_sup

SIZE = SIZES["quick"]


@pytest.fixture(scope="module")
def dfedsam_instance():
    plan = plans()["dfedsam"]
    problem, insts = problem_instances(plan, SIZE, plan.targets[0], plan.topologies[:1], SIZE.T)
    return plan, problem, insts[0]


# ------------------------------------------------------------------------------------------------ trivial levels
def test_labels_follow_the_smaller_trivial_level():
    level = TrivialLevel("min", at_x0=0.04, sup=0.44, sup_kind="certified", sup_source="B^2")
    assert level.level == 0.04
    assert level.label(0.01) == "informative" and level.informative(0.01)
    assert level.label(0.1).startswith("trivial: bound >= 0.04 at x^0") and not level.informative(0.1)
    assert level.label(0.5).startswith("trivial: bound >= sup 0.44") and not level.informative(0.5)
    assert not level.informative(None) and level.label(math.inf) == "no bound"
    numeric = TrivialLevel("min", 0.04, 0.04, "numeric", "samples").with_numeric(0.07)
    assert numeric.sup == 0.07 and numeric.level == 0.04  # a numeric supremum grows with what is seen
    assert level.with_numeric(0.07).sup == 0.44 and level.with_numeric(0.07).to_dict()["sup_over_numeric"] == \
        pytest.approx(0.44 / 0.07)


def test_the_level_at_x0_is_the_gradient_at_the_start_and_the_certified_sup_bounds_every_sample(dfedsam_instance):
    plan, problem, inst = dfedsam_instance
    level = inst.trivial["min"]
    cfg = run_config(plan, problem, plan.targets[0], inst.topo, {"rho": 0.01}, 1e-3, plan.K, 2, SIZE, 0)
    engine, evaluator = build({**cfg, "out": None})
    g = evaluator.objective(engine.x_bar())[1]
    assert level.at_x0 == pytest.approx(float((g**2).sum()), rel=1e-12)
    consts = theorem_constants(problem.load(SIZE.m), SIZE.batch_size, theorem="dfedsam")
    assert level.sup == pytest.approx(consts["B"].value ** 2) and level.sup_kind == "certified"
    # the certificate is an upper bound: no sampled point (near the clients' optima, far from them) exceeds it
    data = engine.data.constants
    seen = numeric_sup("min", evaluator, engine.client_models(), list(data["x_client_star"]), {}, samples=96)
    assert 0 < seen <= level.sup and level.numeric_sup >= level.at_x0


def test_dfedpgp_has_a_certified_block_supremum_and_its_level_at_x0():
    plan = plans()["dfedpgp"]
    consts = theorem_constants(PROBLEMS[plan.problem].load(SIZE.m), SIZE.batch_size, theorem="dfedpgp")
    sup, source = certified_sup("avg_pgp", consts)
    B_u, B_v, L_u, L_v = (consts[k].value for k in ("B_u", "B_v", "L_u", "L_v"))
    assert sup == pytest.approx(B_u**2 / L_u + B_v**2 / L_v) and "B_u" in source
    cfg = run_config(plan, PROBLEMS[plan.problem], plan.targets[0], plan.topologies[0],
                       {"eta_v": 1e-3, "K_v": 2}, 1e-3, plan.K, 2, SIZE, 0)
    engine, evaluator = build({**cfg, "out": None})
    values = {k: c.value for k, c in consts.items()}
    level = level_at_start("avg_pgp", evaluator, engine.client_models(), consts, values, engine.shared)
    assert 0 < level.at_x0 < sup
    assert numeric_sup("avg_pgp", evaluator, engine.client_models(), [], values, engine.shared) <= sup
    assert certified_sup("min", {}) is None  # no B: the level is numeric


# ------------------------------------------------------------------------------------------------ T*
@settings(max_examples=6, deadline=None)
@given(st.sampled_from(["dfedsam.thm4.1", "dfedsam.thm4.1.corrected", "dfedsam.thm4.1.tight"]),
       st.floats(0.005, 0.05))
def test_T_star_is_the_first_horizon_whose_best_bound_is_below_the_level(dfedsam_instance, theorem, level):
    """At T*, some admissible step gives a bound below the level; at the horizon before it (the search's
    resolution), no step of a fine grid over the admissible set does."""
    plan, _, inst = dfedsam_instance
    thm = get(theorem)
    values = {k: v for k, v in theorem_values(thm, inst.values).items() if k not in ("eta", "T")}
    h = horizon(thm, "eta", values, level, "best")
    assert not h["vacuous"] and h["bound"] < level
    T = h["T_star"]
    assert at(thm, "eta", values, T, "best").bound < level
    before = T - max(1, T // 1000)
    top = thm.largest("eta", "all", **values, T=before)
    grid = np.geomspace(top * 1e-6, top, 4000)
    assert np.min(thm.evaluate(**values, T=before, eta=grid)) >= level * (1 - 1e-9)


def test_a_bound_that_never_falls_below_the_level_is_vacuous_and_names_its_term(dfedsam_instance):
    plan, _, inst = dfedsam_instance
    thm = get("dfedsam.thm4.1")
    values = {k: v for k, v in theorem_values(thm, inst.values).items() if k not in ("eta", "T")}
    h = horizon(thm, "eta", values, 1e-4, "largest")  # at the largest step the topology term does not decay
    assert h["vacuous"] and h["T_star"] is None and "term 'topology'" in h["why"]


def test_the_horizons_command_prints_the_table_without_training(tmp_path, capsys):
    from dfltheory.cli import main

    assert main(["verify", "dfedsam.thm4.1", "--quick", "--horizons", "--out", str(tmp_path / "v")]) == 0
    out = capsys.readouterr().out
    assert "T* (best step)" in out and "dfedsam.thm4.1" in out
    assert not (tmp_path / "v").exists()  # nothing trained, nothing written


# ------------------------------------------------------------------------------------------------ replicas
def _cfg(plan, problem, inst, T, batch_size=4, **extra):
    size = dataclasses.replace(SIZE, batch_size=batch_size)
    cfg = run_config(plan, problem, plan.targets[0], inst.topo, {"rho": 0.01}, 5e-3, plan.K, T, size, 0)
    return {**{k: v for k, v in {**cfg, **extra}.items() if v is not None}, "batch_size": batch_size}


def test_block_diagonal_mixing_keeps_copies_apart():
    W = np.array([[0.5, 0.5], [0.5, 0.5]])
    B = BlockDiagonal((W,) * 3).matrix(0)
    assert B.shape == (6, 6) and np.allclose(B[:2, :2], W) and not B[:2, 2:].any()
    with pytest.raises(ValueError, match="positive integer"):
        replicate(None, 0)


def test_one_copy_equals_the_runner_and_full_batch_copies_equal_each_other(dfedsam_instance, tmp_path):
    plan, problem, inst = dfedsam_instance
    from dfltheory.empirical.rundir import read_records

    cfg = _cfg(plan, problem, inst, 12)  # float32, as the runner trains: the same trajectory, another summation
    run({**cfg, "out": str(tmp_path / "r"), "progress": False})
    ref = M.per_round("min", read_records(tmp_path / "r" / "metrics.jsonl"))
    engine, _ = build({**cfg, "out": None}, replicas=1)
    one = Replicas(engine, 1, "grad_norm_sq").run(12).numpy()[0]
    np.testing.assert_allclose(one, ref, rtol=1e-5)
    torch.set_default_dtype(torch.float64)
    try:
        # full local batches: no sampling, so every copy follows the single run exactly
        full = _cfg(plan, problem, inst, 8, batch_size=None)
        engine, _ = build({**full, "out": None}, replicas=3)
        copies = Replicas(engine, 3, "grad_norm_sq").run(8).numpy()
        engine, _ = build({**full, "out": None})
        single = Replicas(engine, 1, "grad_norm_sq").run(8).numpy()[0]
        np.testing.assert_allclose(copies, np.tile(single, (3, 1)), rtol=1e-12)
        # minibatches: the copies draw independently
        engine, _ = build({**cfg, "out": None}, replicas=3)
        noisy = Replicas(engine, 3, "grad_norm_sq").run(12).numpy()
        assert not np.allclose(noisy[0], noisy[1])
    finally:
        torch.set_default_dtype(torch.float32)


def test_a_server_algorithm_cannot_be_replicated(dfedsam_instance):
    plan, problem, inst = dfedsam_instance
    with pytest.raises(ValueError, match="server"):
        build({**_cfg(plan, problem, inst, 2), "algo": "fedavg", "out": None}, replicas=2)


def test_replicated_runs_resume_bit_exactly_from_their_checkpoint(dfedsam_instance, tmp_path):
    plan, problem, inst = dfedsam_instance
    cfg = _cfg(plan, problem, inst, 30)
    whole, _ = replicated_terms(cfg, 2, "min", {}, 30, tmp_path / "a", compile=False)
    # a run cut after its checkpoint at round 20 resumes from it
    cut = tmp_path / "b"

    class Stop(Exception):
        pass

    def stop(done, total, eta):
        if done >= 20:
            raise Stop

    with pytest.raises(Stop):
        replicated_terms(cfg, 2, "min", {}, 30, cut, progress=stop, checkpoint_every=10, progress_every=10,
                           compile=False)
    (key,) = list(cut.iterdir())
    assert (key / "checkpoint.pt").exists() and not (key / "terms.npy").exists()
    again, _ = replicated_terms(cfg, 2, "min", {}, 30, cut, compile=False)
    np.testing.assert_array_equal(again, whole)
    assert not (key / "checkpoint.pt").exists()


# ------------------------------------------------------------------------------------------------ can fail
def test_a_too_small_bound_is_violated_and_a_too_large_one_is_trivial_on_an_informative_run(dfedsam_instance,
                                                                                          tmp_path):
    """Issue 21 item 6: the same replicated runs give 'violated' (informative) for the theorem divided by 10^4 and
    'holds (trivial ...)' for it times 10^3; the printed theorem at T = 2 T* holds informatively."""
    plan, problem, inst = dfedsam_instance
    thm = get("dfedsam.thm4.1")
    small = dataclasses.replace(thm, id="dfedsam.thm4.1.too_small", variant="test: / 1e4",
                                terms={k: v / 10**4 for k, v in thm.terms.items()})
    large = dataclasses.replace(thm, id="dfedsam.thm4.1.too_large", variant="test: x 1e3",
                                terms={k: v * 10**3 for k, v in thm.terms.items()})
    level = inst.trivial["min"]
    values = {k: v for k, v in theorem_values(thm, inst.values).items() if k not in ("eta", "T")}
    T_star = horizon(thm, "eta", values, level.level, "best")["T_star"]
    T_run = 2 * T_star
    eta = at(thm, "eta", values, T_run, "best").step
    cfg = run_config(plan, problem, plan.targets[0], inst.topo, {"rho": 0.01}, eta, plan.K, T_run, SIZE, 0)
    terms, _ = replicated_terms(cfg, 5, "min", inst.values, T_run, tmp_path, compile=False)
    rows = {v["theorem"]: v["at"] for v in informative_verdicts([thm, small, large], terms, "min", inst.values,
                                                                  "eta", eta, T_run, level)}
    assert rows[small.id]["verdict"] == "violated" and rows[small.id]["informative"]
    assert rows[small.id]["bound"] < rows[small.id]["ci"][0]
    assert rows[large.id]["verdict"] == "holds" and not rows[large.id]["informative"]
    assert rows[large.id]["label"].startswith("trivial")
    assert rows[thm.id]["verdict"] == "holds" and rows[thm.id]["informative"]
    assert rows[thm.id]["bound"] < level.level


@pytest.mark.parametrize("paper", ["dfedsgpsm", "dfedcata", "dfedpgp", "dfedadmm"])
def test_one_copy_measures_what_the_runner_records_for_every_paper(paper, tmp_path):
    """The replicated path's per-round terms (at x_bar, p^t, w^t, DFedPGP's Delta's) equal those the runner's
    metrics give through dfltheory.verify.measures.per_round (float32 runs, another summation order)."""
    from dfltheory.empirical.rundir import read_records

    plan = plans()[paper]
    target = next(t for t in plan.targets if t.main)
    consts = theorem_constants(PROBLEMS[plan.problem].load(SIZE.m), SIZE.batch_size, theorem=paper)
    values = {k: c.value for k, c in consts.items()}
    hp = {"rho": 0.01, "beta": 0.5, "lam_pen": 0.003, "alpha": 0.5, "eta_v": 0.01, "K_v": 2}
    cfg = run_config(plan, PROBLEMS[plan.problem], target, plan.topologies[0], hp, 1e-3, plan.K, 10, SIZE, 0)
    run({**cfg, "out": str(tmp_path / "r"), "progress": False})
    ref = M.per_round(target.measure, read_records(tmp_path / "r" / "metrics.jsonl"), values)
    quantity = {"avg": "grad_norm_sq", "avg_p": "grad_norm_sq_p", "avg_w": "grad_norm_sq_w",
                "avg_pgp": "delta_pgp"}[target.measure]
    engine, _ = build({**cfg, "out": None})
    got = Replicas(engine, 1, quantity, (values.get("L_u", 1.0), values.get("L_v", 1.0))).run(10).numpy()[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_the_best_step_meets_every_condition_exactly_where_it_sits_on_a_boundary():
    """DFedADMM's best step at T lies on its lower end lam_pen / K: the step returned must be the one evaluated
    (an exp(log(x)) round trip once moved it one float outside)."""
    plan = dataclasses.replace(plans()["dfedadmm"], problem="synthetic-robust-common")
    _, insts = problem_instances(plan, SIZE, plan.targets[0], plan.topologies[:1], SIZE.T)
    thm = get("dfedadmm.thm1")
    values = {k: v for k, v in theorem_values(thm, insts[0].values).items() if k not in ("eta", "T")}
    for T in (10**3, 10**4, 10**5):
        p = at(thm, "eta", values, T, "best")
        check = thm.check("all", **values, T=T, eta=p.step)
        assert check.all_ok and check.value == pytest.approx(p.bound, rel=1e-12)


def test_verify_in_two_processes_gives_the_T_star_rows_of_one(tmp_path):
    """The T* rows are computed in worker processes with --jobs 2 (a plan holds functions, which do not pickle)."""
    one = holds.verify(["dfedsam.thm4.1", "dfedadmm.thm1"], "quick", tmp_path / "a", rates=False)
    two = holds.verify(["dfedsam.thm4.1", "dfedadmm.thm1"], "quick", tmp_path / "b", rates=False, workers=2)
    assert one["horizons"] == two["horizons"] and len(one["horizons"]) >= 4


def test_a_damaged_cache_entry_or_checkpoint_is_trained_again(dfedsam_instance, tmp_path):
    plan, problem, inst = dfedsam_instance
    cfg = _cfg(plan, problem, inst, 20)
    whole, _ = replicated_terms(cfg, 2, "min", {}, 20, tmp_path, compile=False)
    (key,) = list(tmp_path.iterdir())
    (key / "run.json").write_text("{torn")
    again, _ = replicated_terms(cfg, 2, "min", {}, 20, tmp_path, compile=False)
    np.testing.assert_array_equal(again, whole)
    (key / "terms.npy").unlink()
    (key / "checkpoint.pt").write_bytes(b"cut while written")
    again, _ = replicated_terms(cfg, 2, "min", {}, 20, tmp_path, compile=False)
    np.testing.assert_array_equal(again, whole)


def test_an_informative_run_held_by_another_process_is_refused_and_verify_is_quiet(dfedsam_instance, tmp_path,
                                                                                 capfd):
    """Two verify processes never write one informative run together (the run's lock, as ``train`` and ``sweep``
    lock theirs), and the replicated runs print nothing about their initial weights."""
    import fcntl

    plan, problem, inst = dfedsam_instance
    cfg = _cfg(plan, problem, inst, 5)
    replicated_terms(cfg, 2, "min", {}, 5, tmp_path, compile=False)
    assert "initial weights" not in capfd.readouterr().err
    (key,) = list(tmp_path.iterdir())
    with open(key / ".lock", "a+") as other:  # another open file: flock treats it as another process
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match="being written by another process"):
            replicated_terms(cfg, 2, "min", {}, 5, tmp_path, compile=False)
    again, _ = replicated_terms(cfg, 2, "min", {}, 5, tmp_path, compile=False)
    assert again.shape == (2, 5)


@pytest.mark.parametrize("paper", ["dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm"])
def test_every_replica_starts_at_the_bounds_x0_in_float64(paper, tmp_path):
    """Issue 33 item 2: the float64 replicated engine starts every copy at the x^0 whose f(x^0) - f* the bound
    uses (the float64 default once drew other weights), the point whose f(x^0) the bound uses."""
    plan = plans()[paper]
    problem = PROBLEMS[plan.informative_problems[0] if plan.informative_problems else plan.problem]
    target = next(t for t in plan.targets if t.main)
    hp = {"rho": 0.01, "beta": 0.5, "lam_pen": 0.003, "alpha": 0.5, "eta_v": 0.01, "K_v": 2}
    cfg = run_config(plan, problem, target, plan.topologies[0], hp, 1e-3, plan.K, 4, SIZE, 0)
    f0, _, _, _, _ = start_point(cfg, theorem_constants(problem.load(SIZE.m), SIZE.batch_size, theorem=paper),
                                    {}, (), paper)
    engine, _ = replicated_engine(cfg, 3, False, tmp_path)
    single, evaluator = build({**cfg, "out": None})
    x = engine.state["x"]
    assert x.dtype == torch.float64 and x.shape[0] == 3 * SIZE.m
    assert torch.equal(x, single.state["x"][0].to(torch.float64).expand_as(x))
    assert float(evaluator.objective(x[0].float())[0]) == f0


@settings(max_examples=200, deadline=None)
@given(low=st.floats(1e-6, 1e3), width=st.floats(0, 1e-2), low_closed=st.booleans(), high_closed=st.booleans())
def test_a_step_taken_inside_an_admissible_interval_lies_in_it(low, width, low_closed, high_closed):
    """horizons.inside moves open ends inward; on an interval narrower than the margins it takes the midpoint,
    never a point beyond the upper end (it once returned (lo, lo) with lo > high)."""
    from dfltheory.verify.horizons import inside

    high = low * (1 + width)
    lo, hi = inside(low, high, low_closed, high_closed)
    assert low <= lo <= hi <= high


def test_smaller_steps_are_candidates_only_where_the_bound_stays_informative_and_the_sharpest_is_kept(tmp_path):
    """Issue 33 item 5: each instance is trained at the bound's best step and at fractions of it
    (:data:`~dfltheory.verify.informative.STEP_FRACTIONS`) where the bound stays below the trivial level;
    :func:`finish_informative` keeps the pair where bound / measured is smallest and says which step it is."""
    from dataclasses import replace

    from dfltheory.bounds import get

    plan = plans()["dfedsgpsm"]
    size = replace(SIZES["default"], topologies=1)
    chosen = resolve_targets(["dfedsgpsm.thm1"])
    rows, _ = horizon_rows(chosen, size)["dfedsgpsm"]
    (entry,) = informative(plan, chosen["dfedsgpsm"], size, rows, tmp_path)
    cands = entry["candidates"]
    assert cands[0]["step_fraction"] == 1.0 and {c["step_fraction"] for c in cands} > {1.0}
    assert sum(c["T_run"] for c in cands[1:]) <= size.budget
    thm = get(entry["theorem"])
    for c in cands:
        thms, measure, values, step, eta, T_run, level, _ = c["judge"]
        best = next(d for d in cands if (d["problem"], d["topology"], d["step_fraction"])
                    == (c["problem"], c["topology"], 1.0))
        assert eta == pytest.approx(best["step"] * c["step_fraction"], rel=1e-12)
        assert informative_at(thm, {**theorem_values(thm, values), step: eta, "T": T_run}, level)
    # planted measurements on the first instance's steps: the same terms everywhere, so the smallest bound (the
    # bound's best step) is sharpest; then measured values growing faster than 1/step make a smaller step sharper
    entry["candidates"] = cands = [c for c in cands if (c["problem"], c["topology"])
                                   == (cands[0]["problem"], cands[0]["topology"])]
    def planted(c, value):  # a first round above every level (the runs' own maximum joins the numeric supremum)
        terms = np.full((entry["seeds"], c["T_run"]), value)
        terms[:, 0] = 10.0
        return terms, 1.0

    flat = [planted(c, 0.01) for c in cands]
    kept = finish_informative(entry, flat)
    assert kept["step_fraction"] == 1.0 and "the step that minimises the bound" in kept["instance_rationale"]
    scaled = [planted(c, 0.01 / c["step_fraction"] ** 1.5) for c in cands]
    kept = finish_informative(entry, scaled)
    ratios = {r["step_fraction"]: r["ratio"] for r in kept["candidates"]}
    assert kept["step_fraction"] < 1.0 and ratios[kept["step_fraction"]] == min(ratios.values())
    assert f"{kept['step_fraction']:g} x the step that minimises the bound" in kept["instance_rationale"]


def test_a_bound_without_a_topology_symbol_is_trained_on_the_sparsest_topology_only(tmp_path):
    """DFedCata's Theorem 1 has no topology symbol: its bound is the same on ring, exponential and full, so only
    the sparsest (ring, slowest mixing, largest measured quantity) is trained; DFedSAM's bound has lam and keeps a
    candidate on every topology within reach."""
    from dfltheory.bounds import get
    from dfltheory.bounds.rates import TOPOLOGY_SYMBOLS

    for paper, theorem, free in (("dfedcata", "dfedcata.thm1", True), ("dfedsam", "dfedsam.thm4.1", False)):
        assert (not set(get(theorem).symbols) & TOPOLOGY_SYMBOLS) == free
        chosen = resolve_targets([theorem])
        rows, _ = horizon_rows(chosen, SIZES["default"])[paper]
        (entry,) = informative(plans()[paper], chosen[paper], SIZES["default"], rows, tmp_path)
        topologies = {c["topology"] for c in entry["candidates"]}
        if free:
            assert topologies == {"ring"} and entry["same_bound"] >= 1
        else:
            assert len(topologies) > 1 and entry["same_bound"] == 0
