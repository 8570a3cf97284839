"""Runs from the command line: every algorithm trains; seeds reproduce; checkpoints resume exactly; divergence stops."""

import json
import shutil

import pytest
import torch

from dfltheory import cli
from dfltheory.empirical import algorithms as A
from dfltheory.empirical import runner
from dfltheory.empirical.engine import Engine


BASE = {"algo": "dfedavgm", "dataset": "synthetic-logistic", "n": 4, "topology": "ring", "K": 2, "lr": 0.1,
        "batch_size": 8, "seed": 3, "progress": False}


def lines(out):
    return [json.loads(ln) for ln in (out / "metrics.jsonl").read_text().splitlines()]


EXTRA_ARGS = {  # DFedSGPSM-S draws its own graph; DFedPGP needs a model with a head and a body (logreg has one layer)
    "dfedsgpsm-s": ["--topology", "neighbour-selection", "--topology-params", "k=2"],
    "dfedpgp": ["--model", "mlp", "--K-v", "1", "--lr-v", "0.1"],
    "dfedpgp-pull": ["--model", "mlp-small", "--K-v", "1", "--momentum", "0.9", "--weight-decay", "5e-4"],
}


@pytest.mark.parametrize("dataset", ["digits", "synthetic-logistic"])
@pytest.mark.parametrize("algo", A.names())
def test_every_algorithm_trains_from_the_command_line(tmp_path, algo, dataset):
    out = tmp_path / "run"
    rc = cli.main(["train", "--algo", algo, "--dataset", dataset, "--n", "4", "--topology", "ring", "--rounds", "2",
                   "--K", "2", "--lr", "0.05", "--batch-size", "8", "--participation", "0.5", "--out", str(out),
                   "--no-progress", *EXTRA_ARGS.get(algo, [])])
    assert rc == 0
    recs = lines(out)
    assert [r["round"] for r in recs] == [0, 1, 2]
    assert all(r["finite"] for r in recs) and recs[-1]["train_loss"] < recs[0]["train_loss"] * 1.5
    assert recs[-1]["models_sent"] > 0 and 0 <= recs[-1]["test_acc"] <= 1
    assert json.loads((out / "config.json").read_text())["algo"] == algo
    aux = {"dfedadmm": "grad_norm_sq_w", "dfedadmm-sam": "grad_norm_sq_w", "dfedcata": "grad_norm_sq_p",
           "dfedpgp": "grad_norm_sq_u"}.get(algo)
    if aux:
        assert aux in recs[-1]


def test_same_seed_gives_bit_identical_runs(tmp_path):
    for name in ("a", "b"):
        runner.run({**BASE, "rounds": 3, "out": tmp_path / name})
    assert (tmp_path / "a" / "metrics.jsonl").read_text() == (tmp_path / "b" / "metrics.jsonl").read_text()
    runner.run({**BASE, "seed": 4, "rounds": 3, "out": tmp_path / "c"})
    assert (tmp_path / "a" / "metrics.jsonl").read_text() != (tmp_path / "c" / "metrics.jsonl").read_text()


@pytest.mark.parametrize("algo", ["dfedavgm", "dfedcata", "scaffold", "dfedpgp"])
def test_resume_continues_exactly(tmp_path, algo):
    cfg = {**BASE, "algo": algo, "participation": 0.5, "mode": "B", "model": "mlp"}
    runner.run({**cfg, "rounds": 6, "out": tmp_path / "straight"})
    runner.run({**cfg, "rounds": 3, "out": tmp_path / "split"})
    runner.run({**cfg, "rounds": 6, "out": tmp_path / "split"}, resume=True)
    assert lines(tmp_path / "split") == lines(tmp_path / "straight")


