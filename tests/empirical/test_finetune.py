"""Fine-tuning a finished run (DFedAvg + fine-tuning, issue 16): the batched steps and the batched personal accuracy
equal their per-client loops, the result is a cached, deterministic function of the run, and a run without a final
checkpoint is refused."""

from __future__ import annotations

import json

import pytest
import torch

from dfltheory.empirical import finetune as F
from dfltheory.empirical import runner

RUN = {"algo": "dfedavg", "dataset": "digits", "n": 4, "topology": "ring", "K": 2, "lr": 0.1, "batch_size": 8,
       "seed": 1, "rounds": 3, "checkpoint_every": 3, "eval_every": 3, "local_eval": False, "progress": False,
       "threads": 1}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("finetune") / "run"
    runner.run({**RUN, "out": out})
    return out


def test_batched_finetune_and_personal_accuracy_equal_the_per_client_loops(run):
    engine, evaluator = F.load_run(run)
    gen = engine.generator.get_state()
    X = F.finetune(engine, 4)
    # oracle: client by client, the same minibatches (the run's generator, restored), plain SGD at eta_T
    engine.generator.set_state(gen)
    idx = engine.sampler.draw(4, engine.generator)
    lr = engine.lr_at(engine.t)
    rows = []
    for i, x in enumerate(engine.client_models()):
        x = x.detach().clone()
        for k in range(4):
            x = x.requires_grad_(True)
            loss = engine.model.loss_at(x, engine.x_train[idx[k, i]], engine.y_train[idx[k, i]])
            x = (x - lr * torch.autograd.grad(loss, x)[0]).detach()
        rows.append(x)
    assert torch.allclose(X, torch.stack(rows), atol=1e-6)
    assert (X - engine.client_models()).abs().max() > 1e-3  # the models moved
    assert F.personal_accuracy(evaluator, X) == pytest.approx(evaluator.personal_test(X), abs=1e-12)
    assert F.finetune(engine, 0).equal(engine.client_models())


def test_finetuned_is_cached_and_deterministic(run):
    first = F.finetuned(run, 5)
    assert (run / "finetune-5.json").exists()
    assert 0 <= first["personal_acc"] <= 1 and first["round"] == 3 and first["steps"] == 5
    assert first["lr"] == pytest.approx(0.1)  # no decay in this run
    (run / "finetune-5.json").unlink()
    assert F.finetuned(run, 5) == first  # recomputed from the checkpoint: the same numbers
    (run / "finetune-5.json").write_text(json.dumps({**first, "personal_acc": -1.0}))
    assert F.finetuned(run, 5)["personal_acc"] == -1.0  # read back, not recomputed
    none = F.finetuned(run, 0)
    assert none["personal_acc"] == none["personal_acc_before"] == first["personal_acc_before"]


def test_a_run_without_a_final_checkpoint_is_refused(tmp_path, run):
    for name in ("config.json", "checkpoint.pt"):
        (tmp_path / name).write_bytes((run / name).read_bytes())
    summary = json.loads((run / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps({**summary, "rounds": 5}))  # as a run that went on past it
    with pytest.raises(ValueError, match="the checkpoint is at round 3 but the run ended at round 5"):
        F.load_run(tmp_path)
    with pytest.raises(ValueError, match="steps must be an integer >= 0"):
        F.finetune(None, -1)  # checked before the engine is touched
