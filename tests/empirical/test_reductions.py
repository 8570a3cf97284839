"""The reductions of the cards' §10 that the engine's ``test_reductions`` does not cover: DFedCata to decentralized
FedProx and to FedInit (card dfedcata §10.9, §3.1), DFedADMM's restart at eta = lambda (card dfedadmm §10.12),
DFedSAM-MGS with per-step resampling as a product of Q different matrices (card dfedsam §10.16), and D-PSGD in its
two orders: Lian et al. 2017's Algorithm 1 (``dpsgd``) and adapt-then-combine (``dpsgd-atc``, issue 32 item 6).

Each comparison runs the engine in float64 on digits (m = 6 clients, a tanh MLP, minibatches of 5) and an
independent per-client loop (or a second algorithm) on the same minibatches; each also shows that it can tell a
different algorithm apart, so that an equality is not vacuous.
"""

import numpy as np
import pytest
import torch
from torch import nn

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import communication as C
from dfltheory.empirical import data as D
from dfltheory.empirical import rules as R
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.models import loss_fn
from dfltheory.testing.matrices import ring_matrix as ring

M, ROUNDS = 6, 4


@pytest.fixture(scope="module")
def data():
    return D.load("digits", M, partition="dirichlet", alpha=0.5, seed=1)


FULL = np.full((M, M), 1 / M)


def model(data):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(data.input_shape)), 8), nn.Tanh(),
                        nn.Linear(8, data.num_classes)).double()
    return FlatModel(net, loss_fn(data.task))


def engine(data, algo, W=None, K=3, lr=0.05, **kw):
    """A float64 engine of ``algo`` (an Algorithm or a name with hyper-parameters ``kw``), seed 0."""
    algo = algo if isinstance(algo, A.Algorithm) else A.make(algo, **kw)
    mixing = C.Mixing(ring(M) if W is None else W) if algo.decentralized else None
    return Engine(model(data), data, algo, mixing, K=K, lr=lr, lr_decay=0.9, batch_size=5, seed=0)


def run(eng, rounds=ROUNDS):
    original, plans = eng.plan, []

    def plan(t):  # remember each round's minibatches and learning rate
        plans.append(original(t))
        return plans[-1]

    eng.plan = plan
    for _ in range(rounds):
        eng.round()
    return plans


def grad(eng, x, rows):
    """grad F_i(x; xi) on the minibatch ``rows``, by autograd on the model's loss (not the engine's vmap)."""
    x = x.detach().requires_grad_(True)
    return torch.autograd.grad(eng.model.loss_at(x, eng.x_train[rows], eng.y_train[rows]), x)[0]


def gap(a, b):
    return float((a - b).abs().max())


# ------------------------------------------------------------------------------------ dfedcata §10.9, §3.1
def dfedprox(mu):
    """Decentralized FedProx: K steps on f_i(x) + (mu/2)||x - x_i^t||^2 from the round-start model, then
    X^{t+1} = W X_K (FedProx's local objective, card dfedcata §3.3, with DFedAvg's gossip)."""
    return A.Algorithm("dfedprox", R.sgd(R.proximal(mu)), C.gossip(), params={"mu": mu})


@pytest.mark.parametrize("mode", ["A", "B"])
def test_dfedcata_with_beta_zero_is_decentralized_fedprox(data, mode):
    """Card dfedcata §10.9: beta = 0, lam_pen > 0 is decentralized FedProx with mu = lam_pen, in both readings."""
    lam = 0.5
    cata = engine(data, "dfedcata", beta=0.0, lam_pen=lam, mode=mode)
    prox = engine(data, dfedprox(lam))
    avg = engine(data, "dfedavg")
    x0 = cata.state["x"].clone()
    for e in (cata, prox, avg):
        run(e)
    assert gap(cata.state["x"], prox.state["x"]) < 1e-12
    assert gap(cata.x_bar(), prox.state["x"].mean(0)) < 1e-12
    assert gap(cata.state["x"], x0) > 1e-2  # the models moved
    assert gap(cata.state["x"], avg.state["x"]) > 1e-4  # and the penalty matters (lam_pen = 0 is DFedAvg)


def test_dfedcata_with_beta_zero_and_the_averaging_matrix_is_fedprox(data):
    """Card dfedcata §10.9 with W = 11^T/m: beta = 0, lam_pen = mu is FedProx with every client and global lr 1."""
    cata = engine(data, "dfedcata", W=FULL, beta=0.0, lam_pen=0.5)
    prox = engine(data, "fedprox", mu=0.5, participation=1.0)
    run(cata), run(prox)
    assert gap(cata.state["x"], prox.state["x"]) < 1e-12


