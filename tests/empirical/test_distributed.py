"""The engine on 2 and 4 gloo ranks gives the single-process trajectories (float64, 1e-12); runs resume across rank
counts."""

import json

import pytest
import torch
import torch.multiprocessing as mp

from dfltheory import cli
from dfltheory.empirical import distributed as D
from dfltheory.empirical import runner
from dfltheory.empirical.engine import Engine
from dfltheory.testing.ranks import max_diff, record_rounds, snapshot, start_rank

BASE = {"dataset": "synthetic-logistic", "n": 6, "topology": "ring", "K": 2, "lr": 0.1, "batch_size": 4, "seed": 5,
        "data_params": {"dim": 5, "n_per_client": 12, "n_test_per_client": 4}}
PUSH = {"topology": "random", "weights": "push-sum", "topology_params": "k=2"}
CASES = {  # every algorithm the distributed engine splits, on the mixing paths it takes (name: the algorithm)
    "dpsgd": {},
    "dfedavg": {"sparse": True},  # W as CSR
    "dfedavgm": {"topology": "exponential"},
    "dfedsam": {"rho": 0.05},
    "dfedsam-mgs": {"Q": 2, "fresh_gossip": True, "topology": "random", "weights": "uniform", "topology_params": "k=2"},
    "dfedadmm": {"lam_pen": 1.0, "n": 5},
    "dfedadmm-sam": {"lam_pen": 1.0},
    "dfedcata": {"mode": "B", "weights": "lazy-metropolis", "n": 5},  # blocks of 3 and 2 clients
    "dfedcata-A": {"algo": "dfedcata", "mode": "A", "weights": "lazy-metropolis", "n": 5},
    "sgp": PUSH,
    "dfedsgpsm": PUSH,
    "dfedsgpsm-s": {"topology": "neighbour-selection", "topology_params": "k=2"},
    "dfedpgp": {**PUSH, "model": "mlp"},
}
ROUNDS = 3


def cfg_of(case):
    return {**BASE, "algo": case, **CASES[case]}


def engine64(cfg) -> Engine:
    """The engine runner.build makes for ``cfg``, in float64."""
    e, _ = runner.build(cfg)
    e.model.module.double()
    return Engine(e.model, e.data, e.algo, e.mixing, K=cfg["K"], lr=cfg["lr"], batch_size=cfg["batch_size"],
                  seed=cfg["seed"])


def trajectories(rank, world, port, path):
    """On ``world`` gloo ranks: every case for ROUNDS rounds, rank 0 saving the gathered state after each round."""
    start_rank(rank, world, port)
    out = {}
    for case in CASES:
        d = D.DistributedEngine(engine64(cfg_of(case)))
        out[case] = (record_rounds(d, ROUNDS, rank), d.floats_sent)
    sent = torch.tensor([out[a][1] for a in CASES], dtype=torch.float64)
    torch.distributed.reduce(sent, dst=0)
    d = D.DistributedEngine(engine64(cfg_of("dfedavg")))  # rank 0 stops early: the others' next round returns False
    if rank == 0:
        d.stop()
        torch.save({a: (out[a][0], float(s)) for a, s in zip(CASES, sent)}, path)
    else:
        torch.save({"ran": d.round(), "t": d.t}, f"{path}.stopped{rank}")
    torch.distributed.barrier()  # no rank tears the group down while the other still has messages in flight
    torch.distributed.destroy_process_group()


@pytest.mark.parametrize("world", [2, 4])
def test_ranks_give_the_single_process_trajectories(tmp_path, world):
    """Every case on ``world`` gloo ranks (one spawn per rank count, so that pytest-xdist does not spawn it twice)
    against the single-process engine: state, communication state, x_bar, auxiliary points and models sent after each
    round; the rows sent across the ranks; rank 0 stopping early releases the other ranks. 4 ranks split the 5- and
    6-client cases into blocks of 2, 1, 1, 1 and 2, 2, 1, 1 clients: ranks with a single client, clients whose
    neighbours sit on two other ranks."""
    path = tmp_path / "traj.pt"
    mp.spawn(trajectories, args=(world, D.free_port(), str(path)), nprocs=world)
    runs = torch.load(path, weights_only=False)
    worst = {}
    for case, (steps, floats) in runs.items():
        e = engine64(cfg_of(case))
        diffs = []
        for step in steps:
            e.round()
            diffs.append(max_diff(snapshot(e), step))
        worst[case] = max(diffs)
        moved = max_diff(snapshot(e)["state"]["x"], engine64(cfg_of(case)).state["x"])
        assert moved > 1e-3, case  # the comparison is not vacuous: the models moved
        assert 0 < floats <= e.sent * (e.model.dim + 1), case  # rows across the boundary, at most one per edge (+ w)
    print(f"{world} ranks, max difference over", ROUNDS, "rounds:", {k: f"{v:.1e}" for k, v in worst.items()})
    assert runs.keys() == CASES.keys() and max(worst.values()) <= 1e-12, worst
    d = engine64(cfg_of("dfedavg")).model.dim  # a ring of 6 in contiguous blocks: each rank sends its first row to
    assert runs["dfedavg"][1] == ROUNDS * world * 2 * d  # the previous block and its last to the next, per step
    assert runs["dfedsam-mgs"][1] <= ROUNDS * 2 * 6 * (world - 1) * d  # Q = 2 steps, each row to <= world - 1 peers
    for rank in range(1, world):
        assert torch.load(f"{path}.stopped{rank}") == {"ran": False, "t": 0}


