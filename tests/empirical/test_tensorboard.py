"""TensorBoard events of a run (issue 26 item 3), read back with TensorBoard's own EventAccumulator: every numeric
key of every record of metrics.jsonl once per measured round, the config as text and hyper-parameters; a resumed
run holds each round once; --no-tensorboard writes none; the run directory's validation ignores the event files."""

import json
import math

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.util import tensor_util

from dfltheory import cli
from dfltheory.empirical import runner
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.rundir import complete, read_records
from dfltheory.empirical.tensorboard import PREFIX, scalars

BASE = {"algo": "dfedadmm", "dataset": "synthetic-logistic", "n": 4, "topology": "ring", "K": 2, "lr": 0.05,
        "batch_size": 8, "seed": 3, "progress": False, "data_params": {"dim": 5}}


def events(run) -> EventAccumulator:
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def assert_events_equal_metrics(run):
    """Every scalar of every record, at its round, once, as float32 (TensorBoard's scalar type); nothing else."""
    records, acc = read_records(run / "metrics.jsonl"), events(run)
    expected = {}
    for rec in records:
        for key, value in scalars(rec).items():
            expected.setdefault(key, []).append((rec["round"], float(torch.tensor(value, dtype=torch.float32))))
    assert sorted(acc.Tags()["scalars"]) == sorted(expected)
    for key, points in expected.items():
        got = [(e.step, e.value) for e in acc.Scalars(key)]
        assert [s for s, _ in got] == [s for s, _ in points], key
        assert all(same(g, p) for (_, g), (_, p) in zip(got, points)), key


def test_a_run_writes_its_metrics_config_and_hyper_parameters(tmp_path):
    run = tmp_path / "r"
    runner.run({**BASE, "rounds": 4, "eval_every": 2, "out": run})
    assert len(list(run.glob(PREFIX + "*"))) == 1
    assert_events_equal_metrics(run)
    acc = events(run)
    assert {"train_loss", "grad_norm_sq", "grad_norm_sq_w", "consensus", "test_acc", "lr"} <= set(acc.Tags()["scalars"])
    assert [e.step for e in acc.Scalars("grad_norm_sq_w")] == [0, 2, 4]
    assert "finite" not in acc.Tags()["scalars"]  # a boolean, not a curve
    config = json.loads((run / "config.json").read_text())
    text = tensor_util.make_ndarray(acc.Tensors("config/text_summary")[0].tensor_proto).item().decode()
    assert json.loads(text) == json.loads(json.dumps(config, sort_keys=True))
    content = acc.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["lr"].number_value == 0.05 and start.hparams["algo"].string_value == "dfedadmm"
    assert start.hparams["rounds"].number_value == 4 and start.hparams["data_params"].string_value == '{"dim": 5}'
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert {m.name.tag for m in experiment.metric_infos} == set(acc.Tags()["scalars"])


def test_a_non_finite_value_is_nan_and_the_run_directory_stays_valid(tmp_path, capsys):
    run = tmp_path / "r"
    summary = runner.run({**BASE, "algo": "dfedavg", "dataset": "synthetic-quadratic", "K": 5, "lr": 5.0,
                          "batch_size": 4, "rounds": 50, "out": run})
    assert summary["status"] == "diverged" and "diverged" in capsys.readouterr().err
    assert any(v is None for rec in read_records(run / "metrics.jsonl") for v in rec.values())
    assert_events_equal_metrics(run)
    assert complete(run, 50)  # the event files are extra files: rundir reads the run back


def test_a_resumed_run_holds_every_round_once(tmp_path, monkeypatch):
    straight, cut = tmp_path / "straight", tmp_path / "cut"
    cfg = {**BASE, "rounds": 8, "checkpoint_every": 3}
    runner.run({**cfg, "out": straight})
    original = Engine.round

    def dying_round(self):
        if self.t == 5:
            raise KeyboardInterrupt  # killed in round 6: rounds 0..5 measured, the checkpoint is from round 3
        return original(self)

    monkeypatch.setattr(Engine, "round", dying_round)
    with pytest.raises(KeyboardInterrupt):
        runner.run({**cfg, "out": cut})
    monkeypatch.setattr(Engine, "round", original)
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(cut)) as stale:  # what the killed part may have left: rounds 4, 5 the resume redoes
        stale.add_scalar("train_loss", 999.0, 4)
        stale.add_scalar("train_loss", 999.0, 5)
    runner.run({**cfg, "out": cut}, resume=True)
    assert_events_equal_metrics(cut)
    assert (cut / "metrics.jsonl").read_text() == (straight / "metrics.jsonl").read_text()
    assert [e.step for e in events(cut).Scalars("train_loss")] == list(range(9))
    runner.run({**cfg, "rounds": 10, "out": cut}, resume=True)  # a finished run continued: rounds 9, 10 added
    assert_events_equal_metrics(cut)
    assert len(list(cut.glob(PREFIX + "*"))) == 1


def test_no_tensorboard_writes_no_events_and_may_change_on_resume(tmp_path):
    out = tmp_path / "r"
    argv = ["train", "--algo", "dfedavg", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "2",
            "--batch-size", "8", "--out", str(out), "--no-progress"]
    assert cli.main([*argv, "--no-tensorboard"]) == 0
    assert not list(out.glob(PREFIX + "*")) and json.loads((out / "config.json").read_text())["tensorboard"] is False
    assert cli.main([*argv[:8], "3", *argv[9:], "--resume"]) == 0  # now with events: not another config
    assert_events_equal_metrics(out)
