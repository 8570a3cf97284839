"""Card dfedsam §10.20 (Table 3, seed 001 L221-227): "SAM lowers the generalization gap": DFedAvg 98.86 % train /
82.10 % test (gap 16.76) against DFedSAM 92.26 / 84.70 (gap 7.56) on CIFAR-10, exponential topology, 500 rounds.

Here at a scale a test can run: digits with 15 % of the images for training (270 images over 10 clients,
Dirichlet 0.3) so that the model overfits, a 64-unit MLP, the exponential topology (Metropolis weights), K = 5,
lr 0.1, minibatches of 16, 30 rounds, 3 seeds per arm. Train and test accuracy are of the average model x_bar,
computed here (the run's metrics record only the test side). The rule for "lower" is the claims runner's:
the difference must exceed twice its standard error (:data:`dfltheory.verify.claims.RULE`).
"""

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
from dfltheory.topology import build as build_topology

M, ROUNDS, SEEDS = 10, 30, (0, 1, 2)


@pytest.fixture(scope="module")
def data():
    return D.load("digits", M, partition="dirichlet", alpha=0.3, seed=0, test_fraction=0.85)


def accuracies(data, name, seed, **hp):
    """(train accuracy, test accuracy) of x_bar after ROUNDS rounds."""
    torch.manual_seed(0)  # the same x^0 for every arm and seed: the seed changes only the minibatches
    net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    model = FlatModel(net, loss_fn(data.task))
    mixing = C.Mixing(build_topology("exponential", M, weights="metropolis", seed=0))
    eng = Engine(model, data, A.make(name, **hp), mixing, K=5, lr=0.1, batch_size=16, seed=seed)
    for _ in range(ROUNDS):
        eng.round()
    x = eng.x_bar()

    def acc(X, y):
        return float((model.forward(x, torch.as_tensor(X)).argmax(-1) == torch.as_tensor(y)).double().mean())

    return acc(data.x_train, data.y_train), acc(data.x_test, data.y_test)


@pytest.mark.slow
def test_sam_does_not_lower_the_generalization_gap_at_this_scale(data):
    """Measured (train - test accuracy in points, mean +- std over 3 seeds): DFedAvg 87.0 / 81.6, gap 5.4 +- 0.8
    (it overfits: asserted > 3); DFedSAM rho = 0.01 (the card's setting) gap 5.6 +- 1.1, rho = 0.1 gap 5.9 +- 0.6,
    with train and test accuracy both at most 0.6 point from DFedAvg's. SAM does not lower the gap at either rho:
    the card's claim is not reproduced at this scale (about 1 CPU second per run; 9 runs)."""
    arms = {"dfedavg": {}, "rho=0.01": {"rho": 0.01}, "rho=0.1": {"rho": 0.1}}
    runs = {arm: np.array([accuracies(data, "dfedavg" if not hp else "dfedsam", s, **hp) for s in SEEDS])
            for arm, hp in arms.items()}
    gap = {arm: 100 * (r[:, 0] - r[:, 1]) for arm, r in runs.items()}
    assert gap["dfedavg"].mean() > 3, gap
    for arm in ("rho=0.01", "rho=0.1"):
        diff = gap[arm].mean() - gap["dfedavg"].mean()
        threshold = 2 * np.sqrt((gap[arm].var(ddof=1) + gap["dfedavg"].var(ddof=1)) / len(SEEDS))
        assert diff > -threshold, (arm, diff, threshold, gap)  # not significantly lower
    assert np.abs(runs["rho=0.1"] - runs["dfedavg"]).max() > 1e-3  # SAM does change the run
