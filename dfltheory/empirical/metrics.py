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
DFedCata the mean of the aggregated models a_bar^t (card dfedcata §3.1 "output"); with ``sequential=True`` (the
authors' one-client-at-a-time schedule) the mean of the trained local models, which the public code evaluates.

A model with running statistics (BatchNorm; ``FlatModel``) is measured in eval mode: each client's model x_i^t (and
DFedPGP's (ubar, v_i)) on its own statistics, row i of ``engine.state["running_stats"]``; the average model x_bar^t
and the auxiliary points on the mean of the clients' rows.

DFedPGP (personal v_i, shared u_i, push-sum weights mu_i; card dfedpgp §2, §6.6, §10.18) replaces the
global-model keys by its own (:func:`measure_personal`):

| key                     | quantity |
|-------------------------|----------|
| train_loss              | F(ubar^t, V^t) = (1/m) sum_i F_i(ubar^t, v_i^t), ubar^t = (1/m) sum_i u_i^t (eq. (2)) |
| grad_norm_sq_u          | Delta_ubar^{t-1} = ||grad_u F(ubar^{t-1}, V^t)||^2: Theorem 1's u-measure of the round just run |
| grad_norm_sq_v          | Delta_v^t = (1/m) sum_i ||grad_v F_i(u_i^t, v_i^t)||^2 at the biased u_i^t (Theorem 1) |
| grad_norm_sq_v_z        | the same at the de-biased z_i^t = u_i^t / mu_i^t (the clients' models; §10.18) |
| consensus               | (1/m) sum_i ||z_i^t - ubar^t||^2 on u: what Lemma 3 bounds (card §6.3) |
| test_acc / test_loss    | personal test score: mean over clients of (z_i^t, v_i^t) on the client's own test split (§8) |
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
        tests = data.client_test_indices or [torch.arange(len(data.y_test))] * len(self.clients)
        self.client_tests = [torch.as_tensor(ix, dtype=torch.long).to(self.device) for ix in tests]

    def objective(self, x: torch.Tensor, stats: torch.Tensor | None = None) -> tuple[float, torch.Tensor]:
        """f(x) = (1/m) sum_i f_i(x) and its gradient, on all training data (chunked per client); ``stats``: the
        model's running statistics (eval mode)."""
        x = x.detach().requires_grad_(True)
        total, g = 0.0, torch.zeros_like(x)
        m = len(self.clients)
        for ix in self.clients:
            for part in ix.split(self.chunk):
                w = len(part) / (len(ix) * m)
                loss = self.model.loss_at(x, self.x_train[part], self.y_train[part], stats=stats) * w
                g += torch.autograd.grad(loss, x)[0]
                total += float(loss.detach())
        return total, g

    def client_objectives(self, X: torch.Tensor,
                          stats: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """f_i(X[i]) and grad f_i(X[i]) on client i's whole training set, for every row i (personal models; on
        running statistics ``stats[i]``)."""
        losses, grads = torch.zeros(len(X), dtype=torch.float64), torch.zeros_like(X)
        for i, ix in enumerate(self.clients):
            x, s = X[i].detach().requires_grad_(True), None if stats is None else stats[i]
            for part in ix.split(self.chunk):
                loss = self.model.loss_at(x, self.x_train[part], self.y_train[part], stats=s) * (len(part) / len(ix))
                grads[i] += torch.autograd.grad(loss, x)[0]
                losses[i] += float(loss.detach())
        return losses, grads

    def _test_scores(self, outputs: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-model number of correct predictions (classification) or summed loss (regression)."""
        if self.task == "classification":
            return (outputs.argmax(-1) == y).sum(-1).to(torch.float64)
        return torch.stack([self.model.loss(o, y) * len(y) for o in outputs]).to(torch.float64)

    @torch.no_grad()
    def test(self, x: torch.Tensor, stats: torch.Tensor | None = None) -> float:
        """Test accuracy (classification) or mean test loss (regression) of one model (on statistics ``stats``)."""
        return float(self.test_many(x.unsqueeze(0), None if stats is None else stats.unsqueeze(0))[0])

    @torch.no_grad()
    def test_many(self, X: torch.Tensor, stats: torch.Tensor | None = None) -> torch.Tensor:
        """Test score of every row of X, on statistics ``stats[i]`` (vmap over models, chunks of the test set)."""
        step = max(1, 20000 // X.shape[0])
        score = torch.zeros(X.shape[0], dtype=torch.float64, device=X.device)
        for s in range(0, len(self.y_test), step):
            out = self.model.batched_forward(X, self.x_test[s : s + step], stats)
            score += self._test_scores(out, self.y_test[s : s + step])
        return score / len(self.y_test)

    @torch.no_grad()
    def personal_test(self, X: torch.Tensor, stats: torch.Tensor | None = None) -> float:
        """Mean over clients (with test data) of the test score of X[i] (on statistics ``stats[i]``) on client i's
        own test split (the pooled test set if the data has no split): DFedPGP's personal test accuracy (card
        dfedpgp §8, seed L187)."""
        rows = [None] * len(X) if stats is None else stats
        scores = [self._test_scores(self.model.forward(x, self.x_test[ix], s).unsqueeze(0), self.y_test[ix])[0]
                  / len(ix) for x, s, ix in zip(X, rows, self.client_tests) if len(ix)]
        return float(torch.stack(scores).mean())


def consensus(X: torch.Tensor, center: torch.Tensor | None = None) -> float:
    """(1/m) sum_i ||x_i - c||^2 around ``center`` c (default: the mean of the rows), in float64 so that
    identical models give 0 rather than float32 rounding noise."""
    X = X.double()
    c = X.mean(0) if center is None else center.double()
    return float(((X - c) ** 2).sum(1).mean())


def measure(engine, evaluator: Evaluator, local: bool = True) -> dict:
    """One metrics record of the engine's current state (see the module table)."""
    key = "acc" if evaluator.task == "classification" else "loss"
    models, stats = engine.client_models(), engine.state.get("running_stats")
    mean = None if stats is None else stats.mean(0)  # the average models' statistics (module docstring)
    rec = {"round": engine.t, "lr": engine.lr_at(engine.t), "models_sent": engine.sent}
    if engine.shared is not None:
        rec.update(measure_personal(engine, evaluator, models, key))
    else:
        xbar = engine.x_bar()
        loss, g = evaluator.objective(xbar, mean)
        rec.update({"train_loss": loss, "grad_norm_sq": float((g**2).sum()), "consensus": consensus(models, xbar),
                    f"test_{key}": evaluator.test(xbar, mean)})
    for name, point in engine.aux_points().items():
        rec[f"grad_norm_sq_{name}"] = float((evaluator.objective(point, mean)[1] ** 2).sum())
    if local:
        rec[f"local_test_{key}_mean"] = float(evaluator.test_many(models, stats).mean())
    rec["finite"] = all(math.isfinite(v) for v in rec.values() if isinstance(v, float))
    return rec


def measure_personal(engine, evaluator: Evaluator, models: torch.Tensor, key: str) -> dict:
    """DFedPGP's keys (module table): Theorem 1's Delta_ubar, Delta_v (card dfedpgp §2, §6.6) and Lemma 3's consensus.

    ubar^t is the u-part of the mean of the numerators (x_bar); Delta_ubar^{t-1} needs V^t, the personal parameters
    that round t-1 produced, so it is measured once that round has run (``engine.xbar_prev`` = x_bar^{t-1}).
    """
    s, X, stats = engine.shared, engine.state["x"], engine.state.get("running_stats")
    ubar = engine.x_bar()

    def with_shared(u):  # (u, v_i) for every client i
        return torch.where(s, u, X)

    def personal_grad_norm_sq(Y):  # (1/m) sum_i ||grad_v F_i(Y_i)||^2
        return float((evaluator.client_objectives(Y, stats)[1][:, ~s] ** 2).sum(1).mean())

    losses = evaluator.client_objectives(with_shared(ubar), stats)[0]
    grad_u = evaluator.client_objectives(with_shared(engine.xbar_prev), stats)[1].mean(0)[s]
    return {"train_loss": float(losses.mean()), "grad_norm_sq_u": float((grad_u**2).sum()),
            "grad_norm_sq_v": personal_grad_norm_sq(X), "grad_norm_sq_v_z": personal_grad_norm_sq(models),
            "consensus": float(((models - ubar)[:, s] ** 2).sum(1).mean()),
            f"test_{key}": evaluator.personal_test(models, stats)}
