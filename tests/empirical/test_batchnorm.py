"""BatchNorm in training mode with per-client running statistics (issue 15 item 3): the engine against plain
``nn.Module`` copies in train mode, evaluation in eval mode on the statistics, resume, subsets of clients, local
epochs, the sequential schedule, two gloo ranks, ``torch.compile``, the refusals and ``vgg11-bn``."""

import dataclasses
import json

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from dfltheory import cli
from dfltheory.empirical import algorithms as A
from dfltheory.empirical import data as D
from dfltheory.empirical import distributed as DI
from dfltheory.empirical import finetune
from dfltheory.empirical import runner
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.metrics import Evaluator, measure
from dfltheory.empirical.models import loss_fn, make_model
from dfltheory.empirical.rules import EPS
from dfltheory.testing.matrices import ring_matrix
from dfltheory.testing.ranks import max_diff, record_rounds, snapshot, start_rank
from tests.empirical.test_distributed import BASE
from tests.empirical.test_engine import recorded

M, B, K = 4, 6, 2
STATS = "running_stats"


@pytest.fixture(scope="module")
def data():
    full = D.load("digits", M, partition="iid", seed=1)  # 337 samples per client
    return dataclasses.replace(full, x_train=full.x_train.double(), x_test=full.x_test.double(),
                               client_indices=[ix[:n] for ix, n in zip(full.client_indices, (24, 12, 18, 24))])


def bn_net(seed=0):
    """BatchNorm2d (momentum 0.3), InstanceNorm with running statistics, BatchNorm1d, in float64."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3, momentum=0.3), nn.ReLU(),
                         nn.InstanceNorm2d(3, track_running_stats=True), nn.Flatten(), nn.Linear(108, 8),
                         nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(p=0.0), nn.Linear(8, 10)).double()


def bn_engine(data, algo="dfedavg", W=None, **kw):
    hp = {k: kw.pop(k) for k in ("rho", "participation", "beta", "lam_pen") if k in kw}
    a = A.make(algo, **hp)
    mixing = Mixing(ring_matrix(M) if W is None else W) if a.decentralized else None
    return Engine(FlatModel(bn_net(), loss_fn(data.task)), data, a, mixing, K=K, lr=0.1, lr_decay=0.9, batch_size=B,
                  seed=3, **kw)


def stats_of(module: nn.Module, names) -> torch.Tensor:
    return torch.cat([module.get_buffer(n).reshape(-1) for n in names])


def grad_of(module: nn.Module, xb, yb) -> torch.Tensor:
    loss = nn.functional.cross_entropy(module(xb), yb)
    return torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(module.parameters()))])


def oracle(engine, plans, rho=None):
    """One plain module per client in train mode: SGD (SAM: both passes are forwards of the training loop) on the
    engine's batches (slots whose indices are all < 0 skipped: local epochs), then gossip X <- W X."""
    W = torch.as_tensor(ring_matrix(M))
    clients = [bn_net().train() for _ in range(M)]
    for plan in plans:
        for i, c in enumerate(clients):
            for k in range(plan.K):
                rows = plan.idx[k, i]
                if bool((rows < 0).all()):
                    continue
                xb, yb = engine.x_train[rows], engine.y_train[rows]
                x = parameters_to_vector(c.parameters()).detach()
                g = grad_of(c, xb, yb)
                if rho is not None:
                    vector_to_parameters(x + rho * g / (g.norm() + EPS), c.parameters())
                    g = grad_of(c, xb, yb)
                vector_to_parameters(x - plan.lr * g, c.parameters())
        X = W @ torch.stack([parameters_to_vector(c.parameters()).detach() for c in clients])
        for c, x in zip(clients, X):
            vector_to_parameters(x, c.parameters())
    return clients


@pytest.mark.parametrize("algo,opts", [("dfedavg", {}), ("dfedsam", {"rho": 0.05}), ("dfedavg", {"epochs": True})],
                         ids=["dfedavg", "dfedsam", "dfedavg-epochs"])
def test_engine_equals_per_client_modules_in_train_mode(data, algo, opts):
    """Parameters and running statistics of every client after 3 rounds equal the plain modules' to 1e-10; with
    local epochs the clients take 4, 2, 3, 4 steps per epoch (masked step slots)."""
    eng = bn_engine(data, algo, **opts)
    plans = recorded(eng)
    start = eng.state[STATS].clone()
    for _ in range(3):
        eng.round()
    clients = oracle(eng, plans, opts.get("rho"))
    names = eng.model.stat_names
    X = torch.stack([parameters_to_vector(c.parameters()).detach() for c in clients])
    S = torch.stack([stats_of(c, names) for c in clients])
    assert float((eng.state["x"] - X).abs().max()) < 1e-10
    assert float((eng.state[STATS] - S).abs().max()) < 1e-10
    assert float((S - start).abs().min(1).values.min()) > 0  # every client's statistics moved...
    assert float((S[0] - S[1]).abs().max()) > 1e-3  # ...each its own
    assert not any(mod.training for mod in eng.model.module.modules())  # eval mode outside the gradient calls
    assert torch.equal(stats_of(eng.model.module, names), start[0])  # the module's own buffers untouched


