"""The algorithm table derived from the step programs (dfltheory.empirical.program_rules) against the hand-written
rules it replaced (the oracle dfltheory.testing.handwritten): the table's round equals the hand-written round of the
same algorithm, to 1e-12 in float64, on the same data, minibatches and mixing, for every algorithm derived from a
program; a different program gives a different round (the comparison has teeth)."""

import numpy as np
import pytest
import torch
from torch import nn

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import communication as C
from dfltheory.empirical import data as D
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn
from dfltheory.empirical.program_rules import ProgramComm, ProgramRule, algorithm
from dfltheory.program import PROGRAMS
from dfltheory.testing import handwritten
from dfltheory.topology import build as build_topology
from dfltheory.testing.matrices import RandomPermutationTopology, RandomPushSumTopology
from dfltheory.testing.matrices import ring_matrix as ring

M = 6


@pytest.fixture(scope="module")
def data():
    return D.load("digits", M, partition="dirichlet", alpha=0.5, seed=1)


def net(data):
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(data.input_shape)), 8), nn.Tanh(),
                         nn.Linear(8, data.num_classes)).double()


def engine(data, algo, topology=None, K=3):
    mixing = C.Mixing(topology(M) if topology else ring(M))
    return Engine(FlatModel(net(data), loss_fn(data.task)), data, algo, mixing, K=K, lr=0.05, lr_decay=0.9,
                  batch_size=5, seed=0)


#: (algorithm of the table, its options, topology): every algorithm of ``algorithms.names()`` derived from a program,
#: against its hand-written oracle (dfltheory.testing.handwritten); options off the defaults, extras included
CASES = [
    ("dpsgd", {}, None),
    ("dpsgd", {"weight_decay": 0.01, "clip": 0.5}, None),
    ("dpsgd-atc", {}, None),
    ("dfedavg", {}, None),
    ("dfedavg", {}, RandomPermutationTopology),
    ("dfedavgm", {"momentum": 0.5}, None),
    ("dfedsam", {"rho": 0.05}, None),
    ("dfedsam-mgs", {"rho": 0.05, "Q": 3}, None),
    ("dfedsam-mgs", {"rho": 0.05, "Q": 3, "fresh_gossip": True}, RandomPermutationTopology),
    ("dfedadmm", {"lam_pen": 0.1}, None),
    ("dfedadmm", {"lam_pen": 0.2, "weight_decay": 0.01, "clip": 0.5}, None),
    ("dfedadmm-sam", {"lam_pen": 0.1, "rho": 0.1}, None),
    ("sgp", {}, RandomPushSumTopology),
    ("dfedsgpsm", {"rho": 0.1, "momentum": 0.9}, RandomPushSumTopology),
    ("dfedsgpsm", {"rho": 0.0, "momentum": 0.5, "weight_decay": 0.01}, RandomPushSumTopology),
    ("dfedsgpsm-s", {"rho": 0.1, "momentum": 0.9}, lambda m: build_topology("neighbour-selection", m,
                                                                            weights="push-sum", seed=0, k=2)),
    ("dfedpgp", {}, RandomPushSumTopology),
    ("dfedpgp", {"K_v": 2, "momentum": 0.9, "lr_v": 0.02, "weight_decay": 0.01, "clip": 0.5}, RandomPushSumTopology),
    ("dfedpgp-pull", {"momentum": 0.5}, None),
    ("fedavg", {"participation": 0.5}, None),
    ("fedavg", {"participation": 1.0, "server_weights": np.arange(1.0, M + 1)}, None),
    ("fedprox", {"mu": 0.1, "participation": 0.5, "clip": 0.5}, None),
    ("fedsam", {"rho": 0.05, "participation": 0.5}, None),
    ("scaffold", {"participation": 0.5}, None),
    ("scaffold", {"participation": 1.0, "weight_decay": 0.01}, None),
    ("dfedcata", {}, None),
    ("dfedcata", {"mode": "B"}, None),
    ("dfedcata", {"mode": "A", "lam_pen": 0.1, "beta": 0.5, "clip": 0.5, "weight_decay": 0.01}, None),
    ("dfedcata", {"mode": "B", "lam_pen": 0.1, "beta": 0.5, "clip": 0.5, "weight_decay": 0.01}, None),
    ("dfedcata", {"mode": "A", "lam_pen": 0.0, "beta": 0.0}, None),
]


