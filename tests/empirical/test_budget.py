"""Sizes a user chooses are checked before anything large is allocated or any process started (issue 24 item 2):
:mod:`dfltheory.empirical.budget` and the process checks of :func:`dfltheory.empirical.runner.check_options`."""

import os
import tracemalloc

import pytest
import torch

from dfltheory import cli
from dfltheory.empirical import budget, data, runner

BASE = {"algo": "dfedsam", "dataset": "synthetic-logistic", "n": 4, "topology": "ring", "K": 1, "lr": 0.1,
        "progress": False}


def error_line(capsys, argv) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    return err


@pytest.mark.parametrize("params, match", [
    ({"dim": 10**9}, r"the synthetic data \(4 clients x 150 samples x 1000000000 features\) .* would need about"),
    ({"n_per_client": 10**12}, r"would need about .* lower dim, n_per_client or n_test_per_client"),
    ({"dim": 2.5}, r"--data-params dim must be an integer >= 1, got 2.5"),
    ({"dim": True}, r"--data-params dim must be an integer >= 1, got True"),
])
def test_synthetic_sizes_are_refused_before_the_data_are_drawn(params, match):
    with pytest.raises(ValueError):  # the modules a refusal imports, before the measurement
        data.load("synthetic-logistic", 4, dim=10**9)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=match):
            data.load("synthetic-logistic", 4, **params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**24  # refused before the arrays: a few MiB at most


def test_a_huge_dim_given_as_a_float_is_a_size_not_a_numpy_error():
    got = data.load("synthetic-logistic", 2, dim=3.0, n_per_client=5.0, n_test_per_client=2.0)
    assert got.x_train.shape == (10, 3)


def test_the_clients_state_is_checked_before_it_is_allocated(monkeypatch):
    """The engine sizes its state on the meta device; a state that does not fit is refused with the numbers."""
    monkeypatch.setattr(budget, "free_bytes", lambda device: 4096.0)
    with pytest.raises(ValueError, match=r"the state of 4 clients x [\d,]+ parameters \(dfedsam\) would need about "
                                         r".* use fewer clients \(--n\) or a smaller --model"):
        runner.build({**BASE, "dataset": "digits", "model": "mlp-small"})


def test_state_estimate_counts_every_tensor_of_the_algorithm(monkeypatch):
    """The estimate grows with the algorithm's state (ADMM carries a dual per client, SCAFFOLD control variates)."""
    seen = {}

    def spy(need, what, fix, device="cpu"):
        seen.setdefault(what.split("(")[-1].rstrip(")"), need)

    monkeypatch.setattr(budget, "require", spy)
    for algo in ("dfedsam", "dfedadmm"):
        runner.build({**BASE, "algo": algo})
    assert seen["dfedadmm"] > seen["dfedsam"] > 0


def test_threads_and_processes_are_bounded_before_any_starts(capsys, tmp_path, monkeypatch):
    import torch.multiprocessing as mp

    monkeypatch.setattr(mp, "spawn", lambda *a, **k: pytest.fail("a process was spawned"))
    monkeypatch.setattr(torch, "set_num_threads", lambda n: pytest.fail("threads were set"))
    cores = os.cpu_count()
    train = ["train", "--dataset", "synthetic-logistic", "--algo", "dfedsam", "--n", "4", "--rounds", "1",
             "--out", str(tmp_path / "r")]
    err = error_line(capsys, [*train, "--threads", "100000"])
    assert f"--threads must be an integer from 1 to {cores} (the CPU cores of this machine), got 100000" in err
    err = error_line(capsys, [*train, "--nproc", "100000"])
    assert "--nproc 100000 for 4 clients: every process needs at least one client; give --nproc 4 or fewer" in err
    if cores < 4:
        err = error_line(capsys, [*train, "--nproc", str(cores + 1)])
        assert f"this machine has {cores} CPU cores, one process each at most" in err
    assert not (tmp_path / "r").exists()


def test_constants_points_are_sized_before_they_are_built(tmp_path, monkeypatch, capsys):
    runner.run({**BASE, "rounds": 1, "out": tmp_path / "r"})
    monkeypatch.setattr(budget, "free_bytes", lambda device: 10.0**6)
    err = error_line(capsys, ["constants", str(tmp_path / "r"), "--points", "100000000"])
    assert "--points 100000000 (each 4 client models x 42 parameters) would need about" in err
    assert "measure at fewer points (--points)" in err



def test_a_stacked_start_is_sized_per_client_not_as_one_model(monkeypatch):
    """A cohort starts its engine at every client's own x0, an (m, d) tensor: the state is m x d, not m x (m d)
    (the check once read x0.numel() as the model size and refused MNIST cohorts at 44 GiB)."""
    cfg = {**BASE, "algo": "dfedavg", "dataset": "digits", "model": "mlp-small"}
    engine, _ = runner.build_cohort(cfg, seeds=(0, 1, 2))
    seen = []
    monkeypatch.setattr(budget, "require", lambda need, what, fix, device="cpu": seen.append((what, need)))
    m, d = engine.state["x"].shape
    engine._check_state_memory(engine.state["x"][0])  # one model, as a run starts
    engine._check_state_memory(engine.state["x"].clone())  # every client's own start, as a cohort does
    assert len(seen) == 2 and seen[0] == seen[1], seen
    assert f"{m} clients x {d:,} parameters" in seen[0][0]