def test_measurements_use_the_running_statistics_in_eval_mode(data):
    """Each client's test accuracy is its module's in eval mode; x_bar is measured on the mean statistics."""
    eng = bn_engine(data, "dfedsam", rho=0.05)
    plans = recorded(eng)
    for _ in range(2):
        eng.round()
    clients = [c.eval() for c in oracle(eng, plans, 0.05)]
    ev = Evaluator(eng.model, data)
    x_test, y_test = ev.x_test, ev.y_test

    def accuracy(module):
        with torch.no_grad():
            return float((module(x_test).argmax(-1) == y_test).double().mean())

    local = ev.test_many(eng.state["x"], eng.state[STATS])
    assert local.tolist() == pytest.approx([accuracy(c) for c in clients], abs=1e-12)
    mean = bn_net().eval()
    vector_to_parameters(eng.x_bar(), mean.parameters())
    for n, s in zip(eng.model.stat_names, eng.state[STATS].mean(0).split(eng.model.stat_numels)):
        mean.get_buffer(n).copy_(s.view_as(mean.get_buffer(n)))
    rec = measure(eng, ev)
    assert rec["test_acc"] == pytest.approx(accuracy(mean), abs=1e-12)
    assert rec["local_test_acc_mean"] == pytest.approx(float(local.mean()), abs=1e-12)
    with torch.no_grad():
        f = sum(float(nn.functional.cross_entropy(mean(data.client_data(i)[0]), data.client_data(i)[1]))
                for i in range(M)) / M
    assert rec["train_loss"] == pytest.approx(f, rel=1e-10)
    assert accuracy(bn_net().eval()) != pytest.approx(rec["test_acc"])  # not the initial statistics


def test_resume_is_bit_exact_and_inactive_clients_keep_their_statistics(data, tmp_path):
    straight = bn_engine(data, "dfedsam", rho=0.05)
    for _ in range(3):
        straight.round()
    first = bn_engine(data, "dfedsam", rho=0.05)
    first.round()
    torch.save(first.state_dict(), tmp_path / "ckpt.pt")
    resumed = bn_engine(data, "dfedsam", rho=0.05)
    resumed.load_state_dict(torch.load(tmp_path / "ckpt.pt", weights_only=False))
    for _ in range(2):
        resumed.round()
    assert all(torch.equal(resumed.state[k], v) for k, v in straight.state.items())

    eng = bn_engine(data, "fedavg", participation=0.5)
    plans = recorded(eng)
    for _ in range(2):
        before = eng.state[STATS].clone()
        eng.round()
        active = plans[-1].active
        inactive = torch.tensor([i for i in range(M) if i not in active.tolist()])
        assert len(active) == 2 and torch.equal(eng.state[STATS][inactive], before[inactive])
        assert bool((eng.state[STATS][active] != before[active]).any(1).all())


def test_sequential_schedule_keeps_each_clients_statistics(data):
    """DFedCata with beta = lam_pen = 0 and W = I trains each client alone, whether in the sequential schedule
    (one client at a time, plain autograd) or the synchronous one (DFedAvg): the same statistics."""
    I = np.eye(M)
    seq = bn_engine(data, "dfedcata", W=I, beta=0.0, lam_pen=0.0, sequential=True)
    sync = bn_engine(data, "dfedavg", W=I)
    for _ in range(2):
        seq.round()
        sync.round()
    assert float((seq.state[STATS] - sync.state[STATS]).abs().max()) < 1e-12
    assert float((seq.state[STATS] - seq.model.initial_stats()).abs().min(1).values.min()) > 0  # all trained
    assert float((seq.state["x"] - sync.state["x"]).abs().max()) < 1e-12


def bn_run_engine(case, **kw) -> Engine:
    """The engine runner.build makes for ``case`` with a BatchNorm MLP in float64."""
    cfg = {**BASE, "algo": case, **({"topology": "neighbour-selection", "topology_params": "k=2"}
                                   if case == "dfedsgpsm-s" else {})}
    e, _ = runner.build(cfg)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, e.data.num_classes)).double()
    return Engine(FlatModel(net, loss_fn(e.data.task)), e.data, e.algo, e.mixing, K=cfg["K"], lr=cfg["lr"],
                  batch_size=cfg["batch_size"], seed=cfg["seed"], **kw)


CASES = ("dfedavg", "dfedsgpsm-s")  # DFedSGPSM-S draws its graph from the losses: evaluated on the statistics


def bn_trajectories(rank, world, port, path):
    start_rank(rank, world, port)
    out = {case: record_rounds(DI.DistributedEngine(bn_run_engine(case)), 2, rank) for case in CASES}
    if rank == 0:
        torch.save(out, path)
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()


