"""The papers' recipes (``train --recipe``) and local epochs over each client's shuffled data (``--epochs``).

The epoch masks are checked against a per-client Python loop (float64) that takes client i's batches one after
another, exactly ceil(n_i / b) per epoch as ``DataLoader(shuffle=True, batch_size=b)`` gives them; every recipe
builds its model and data set (fake images of the right shapes, nothing downloaded) and trains one round.
"""

import json
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dfltheory import cli
from dfltheory.empirical import algorithms as A
from dfltheory.empirical import communication as C
from dfltheory.empirical import data as D
from dfltheory.empirical import recipes
from dfltheory.empirical.engine import EpochSampler, Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn, make_model
from dfltheory.empirical.rules import EPS
from dfltheory.empirical.runner import build
from dfltheory.testing.matrices import ring_matrix as ring

SIZES = (5, 9, 3, 12)  # batch 4: 2, 3, 1, 3 steps per epoch
B = 4


def tiny_data(sizes=SIZES, dim=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = sum(sizes)
    cuts = np.cumsum((0, *sizes))
    return D.FederatedData(torch.randn(n, dim, generator=g, dtype=torch.float64),
                           torch.randint(0, classes, (n,), generator=g), torch.randn(8, dim, dtype=torch.float64),
                           torch.randint(0, classes, (8,)), [torch.arange(a, b) for a, b in zip(cuts, cuts[1:])],
                           classes, (dim,), "tiny")


def tiny_net(data, seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(data.input_shape[0], 5), nn.Tanh(), nn.Linear(5, data.num_classes)).double()


def client_batches(idx, i):
    """Client i's batches in order: the entries >= 0 of every slot that has any."""
    col = idx[:, i]
    return [row[row >= 0] for row in col if (row >= 0).any()]


# ----------------------------------------------------------------------------------------------- the sampler
@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 11), min_size=1, max_size=5), b=st.integers(1, 6), epochs=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_every_epoch_is_one_shuffled_pass_in_dataloader_batches(sizes, b, epochs, seed):
    cuts = np.cumsum((0, *sizes))
    pools = [torch.arange(a, c) for a, c in zip(cuts, cuts[1:])]
    s = EpochSampler(pools, b, epochs)
    idx = s.draw(epochs * s.unit, torch.Generator().manual_seed(seed))
    assert idx.shape == (epochs * s.unit, len(sizes), min(b, max(sizes)))
    for i, n in enumerate(sizes):
        loader = torch.utils.data.DataLoader(range(n), batch_size=b)  # the authors' code's batches
        assert int(s.steps[i]) == len(loader) == math.ceil(n / b)
        batches = client_batches(idx, i)
        assert len(batches) == epochs * len(loader)
        assert [len(x) for x in batches] == [len(x) for x in loader] * epochs
        for e in range(epochs):  # each epoch: the client's samples, each once
            seen = torch.cat(batches[e * len(loader) : (e + 1) * len(loader)])
            assert sorted(seen.tolist()) == pools[i].tolist()
        assert (idx[:, i] < 0).logical_or(idx[:, i] >= cuts[i]).all() and (idx[:, i] < cuts[i + 1]).all()


def test_epoch_order_is_random_and_full_batches_need_no_equal_sizes():
    pools = [torch.arange(0, 30), torch.arange(30, 35)]
    s = EpochSampler(pools, 30, 2)
    idx = s.draw(2 * s.unit, torch.Generator().manual_seed(0))
    first, second = client_batches(idx, 0)
    assert first.tolist() != second.tolist() and sorted(first.tolist()) == sorted(second.tolist())
    full = EpochSampler(pools, None, 1)  # one batch of the whole local data set per epoch
    assert full.unit == 1 and [len(x) for x in client_batches(full.draw(1, torch.Generator()), 1)] == [5]


