"""Each paper's recorded quantity against a direct computation on a tiny case (issue 12, item 5).

A tiny run (m = 4 clients, K = 2, 3 rounds, float64, minibatches of 5) is built with ``runner.build`` and trained
with ``runner.train``, which writes ``metrics.jsonl``. The same run is then written again here, per client, from
the cards' pseudocode: the loss of each model from its definition (:mod:`dfltheory.empirical.models` docstring)
with torch autograd, the local rule, the communication as explicit sums over the mixing matrix of the round, and
then the point each theorem measures (x_bar, push-sum numerators, p^t, w^t, ubar, Delta's) and its squared
gradient norm on the whole training data. Nothing of the engine's rules, communication or reference loop is
called; from the package only the data, the round's mixing matrix (``topology.matrix(t)``) and the minibatch
indices (drawn with the engine's sampler from a copy of its generator) are taken. Every recorded value must
match to rtol 1e-10, and each test also asserts that the recorded value differs from the nearest wrong reading
(mean of the de-biased z instead of the numerators, x_bar instead of w^t or p^t, ubar^t instead of ubar^{t-1}, ...),
so that it can tell them apart.
"""

from dataclasses import replace

import numpy as np
import pytest
import torch

from dfltheory.empirical import runner
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.metrics import Evaluator
from dfltheory.empirical.rundir import read_records

M, K, ROUNDS, LR, B = 4, 2, 3, 0.05, 5
RTOL = 1e-10
HIDDEN = 200  # the 'mlp' model's width (models.py: "200-200 hidden ReLU layers")


# ---------------------------------------------------------------------------------------------- the tiny run
def build64(**cfg):
    """Engine and evaluator of ``cfg`` (``runner.build``), made float64: the module, the data and the mixing."""
    cfg = {"n": M, "K": K, "lr": LR, "batch_size": B, "seed": 0, **cfg}
    eng, _ = runner.build(cfg)
    d = eng.data
    regression = d.task == "regression"
    data = replace(d, x_train=d.x_train.double(), x_test=d.x_test.double(),
                   y_train=d.y_train.double() if regression else d.y_train,
                   y_test=d.y_test.double() if regression else d.y_test)
    model = FlatModel(eng.model.module.double(), eng.model.loss)
    engine = Engine(model, data, eng.algo, eng.mixing, K=cfg["K"], lr=cfg["lr"], batch_size=cfg["batch_size"],
                    seed=cfg["seed"])
    return engine, Evaluator(model, data)


def run(engine, evaluator, tmp_path):
    """Train ROUNDS rounds with ``runner.train``; returns the records (read back from metrics.jsonl), the
    minibatch indices of every round (K_total, m, b) and the initial model x^0."""
    x0 = torch.cat([p.detach().reshape(-1) for p in engine.model.module.parameters()]).clone()
    gen = torch.Generator()
    gen.set_state(engine.generator.get_state())
    runner.train(engine, evaluator, tmp_path / "run", ROUNDS, progress=False, local_eval=False)
    records = read_records(tmp_path / "run" / "metrics.jsonl")
    assert [r["round"] for r in records] == list(range(ROUNDS + 1))
    idx = [engine.sampler.draw(engine.K, gen) for _ in range(ROUNDS)]  # participation 1: the only draws
    return records, idx, x0


def matrix(engine, t):
    """The mixing matrix of round t, as the topology gives it (rows: receivers)."""
    W = engine.mixing.source.matrix(t)
    return np.asarray(W.toarray() if hasattr(W, "toarray") else W, dtype=np.float64)


def mix(W, Z):
    """Row i: sum_l w_il z_l (card dfedsam §3.1 eq. (4); push-sum x_i = sum_j p_ij x_j, card dfedsgpsm §3.1 l. 15)."""
    return [sum(float(W[i, l]) * Z[l] for l in range(len(Z)) if W[i, l] != 0) for i in range(len(Z))]


def mean(rows):
    return sum(rows) / len(rows)


def sq(v):
    return float((v**2).sum())


def assert_close(recorded, direct):
    assert recorded == pytest.approx(direct, rel=RTOL, abs=1e-300), (recorded, direct)