def _same_state(derived, oracle):
    """Every entry of the oracle's state, and the aggregates the program keeps as slots (the hand-written rule keeps
    them in its own state, cstate: a, its mean, the previous mean), bit for bit."""
    assert set(oracle.state) <= set(derived.state)
    for key in oracle.state:
        assert torch.equal(derived.state[key], oracle.state[key]), key
    if "agg" in oracle.cstate:
        assert torch.equal(derived.state["agg"], oracle.cstate["agg"])
        assert torch.equal(derived.state["agg"].mean(0), oracle.cstate["agg_mean"])


def _same_algorithm_fields(derived, oracle):
    """The table's algorithm keeps the hand-written one's fields: what the engine, the CLI and the cache keys read."""
    for field in ("name", "K", "params", "participation", "decentralized", "stochastic", "K_v", "topology", "unused",
                  "hyper"):
        assert getattr(derived, field) == getattr(oracle, field), field
    assert (derived.aux is None) == (oracle.aux is None)


@pytest.mark.parametrize("name,hp,topology", CASES,
                         ids=[f"{c[0]}-{i}{'-tv' if c[2] else ''}" for i, c in enumerate(CASES)])
def test_the_tables_derived_round_is_the_hand_written_round(data, name, hp, topology):
    derived_algo, oracle_algo = A.make(name, **hp), handwritten.make(name, **hp)
    assert isinstance(derived_algo.local, ProgramRule)
    assert isinstance(derived_algo.comm, ProgramComm)
    _same_algorithm_fields(derived_algo, oracle_algo)
    derived, oracle = engine(data, derived_algo, topology), engine(data, oracle_algo, topology)
    x0 = oracle.state["x"].clone()
    assert derived.K == oracle.K and set(derived.state) - set(oracle.state) <= {"agg", "agg_prev"}
    for _ in range(3):
        derived.round()
        oracle.round()
        assert derived.sent == oracle.sent
    err = (derived.state["x"] - oracle.state["x"]).abs().max().item()
    assert err < 1e-12, err
    assert torch.equal(derived.state["x"], oracle.state["x"])  # the same operations in the same order: bit for bit
    assert (oracle.state["x"] - x0).abs().max() > 1e-3  # the models moved
    _same_state(derived, oracle)
    assert torch.equal(derived.x_bar(), oracle.x_bar())
    ours, theirs = derived.aux_points(), oracle.aux_points()
    assert set(ours) == set(theirs)
    for key in theirs:
        assert torch.equal(ours[key], theirs[key]), key


@pytest.mark.parametrize("hp", [{"mode": "A"}, {"mode": "B"},
                                {"mode": "A", "lam_pen": 0.1, "beta": 0.5, "clip": 0.5, "weight_decay": 0.01},
                                {"mode": "B", "lam_pen": 0.1, "beta": 0.5, "clip": 0.5, "weight_decay": 0.01}],
                         ids=["A", "B", "A-clip-decay", "B-clip-decay"])
