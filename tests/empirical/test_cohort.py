"""An arm's seeds in one engine (dfltheory.empirical.cohort, issue 22): a cohort of one seed is the single run, each
copy has its own problem (partition, initial model, graph), a copy that diverges cannot reach the others, and a cut
cohort resumes bit-exactly."""

from __future__ import annotations

import json

import pytest
import torch

from dfltheory.empirical.cohort import run_cohort
from dfltheory.empirical.metrics import measure
from dfltheory.empirical.runner import build, build_cohort

CFG = {"algo": "dfedsam", "dataset": "digits", "n": 4, "K": 2, "epochs": True, "batch_size": 32, "lr": 0.1,
       "lr_decay": 0.99, "model": "mlp-small", "topology": "random", "topology_params": "k=2,direction=regular",
       "weights": "metropolis"}


@pytest.mark.parametrize("algo", ["dfedsam", "dfedpgp-pull", "dfedcata", "dfedcata-sequential"])
def test_a_cohort_of_one_seed_is_the_single_run(tmp_path, algo):
    extra = {"dfedpgp-pull": {"topology_params": "k=2,direction=in", "weights": "uniform", "momentum": 0.9},
             "dfedcata-sequential": {"algo": "dfedcata", "sequential": True, "weights": "uniform"}}
    cfg = {**CFG, "algo": algo, **extra.get(algo, {})}
    got = run_cohort(cfg, [3], tmp_path, rounds=3)["records"][0]
    engine, ev = build({**cfg, "seed": 3, "data_seed": 3, "sparse": True})
    want = [measure(engine, ev)]
    for _ in range(3):
        engine.round()
        want.append(measure(engine, ev))
    assert got == json.loads(json.dumps(want))  # bit-identical records


def test_each_copy_is_its_own_problem_and_a_diverged_copy_stays_apart(tmp_path):
    engine, evaluators = build_cohort(CFG, [0, 5])
    for c, seed in enumerate((0, 5)):  # round 0: copy c is the problem data_seed = seed
        single, ev = build({**CFG, "seed": seed, "data_seed": seed})
        assert torch.equal(engine.state["x"][4 * c: 4 * c + 4], single.state["x"])
        assert evaluators[c].clients[0].tolist() == ev.clients[0].tolist()
    assert not torch.equal(engine.state["x"][0], engine.state["x"][4])  # other initial models
    engine.state["x"][:4] = float("nan")  # copy 0 diverges
    engine.round()
    assert torch.isnan(engine.state["x"][:4]).all() and torch.isfinite(engine.state["x"][4:]).all()


def test_the_sequential_schedule_of_a_cohort_is_each_copys_own():
    """DFedCata's in-place schedule (client c aggregates after clients < c) runs client c of every copy at once: the
    same as taking the S m rows one by one, since W is block-diagonal (float32 rounding apart)."""
    cfg = {**CFG, "algo": "dfedcata", "sequential": True, "topology": "code-random", "topology_params": "k=2",
           "weights": "uniform", "n": 5}
    grouped, _ = build_cohort(cfg, [0, 1, 2])
    one_by_one, _ = build_cohort(cfg, [0, 1, 2])
    one_by_one.copies = 1
    for _ in range(3):
        grouped.round()
        one_by_one.round()
    assert grouped.copies == 3 and torch.allclose(grouped.state["x"], one_by_one.state["x"], atol=1e-5)
    assert not torch.allclose(grouped.state["x"][:5], grouped.state["x"][5:10])  # and the copies differ


def test_a_cut_cohort_resumes_bit_exactly(tmp_path):
    whole = run_cohort(CFG, [0, 1], tmp_path / "whole", rounds=5, eval_every=2, checkpoint_every=2)

    def cut(t):
        if t == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_cohort(CFG, [0, 1], tmp_path / "cut", rounds=5, eval_every=2, checkpoint_every=2, on_round=cut)
    assert (tmp_path / "cut" / "checkpoint.pt").exists() and not (tmp_path / "cut" / "records.json").exists()
    resumed = run_cohort(CFG, [0, 1], tmp_path / "cut", rounds=5, eval_every=2, checkpoint_every=2)
    assert resumed["records"] == whole["records"] and [r["round"] for r in whole["records"][0]] == [0, 2, 4, 5]
    again = run_cohort(CFG, [0, 1], tmp_path / "cut", rounds=5, eval_every=2)  # complete: read back
    assert again["records"] == whole["records"] and not (tmp_path / "cut" / "checkpoint.pt").exists()
    (tmp_path / "cut" / "records.json").write_text("{damaged")  # a damaged file is trained again
    assert run_cohort(CFG, [0, 1], tmp_path / "cut", rounds=5, eval_every=2)["records"] == whole["records"]


def test_algorithms_that_couple_every_client_train_their_seeds_apart():
    sel = {**CFG, "algo": "dfedsgpsm-s", "topology": "neighbour-selection", "topology_params": "k=2",
           "weights": "push-sum"}
    with pytest.raises(ValueError, match="cannot share one engine"):
        build_cohort(sel, [0, 1])
    assert build_cohort(sel, [0])[0].m == 4
    with pytest.raises(ValueError, match="cannot share one engine"):
        build_cohort({**CFG, "algo": "fedavg"}, [0, 1])