def assert_differs(a, b, rel=1e-6):
    assert abs(a - b) > rel * max(abs(a), abs(b)), (a, b)


# ----------------------------------------------------------------------------- the objective, written directly
class Objective:
    """f_i(x) = mean loss of client i's training data, f = (1/m) sum_i f_i (eq. (1) of every card), for the
    models 'linear' (x -> <a, x>, half squared error), 'logreg' (one affine layer, cross-entropy) and 'mlp'
    (d -> 200 -> 200 -> C, ReLU, cross-entropy), written from their definitions; gradients by autograd."""

    def __init__(self, engine, kind):
        data = engine.data
        self.kind, self.A, self.y = kind, data.x_train, data.y_train
        self.clients = [torch.as_tensor(ix, dtype=torch.long) for ix in data.client_indices]
        self.d, self.C = int(np.prod(data.input_shape)), data.num_classes

    def out(self, x, A):
        d, C, h = self.d, self.C, HIDDEN
        if self.kind == "linear":
            return A @ x
        if self.kind == "logreg":
            return A @ x[: C * d].view(C, d).T + x[C * d :]
        sizes = [h * d, h, h * h, h, C * h, C]
        W1, b1, W2, b2, W3, b3 = x.split(sizes)
        a1 = torch.relu(A @ W1.view(h, d).T + b1)
        a2 = torch.relu(a1 @ W2.view(h, h).T + b2)
        return a2 @ W3.view(C, h).T + b3

    def loss(self, x, rows):
        out, y = self.out(x, self.A[rows]), self.y[rows]
        if self.kind == "linear":
            return 0.5 * ((out - y) ** 2).mean()
        return (torch.logsumexp(out, 1) - out.gather(1, y[:, None])[:, 0]).mean()

    def grad(self, x, rows):
        x = x.detach().requires_grad_(True)
        return torch.autograd.grad(self.loss(x, rows), x)[0]

    def f(self, x):
        return float(mean([self.loss(x, ix) for ix in self.clients]))

    def grad_f(self, x):
        return mean([self.grad(x, ix) for ix in self.clients])

    def personal_mask(self):
        """DFedPGP's v: the last Linear layer of the mlp (seed 003 L73, L187)."""
        mask = torch.zeros(self.d * HIDDEN + HIDDEN + HIDDEN * HIDDEN + HIDDEN + self.C * HIDDEN + self.C,
                           dtype=torch.bool)
        mask[-(self.C * HIDDEN + self.C) :] = True
        return mask


def sam_gradient(obj, z, rows, rho):
    """grad F_i(z + rho g/||g||; xi), g = grad F_i(z; xi), the same minibatch (card dfedsam §3.1; plain ||g||)."""
    g = obj.grad(z, rows)
    return obj.grad(z + rho * g / g.norm(), rows)


# ---------------------------------------------------------------------------------------------------- DFedSAM
def test_dfedsam_measures_the_mean_of_the_round_start_models(tmp_path):
    """Card dfedsam §2 (Thm 4.1): ||grad f(x_bar^t)||^2, x_bar^t = (1/m) sum_i x^t(i) of the post-gossip models;
    local rule and gossip from §3.1 (eq. (3), (4))."""
    rho = 0.05
    engine, ev = build64(dataset="synthetic-quadratic", algo="dfedsam", topology="ring", rho=rho)
    recs, idx, x0 = run(engine, ev, tmp_path)
    obj = Objective(engine, "linear")
    X = [x0.clone() for _ in range(M)]
    for t in range(ROUNDS + 1):
        xbar = mean(X)
        assert_close(recs[t]["grad_norm_sq"], sq(obj.grad_f(xbar)))
        assert_close(recs[t]["train_loss"], obj.f(xbar))
        assert_close(recs[t]["consensus"], mean([sq(x - xbar) for x in X]))
        if t:  # the average, not a client's model, is measured
            assert recs[t]["consensus"] > 0
            assert_differs(recs[t]["grad_norm_sq"], sq(obj.grad_f(X[0])))
        if t == ROUNDS:
            break
        Z = []
        for i in range(M):
            y = X[i].clone()
            for k in range(K):
                y = y - LR * sam_gradient(obj, y, idx[t][k, i], rho)  # eq. (3)
            Z.append(y)
        X = mix(matrix(engine, t), Z)  # eq. (4): x^{t+1}(i) = sum_l w_il z^t(l)