def test_killed_run_resumes_from_its_last_checkpoint(tmp_path, monkeypatch):
    runner.run({**BASE, "rounds": 6, "out": tmp_path / "straight", "checkpoint_every": 2})
    original = Engine.round

    def dying_round(self):
        info = original(self)
        if self.t == 5:
            raise KeyboardInterrupt  # killed after round 5 was measured, the checkpoint is from round 4
        return info

    monkeypatch.setattr(Engine, "round", dying_round)
    with pytest.raises(KeyboardInterrupt):
        runner.run({**BASE, "rounds": 6, "out": tmp_path / "killed", "checkpoint_every": 2})
    assert [r["round"] for r in lines(tmp_path / "killed")] == [0, 1, 2, 3, 4]  # round 5 died before measuring
    monkeypatch.setattr(Engine, "round", original)
    runner.run({**BASE, "rounds": 6, "out": tmp_path / "killed", "checkpoint_every": 2}, resume=True)
    assert lines(tmp_path / "killed") == lines(tmp_path / "straight")


def test_run_directory_guards(tmp_path):
    runner.run({**BASE, "rounds": 1, "out": tmp_path / "r"})
    with pytest.raises(ValueError, match="already holds a run"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "r"})
    with pytest.raises(ValueError, match="different config"):
        runner.run({**BASE, "rounds": 2, "lr": 0.2, "out": tmp_path / "r"}, resume=True)
    with pytest.raises(ValueError, match="--resume: no run in .*empty to continue; start it without --resume"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "empty"}, resume=True)
    assert not (tmp_path / "empty").exists()  # nothing left behind by a run that never started (its lock neither)


def test_divergence_stops_with_a_clear_message(tmp_path, capsys):
    out = tmp_path / "div"
    rc = cli.main(["train", "--algo", "dfedavg", "--dataset", "synthetic-quadratic", "--n", "4", "--rounds", "50",
                   "--K", "5", "--lr", "5", "--batch-size", "4", "--out", str(out), "--no-progress"])
    assert rc == 3
    assert "diverged at round" in capsys.readouterr().err
    recs = lines(out)
    assert recs[0]["finite"] and not recs[-1]["finite"] and recs[-1]["round"] < 50
    assert json.loads((out / "summary.json").read_text())["status"] == "diverged"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without a GPU")
def test_cuda_request_without_gpu_is_a_clear_error(tmp_path, capsys):
    rc = cli.main(["train", "--algo", "dfedavg", "--out", str(tmp_path / "c"), "--device", "cuda", "--rounds", "1"])
    assert rc == 2 and "CUDA is not available" in capsys.readouterr().err


def test_non_row_stochastic_mixing_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="row-stochastic"):
        runner.run({**BASE, "rounds": 1, "topology": "star", "weights": "push-sum",
                    "out": tmp_path / "p"})


def test_push_sum_algorithms_need_column_stochastic_weights(tmp_path):
    with pytest.raises(ValueError, match="column-stochastic"):
        runner.run({**BASE, "algo": "sgp", "rounds": 1, "topology": "star", "weights": "uniform",
                    "out": tmp_path / "u"})
    summary = runner.run({**BASE, "algo": "dfedsgpsm", "rounds": 2, "topology": "random", "weights": "push-sum",
                          "topology_params": "k=2", "out": tmp_path / "ps"})
    assert summary["status"] == "completed" and summary["last"]["models_sent"] == 2 * 2 * 4


def test_dfedsgpsm_s_refuses_a_graph_it_does_not_draw(tmp_path):
    with pytest.raises(ValueError, match="--topology neighbour-selection"):
        runner.run({**BASE, "algo": "dfedsgpsm-s", "rounds": 1, "topology": "random", "weights": "push-sum",
                    "topology_params": "k=2", "out": tmp_path / "s"})


def test_engine_state_lives_on_the_requested_device(tmp_path):
    engine, evaluator = runner.build({**BASE, "device": "cpu"})
    engine.round()
    assert all(v.device == torch.device("cpu") for v in engine.state.values())
    assert engine.x_train.device == evaluator.x_test.device == torch.device("cpu")


