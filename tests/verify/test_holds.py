"""Bound-holds experiments: the measured quantities, the verdicts of the quick size, a planted wrong bound that must
come out violated with a command that reproduces it, the cache, and the ``dfltheory verify`` command."""

from __future__ import annotations

import dataclasses
import json
import math
import shlex

import numpy as np
import pytest

from dfltheory.bounds.catalog import catalog, get
from dfltheory.empirical.sweep import RunCache
from dfltheory.verify import measures as M
from dfltheory.verify.holds import verify
from dfltheory.verify.holds_grid import verify_paper
from dfltheory.verify.instances import SIZES, resolve_targets, train_command
from dfltheory.verify.plans import Target, plans

ALLOWED = {"holds", "violated", "inconclusive", "vacuous", "conditions fail", "diverged", "not testable"}


# ------------------------------------------------------------------------------------------------ measures
def _rows(values: dict[str, list[float]]) -> list[dict]:
    n = len(next(iter(values.values())))
    return [{"round": t, **{k: v[t] for k, v in values.items()}} for t in range(n)]


def test_per_round_picks_the_rounds_each_theorem_sums_over():
    rows = _rows({"grad_norm_sq": [9.0, 4.0, 1.0, 2.0], "grad_norm_sq_w": [8.0, 6.0, 4.0, 2.0]})
    assert M.per_round("min", rows).tolist() == [9.0, 4.0, 1.0]  # the paper's t = 1..T: records 0..T-1
    assert M.per_round("avg", rows).tolist() == [9.0, 4.0, 1.0]  # t = 0..T-1
    assert M.per_round("avg_w", rows).tolist() == [8.0, 6.0, 4.0]
    assert M.running("min", np.array([4.0, 1.0, 2.0])).tolist() == [4.0, 1.0, 1.0]
    assert M.running("avg", np.array([9.0, 4.0, 1.0])).tolist() == [9.0, 6.5, 14 / 3]


def test_dfedpgp_measure_pairs_delta_u_of_the_next_record_with_delta_v_of_this_one():
    rows = _rows({"grad_norm_sq_u": [100.0, 2.0, 4.0], "grad_norm_sq_v": [3.0, 6.0, 100.0]})
    terms = M.per_round("avg_pgp", rows, {"L_u": 2.0, "L_v": 3.0})
    assert terms.tolist() == [2 / 2 + 3 / 3, 4 / 2 + 6 / 3]  # the round-0 u record and the last v record unused


def test_expectation_takes_the_min_of_the_mean_over_seeds():
    terms = np.array([[3.0, 1.0, 2.0], [1.0, 3.0, 2.0]])  # per-seed mins 1, 1; min of means 2
    est = M.expectation("min", terms)
    assert est.mean == 2.0 and est.low <= 2.0 <= est.high
    avg = M.expectation("avg", terms, T=2)
    assert avg.mean == 2.0 and avg.per_seed == (2.0, 2.0) and avg.low == avg.high == 2.0
    one = M.expectation("avg", terms[:1])
    assert math.isinf(one.high) and math.isinf(one.low)