# -------------------------------------------------------------------------------------------------- DFedSGPSM
@pytest.mark.parametrize("topology, params", [("random", "k=1"), ("one-peer-exponential", None)])
def test_dfedsgpsm_measures_the_mean_of_the_push_sum_numerators(tmp_path, topology, params):
    """Card dfedsgpsm §2 (Thm 1): ||grad f(x_bar^t)||^2 with x_bar^t = (1/n) sum_i x_i^t the plain mean of the
    NUMERATORS; consensus (1/n) sum_i ||z_i^t - x_bar^t||^2 with z_i = x_i / w_i (Lemma 4). Algorithm 1 lines
    3-16 (§3.1): SAM + heavy-ball momentum (reset each round) at z = x/w, step on x, push-sum of (x, w)."""
    rho, alpha = 0.1, 0.9
    engine, ev = build64(dataset="synthetic-logistic", algo="dfedsgpsm", topology=topology, topology_params=params,
                         rho=rho, momentum=alpha)
    recs, idx, x0 = run(engine, ev, tmp_path)
    obj = Objective(engine, "logreg")
    X, w = [x0.clone() for _ in range(M)], [1.0] * M
    for t in range(ROUNDS + 1):
        xbar = mean(X)
        Z = [x / wi for x, wi in zip(X, w)]
        assert_close(recs[t]["grad_norm_sq"], sq(obj.grad_f(xbar)))
        assert_close(recs[t]["train_loss"], obj.f(xbar))
        assert_close(recs[t]["consensus"], mean([sq(z - xbar) for z in Z]))
        if t and topology == "random":  # the numerators' mean is not the mean of the de-biased models
            assert max(abs(wi - 1) for wi in w) > 0.1
            assert_differs(recs[t]["grad_norm_sq"], sq(obj.grad_f(mean(Z))))
        if topology == "one-peer-exponential":  # one in-neighbour each: P is doubly stochastic, w stays 1
            assert w == [1.0] * M
        if t == ROUNDS:
            break
        half = []
        for i in range(M):
            x, v = X[i].clone(), torch.zeros_like(X[i])  # line 3: momentum reset
            for k in range(K):
                g = sam_gradient(obj, x / w[i], idx[t][k, i], rho)  # lines 5-9 at z = x / w_i^t
                v = alpha * v + g  # line 10
                x = x - LR * v  # line 11: the numerator moves
            half.append(x)
        P = matrix(engine, t)
        assert np.allclose(P.sum(0), 1)  # column-stochastic
        X = mix(P, half)  # line 15
        w = [sum(float(P[i, j]) * w[j] for j in range(M)) for i in range(M)]  # line 16