# ----------------------------------------------------------------------------------- the engine vs a loop
def oracle_local(name, module, data, start, batches, lr, hp, state, personal=None, units=(0, 0)):
    """One client's local phase, step by step on its own batches (mean loss of each real batch)."""
    params = list(module.parameters())

    def grad(x, ix):
        nn.utils.vector_to_parameters(x, params)
        g = torch.autograd.grad(loss_fn("classification")(module(data.x_train[ix]), data.y_train[ix]), params)
        return torch.cat([t.reshape(-1) for t in g])

    y, v, wd = start.clone(), torch.zeros_like(start), hp.get("weight_decay", 0.0)
    for k, ix in enumerate(batches):
        g = grad(y, ix)
        if name == "dfedsam":
            g = grad(y + hp["rho"] * g / (g.norm() + EPS), ix)
        if name == "dfedavgm":
            v = hp["momentum"] * v + g
            g = v
        elif name == "dfedadmm":
            g = g - state["dual"] + (y - start) / hp["lam_pen"]
        elif name == "scaffold":
            g = g - state["c_local"] + state["c_global"]
        g = g + wd * y
        if name == "dfedpgp":  # the first K_v epochs (units[0] of the client's batches) move v only
            g = torch.where(personal, g, 0.0) if k < units[0] else torch.where(personal, 0.0, g)
        y = y - lr * g
    out = {"x": y}
    if name == "dfedadmm":
        out["dual"] = state["dual"] - (y - start) / hp["lam_pen"]
        out["x"] = y - hp["lam_pen"] * state["dual"]
    if name == "scaffold":
        steps = len(batches)
        out["c_local"] = state["c_local"] - state["c_global"] + (start - y) / (steps * lr)
    return out


ALGOS = [("dfedavgm", {"momentum": 0.9, "weight_decay": 0.01}), ("dfedsam", {"rho": 0.05}),
         ("dfedadmm", {"lam_pen": 0.5}), ("scaffold", {"participation": 1.0}), ("dfedpgp", {"K_v": 1})]


@pytest.mark.parametrize("name,hp", ALGOS, ids=[a for a, _ in ALGOS])
def test_local_epochs_equal_a_per_client_loop(name, hp):
    data = tiny_data()
    module = tiny_net(data)
    algo = A.make(name, **hp)
    K, lr = 2, 0.3
    engine = Engine(FlatModel(module, loss_fn("classification")), data, algo,
                    C.Mixing(ring(len(SIZES))) if algo.decentralized else None, K=K, lr=lr, batch_size=B, epochs=True)
    g = torch.Generator().manual_seed(1)
    state = {k: v + 0.1 * torch.randn(v.shape, generator=g, dtype=v.dtype) if k != "ps_weight" else v
             for k, v in engine.state.items()}  # distinct clients, non-zero dual / control variates
    idx = engine.plan(0).idx
    out = engine.local_phase(state, idx, lr)
    units = (hp.get("K_v", 0), K)
    assert engine.K == sum(units) * 3 and engine.local_steps.tolist() == [sum(units) * math.ceil(n / B) for n in SIZES]
    personal = ~engine.shared if engine.shared is not None else None
    for i, n in enumerate(SIZES):
        batches = client_batches(idx, i)
        assert len(batches) == sum(units) * math.ceil(n / B)  # exactly ceil(n_i / b) steps per epoch
        row = {k: v[i] for k, v in state.items()}
        ref = oracle_local(name, module, data, row["x"], batches, lr, hp, row, personal,
                           (units[0] * math.ceil(n / B), 0))
        for key, value in ref.items():
            torch.testing.assert_close(out[key][i], value, rtol=0, atol=1e-12)


def test_rounds_with_local_epochs_equal_the_loop_with_gossip():
    data = tiny_data()
    module = tiny_net(data)
    hp = {"momentum": 0.9, "weight_decay": 0.01}
    engine = Engine(FlatModel(module, loss_fn("classification")), data, A.make("dfedavgm", **hp),
                    C.Mixing(ring(len(SIZES))), K=2, lr=0.2, lr_decay=0.9, batch_size=B, seed=3, epochs=True)
    W = torch.tensor(ring(len(SIZES)))
    X = engine.state["x"].clone()
    for t in range(3):
        gen = torch.Generator()
        gen.set_state(engine.generator.get_state())
        idx = engine.sampler.draw(engine.K, gen)
        engine.round()
        Z = torch.stack([oracle_local("dfedavgm", module, data, X[i], client_batches(idx, i), 0.2 * 0.9**t, hp,
                                      {})["x"] for i in range(len(SIZES))])
        X = torch.stack([sum(W[i, j] * Z[j] for j in range(len(SIZES))) for i in range(len(SIZES))])
        torch.testing.assert_close(engine.state["x"], X, rtol=0, atol=1e-12)