def test_bad_measure_input_is_named():
    with pytest.raises(ValueError, match="unknown measure"):
        M.per_round("max", _rows({"grad_norm_sq": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="every round"):
        M.per_round("avg", [{"round": 0, "grad_norm_sq": 1.0}, {"round": 2, "grad_norm_sq": 1.0}])
    with pytest.raises(ValueError, match="horizon"):
        M.expectation("avg", np.ones((2, 3)), T=4)


# ------------------------------------------------------------------------------------------------ targets
def test_targets_resolve_and_unknown_names_list_the_valid_ones():
    assert set(resolve_targets(["all"])) == set(plans())
    assert [t.theorem for t in resolve_targets(["dfedcata.thm1.A"])["dfedcata"]] == ["dfedcata.thm1.A"]
    with pytest.raises(ValueError, match="dfedsam.thm4.1"):
        resolve_targets(["dfedsam.thm9"])
    every = {t.theorem for p in plans().values() for t in p.targets}
    assert all(get(t) for t in every)  # every target names a catalog entry
    mains = {t.theorem for p in plans().values() for t in p.targets if t.main}
    assert mains == {"dfedsgpsm.thm1", "dfedsam.thm4.1", "dfedcata.thm1", "dfedpgp.thm1", "dfedadmm.thm1"}


# ------------------------------------------------------------------------------------------------ quick size
@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    return out, verify(["all"], "quick", out)


def test_quick_gives_every_main_theorem_a_verdict_with_a_number(quick):
    _, result = quick
    verdicts = result["verdicts"]
    assert {v["verdict"] for v in verdicts} <= ALLOWED
    for plan in plans().values():
        for target in plan.targets:
            mine = [v for v in verdicts if v["theorem"] == target.theorem]
            assert mine, target.theorem
            assert all(v.get("measured") is not None or v["verdict"] == "conditions fail" for v in mine)
            assert all(v["verdict"] != "not testable" for v in mine)
    for v in verdicts:
        if v["verdict"] == "holds":
            assert v["bound"] >= v["ci"][1] and v["ratio"] >= 1 and v["dominant"]
        if v["verdict"] == "conditions fail":
            assert v["failed"] and v["bound"] is None
    # the verdicts of the quick size: every bound whose conditions hold is above the measurement
    assert not [v for v in verdicts if v["verdict"] in ("violated", "inconclusive", "diverged")]
    main_holds = {v["theorem"] for v in verdicts if v["main"] and v["verdict"] == "holds"}
    assert main_holds == {"dfedsgpsm.thm1", "dfedsam.thm4.1", "dfedcata.thm1", "dfedadmm.thm1"}
    # DFedPGP's Theorem 1 needs C^2 < (1 - q)^2 T: at T = 20 it fails, and the verdict names the T from which it holds
    pgp = [v for v in verdicts if v["theorem"] == "dfedpgp.thm1"]
    assert all(v["verdict"] == "conditions fail" and "T" in " ".join(v["failed"]) for v in pgp)
    assert any("hold from T =" in v["note"] for v in pgp)
    assert {v["constants"] for v in pgp} == {"cited", "measured"}
    assert set(result["overlays"]) == set(plans()) and all(result["overlays"].values())
    (stability,) = [v for v in verdicts if v["theorem"] == "dfedcata.thm2"]
    assert stability["verdict"] == "not testable" and "lost" in stability["note"]


def test_every_verdict_carries_its_trivial_level_label_and_T_star(quick):
    """Issue 21: a verdict is informative only below the smaller trivial level; at the quick size (T = 20) every
    hold is trivial, and the T* table and the constants tables come with the result."""
    _, result = quick
    tested = [v for v in result["verdicts"] if v["verdict"] != "not testable"]
    for v in tested:
        assert v["label"] and "T_star" in v and v["trivial"]["level"] > 0
        assert v["trivial"]["level"] == min(v["trivial"]["at_x0"], v["trivial"]["sup"])
        if v["verdict"] == "holds":
            assert v["informative"] == (v["bound"] < v["trivial"]["level"])
            assert v["label"] == ("informative" if v["informative"] else v["label"])
            assert v["label"].startswith("informative") or v["label"].startswith("trivial")
    assert not any(v["informative"] for v in tested)  # T = 20 is far below every T*
    assert {r["paper"] for r in result["horizons"]} == set(plans())
    assert any(k.startswith("dfedsam on synthetic-robust-common") for k in result["constants"])
    assert result["informative"] == []  # the quick size runs none


def test_the_bound_in_each_verdict_is_the_theorem_at_the_recorded_values(quick):
    _, result = quick
    checked = 0
    for v in result["verdicts"]:
        if v["verdict"] != "holds":
            continue
        thm = get(v["theorem"])
        assert thm.evaluate(**v["values"]) == pytest.approx(v["bound"], rel=1e-12)
        assert thm.check("all", **v["values"]).all_ok
        assert v["values"][plans()[v["paper"]].step] == v["hyper"][plans()[v["paper"]].step]
        assert set(v["kinds"].values()) <= {"exact", "bound", "cited", "measured"}
        checked += 1
    assert checked >= 20


def test_a_second_call_reads_the_cache(quick):
    out, first = quick
    again = verify(["dfedsam"], "quick", out, rates=False)
    assert again["runs_trained"] == 0
    same = [v for v in first["verdicts"] if v["paper"] == "dfedsam"]
    assert [v["measured"] for v in again["verdicts"]] == [v["measured"] for v in same]


# ------------------------------------------------------------------------------------------------ planted bound
def test_a_planted_wrong_bound_is_violated_and_its_command_reproduces_the_run(tmp_path, monkeypatch):
    from dfltheory.cli import main
    from dfltheory.empirical.rundir import read_records

    thm = get("dfedsam.thm4.1")
    planted = dataclasses.replace(thm, id="dfedsam.thm4.1.planted", variant="planted",
                                  terms={k: v / 10**4 for k, v in thm.terms.items()})
    monkeypatch.setitem(catalog(), planted.id, planted)
    plan = plans()["dfedsam"]
    targets = (plan.targets[0], Target(planted.id, "dfedsam", "min"))
    plan = dataclasses.replace(plan, targets=targets)
    cache = RunCache(tmp_path / "runs")
    part = verify_paper(plan, targets, SIZES["quick"], cache)
    bad = [v for v in part["verdicts"] if v["theorem"] == planted.id]
    assert bad and all(v["verdict"] == "violated" for v in bad)
    assert all(v["bound"] < v["ci"][0] for v in bad)
    good = [v for v in part["verdicts"] if v["theorem"] == "dfedsam.thm4.1"]
    assert all(v["verdict"] == "holds" for v in good)
    # the counter-example's command reproduces seed 0's run bit for bit
    command = bad[0]["command"]
    assert command.startswith("dfltheory train ") and "counter-example" in bad[0]["note"]
    args = shlex.split(command)[1:]
    assert main(args + ["--out", str(tmp_path / "again"), "--no-progress"]) == 0
    cfg = json.loads((tmp_path / "again" / "config.json").read_text())
    cached = next(p for p in (tmp_path / "runs").iterdir()
                  if p.is_dir() and json.loads((p / "config.json").read_text())["lr"] == cfg["lr"]
                  and json.loads((p / "config.json").read_text())["seed"] == 0)
    ours = [r["grad_norm_sq"] for r in read_records(tmp_path / "again" / "metrics.jsonl")]
    theirs = [r["grad_norm_sq"] for r in read_records(cached / "metrics.jsonl")]
    assert ours == theirs


def test_train_command_writes_every_option():
    cmd = train_command({"algo": "dfedpgp", "dataset": "synthetic-personal", "data_params": {"dim": 5},
                         "K_v": 2, "lr_v": 0.5, "local_eval": False, "threads": 1, "topology_params": "k=3"})
    assert cmd == ("dfltheory train --algo dfedpgp --dataset synthetic-personal --data-params dim=5 --K-v 2 "
                   "--lr-v 0.5 --no-local-eval --topology-params k=3")


# ------------------------------------------------------------------------------------------------ command
def test_verify_command_rejects_a_bad_target_before_running(tmp_path, capsys):
    from dfltheory.cli import main

    assert main(["verify", "dfedsam.thm9", "--out", str(tmp_path)]) == 2
    assert "nothing to verify" in capsys.readouterr().err
    assert main(["verify", "--out", str(tmp_path)]) == 2
    assert not (tmp_path / "runs").exists()


def test_verify_command_prints_the_table_and_writes_json_and_figures(quick, capsys):
    from dfltheory.cli import main

    out, _ = quick
    assert main(["verify", "dfedadmm", "--quick", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "dfedadmm.thm1 " in text and "holds" in text
    saved = json.loads((out / "verify.json").read_text())
    assert saved["runs_trained"] == 0 and saved["figures"]["dfedadmm"]
    assert all((out / p).exists() for p in saved["figures"]["dfedadmm"])


def test_topology_dependence_is_relative_to_the_best_mixing_graph_and_skips_missing_bounds():
    from dfltheory.verify.holds_grid import _topology_dependence

    rows = [{"topology": "ring", "constants": "certified", "mixing": 0.8, "measured": 4.0, "bound": 30.0},
            {"topology": "full", "constants": "certified", "mixing": 0.0, "measured": 2.0, "bound": 10.0},
            {"topology": "k-out", "constants": "certified", "mixing": 0.5, "measured": 3.0, "bound": None}]
    (entry,) = _topology_dependence(plans()["dfedsam"], rows)
    assert entry["reference"] == "full"
    by = {r["topology"]: r for r in entry["rows"]}
    assert by["ring"]["measured_ratio"] == 2.0 and by["ring"]["bound_ratio"] == 3.0
    assert by["k-out"]["bound_ratio"] is None and by["k-out"]["measured_ratio"] == 1.5


def test_rate_in_T_follows_the_corollary_schedule(tmp_path):
    from dfltheory.verify.measured_rate import rate

    size = dataclasses.replace(SIZES["quick"], horizons=(10, 20, 40), seeds=3)
    r = rate(plans()["dfedsam"], size, RunCache(tmp_path))
    assert r["theorem"] == "dfedsam.cor4.1.1.derived" and r["stated_slope"] == -0.5
    etas = [row["schedule"]["eta"] for row in r["rows"]]
    assert etas[0] / etas[2] == pytest.approx(2.0, rel=1e-12)  # eta = c/(sqrt(K) L sqrt(T))
    assert all(row["verdict"] == "holds" and row["bound"] > row["ci"][1] for row in r["rows"])
    assert r["measured_slope"] < 0 and r["bound_slope"] < 0


def _square(x):
    return x * x


def test_background_runs_give_their_results_in_order_with_one_worker_or_two():
    """The informative runs start before the other stages (holds.Background): the results come back in the order
    given, with the progress of every run, whether two processes train them or they run at results()."""
    from dfltheory.verify.processes import Background

    for workers in (1, 2):
        seen = []
        bg = Background(_square, [(k,) for k in range(5)], workers)
        assert bg.results(lambda done, total, eta: seen.append((done, total))) == [0, 1, 4, 9, 16]
        assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    one = Background(_square, [(3,)], 2)  # a single long run trains beside the other stages too
    assert one.pool is not None and one.results() == [9]


def _sleep(seconds):
    import time

    time.sleep(seconds)
    return seconds


def test_closing_background_runs_before_their_results_stops_the_runs_in_training():
    """Another stage failed: close() terminates the runs in training (not only the ones not started), at once."""
    import time

    from dfltheory.verify.processes import Background

    bg = Background(_sleep, [(60,), (60,), (60,)], 2)
    time.sleep(2.0)  # both workers are in a 60 s run
    processes = list(bg.pool._processes.values())
    start = time.perf_counter()
    bg.close()
    assert time.perf_counter() - start < 20
    assert processes and not any(p.is_alive() for p in processes)