# ---------------------------------------------------------------------------------------------------- DFedCata
@pytest.mark.parametrize("mode, topology, params", [("A", "code-random", "k=1"), ("B", "ring", None)])
def test_dfedcata_measures_p_and_the_mean_of_the_aggregated_models(tmp_path, mode, topology, params):
    """Card dfedcata §2 / §6.1 Lemma 6: ||grad f(p^t)||^2 with p^t = a_bar^t + beta/(1-beta)(a_bar^t - a_bar^{t-1})
    (mode B), p^t = a_bar^t (mode A, no momentum in the mean recursion, Lemma 4); grad_norm_sq at x_bar = a_bar^t,
    the mean of the aggregated models A^t = W X_K^{t-1}. §3.1's pseudocode: aggregation + extrapolation at the start
    of round t (X_K^{-1} = A^{-1} = 1 x^0^T), then K steps x <- x - eta(grad F_i(x) + lam_pen (x - y_i^t)).
    Mode A runs on the code's row-stochastic random topology (so that a_bar differs from the mean of the y_i)."""
    lam_pen, beta = 0.05, 0.9
    engine, ev = build64(dataset="synthetic-quadratic", algo="dfedcata", topology=topology, topology_params=params,
                         lam_pen=lam_pen, beta=beta, mode=mode)
    recs, idx, x0 = run(engine, ev, tmp_path)
    obj = Objective(engine, "linear")
    XK, A_prev, abar_prev = [x0.clone() for _ in range(M)], [x0.clone() for _ in range(M)], x0.clone()
    for t in range(ROUNDS + 1):
        # A^0 = x^0 for any row-stochastic W^0; the W that aggregates the models of round t-1 is the topology's
        # draw t-1 (the engine's label: the round whose models it mixes)
        W = np.eye(M) if t == 0 else matrix(engine, t - 1)
        A = mix(W, XK)
        Y = [a + beta * (a - (xk if mode == "A" else ap)) for a, xk, ap in zip(A, XK, A_prev)]
        abar = mean(A)
        p = abar + beta / (1 - beta) * (abar - abar_prev) if mode == "B" else abar
        assert_close(recs[t]["grad_norm_sq"], sq(obj.grad_f(abar)))
        assert_close(recs[t]["grad_norm_sq_p"], sq(obj.grad_f(p)))
        assert_close(recs[t]["train_loss"], obj.f(abar))
        assert_close(recs[t]["consensus"], mean([sq(y - abar) for y in Y]))
        if t:  # a_bar is neither the mean of the round-start y_i nor (mode B) p
            assert_differs(recs[t]["grad_norm_sq"], sq(obj.grad_f(mean(Y))))
            if mode == "B":
                assert_differs(recs[t]["grad_norm_sq_p"], recs[t]["grad_norm_sq"])
            else:
                assert recs[t]["grad_norm_sq_p"] == recs[t]["grad_norm_sq"]
        if t == ROUNDS:
            break
        new = []
        for i in range(M):
            x = Y[i].clone()
            for k in range(K):
                x = x - LR * (obj.grad(x, idx[t][k, i]) + lam_pen * (x - Y[i]))
            new.append(x)
        XK, A_prev, abar_prev = new, A, abar


# ---------------------------------------------------------------------------------------------------- DFedADMM
@pytest.mark.parametrize("algo, rho", [("dfedadmm", None), ("dfedadmm-sam", 0.1)])
def test_dfedadmm_measures_the_auxiliary_sequence_w(tmp_path, algo, rho):
    """Card dfedadmm §2, §6.1 (Lemma 9): ||grad f(w^t)||^2, w^t = x_bar^t + ((1-gamma)/gamma)(x_bar^t - x_bar^{t-1}),
    gamma = 1 - (1 - eta/lam)^K, x_bar^{-1} := x_bar^0 (§3.2 (iv)). Algorithm 1 of §3.2: K steps of eq. (6), dual
    update (line 15), message z_i = x_{i,K} - lam ghat_i^{t-1} (line 16, the OLD dual), gossip (eq. (8))."""
    lam = 0.1
    engine, ev = build64(dataset="synthetic-logistic", algo=algo, topology="ring", lam=lam, rho=rho)
    recs, idx, x0 = run(engine, ev, tmp_path)
    obj = Objective(engine, "logreg")
    gamma = 1 - (1 - LR / lam) ** K
    X, dual = [x0.clone() for _ in range(M)], [torch.zeros_like(x0) for _ in range(M)]
    xbar_prev = mean(X)
    for t in range(ROUNDS + 1):
        xbar = mean(X)
        w = xbar + (1 - gamma) / gamma * (xbar - xbar_prev)
        assert_close(recs[t]["grad_norm_sq_w"], sq(obj.grad_f(w)))
        assert_close(recs[t]["grad_norm_sq"], sq(obj.grad_f(xbar)))
        assert_close(recs[t]["train_loss"], obj.f(xbar))
        assert_close(recs[t]["consensus"], mean([sq(x - xbar) for x in X]))
        if t:  # w^t is not x_bar^t
            assert_differs(recs[t]["grad_norm_sq_w"], recs[t]["grad_norm_sq"])
        if t == ROUNDS:
            break
        Z = []
        for i in range(M):
            x = X[i].clone()
            for k in range(K):
                rows = idx[t][k, i]
                g = obj.grad(x, rows) if rho is None else sam_gradient(obj, x, rows, rho)  # lines 4-5 / 10-12
                x = x - LR * (g - dual[i] + (x - X[i]) / lam)  # eq. (6)
            Z.append(x - lam * dual[i])  # line 16
            dual[i] = dual[i] - (x - X[i]) / lam  # line 15
        X, xbar_prev = mix(matrix(engine, t), Z), xbar