def test_forced_single_step_algorithms_take_one_epoch():
    """D-PSGD and SGP force K = 1: with --epochs that is the papers' one epoch (dfedsam.md, dfedsgpsm.md §8)."""
    data = tiny_data()
    for name in ("dpsgd", "sgp"):
        engine = Engine(FlatModel(tiny_net(data), loss_fn("classification")), data, A.make(name),
                        C.Mixing(ring(len(SIZES))), K=5, lr=0.1, batch_size=B, epochs=True)  # doubly stochastic
        assert engine.local_steps.tolist() == [math.ceil(n / B) for n in SIZES]


def test_last_batch_is_each_clients_last_real_batch():
    data = tiny_data()
    engine = Engine(FlatModel(tiny_net(data), loss_fn("classification")), data, A.make("dfedavg"),
                    C.Mixing(ring(len(SIZES))), K=1, lr=0.1, batch_size=B, epochs=True)
    idx = engine.plan(0).idx
    rows, w = engine.last_batch(idx)
    for i in range(len(SIZES)):
        last = client_batches(idx, i)[-1]
        assert rows[i][w[i] > 0].tolist() == last.tolist()
        torch.testing.assert_close(w[i].sum(), torch.tensor(1.0, dtype=w.dtype))
    # the weighted loss of a padded batch is the mean loss of its real samples
    X = engine.state["x"]
    loss = engine.model.batched_loss(X, engine.x_train[rows], engine.y_train[rows], w)
    for i in range(len(SIZES)):
        ix = client_batches(idx, i)[-1]
        torch.testing.assert_close(loss[i], engine.model.loss_at(X[i], data.x_train[ix], data.y_train[ix]))


def test_batchnorm_running_statistics_are_one_flat_vector():
    """BatchNorm is trained with per-client running statistics (tests/empirical/test_batchnorm.py)."""
    model = FlatModel(nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)), loss_fn("classification"))
    assert model.stat_names == ["1.running_mean", "1.running_var"] and model.n_stats == 4


# ------------------------------------------------------------------------------------------------ recipes
def _small(name):
    """Recipe ``name`` on 2 clients and 8 fake images (its topology's k lowered to fit 2 clients)."""
    params = recipes.get(name).options.get("topology_params")
    return {"recipe": name, "n": 2, "topology_params": re.sub(r"k=\d+", "k=1", params) if params else "k=1",
            "data_params": {"fake": True, "train_size": 8, "test_size": 2}, "seed": 0}


SHAPES = {"mnist": (1, 28, 28), "cifar10": (3, 32, 32), "cifar100": (3, 32, 32)}


@pytest.mark.parametrize("name", recipes.NAMES)
def test_every_recipe_builds_and_trains_one_round_on_fake_data(name):
    torch.manual_seed(0)
    options = recipes.get(name).options
    engine, _ = build(_small(name))
    assert engine.algo.name == options["algo"] and engine.epochs and engine.lr_decay == options["lr_decay"]
    assert engine.data.input_shape == SHAPES[options["dataset"]]
    classes = 100 if options["dataset"] == "cifar100" else 10
    reference = make_model(options["model"], SHAPES[options["dataset"]], classes)
    assert engine.model.dim == sum(p.numel() for p in reference.parameters())
    x0 = engine.state["x"].clone()
    engine.round()
    assert engine.t == 1 and torch.isfinite(engine.state["x"]).all() and not torch.equal(engine.state["x"], x0)
    assert engine.local_steps.tolist() == [(options["K"] + options.get("K_v", 0)) * math.ceil(n / 128)
                                           for n in engine.data.client_sizes.tolist()]


def test_options_given_override_the_recipe():
    cfg = recipes.resolve({"recipe": "dfedsam-cifar10", "lr": 0.05, "n": 4, "epochs": False, "model": None})
    assert (cfg["lr"], cfg["n"], cfg["epochs"]) == (0.05, 4, False)
    assert (cfg["rho"], cfg["rounds"], cfg["model"], cfg["lr_decay"], cfg["K"]) == (0.01, 1000, "vgg11", 0.998, 5)
    assert recipes.resolve({"lr": None})["lr"] == recipes.DEFAULTS["lr"]  # no recipe: the command's defaults


