"""DFedCata's code mode (``sequential=True``, ``clip``, ``weight_decay``) against the authors' public code.

The authors' classes (``server.DFedCata``, ``client.dfedcata``; ``../shared/reference/dfedcata-official``, MIT,
unmodified) are imported, not copied, and run by their own ``Server.train`` loop on a small problem; the harness
(:mod:`dfltheory.testing.official`) only replaces their data loading (here one full local batch per epoch, in
order), their evaluation and their result files. Everything runs in float64 with inputs scaled so that
``clip_grad_norm_(max_norm=10)`` binds.
Skipped where ``../shared/reference`` is absent (a user's clone).
"""

import contextlib

import pytest
import torch
from torch import nn

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import communication as C
from dfltheory.empirical import data as D
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn
from dfltheory.testing import official
from dfltheory.topology import build as build_topology

M, N_PER_CLIENT, K, ROUNDS = 6, 20, 3, 8
HP = {"lam_pen": 0.05, "beta": 0.9, "weight_decay": 5e-4, "lr": 0.01, "lr_decay": 0.998}
MAX_NORM = official.MAX_NORM  # hard-coded in the authors' Client (self.max_norm = 10)
SCALE = 16.0  # inputs x 16: a third of the local gradients exceed MAX_NORM
pytestmark = pytest.mark.skipif(not official.available(), reason=f"the authors' code is not at {official.OFFICIAL}")


@pytest.fixture(scope="module")
def problem():
    """Digits, M clients with N_PER_CLIENT samples each (full local batches), float64, inputs scaled by SCALE."""
    d = D.load("digits", M, partition="iid", seed=0)
    idx = [ix[:N_PER_CLIENT] for ix in d.client_indices]
    return D.FederatedData(d.x_train.double() * SCALE, d.y_train, d.x_test.double() * SCALE, d.y_test, idx,
                           d.num_classes, d.input_shape, f"digits-x{SCALE:g}")


def module(data):
    """Multinomial logistic regression (no hidden layer: large inputs cannot kill units, the gradients stay large),
    the same initial weights at every call (the global RNG is left as it was)."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return nn.Sequential(nn.Flatten(), nn.Linear(64, data.num_classes)).double()


def run_official(modules, data, x0):
    """The authors' Server.train for ROUNDS rounds on a ring (neighbours i +- 1 and i, mean of 3); returns the
    clients' models and the evaluated average after each round, and every clipped gradient norm."""
    models, evaluated, norms = [], [], []

    def record(t, srv):  # replaces their _test_: the model they evaluate and the clients' models
        evaluated.append(torch.cat([p.detach().reshape(-1) for p in srv.server_model.parameters()]))
        models.append(srv.clients_params_list.clone())

    srv = official.dfedcata_server(modules, lambda: module(data), x0, [data.x_train[ix] for ix in data.client_indices],
                                   [data.y_train[ix] for ix in data.client_indices], rounds=ROUNDS, K=K,
                                   batch_size=N_PER_CLIENT, on_round=record, **HP)
    clip = torch.nn.utils.clip_grad_norm_

    def recording_clip(*a, **kw):
        norms.append(float(clip(*a, **kw)))
        return norms[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.nn.utils, "clip_grad_norm_", recording_clip)
        srv.train()
    return models, evaluated, norms


def test_code_mode_equals_the_authors_code_with_binding_clipping(problem):
    flat = FlatModel(module(problem), loss_fn(problem.task))
    x0 = flat.initial()
    assert x0.dtype == torch.float64
    topo = build_topology("ring", M, weights="metropolis", seed=0)  # 1/3 on i, i +- 1: their mean of 3
    algo = A.make("dfedcata", mode="A", clip=MAX_NORM, lam_pen=HP["lam_pen"], beta=HP["beta"],
                  weight_decay=HP["weight_decay"])
    eng = Engine(flat, problem, algo, C.Mixing(topo), K=K, lr=HP["lr"], lr_decay=HP["lr_decay"], batch_size=None,
                 sequential=True)
    assert eng.mixing.dtype == torch.float64  # the engine's dtype, so w = 1/3 is the float64 1/3
    with official.official_modules() as modules, contextlib.redirect_stdout(None):
        models, evaluated, norms = run_official(modules, problem, x0)
    assert len(norms) == ROUNDS * M * K
    assert max(norms) > 2 * MAX_NORM  # the clipping binds ...
    assert sum(n > MAX_NORM for n in norms) > len(norms) // 5  # ... at many steps
    for t in range(ROUNDS):
        eng.round()
        assert (eng.state["x"] - models[t]).abs().max() < 1e-12, t  # every client model
        assert (eng.x_bar() - evaluated[t]).abs().max() < 1e-12, t  # the model their code evaluates
    assert (eng.state["x"] - x0).abs().max() > 0.1  # the models moved


def test_sampled_loader_gives_K_steps_of_batch_b_per_client_and_round(problem):
    """The benchmark's harness (benchmarks/bench_official.py): one new sampled minibatch per local epoch, so the
    authors' code takes local_epochs = K SGD steps of batch b per client and round, whatever the local data set's
    size, each on its own minibatch."""
    rounds, k, b = 2, 3, 7
    batches = []

    def build():
        net = module(problem)
        net.register_forward_pre_hook(lambda mod, inputs: batches.append(inputs[0].clone()))
        return net

    loader = official.sampled_loader(torch.Generator().manual_seed(0))
    with official.official_modules(loader) as modules, contextlib.redirect_stdout(None):
        srv = official.dfedcata_server(modules, build, FlatModel(module(problem), None).initial(),
                                       [problem.x_train[ix] for ix in problem.client_indices],
                                       [problem.y_train[ix] for ix in problem.client_indices], rounds=rounds, K=k,
                                       batch_size=b, lr=HP["lr"])
        srv.train()
    assert N_PER_CLIENT != b and len(batches) == rounds * M * k  # K forward passes per client and round ...
    assert all(len(x) == b for x in batches)  # ... of batch b ...
    for c in range(0, len(batches), k):  # ... each epoch on a new draw
        assert all((batches[c] != batches[c + j]).any() for j in range(1, k))
    assert len(srv.time) == rounds and (srv.time > 0).all()  # their per-round clock, which the benchmark reads
