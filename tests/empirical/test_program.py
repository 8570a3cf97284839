"""The torch interpreter of the step programs (dfltheory.empirical.program_rules) against today's engine rules: the
derived round equals the engine's round of the same algorithm, to 1e-12 in float64, on the same data, minibatches and
mixing; a plugin's program trains through the public API."""

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
from dfltheory.empirical.program_rules import algorithm
from dfltheory.program import PROGRAMS
from dfltheory.program.library import BUILT_IN
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


#: engine algorithm (its options) -> the program and its hyper-parameters (the engine's defaults, renamed)
CASES = [
    ("dpsgd", {}, "dpsgd", {}, None),
    ("dpsgd-atc", {}, "dpsgd-atc", {}, None),
    ("dfedavg", {}, "dfedavg", {}, None),
    ("dfedavg", {}, "dfedavg", {}, RandomPermutationTopology),
    ("dfedavgm", {"momentum": 0.9}, "dfedavgm", {"alpha": 0.9}, None),
    ("dfedsam", {"rho": 0.05}, "dfedsam", {"rho": 0.05}, None),
    ("dfedsam-mgs", {"rho": 0.05, "Q": 3}, "dfedsam", {"rho": 0.05, "Q": 3}, None),
    ("dfedsam-mgs", {"rho": 0.05, "Q": 3, "fresh_gossip": True}, "dfedsam", {"rho": 0.05, "Q": 3, "fresh": True},
     RandomPermutationTopology),
    ("dfedadmm", {"lam": 0.1}, "dfedadmm", {"lam_pen": 0.1}, None),
    ("dfedadmm-sam", {"lam": 0.1, "rho": 0.1}, "dfedadmm-sam", {"lam_pen": 0.1, "rho": 0.1}, None),
    ("dfedcata", {"mode": "A", "lam_pen": 0.05, "beta": 0.9}, "dfedcata-a", {"lam_pen": 0.05, "beta": 0.9}, None),
    ("dfedcata", {"mode": "B", "lam_pen": 0.05, "beta": 0.9}, "dfedcata-b", {"lam_pen": 0.05, "beta": 0.9}, None),
    ("sgp", {}, "sgp", {}, RandomPushSumTopology),
    ("dfedsgpsm", {"rho": 0.1, "momentum": 0.9}, "dfedsgpsm", {"rho": 0.1, "alpha": 0.9}, RandomPushSumTopology),
    ("dfedsgpsm", {"rho": 0.0, "momentum": 0.5}, "dfedsgpm", {"alpha": 0.5}, RandomPushSumTopology),
]


@pytest.mark.parametrize("name,hp,program,params,topology", CASES,
                         ids=[f"{c[0]}-{c[2]}{'-tv' if c[4] else ''}" for c in CASES])
def test_the_derived_round_is_the_engines_round(data, name, hp, program, params, topology):
    today = engine(data, A.make(name, **hp), topology)
    params = dict(params)
    derived = engine(data, algorithm(PROGRAMS[program], params, fresh=params.pop("fresh", False)), topology)
    x0 = today.state["x"].clone()
    assert derived.K == today.K
    for _ in range(3):
        today.round()
        derived.round()
        assert derived.sent == today.sent
    err = (derived.state["x"] - today.state["x"]).abs().max().item()
    assert err < 1e-12, err
    assert (today.state["x"] - x0).abs().max() > 1e-3  # the models moved
    assert (derived.x_bar() - today.x_bar()).abs().max().item() < 1e-12
    ours, theirs = derived.aux_points(), today.aux_points()
    for key in theirs:
        assert (ours[key] - theirs[key]).abs().max().item() < 1e-12
    if "ps_weight" in today.state:
        assert torch.equal(derived.state["ps_weight"], today.state["ps_weight"])


def test_every_engine_algorithm_with_a_program_is_compared():
    """Every program runs on the engine; the PEP-only relaxations (unnormalized SAM) have no engine algorithm."""
    compared = {c[2] for c in CASES}
    engine_only = {"dfedavg-mgs", "dfedsam-unnormalized", "dfedadmm-sam-unnormalized", "dfedsgpsm-unnormalized"}
    assert set(BUILT_IN) - compared == engine_only


def test_a_program_with_a_different_step_gives_a_different_round(data):
    """The comparison has teeth: DFedAvgM's momentum moves the models elsewhere than DFedAvg."""
    a = engine(data, algorithm(PROGRAMS["dfedavg"]))
    b = engine(data, algorithm(PROGRAMS["dfedavgm"], {"alpha": 0.5}))
    a.round()
    b.round()
    assert (a.state["x"] - b.state["x"]).abs().max() > 1e-4