@pytest.mark.parametrize("beta", [0.5, 0.9])
def test_dfedcata_mode_A_with_the_averaging_matrix_is_fedinit(data, beta):
    """Card dfedcata §10.9, §3.1: mode A with W = 11^T/m and lam_pen = 0 is FedInit (Sun, Shen & Tao 2023):
    the server model x^t = (1/m) sum_i x_{i,K}^{t-1}; client i starts from the relaxed initialisation
    y_i^t = x^t + beta (x^t - x_{i,K}^{t-1}) (x_{i,K}^{-1} = x^0), runs K SGD steps, and the server averages.
    The loop below is FedInit written per client; mode B on the same matrix is not FedInit."""
    eng = engine(data, "dfedcata", W=FULL, beta=beta, lam_pen=0.0, mode="A")
    x0 = eng.state["x"][0].clone()
    plans = run(eng)
    last = [x0.clone() for _ in range(M)]
    server = x0.clone()
    for p in plans:
        for i in range(M):
            x = server + beta * (server - last[i])
            for k in range(p.K):
                x = x - p.lr * grad(eng, x, p.idx[k, i])
            last[i] = x
        server = sum(last) / M
    y = torch.stack([server + beta * (server - last[i]) for i in range(M)])
    assert gap(eng.state["x"], y) < 1e-12  # the next round's starting points
    assert gap(eng.x_bar(), server) < 1e-12  # the server model a_bar
    assert gap(eng.state["x"], eng.state["x"].mean(0)) > 1e-3  # the relaxed starts differ between clients
    other = engine(data, "dfedcata", W=FULL, beta=beta, lam_pen=0.0, mode="B")
    run(other)
    assert gap(other.x_bar(), server) > 1e-4


# ------------------------------------------------------------------------------------------ dfedadmm §10.12
@pytest.mark.parametrize("K", [2, 4])
def test_dfedadmm_at_eta_equal_lambda_restarts_every_local_step(data, K):
    """Card dfedadmm §10.12: at eta = lambda every local step restarts from x_i^t,
    x_{i,k+1} = x_i^t - eta (g_{i,k} - ghat_i^{t-1}); the new dual is the last gradient, ghat_i^t = g_{i,K-1};
    one round is x_i^{t+1} = sum_l w_il (x_l^t - lambda g_{l,K-1}): one gradient (the last one) per round.
    Checked per client against the engine (its dual and models) with a constant learning rate; at
    eta = lambda/2 the same recursion is wrong."""
    lam = 0.1
    W = torch.tensor(ring(M), dtype=torch.float64)
    for eta, restarts in ((lam, True), (lam / 2, False)):
        eng = engine(data, "dfedadmm", K=K, lr=eta, lam_pen=lam)
        eng.lr_decay = 1.0
        X = [x.clone() for x in eng.state["x"]]
        dual = [torch.zeros_like(X[0]) for _ in range(M)]
        worst = 0.0
        for _ in range(ROUNDS):
            p = run(eng, 1)[0]
            last, Z = [], []
            for i in range(M):
                x = X[i]
                for k in range(K):
                    g = grad(eng, x, p.idx[k, i])
                    x = X[i] - eta * (g - dual[i])
                last.append(g)
                Z.append(X[i] - lam * g)
            X = list(W @ torch.stack(Z))
            worst = max(worst, gap(eng.state["x"], torch.stack(X)), gap(eng.state["dual"], torch.stack(last)))
            dual = [g.clone() for g in last] if restarts else [d.clone() for d in eng.state["dual"]]
            if not restarts:
                X = list(eng.state["x"].clone())  # restart each round from the engine's state
        if restarts:
            assert worst < 1e-12, worst
        else:
            assert worst > 1e-4, worst


def test_dfedadmm_with_one_local_step_at_eta_equal_lambda_is_dpsgd(data):
    """Card dfedadmm §10.12: with K = 1 the restart leaves x_i^{t+1} = sum_l w_il (x_l^t - lambda grad F_l(x_l^t)),
    D-PSGD with step lambda in the adapt-then-combine order (``dpsgd-atc``), whatever the dual (the paper's initial
    setting eta = lambda = 0.1 is D-PSGD-like)."""
    admm = engine(data, "dfedadmm", K=1, lr=0.1, lam_pen=0.1)
    dpsgd = engine(data, "dpsgd-atc", K=1, lr=0.1)
    for e in (admm, dpsgd):
        e.lr_decay = 1.0
        run(e)
    assert gap(admm.state["x"], dpsgd.state["x"]) < 1e-12
    lower = engine(data, "dfedadmm", K=1, lr=0.05, lam_pen=0.1)
    lower.lr_decay = 1.0
    half = engine(data, "dpsgd-atc", K=1, lr=0.05)
    half.lr_decay = 1.0
    run(lower), run(half)
    assert gap(lower.state["x"], half.state["x"]) > 1e-4  # eta < lambda: the dual and the pull matter