# ----------------------------------------------------------------------------------------------------- DFedPGP
def test_dfedpgp_measures_theorem_1s_deltas(tmp_path):
    """Card dfedpgp §2, §6.6: Delta_ubar^{t-1} = ||grad_u F(ubar^{t-1}, V^t)||^2 (recorded at round t, once V^t
    exists; at round 0 the engine's convention ubar^{-1} := ubar^0, V^0), ubar the mean of the BIASED u_i, and
    Delta_v^t = (1/m) sum_i ||grad_v F_i(u_i^t, v_i^t)||^2 at the biased u_i^t; grad_norm_sq_v_z the same at
    z_i = u_i/mu_i (§10.18). Algorithm 1 (§3.1): K_v = 1 step on v at (z_i^t, v), then K_u = K steps on u at
    (u/mu_i^t, v^{t+1}) (one fresh minibatch per step, §11 A9), push-sum of (u, mu); v never sent."""
    engine, ev = build64(dataset="synthetic-logistic", algo="dfedpgp", model="mlp", topology="random",
                         topology_params="k=1")
    recs, idx, x0 = run(engine, ev, tmp_path)
    obj = Objective(engine, "mlp")
    p = obj.personal_mask()
    s = ~p
    assert torch.equal(engine.shared, s)
    K_v = 1

    def point(u, v):
        x = torch.empty_like(x0)
        x[s], x[p] = u, v
        return x

    def full_grad_i(x, i):
        return obj.grad(x, obj.clients[i])

    U, V, mu = [x0[s].clone() for _ in range(M)], [x0[p].clone() for _ in range(M)], [1.0] * M
    ubar_prev = mean(U)
    for t in range(ROUNDS + 1):
        ubar = mean(U)
        Z = [u / m_ for u, m_ in zip(U, mu)]
        delta_u = sq(mean([full_grad_i(point(ubar_prev, V[i]), i)[s] for i in range(M)]))
        delta_v = mean([sq(full_grad_i(point(U[i], V[i]), i)[p]) for i in range(M)])
        delta_v_z = mean([sq(full_grad_i(point(Z[i], V[i]), i)[p]) for i in range(M)])
        assert_close(recs[t]["grad_norm_sq_u"], delta_u)
        assert_close(recs[t]["grad_norm_sq_v"], delta_v)
        assert_close(recs[t]["grad_norm_sq_v_z"], delta_v_z)
        assert_close(recs[t]["train_loss"], mean([obj.loss(point(ubar, V[i]), obj.clients[i]) for i in range(M)]).item())
        assert_close(recs[t]["consensus"], mean([sq(z - ubar) for z in Z]))
        if t:  # the biased u, not z; ubar^{t-1} with V^t, not ubar^t
            assert max(abs(m_ - 1) for m_ in mu) > 0.1
            assert_differs(recs[t]["grad_norm_sq_v"], recs[t]["grad_norm_sq_v_z"])
            assert_differs(recs[t]["grad_norm_sq_u"], sq(mean([full_grad_i(point(ubar, V[i]), i)[s] for i in range(M)])))
            assert_differs(recs[t]["grad_norm_sq_u"], sq(mean([full_grad_i(point(mean(Z), V[i]), i)[s]
                                                        for i in range(M)])))
        if t == ROUNDS:
            break
        half, V_new = [], []
        for i in range(M):
            v = V[i].clone()
            for k in range(K_v):  # v <- v - eta_v grad_v F_i(z_i^{t,0}, v)   (eta_v = eta_u by default)
                v = v - LR * obj.grad(point(Z[i], v), idx[t][k, i])[p]
            u = U[i].clone()
            for k in range(K_v, K_v + K):  # u <- u - eta_u grad_u F_i(u / mu_i^t, v^{t+1})
                u = u - LR * obj.grad(point(u / mu[i], v), idx[t][k, i])[s]
            half.append(u)
            V_new.append(v)
        P = matrix(engine, t)
        U = mix(P, half)
        mu = [sum(float(P[i, j]) * mu[j] for j in range(M)) for i in range(M)]
        V, ubar_prev = V_new, ubar