def test_blocks_and_refusals():
    assert D.blocks(7, 3) == [(0, 3), (3, 5), (5, 7)]
    with pytest.raises(ValueError, match="at least one client"):
        D.blocks(2, 3)
    for algo, extra in (("fedavg", {}), ("dfedcata", {"sequential": True})):
        e, _ = runner.build({**BASE, "algo": algo, **extra})
        with pytest.raises(ValueError, match="cannot run on several processes"):
            D.check_splittable(e.algo, e.sequential)


def lines(out):
    return [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]


def close(a, b, tol):
    assert [r["round"] for r in a] == [r["round"] for r in b]
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys()
        for k in ra:
            assert ra[k] == pytest.approx(rb[k], rel=tol, abs=tol), (ra["round"], k)


def test_cli_nproc_metrics_and_resume_across_rank_counts(tmp_path):
    """`train --nproc 2` resumes a one-process checkpoint (round 1) and writes the single-process metrics and
    checkpoints; its checkpoint (round 3) resumes in one process; the whole equals the uninterrupted run (float32
    runs: sums differ at 1e-7)."""
    args = ["train", "--algo", "dfedadmm", "--dataset", "synthetic-logistic", "--clients", "6", "--K", "2",
            "--topology", "random", "--weights", "uniform", "--topology-params", "k=2",
            "--batch-size", "4", "--seed", "5", "--lam-pen", "1", "--no-progress", "--threads", "1",
            "--checkpoint-every", "1", "--out"]
    assert cli.main([*args, str(tmp_path / "one"), "--rounds", "4"]) == 0
    split = [*args, str(tmp_path / "split")]
    assert cli.main([*split, "--rounds", "1"]) == 0
    assert cli.main([*split, "--rounds", "3", "--resume", "--nproc", "2"]) == 0
    assert torch.load(tmp_path / "split" / "checkpoint.pt", weights_only=False)["t"] == 3
    assert cli.main([*split, "--rounds", "4", "--resume"]) == 0
    one = lines(tmp_path / "one")
    assert "grad_norm_sq_w" in one[-1]  # DFedADMM's auxiliary sequence needs x_bar^{t-1}: gathered with the state
    close(lines(tmp_path / "split"), one, 1e-5)
    assert json.loads((tmp_path / "split" / "config.json").read_text())["n"] == 6


def test_nproc_refuses_what_it_cannot_split(tmp_path, capsys):
    rc = cli.main(["train", "--algo", "fedavg", "--dataset", "synthetic-logistic", "--clients", "4", "--rounds", "1",
                   "--out", str(tmp_path / "r"), "--nproc", "2", "--no-progress"])
    assert rc != 0
    assert "cannot run on several processes" in capsys.readouterr().err


def test_clients_survives_torchruns_parser_where_n_does_not(capsys):
    """torchrun's parser takes --n for an abbreviation of its options; --clients passes through to `train`."""
    from torch.distributed.run import get_args_parser

    head = ["--nproc-per-node", "2", "-m", "dfltheory", "train", "--algo", "dfedavg"]
    args = get_args_parser().parse_args([*head, "--clients", "8"])
    assert args.training_script_args[-2:] == ["--clients", "8"]
    with pytest.raises(SystemExit):
        get_args_parser().parse_args([*head, "--n", "8"])
    assert "ambiguous option: --n" in capsys.readouterr().err
    assert cli.build_parser().parse_args(["train", "--algo", "dfedavg", "--n", "8", "--out", "r"]).n == 8