def test_dfedcatas_sequential_round_from_its_program_is_the_hand_written_one(data, hp):
    """The public code's in-place schedule (client c aggregates the models clients < c trained this round), which
    the program declares (Program.sequential; the interpreter's ProgramComm.sequential_row): bit for bit over 3
    rounds, the aggregates, the measured average (the trained models' mean) and the point p included."""
    derived_algo, oracle_algo = A.make("dfedcata", **hp), handwritten.make("dfedcata", **hp)
    assert isinstance(derived_algo.comm, ProgramComm) and derived_algo.comm.sequential
    mixing = lambda: C.Mixing(ring(M))  # noqa: E731
    derived, oracle = (Engine(FlatModel(net(data), loss_fn(data.task)), data, algo, mixing(), K=3, lr=0.05,
                              lr_decay=0.9, batch_size=5, seed=0, sequential=True)
                       for algo in (derived_algo, oracle_algo))
    x0 = oracle.state["x"].clone()
    for _ in range(3):
        derived.round()
        oracle.round()
        assert derived.sent == oracle.sent
    assert (oracle.state["x"] - x0).abs().max() > 1e-3
    _same_state(derived, oracle)
    assert torch.equal(derived.x_bar(), oracle.x_bar())
    assert torch.equal(derived.aux_points()["p"], oracle.aux_points()["p"])
    sync = engine(data, A.make("dfedcata", **hp))
    for _ in range(3):
        sync.round()
    assert (sync.state["x"] - derived.state["x"]).abs().max() > 1e-4  # the schedules differ: the test has teeth


def test_a_sequential_schedule_is_refused_where_the_program_declares_none(data):
    with pytest.raises(ValueError, match="sequential"):
        Engine(FlatModel(net(data), loss_fn(data.task)), data, A.make("dfedavg"), C.Mixing(ring(M)), K=2, lr=0.1,
               sequential=True)


def test_every_algorithm_derived_from_a_program_is_compared():
    """Every algorithm of the table whose rules are a program's has its equality case and its oracle; every
    oracle is of such an algorithm."""
    derived = {n for n in A.names() if isinstance(A.make(n).local, ProgramRule)}
    assert derived == {c[0] for c in CASES} == set(handwritten.ORACLES)


def test_the_derived_admm_point_is_real_and_absent_where_gamma_is_zero():
    """w^t's coefficient (1 - gamma)/gamma, gamma = 1 - (1 - eta/lam)^K: at lam < eta with a mean step count K (local
    epochs) K is rounded (a real power), and at eta = 0 (gamma = 0) there is no w^t, as the hand-written aux."""
    ours, theirs = A.make("dfedadmm", lam_pen=0.05).aux, handwritten.admm_aux(0.05)
    one, zero = torch.ones(3), torch.zeros(3)
    for lr, K in ((0.1, 7.3), (0.01, 2.5), (0.05, 3)):
        assert torch.allclose(ours(one, zero, {}, lr, K)["w"], theirs(one, zero, {}, lr, K)["w"])
    assert ours(one, zero, {}, 0.0, 3) == theirs(one, zero, {}, 0.0, 3) == {}


def test_a_program_with_a_different_step_gives_a_different_round(data):
    """The comparison has teeth: DFedAvgM's momentum moves the models elsewhere than DFedAvg."""
    a = engine(data, algorithm(PROGRAMS["dfedavg"]))
    b = engine(data, algorithm(PROGRAMS["dfedavgm"], {"alpha": 0.5}))
    a.round()
    b.round()
    assert (a.state["x"] - b.state["x"]).abs().max() > 1e-4


@pytest.mark.parametrize("name,hp,named", [("dfedadmm", {"lam_pen": 0.0}, r"lam_pen \(--lam-pen\)"), ("dfedsam-mgs", {"Q": 0}, "Q"),
                                           ("dfedsgpsm", {"momentum": 1.0}, "momentum"), ("fedprox", {"mu": -1}, "mu"),
                                           ("dfedpgp", {"lr_v": 0.0}, "lr_v"), ("fedsam", {"rho": -0.1}, "rho")])
def test_a_hyper_parameter_out_of_its_range_is_refused_by_name(name, hp, named):
    """The program takes any number (a penalty of 0 divides by 0): the table refuses what the hand-written rules
    refused, naming the hyper-parameter and its range."""
    with pytest.raises(ValueError, match=f"^{named} must be a finite number"):
        A.make(name, **hp)