def test_subprocess_killed_with_sigkill_resumes_exactly(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    args = ["train", "--algo", "dfedsam", "--dataset", "synthetic-logistic", "--n", "4", "--topology", "ring",
            "--rounds", "300", "--K", "2", "--batch-size", "8", "--seed", "5", "--checkpoint-every", "3",
            "--no-progress", "--no-local-eval", "--threads", "1"]
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "dfltheory", *args, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            m = out / "metrics.jsonl"
            if (out / "checkpoint.pt").exists() and m.exists() and len(m.read_text().splitlines()) >= 8:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert len(lines(out)) < 301
    assert cli.main([*args, "--out", str(out), "--resume"]) == 0
    assert cli.main([*args, "--out", str(tmp_path / "straight")]) == 0
    assert lines(out) == lines(tmp_path / "straight")


def test_resume_of_a_finished_run_keeps_its_last_record_and_refuses_fewer_rounds(tmp_path):
    runner.run({**BASE, "rounds": 3, "out": tmp_path / "r"})
    summary = runner.run({**BASE, "rounds": 3, "out": tmp_path / "r"}, resume=True)
    assert summary["last"]["round"] == 3
    with pytest.raises(ValueError, match="past --rounds 2"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "r"}, resume=True)


def test_participation_outside_zero_one_is_refused():
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        A.make("fedavg", participation=0)


def test_push_sum_consensus_is_measured_around_the_mean_of_the_numerators(tmp_path):
    from dfltheory.empirical.metrics import Evaluator, measure

    engine, evaluator = runner.build({**BASE, "algo": "dfedsgpsm", "topology": "random", "weights": "push-sum",
                                      "topology_params": "k=2", "n": 6})
    for _ in range(3):
        engine.round()
    z, xbar = engine.client_models(), engine.x_bar()
    rec = measure(engine, evaluator, local=False)
    assert rec["consensus"] == pytest.approx(float(((z.double() - xbar.double()) ** 2).sum(1).mean()), rel=1e-9)
    assert isinstance(evaluator, Evaluator)


def test_dfedpgp_clips_the_part_that_moves():
    from dfltheory.empirical.rules import StepContext

    algo = A.make("dfedpgp", clip=1.0)
    g = torch.tensor([[100.0, 0.0, 0.5]])  # a large shared gradient, a small personal one
    ctx = StepContext(state={"x": torch.zeros(1, 3)}, anchor=torch.zeros(1, 3), grad=lambda X: g, lr=0.1, K=2,
                      shared=torch.tensor([True, True, False]))
    d = algo.local.direction(None, ctx)  # the first of K_v = 1 steps moves v only
    assert torch.allclose(d, torch.tensor([[0.0, 0.0, 0.5]]))


def test_thread_count_is_stored_and_a_resume_with_another_warns(tmp_path, capsys):
    """The thread count changes results at ~1e-8, so a resume with another count is not bit-identical."""
    before = torch.get_num_threads()
    try:
        runner.run({**BASE, "rounds": 2, "threads": 1, "out": tmp_path / "r"})
        assert json.loads((tmp_path / "r" / "config.json").read_text())["threads"] == 1
        runner.run({**BASE, "rounds": 3, "threads": 1, "out": tmp_path / "r"}, resume=True)
        assert "warning" not in capsys.readouterr().err
        runner.run({**BASE, "rounds": 4, "threads": 2, "out": tmp_path / "r"}, resume=True)
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "was started with 1 CPU thread(s) and resumes with 2" in err[0]
        assert "pass --threads 1" in err[0]
        assert json.loads((tmp_path / "r" / "config.json").read_text())["threads"] == 1  # the original count
    finally:
        torch.set_num_threads(before)


def test_wall_time_of_a_resumed_run_is_the_total_over_its_parts(tmp_path):
    first = runner.run({**BASE, "rounds": 2, "out": tmp_path / "r", "checkpoint_every": 1})
    stored = torch.load(tmp_path / "r" / "checkpoint.pt", weights_only=True)["wall_seconds"]
    assert 0 < stored <= first["wall_seconds"]
    second = runner.run({**BASE, "rounds": 4, "out": tmp_path / "r", "checkpoint_every": 1}, resume=True)
    assert second["wall_seconds"] == pytest.approx(stored + second["wall_seconds_this_part"], rel=1e-9)
    assert second["wall_seconds"] > second["wall_seconds_this_part"]
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["wall_seconds"] == second["wall_seconds"]


