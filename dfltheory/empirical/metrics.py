"""Measurements of a run, written as one JSON line per measured round.

| key                     | quantity |
|-------------------------|----------|
| round                   | t: the state measured is the one at the start of round t (after t communications) |
| train_loss              | f(x_bar^t) = (1/m) sum_i f_i(x_bar^t), f_i the mean loss on client i's training data (eq. (1)) |
| grad_norm_sq            | ||grad f(x_bar^t)||^2, the quantity DFedSAM's Theorem 4.1 bounds (card dfedsam §2) |
| grad_norm_sq_w          | ||grad f(w^t)||^2, DFedADMM's auxiliary sequence (card dfedadmm §2, §6.1 Lemma 9) |
| grad_norm_sq_p          | ||grad f(p^t)||^2, DFedCata's auxiliary sequence (card dfedcata §2, Lemma 6) |
| consensus               | (1/m) sum_i ||x_i^t - x_bar^t||^2 of the round-start models (push-sum: z_i = x_i/w_i) |
| test_acc / test_loss    | of x_bar^t on the test set (accuracy for classification, loss for regression) |
| local_test_acc_mean     | mean over clients of the test accuracy of each client's own model x_i^t |
| models_sent             | models sent so far (cumulative communication volume) |

x_bar^t is the average the theory means (``Algorithm.average``): the mean of the round-start models, and for
DFedCata the mean of the aggregated models a_bar^t (card dfedcata §3.1 "output").
"""

from __future__ import annotations

import math

import torch

from dfltheory.empirical.functional import FlatModel


class Evaluator:
    """Full-data objective, gradient and accuracies for one federated data set on one device."""

    def __init__(self, model: FlatModel, data, device="cpu", chunk: int = 4096):
        self.model, self.device, self.chunk = model, torch.device(device), chunk
        self.task = getattr(data, "task", "classification")
        self.x_train = torch.as_tensor(data.x_train).to(self.device)
        self.y_train = torch.as_tensor(data.y_train).to(self.device)
        self.x_test = torch.as_tensor(data.x_test).to(self.device)
        self.y_test = torch.as_tensor(data.y_test).to(self.device)
        self.clients = [torch.as_tensor(ix, dtype=torch.long).to(self.device) for ix in data.client_indices]

    def objective(self, x: torch.Tensor) -> tuple[float, torch.Tensor]:
        """f(x) = (1/m) sum_i f_i(x) and its gradient, on all training data (chunked per client)."""
        x = x.detach().requires_grad_(True)
        total, g = 0.0, torch.zeros_like(x)
        m = len(self.clients)
        for ix in self.clients:
            for part in ix.split(self.chunk):
                w = len(part) / (len(ix) * m)
                loss = self.model.loss_at(x, self.x_train[part], self.y_train[part]) * w
                g += torch.autograd.grad(loss, x)[0]
                total += float(loss.detach())
        return total, g

    def _test_scores(self, outputs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-model number of correct predictions (classification) or summed loss (regression)."""
        if self.task == "classification":
            return (outputs.argmax(-1) == y).sum(-1).to(torch.float64)
        return torch.stack([self.model.loss(o, y) * len(y) for o in outputs]).to(torch.float64)

    @torch.no_grad()
    def test(self, x: torch.Tensor) -> float:
        """Test accuracy (classification) or mean test loss (regression) of one model."""
        return float(self.test_many(x.unsqueeze(0))[0])

    @torch.no_grad()
    def test_many(self, X: torch.Tensor) -> torch.Tensor:
        """Test score of every row of X (vmap over models, chunks of the test set)."""
        step = max(1, 20000 // X.shape[0])
        score = torch.zeros(X.shape[0], dtype=torch.float64, device=X.device)
        for s in range(0, len(self.y_test), step):
            out = self.model.batched_forward(X, self.x_test[s : s + step])
            score += self._test_scores(out, self.y_test[s : s + step])
        return score / len(self.y_test)


def consensus(X: torch.Tensor) -> float:
    """(1/m) sum_i ||x_i - x_bar||^2."""
    return float(((X - X.mean(0)) ** 2).sum(1).mean())


def measure(engine, evaluator: Evaluator, local: bool = True) -> dict:
    """One metrics record of the engine's current state (see the module table)."""
    xbar = engine.x_bar()
    loss, g = evaluator.objective(xbar)
    key = "acc" if evaluator.task == "classification" else "loss"
    models = engine.algo.client_models(engine.state)
    rec = {"round": engine.t, "lr": engine.lr_at(engine.t), "models_sent": engine.sent, "train_loss": loss,
           "grad_norm_sq": float((g**2).sum()), "consensus": consensus(models),
           f"test_{key}": evaluator.test(xbar)}
    for name, point in engine.aux_points().items():
        rec[f"grad_norm_sq_{name}"] = float((evaluator.objective(point)[1] ** 2).sum())
    if local:
        rec[f"local_test_{key}_mean"] = float(evaluator.test_many(models).mean())
    rec["finite"] = all(math.isfinite(v) for v in rec.values() if isinstance(v, float))
    return rec