def test_recipe_from_the_command_line_with_overrides_and_resume(tmp_path, capsys):
    def train(out, rounds, *extra):
        return cli.main(["train", "--recipe", "dfedsgpsm-mnist", "--clients", "11", "--rounds", str(rounds), "--lr",
                         "0.05", "--momentum", "0.5", "--data-params", "fake=true,train_size=110,test_size=22",
                         "--out", str(tmp_path / out), "--no-progress", "--no-local-eval", "--threads", "1", *extra])

    assert train("run", 1) == 0, capsys.readouterr().err
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (cfg["recipe"], cfg["algo"], cfg["model"]) == ("dfedsgpsm-mnist", "dfedsgpsm", "mlp")
    assert (cfg["n"], cfg["lr"], cfg["momentum"], cfg["rounds"]) == (11, 0.05, 0.5, 1)  # given
    assert (cfg["rho"], cfg["batch_size"], cfg["epochs"], cfg["lr_decay"]) == (0.1, 128, True, 0.998)  # the recipe's
    assert cfg["topology"] == "random" and cfg["weights"] == "push-sum"
    assert train("run", 2, "--resume") == 0  # the same options resolve to the same config; epochs resume exactly
    assert train("straight", 2) == 0
    lines = [(tmp_path / d / "metrics.jsonl").read_text() for d in ("run", "straight")]
    assert lines[0] == lines[1] and len(lines[0].splitlines()) == 3


def test_unknown_recipe_is_a_clear_error_and_list_shows_them(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"unknown recipe 'dfedsam-cifar'; valid recipes: dfedsam-cifar10, "):
        recipes.get("dfedsam-cifar")
    with pytest.raises(ValueError, match="unknown recipe"):
        build({"recipe": "nope", "data_params": {}})
    assert cli.main(["train", "--recipe", "nope", "--out", str(tmp_path / "r")]) == 2
    assert "unknown recipe 'nope'" in capsys.readouterr().err and not (tmp_path / "r").exists()
    assert cli.main(["train", "--recipe", "list"]) == 0
    shown = capsys.readouterr().out
    assert all(name in shown for name in recipes.NAMES) and "--epochs --batch-size 128" in shown
    assert cli.main(["train", "--out", str(tmp_path / "s")]) == 2
    assert "give --algo ALGO or --recipe NAME" in capsys.readouterr().err


def test_loss_selected_push_sum_with_epochs_splits_over_processes(tmp_path):
    """DFedSGPSM-S takes each client's losses on its last local batch, which with epochs sits in a per-client slot
    with padding: two gloo ranks read it as one process does (Engine.last_batch) and give its metrics."""
    import json

    args = ["train", "--algo", "dfedsgpsm-s", "--topology", "neighbour-selection", "--topology-params", "k=2",
            "--epochs", "--K", "1", "--batch-size", "8", "--dataset", "synthetic-logistic", "--clients", "6",
            "--partition", "dirichlet", "--alpha", "0.3", "--rounds", "2", "--no-progress", "--threads", "1", "--out"]
    assert cli.main([*args, str(tmp_path / "one")]) == 0
    assert cli.main([*args, str(tmp_path / "two"), "--nproc", "2"]) == 0
    rows = [[json.loads(ln) for ln in (tmp_path / d / "metrics.jsonl").read_text().splitlines()] for d in ("one", "two")]
    assert [r["round"] for r in rows[0]] == [r["round"] for r in rows[1]]
    for a, b in zip(*rows):
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6), (a["round"], key)


def test_topology_options_given_with_a_recipe_merge_with_or_replace_its_parameters():
    def resolved(**cfg):
        return recipes.resolve({"recipe": "dfedpgp-cifar10", **cfg})

    assert resolved()["topology_params"] == "k=10,direction=in"
    assert resolved(topology_params="k=2")["topology_params"] == "k=2,direction=in"  # not silently out-neighbours
    assert resolved(topology_params="direction=out")["topology_params"] == "k=10,direction=out"
    assert resolved(topology="ring")["topology_params"] is None  # another topology: the recipe's k does not apply
    assert resolved(topology="ring", topology_params="")["topology_params"] == ""
    assert resolved(topology="random", topology_params="k=3")["topology_params"] == "k=3,direction=in"
