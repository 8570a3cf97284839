"""Local fine-tuning of a finished run: the personal baseline "global method + fine-tuning" (issue 16).

DFedPGP reports *personal* test accuracy, each client's model on its own test split, averaged over clients (seed 003
L187, card dfedpgp §8). A method that trains one shared model is made personal by fine-tuning: from the run's final
state every client i takes ``steps`` plain SGD steps on its own training data from its own final model x_i^T,

    x_i <- x_i - eta_T grad f_i(x_i; xi_i),   eta_T = eta decay^T (the learning rate the next round would use),

with minibatches of the run's batch size drawn by the run's own generator (restored from the checkpoint, so the
result is a deterministic function of the run), and is scored on its own test split. ``steps = 0`` gives the
personal accuracy of the final models without fine-tuning. FedBABU, the paper's fine-tuning baseline, fine-tunes
"5 times" (seed 003 L385); :mod:`dfltheory.verify.claims` uses K steps, one round's local work.

All clients are fine-tuned at once (``FlatModel.batched_grad``, vmap over the rows) and scored at once
(:func:`personal_accuracy`, the test splits padded to one length and masked); ``Evaluator.personal_test`` is the
per-client loop it is checked against. The run must have its checkpoint at its last round (``train`` writes one
there; a diverged run's last checkpoint is older).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

VERSION = 1  # bump when the rule changes: cached results of another version are recomputed


def _check_no_stats(model) -> None:
    """Fine-tuning and scoring here use no running statistics: refuse a model that has them (BatchNorm)."""
    if model.n_stats:
        raise ValueError("fine-tuning and the personal accuracy keep no per-client running statistics, and the "
                         "model has BatchNorm layers; use a model with GroupNorm (e.g. vgg11 rather than vgg11-bn)")


def finetune(engine, steps: int, lr: float | None = None) -> torch.Tensor:
    """Every client's model after ``steps`` SGD steps on its own data from its final model (rows of the (m, d)
    result); ``lr`` defaults to the run's next learning rate eta decay^t."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0 (local fine-tuning steps), got {steps!r}")
    _check_no_stats(engine.model)
    lr = engine.lr_at(engine.t) if lr is None else lr
    X = engine.client_models().detach().clone()
    if steps:
        sampler = engine.sampler
        if engine.epochs:  # fine-tuning takes single minibatch steps, not epochs
            from dfltheory.empirical.engine import ClientSampler

            sampler = ClientSampler(engine.data.client_indices, sampler.width)
        idx = sampler.draw(steps, engine.generator).to(engine.device)
        for k in range(steps):
            X = X - lr * engine.model.batched_grad(X, engine.x_train[idx[k]], engine.y_train[idx[k]])
    return X


@torch.no_grad()
def personal_accuracy(evaluator, X: torch.Tensor) -> float:
    """Mean over clients with test data of the accuracy of X[i] on client i's own test split (one vmapped forward
    over the padded splits); equals ``evaluator.personal_test(X)``."""
    from torch.nn.utils.rnn import pad_sequence

    if evaluator.task != "classification":
        raise ValueError("personal accuracy needs a classification data set")
    _check_no_stats(evaluator.model)
    splits = evaluator.client_tests
    sizes = torch.tensor([len(ix) for ix in splits], device=X.device)
    idx = pad_sequence(splits, batch_first=True)  # (m, longest split), padded with index 0 and masked
    mask = torch.arange(idx.shape[1], device=X.device)[None, :] < sizes[:, None]
    out = torch.vmap(evaluator.model.forward)(X, evaluator.x_test[idx])  # (m, width, classes)
    correct = ((out.argmax(-1) == evaluator.y_test[idx]) & mask).sum(1).double()
    has = sizes > 0
    return float((correct[has] / sizes[has]).mean())


def load_run(run: str | Path):
    """(engine, evaluator) of a finished run directory, restored from its ``checkpoint.pt`` at the last round."""
    from dfltheory.empirical import runner
    from dfltheory.empirical.rundir import read_summary

    engine, evaluator, _, _ = runner.load_run(run)
    summary = read_summary(run)
    if engine.t != summary["rounds"]:
        raise ValueError(f"{run}: the checkpoint is at round {engine.t} but the run ended at round "
                         f"{summary['rounds']} (diverged?); only a completed run can be fine-tuned")
    return engine, evaluator


def finetuned(run: str | Path, steps: int) -> dict:
    """Personal accuracy of a finished run before and after ``steps`` fine-tuning steps, cached in
    ``run/finetune-<steps>.json``: {'steps', 'lr', 'round', 'personal_acc_before', 'personal_acc'}."""
    run = Path(run)
    path = run / f"finetune-{steps}.json"
    if path.exists():
        try:
            saved = json.loads(path.read_text())
            if saved.get("version") == VERSION:
                return saved
        except json.JSONDecodeError:
            pass  # recomputed below
    engine, evaluator = load_run(run)
    before = personal_accuracy(evaluator, engine.client_models())
    after = personal_accuracy(evaluator, finetune(engine, steps)) if steps else before
    result = {"version": VERSION, "steps": steps, "lr": engine.lr_at(engine.t), "round": engine.t,
              "personal_acc_before": before, "personal_acc": after}
    path.write_text(json.dumps(result) + "\n")
    return result