# ------------------------------------------------------------------------------------ D-PSGD, issue 32 item 6
def test_dpsgd_is_lian_algorithm_1_the_gradient_at_the_unmixed_point(data):
    """Lian et al. 2017 Algorithm 1, X_{k+1} = X_k W - gamma dF(X_k; xi_k): row i mixes the models x_l^t and steps
    with the gradient at its own unmixed x_i^t, x_i^{t+1} = sum_l w_il x_l^t - eta grad F_i(x_i^t; xi_i^t). Checked
    round by round from models that differ (heterogeneous clients), against the other order sum_l w_il (x_l^t - eta
    g_l) too, so that the equality is not vacuous."""
    eng = engine(data, "dpsgd", K=1, lr=0.1)
    W = torch.tensor(ring(M))
    run(eng, 1)  # the clients' models differ from here on
    for _ in range(3):
        X = eng.state["x"].clone()
        plan = run(eng, 1)[0]
        G = eng.model.batched_grad(X, eng.x_train[plan.idx[0]], eng.y_train[plan.idx[0]])
        assert gap(eng.state["x"], W @ X - plan.lr * G) < 1e-12
        assert gap(eng.state["x"], W @ (X - plan.lr * G)) > 1e-6


#: the models of ``dpsgd`` at 79fc492 (step then mix) after ROUNDS rounds of engine(data, 'dpsgd', K=1, lr=0.1):
#: each client's sum of coordinates, float64
OLD_DPSGD = [-0.8352759423907197, -1.5150507004621723, -2.432156523851022, -2.6986554082821184, -2.0188806502106673,
             -1.1017748268218162]


def test_dpsgd_atc_keeps_the_numbers_of_the_old_dpsgd(data):
    """The step-then-mix order that ``dpsgd`` ran before issue 32 is ``dpsgd-atc``, number for number: the models of
    the old ``dpsgd`` (pinned), and bit for bit DFedAvg with one local step; ``dpsgd`` itself now differs."""
    atc, avg, lian = (engine(data, name, K=1, lr=0.1) for name in ("dpsgd-atc", "dfedavg", "dpsgd"))
    for e in (atc, avg, lian):
        run(e)
    assert atc.state["x"].sum(1).tolist() == pytest.approx(OLD_DPSGD, rel=1e-12, abs=0)
    assert torch.equal(atc.state["x"], avg.state["x"])
    assert gap(lian.state["x"], atc.state["x"]) > 1e-6


# -------------------------------------------------------------------------------------------- dfedsam §10.16
class Resampled:
    """Time-varying W_s = (I + P_s + P_s^T)/3 with a random permutation P_s per draw s (symmetric, doubly
    stochastic), standing in for the experiments' per-gossip-step resampling (card dfedsam §3.2)."""

    time_varying = True

    def matrix(self, s):
        P = np.eye(M)[np.random.default_rng(s).permutation(M)]
        return (np.eye(M) + P + P.T) / 3


def test_dfedsam_mgs_with_resampling_is_a_product_of_Q_matrices(data):
    """Card dfedsam §10.16: with a new W per gossip step, X^{t+1} = W_{t,Q} ... W_{t,1} Z^t (draws tQ + q), which
    is not W_{t,1}^Q. Z^t is the SAM local phase of DFedSAM (the same rule, the same minibatches)."""
    Q, topo = 3, Resampled()
    mgs = engine(data, "dfedsam-mgs", W=topo, Q=Q, rho=0.05, fresh_gossip=True)
    local = engine(data, "dfedsam", W=np.eye(M), rho=0.05)  # W = I: the models after the local phase
    for t in range(ROUNDS):
        start = mgs.state["x"].clone()
        run(mgs, 1), local.load_state_dict({**local.state_dict(), "state": {"x": start}})
        run(local, 1)
        Z = local.state["x"]
        product = Z
        for q in range(Q):
            product = torch.tensor(topo.matrix(t * Q + q)) @ product
        power = torch.linalg.matrix_power(torch.tensor(topo.matrix(t * Q)), Q) @ Z
        assert gap(mgs.state["x"], product) < 1e-12
        assert gap(mgs.state["x"], power) > 1e-4