def test_two_ranks_give_the_single_process_statistics(tmp_path):
    path = tmp_path / "traj.pt"
    mp.spawn(bn_trajectories, args=(2, DI.free_port(), str(path)), nprocs=2)
    runs = torch.load(path, weights_only=False)
    for case in CASES:
        e = bn_run_engine(case)
        start = e.state[STATS].clone()
        for step in runs[case]:
            e.round()
            assert max_diff(snapshot(e), step) <= 1e-12, case
        assert float((e.state[STATS] - start).abs().max()) > 1e-3, case


def test_compiled_steps_train_the_statistics():
    """``compile=True`` with BatchNorm (SAM: two gradient calls per step) gives the uncompiled trajectory."""
    plain = bn_run_engine("dfedsam")
    try:
        compiled = bn_run_engine("dfedsam", compile=True)
    except ValueError as err:  # no C++ compiler here: the engine's own refusal
        pytest.skip(str(err))
    for _ in range(2):
        plain.round()
        compiled.round()
    for k, v in plain.state.items():
        assert float((compiled.state[k] - v).abs().max()) < 1e-10, k
    assert not any(mod.training for mod in compiled.model.module.modules())


def test_refusals_name_the_fix(data):
    def engine(**kw):
        return Engine(FlatModel(bn_net(), loss_fn("classification")), data, A.make("dfedavg"), Mixing(ring_matrix(M)),
                      K=1, lr=0.1, **kw)

    with pytest.raises(ValueError, match=r"BatchNorm1d, BatchNorm2d layers take statistics over each batch, and with "
                                         r"local epochs and --batch-size 5 a client whose sample count is not a "
                                         r"multiple of 5 \(sizes \[12, 18, 24\]\).*divides every client's sample "
                                         r"count \(their gcd is 6\)"):
        engine(batch_size=5, epochs=True)
    engine(batch_size=6, epochs=True)  # 6 divides 12, 18 and 24: no padded batch
    with pytest.raises(ValueError, match=r"--batch-size 1 gives batches of 1 sample.*at least 2 samples"):
        engine(batch_size=1)
    with pytest.raises(ValueError, match=r"BatchNorm1d layers have track_running_stats=False.*set "
                                         r"track_running_stats=True"):
        FlatModel(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3, track_running_stats=False)),
                  loss_fn("classification"))
    for module, shown in [(nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)), r"Dropout\(p=0.5\)"),
                          (nn.LSTM(3, 3, num_layers=2, dropout=0.2), r"LSTM\(dropout=0.2\)")]:
        with pytest.raises(ValueError, match=shown + r": the engine runs the module in eval mode.*set it to 0"):
            FlatModel(module, loss_fn("classification"))
    with pytest.raises(ValueError, match=r"BatchNorm1d layers have momentum=None.*set their momentum"):
        FlatModel(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3, momentum=None)), loss_fn("classification"))
    eng = bn_engine(data)
    with pytest.raises(ValueError, match="fine-tuning and the personal accuracy keep no per-client running statistics"):
        finetune.finetune(eng, 1)
    with pytest.raises(ValueError, match="GroupNorm"):
        finetune.personal_accuracy(Evaluator(eng.model, data), eng.state["x"])
    plain = FlatModel(nn.Sequential(nn.Linear(3, 3), nn.InstanceNorm1d(3), nn.Dropout(0.0)), loss_fn("regression"))
    assert plain.n_stats == 0 and plain.initial_stats() is None  # no running statistics: nothing to keep


def test_vgg11_bn_trains_one_round_from_the_command_line(tmp_path, capsys):
    model = make_model("vgg11-bn", (3, 32, 32), 10)
    norms = [mod for mod in model.modules() if isinstance(mod, (nn.BatchNorm2d, nn.GroupNorm))]
    assert len(norms) == 8 and all(isinstance(mod, nn.BatchNorm2d) for mod in norms)
    assert [p.shape for p in model.parameters()] == [p.shape for p in make_model("vgg11", (3, 32, 32), 10).parameters()]
    out = tmp_path / "run"
    rc = cli.main(["train", "--algo", "dfedsam", "--dataset", "cifar10", "--model", "vgg11-bn", "--clients", "3",
                   "--topology", "ring", "--rounds", "1", "--K", "1", "--batch-size", "4", "--data-params",
                   "fake=true,train_size=12,test_size=4", "--out", str(out), "--no-progress", "--threads", "1"])
    assert rc == 0, capsys.readouterr().err
    recs = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["round"] for r in recs] == [0, 1] and all(r["finite"] for r in recs)
    stats = torch.load(out / "checkpoint.pt", weights_only=False)["state"][STATS]
    assert stats.shape == (3, 2 * (64 + 128 + 2 * 256 + 4 * 512))
    assert float((stats[0] - stats[1]).abs().max()) > 0  # per client