def test_a_checkpoint_of_another_run_is_named(tmp_path):
    """A dfedadmm checkpoint put into a dfedsam run (or a run of another client count or model) is refused on
    resume and by everything that reads a run (issue 24 item 1: it used to carry ADMM's dual state on)."""
    from dfltheory.verify.estimators import estimate_run

    runner.run({**BASE, "rounds": 1, "out": tmp_path / "sam", "algo": "dfedsam"})
    others = {"admm": {"algo": "dfedadmm"}, "n": {"algo": "dfedsam", "n": 6},
              "model": {"algo": "dfedsam", "model": "mlp"}}
    for name, change in others.items():
        runner.run({**BASE, "rounds": 1, "out": tmp_path / name, **change})
    what = {"admm": "algorithm dfedadmm there, dfedsam here", "n": "clients 6 there, 4 here",
            "model": "parameters"}
    for name, expected in what.items():
        shutil.copy(tmp_path / name / "checkpoint.pt", tmp_path / "sam" / "checkpoint.pt")
        with pytest.raises(ValueError, match=f"does not belong to this run .*{expected}"):
            runner.run({**BASE, "rounds": 2, "out": tmp_path / "sam", "algo": "dfedsam"}, resume=True)
        with pytest.raises(ValueError, match=f"does not match config.json .*{expected}"):
            estimate_run(tmp_path / "sam", points=1)
    torch.save({"t": 1}, tmp_path / "sam" / "checkpoint.pt")  # not written by dfltheory
    with pytest.raises(ValueError, match="is damaged .*no digest"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "sam", "algo": "dfedsam"}, resume=True)


def test_a_failed_download_is_a_user_error_with_the_options(tmp_path, monkeypatch):
    from dfltheory.empirical import data as D

    def offline(*a, **k):
        raise D.DownloadError("could not download mnist into root directory 'x': network unreachable")

    monkeypatch.setattr(D, "load", offline)
    with pytest.raises(ValueError, match="could not download mnist .*--download to fetch them"):
        runner.run({**BASE, "dataset": "mnist", "rounds": 1, "out": tmp_path / "r"})
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("lr, lam, decay, rounds, expected", [
    (0.1, 0.1, 1.0, 100, "1 - eta/lambda = 0: every local step nearly restarts"),
    (0.1, 1.0, 1.0, 100, None),
    (0.105, 0.1, 1.0, 100, "1 - eta/lambda = -0.05"),
    (0.1, 0.1, 0.998, 1000, "1 - eta_t/lambda = 1 - 1*0.998^t is within 0.1 of 0 in rounds 0 to 52"),
    (0.1, 0.09, 0.998, 1000, "in rounds 6 to 105"),  # 1.11 * 0.998^t enters (0.9, 1.1) at t = 6
    (0.3, 0.1, 1.0, 100, "-2 < 0: x_k oscillates around x^t and grows geometrically"),
])
def test_admm_collapse_warning(lr, lam, decay, rounds, expected):
    """Seed 004 L95: x_{k+1} - x^t = (1 - eta/lambda)(x_k - x^t) - eta (g_k - ghat); |1 - eta_t/lambda| < 0.1
    collapses the K local steps to about one."""
    algo = A.make("dfedadmm", lam_pen=lam)
    note = algo.warning(lr, decay, 5, rounds)
    assert note is None if expected is None else expected in note
    if decay != 1.0 and expected:  # the rounds named are exactly those with |1 - eta_t/lambda| < 0.1
        first, last = map(int, note.split("in rounds ")[1].split(":")[0].split(" to "))
        inside = [t for t in range(rounds) if abs(1 - lr * decay ** t / lam) < 0.1]
        assert (first, last) == (inside[0], inside[-1])
    assert A.make("dfedavgm").warning is None


def test_data_seed_fixes_the_problem_and_seed_the_minibatches(tmp_path):
    """Runs that differ in --seed alone share the data and the initial model and differ in the batches; the data
    options and the resolved data seed are stored in config.json and a resume checks them."""
    cfg = {**BASE, "dataset": "synthetic-robust", "data_params": {"dim": 3, "n_per_client": 20}, "data_seed": 7}
    (e1, _), (e2, _) = runner.build({**cfg, "seed": 1}), runner.build({**cfg, "seed": 2})
    assert e1.state["x"].shape[1] == 3 and torch.equal(e1.state["x"], e2.state["x"])
    assert torch.equal(e1.data.x_train, e2.data.x_train) and torch.equal(e1.data.y_train, e2.data.y_train)
    assert not torch.equal(e1.plan(0).idx, e2.plan(0).idx)
    e3, _ = runner.build({**cfg, "seed": 1, "data_seed": 8})
    assert not torch.equal(e1.state["x"], e3.state["x"])
    runner.run({**cfg, "seed": 1, "rounds": 2, "out": tmp_path / "a"})
    runner.run({**cfg, "seed": 2, "rounds": 2, "out": tmp_path / "b"})
    first = [lines(tmp_path / name)[0]["train_loss"] for name in "ab"]
    assert first[0] == first[1] and lines(tmp_path / "a")[-1] != lines(tmp_path / "b")[-1]
    saved = json.loads((tmp_path / "a" / "config.json").read_text())
    assert saved["data_seed"] == 7 and saved["data_params"] == {"dim": 3, "n_per_client": 20}
    runner.run({**cfg, "seed": 1, "rounds": 3, "out": tmp_path / "a"}, resume=True)
    with pytest.raises(ValueError, match="different config.*data_params"):
        runner.run({**cfg, "data_params": {"dim": 4}, "seed": 1, "rounds": 4, "out": tmp_path / "a"}, resume=True)
    default = {**BASE, "rounds": 1, "out": tmp_path / "c"}
    runner.run(default)
    assert json.loads((tmp_path / "c" / "config.json").read_text())["data_seed"] == BASE["seed"]


def test_data_params_from_the_command_line(tmp_path):
    out = tmp_path / "run"
    rc = cli.main(["train", "--algo", "dfedpgp", "--dataset", "synthetic-personal", "--n", "3", "--topology",
                   "exponential-directed", "--weights", "push-sum", "--rounds", "1", "--K", "2", "--batch-size", "4",
                   "--data-params", "dim=2,n_per_client=10,heterogeneity=0.5", "--data-seed", "4", "--out", str(out),
                   "--no-progress"])
    assert rc == 0
    saved = json.loads((out / "config.json").read_text())
    assert saved["data_params"] == {"dim": 2, "n_per_client": 10, "heterogeneity": 0.5} and saved["data_seed"] == 4
    from dfltheory.empirical.commands import parse_data_params

    assert parse_data_params("shared_design=true,noise=0") == {"shared_design": True, "noise": 0}


@pytest.mark.parametrize("bad,match", [
    ({"data_params": {"dim": float("nan")}}, "--data-params must map names"),
    ({"data_params": [1, 2]}, "--data-params must map names"),
    ({"data_seed": -1}, "--data-seed must be an integer in"),
    ({"data_params": {"dim": 3, "bogus": 1}}, "unexpected keyword"),
])
def test_bad_data_options_are_refused(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        runner.build({**BASE, "dataset": "synthetic-robust", **bad, "out": None})


def test_a_run_started_before_data_seed_existed_resumes(tmp_path):
    out = tmp_path / "old"
    runner.run({**BASE, "rounds": 2, "out": out})
    saved = json.loads((out / "config.json").read_text())
    del saved["data_seed"], saved["data_params"]
    (out / "config.json").write_text(json.dumps(saved))
    runner.run({**BASE, "rounds": 3, "out": out}, resume=True)
    assert [r["round"] for r in lines(out)] == [0, 1, 2, 3]


def test_an_algorithm_with_a_fixed_K_stores_it_and_warns_only_about_a_K_given(tmp_path, capsys):
    """D-PSGD takes one local step per round: config.json says K = 1 whatever --K was, and a --K that disagrees
    is named on stderr; without --K nothing is said."""
    common = ["train", "--algo", "dpsgd", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "1",
              "--no-progress"]
    assert cli.main([*common, "--K", "3", "--out", str(tmp_path / "a")]) == 0
    assert "dpsgd takes K = 1 local step(s) per round by definition (with --epochs one local epoch, the papers' " \
        "setting); --K 3 is ignored" in capsys.readouterr().err
    assert json.loads((tmp_path / "a" / "config.json").read_text())["K"] == 1
    assert cli.main([*common, "--out", str(tmp_path / "b")]) == 0
    assert "--K" not in capsys.readouterr().err
    assert json.loads((tmp_path / "b" / "config.json").read_text())["K"] == 1
    assert cli.main([*common, "--rounds", "2", "--out", str(tmp_path / "b"), "--resume"]) == 0
    assert cli.main(["train", "--algo", "dfedavg", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "1",
                     "--no-progress", "--out", str(tmp_path / "c")]) == 0
    assert json.loads((tmp_path / "c" / "config.json").read_text())["K"] == 5  # the default, stored


def test_resume_with_an_explicit_no_epochs_is_the_same_config(tmp_path, capsys):
    """--no-epochs is what an unset --epochs means: a resume that spells it out continues the run."""
    common = ["train", "--algo", "dfedavg", "--dataset", "synthetic-logistic", "--n", "4", "--no-progress",
              "--out", str(tmp_path / "r")]
    assert cli.main([*common, "--rounds", "1"]) == 0
    assert json.loads((tmp_path / "r" / "config.json").read_text())["epochs"] is False
    assert cli.main([*common, "--rounds", "2", "--no-epochs", "--resume"]) == 0
    assert [r["round"] for r in lines(tmp_path / "r")] == [0, 1, 2]
    assert cli.main([*common, "--rounds", "3", "--epochs", "--resume"]) == 2
    assert "--resume with a different config (epochs)" in capsys.readouterr().err


def test_runs_stored_before_K_and_dfedpgp_momentum_were_resolved_resume(tmp_path, capsys):
    """An older config.json kept D-PSGD's K = 5 (ignored) and no DFedPGP momentum (0): both resume as the same run;
    a DFedPGP resume with momentum 0.9 is another run and is refused."""
    common = ["--dataset", "synthetic-logistic", "--n", "4", "--no-progress", "--K", "2"]
    for algo, extra in (("dpsgd", []), ("dfedpgp", ["--model", "mlp", "--topology", "random", "--topology-params",
                                                     "k=2,direction=in", "--weights", "push-sum"])):
        out = tmp_path / algo
        assert cli.main(["train", "--algo", algo, *common, *extra, "--rounds", "1", "--out", str(out)]) == 0
        cfg = json.loads((out / "config.json").read_text())
        cfg["K"] = 5 if algo == "dpsgd" else cfg["K"]
        cfg.pop("momentum", None)
        (out / "config.json").write_text(json.dumps(cfg))  # as an older dfltheory wrote it
        again = ["train", "--algo", algo, *common, *extra, "--rounds", "2", "--out", str(out), "--resume"]
        assert cli.main(again + (["--momentum", "0"] if algo == "dfedpgp" else [])) == 0, capsys.readouterr().err
    assert cli.main([*again[:-3], "--rounds", "3", "--out", str(out), "--resume", "--momentum", "0.9"]) == 2
    assert "--resume with a different config (momentum)" in capsys.readouterr().err


def test_an_option_the_algorithm_does_not_read_is_named(tmp_path, capsys):
    common = ["train", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "1", "--no-progress"]
    assert cli.main([*common, "--algo", "dfedsam", "--momentum", "0.9", "--participation", "0.5", "--rho", "0.05",
                     "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "warning: dfedsam does not use --momentum, --participation; ignored" in err and "--rho" not in err
    assert cli.main([*common, "--algo", "dfedavgm", "--momentum", "0.5", "--out", str(tmp_path / "b")]) == 0
    assert "does not use" not in capsys.readouterr().err


def test_a_default_given_explicitly_resumes_and_another_value_is_refused(tmp_path, capsys):
    """Resume compares hyper-parameters as the algorithm takes them: DFedAvgM's default momentum 0.9 spelled out is
    the same run, 0.5 is another; an option the algorithm does not read (--rho for dfedavgm) changes nothing."""
    common = ["train", "--algo", "dfedavgm", "--dataset", "synthetic-logistic", "--n", "4", "--no-progress",
              "--out", str(tmp_path / "r")]
    assert cli.main([*common, "--rounds", "1"]) == 0
    assert cli.main([*common, "--rounds", "2", "--momentum", "0.9", "--rho", "0.3", "--resume"]) == 0
    assert cli.main([*common, "--rounds", "3", "--momentum", "0.5", "--resume"]) == 2
    assert "--resume with a different config (momentum)" in capsys.readouterr().err


def test_a_resume_does_not_read_the_initial_weights_again(tmp_path, capsys):
    from dfltheory.empirical.models import make_model

    torch.save(make_model("mlp", (64,), 10).state_dict(), tmp_path / "x0.pt")
    common = ["train", "--algo", "dfedavg", "--dataset", "digits", "--n", "4", "--K", "1", "--no-progress",
              "--out", str(tmp_path / "r")]
    assert cli.main([*common, "--rounds", "1", "--init-weights", str(tmp_path / "x0.pt")]) == 0
    assert "initial weights: took 6 of 6" in capsys.readouterr().err
    (tmp_path / "x0.pt").rename(tmp_path / "moved.pt")  # the checkpoint holds the state: the file is not needed
    assert cli.main([*common, "--rounds", "2", "--init-weights", str(tmp_path / "x0.pt"), "--resume"]) == 0
    assert "initial weights" not in capsys.readouterr().err


def test_options_that_do_nothing_for_the_algorithm_are_named(tmp_path, capsys):
    common = ["train", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "1", "--no-progress"]
    assert cli.main([*common, "--algo", "dfedavg", "--weighted", "--out", str(tmp_path / "a")]) == 0
    assert "dfedavg does not use --weighted; ignored" in capsys.readouterr().err
    assert cli.main([*common, "--algo", "dfedpgp", "--model", "mlp", "--personal", "none", "--topology", "random",
                     "--topology-params", "k=2,direction=in", "--weights", "push-sum",
                     "--out", str(tmp_path / "b")]) == 0
    assert "with --personal none shares every parameter: its K_v personal steps move nothing" in (
        capsys.readouterr().err)


def test_a_checkpoint_is_read_on_the_cpu_and_saving_options_do_not_block_a_resume(tmp_path, monkeypatch):
    """Issue 23 item 1: a checkpoint written on a GPU holds tensors of that device, and the sampling generator's state
    must come back as a CPU ByteTensor: the file is read with map_location='cpu' (the engine moves its state to its
    own device). Changing when a run is saved or measured (--checkpoint-every, --eval-every) does not change its
    trajectory, so it does not block --resume; the resumed run equals an uninterrupted one."""
    whole = runner.run({**BASE, "rounds": 4, "out": tmp_path / "whole", "checkpoint_every": 2})
    runner.run({**BASE, "rounds": 2, "out": tmp_path / "r", "checkpoint_every": 2})
    seen = []
    load = torch.load

    def spy(*args, **kwargs):
        seen.append(kwargs.get("map_location"))
        return load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    again = runner.run({**BASE, "rounds": 4, "out": tmp_path / "r", "checkpoint_every": 3, "eval_every": 2},
                       resume=True)
    assert seen == ["cpu"]
    assert again["last"]["train_loss"] == whole["last"]["train_loss"]  # bit-identical trajectory


def test_a_checkpoint_that_cannot_be_restored_names_the_cause(tmp_path):
    from dfltheory.empirical import rundir

    path = tmp_path / "r" / "checkpoint.pt"
    runner.run({**BASE, "rounds": 1, "out": tmp_path / "r"})
    sd = rundir.load_checkpoint(path, "test", "")
    sd["generator"] = torch.zeros(3)  # not a generator state
    rundir.save_checkpoint(sd, path)  # with a matching digest: the engine's own check refuses it
    with pytest.raises(ValueError, match=r"does not belong to this run \(its .*generator state is .*malformed"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "r"}, resume=True)
    torch.save({**sd, rundir.DIGEST: "0" * 64}, path)
    with pytest.raises(ValueError, match=r"is damaged \(its contents do not match their SHA-256 digest\)"):
        runner.run({**BASE, "rounds": 2, "out": tmp_path / "r"}, resume=True)