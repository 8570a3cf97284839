"""The vectorized engine against the per-client reference loop, the reductions between algorithms, and the
closed-form fixed point of DFedAvg on a quadratic."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import communication as C
from dfltheory.empirical import data as D
from dfltheory.empirical import rules as R
from dfltheory.empirical.engine import ClientSampler, Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.metrics import Evaluator, consensus, measure
from dfltheory.empirical.models import loss_fn
from dfltheory.empirical.reference import ReferenceRun
from dfltheory.topology import build as build_topology
from dfltheory.testing.matrices import RandomPermutationTopology, RandomPushSumTopology
from dfltheory.testing.matrices import ring_matrix as ring


M = 6


@pytest.fixture(scope="module")
def data():
    return D.load("digits", M, partition="dirichlet", alpha=0.5, seed=1)


def net(data, seed=0, hidden=8):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(data.input_shape)), hidden), nn.Tanh(),
                         nn.Linear(hidden, data.num_classes))


def engine_for(data, name, mixing=None, K=3, lr=0.05, seed=0, sequential=False, **hp):
    algo = A.make(name, **hp)
    model = FlatModel(net(data), loss_fn(data.task))
    mixing = mixing if mixing is not None else C.Mixing(ring(M))
    return Engine(model, data, algo, mixing if algo.decentralized else None, K=K, lr=lr, lr_decay=0.9,
                  batch_size=5, seed=seed, sequential=sequential)


def recorded(engine):
    """Make ``engine`` remember its round plans (minibatches, participants) for the reference loop."""
    plans = []
    original = engine.plan

    def plan(t):
        plans.append(original(t))
        return plans[-1]

    engine.plan = plan
    return plans


def selection(m):
    """DFedSGPSM-S's topology: 2 out-neighbours per client, drawn from the clients' losses every round."""
    return build_topology("neighbour-selection", m, weights="push-sum", seed=0, k=2)


CASES = [(name, {}) for name in A.names() if name != "dfedsgpsm-s"] + [
    ("dfedcata", {"mode": "B"}),
    ("dfedcata", {"mode": "A", "sequential": True}),
    ("dfedcata", {"mode": "B", "sequential": True}),
    ("dfedsam-mgs", {"Q": 3, "fresh_gossip": True, "topology": "time-varying"}),
    ("dfedavg", {"topology": "time-varying"}),
    ("fedavg", {"participation": 0.5}),
    ("dfedsgpsm", {"topology": "push-sum"}),
    ("sgp", {"topology": "push-sum"}),
    ("dfedsgpsm-s", {"topology": "selection"}),
    ("dfedpgp", {"topology": "push-sum"}),
    ("dfedpgp", {"K_v": 2, "lr_v": 0.2, "lr": 0.05, "topology": "push-sum"}),
    ("dfedpgp", {"personal": "1", "K_v": 0, "topology": "push-sum"}),
    ("dfedpgp", {"K_v": 2, "lr_v": 0.2, "lr": 0.05, "momentum": 0.9, "topology": "push-sum"}),
    ("dfedpgp-pull", {"K_v": 1, "momentum": 0.9}),
    ("dfedpgp", {"K_v": 2, "lr_v": 0.2, "lr": 0.05, "momentum": 0.9, "clip": 0.05, "topology": "push-sum"}),
]


@pytest.mark.parametrize("name,opts", CASES, ids=[f"{n}-{'-'.join(map(str, o.values()))}" for n, o in CASES])
def test_vectorized_round_equals_per_client_reference(data, name, opts):
    opts = dict(opts)
    seq = opts.pop("sequential", False)
    topologies = {"time-varying": RandomPermutationTopology, "push-sum": RandomPushSumTopology, "selection": selection}
    topo = topologies.get(opts.pop("topology", None))
    mixing = C.Mixing(topo(M)) if topo else C.Mixing(ring(M))
    eng = engine_for(data, name, mixing=mixing, sequential=seq, **opts)
    plans = recorded(eng)
    x0 = eng.state["x"][0].clone()
    ref = ReferenceRun(name, net(data), loss_fn(data.task), eng.x_train, eng.y_train, x0, M, eng.K, hp=opts,
                       sequential=seq, topology=mixing.source)
    for t in range(3):
        eng.round()
        ref.round(plans[-1], lambda q, t=t: mixing.at(t * eng.algo.comm.draws + q))
    err = (eng.state["x"] - torch.stack(ref.x)).abs().max().item()
    assert err < 1e-6, err
    assert (eng.state["x"] - x0).abs().max() > 1e-3  # the models did move


def run_rounds(eng, rounds=3):
    for _ in range(rounds):
        eng.round()
    return eng.state["x"]


@pytest.mark.parametrize("a,b", [
    (("dfedcata", {"beta": 0.0, "lam_pen": 0.0}), ("dfedavg", {})),
    (("dfedcata", {"beta": 0.0, "lam_pen": 0.0, "mode": "B"}), ("dfedavg", {})),
    (("dfedsam-mgs", {"Q": 1, "rho": 0.05}), ("dfedsam", {"rho": 0.05})),
    (("dfedsam", {"rho": 0.0}), ("dfedavg", {})),
    (("fedsam", {"rho": 0.0}), ("fedavg", {})),
    (("fedprox", {"mu": 0.0}), ("fedavg", {})),
    (("dfedavgm", {"momentum": 0.0}), ("dfedavg", {})),
    (("dfedpgp", {"personal": "none", "K_v": 0, "mixing": C.Mixing(RandomPushSumTopology(M))}),
     ("dfedsgpsm", {"rho": 0.0, "momentum": 0.0, "mixing": C.Mixing(RandomPushSumTopology(M))})),
    (("dfedpgp", {"personal": "none", "K_v": 0, "K": 1, "mixing": C.Mixing(RandomPushSumTopology(M))}),
     ("sgp", {"mixing": C.Mixing(RandomPushSumTopology(M))})),
])
def test_reductions(data, a, b):
    xa = run_rounds(engine_for(data, a[0], **a[1]))
    xb = run_rounds(engine_for(data, b[0], **b[1]))
    assert torch.allclose(xa, xb, atol=1e-6, rtol=0)


def test_reductions_are_not_vacuous(data):
    """The same comparison detects a real difference (beta > 0, rho > 0)."""
    x_avg = run_rounds(engine_for(data, "dfedavg"))
    assert not torch.allclose(run_rounds(engine_for(data, "dfedcata", beta=0.5, lam_pen=0.0)), x_avg, atol=1e-6)
    assert not torch.allclose(run_rounds(engine_for(data, "dfedsam", rho=0.5)), x_avg, atol=1e-6)


def test_dfedcata_clips_like_its_code(data):
    """Card dfedcata §3.2 items 3-4: clip_grad_norm_ (eps 1e-6) clips g - lam_pen y only; SGD's weight decay adds
    (lam_pen + wd) x after it. A binding clip makes this differ from clipping the whole direction."""
    lam, wd, c = 0.05, 5e-4, 0.5
    eng = engine_for(data, "dfedcata", K=1, clip=c, lam_pen=lam, weight_decay=wd)
    y = eng.state["x"] + 0.3 * torch.randn(eng.state["x"].shape, generator=torch.Generator().manual_seed(1))
    x = y + 0.1
    g = eng.model.batched_grad(x, eng.x_train[:M * 5].view(M, 5, -1), eng.y_train[:M * 5].view(M, 5))
    ctx = R.StepContext(state={"x": x}, anchor=y, grad=lambda X: g, lr=0.1, K=1)
    pulled = g - lam * y
    norm = pulled.norm(dim=1, keepdim=True)
    assert (norm > c).all()  # the clip binds
    expected = pulled * (c / (norm + 1e-6)) + (lam + wd) * x
    assert torch.allclose(eng.algo.local.direction(None, ctx), expected, atol=1e-6, rtol=0)
    whole = R.chain(R.gradient(), R.proximal(lam), R.weight_decay(wd), R.clip(c)).direction(None, ctx)
    assert not torch.allclose(whole, expected, atol=1e-3)
    unclipped = A.make("dfedcata", lam_pen=lam, weight_decay=wd).local.direction(None, ctx)
    assert torch.allclose(unclipped, g + lam * (x - y) + wd * x, atol=1e-6, rtol=0)  # the card's step


def test_engine_runs_in_the_models_dtype_and_sequential_xbar_is_the_mean_of_the_local_models(data):
    """Mixing, data and state follow a float64 model; the sequential schedule reports the mean of X_K (the
    model the DFedCata code evaluates), the synchronous one the mean of the aggregated models."""
    model = FlatModel(net(data).double(), loss_fn(data.task))
    mixing = C.Mixing(ring(M))
    assert mixing.dtype == torch.float32
    seq = Engine(model, data, A.make("dfedcata"), mixing, K=2, lr=0.05, batch_size=5, sequential=True)
    assert seq.mixing.dtype == seq.x_train.dtype == seq.state["x"].dtype == torch.float64
    assert seq.mixing.at(0)[0, 0].item() == 1 / 3  # W itself in float64
    sync = Engine(model, data, A.make("dfedcata"), mixing, K=2, lr=0.05, batch_size=5)
    for _ in range(2):
        seq.round()
        sync.round()
    assert torch.equal(seq.x_bar(), seq.state["x"].mean(0))
    assert not torch.allclose(seq.x_bar(), seq.state["agg"].mean(0), atol=1e-4)  # the aggregates: a program slot
    assert torch.equal(sync.x_bar(), sync.state["agg"].mean(0))


def test_complete_graph_one_step_is_minibatch_sgd_on_the_average(data):
    W = np.full((M, M), 1 / M)
    eng = engine_for(data, "dfedavg", mixing=C.Mixing(W), K=1)
    plans = recorded(eng)
    xbar = eng.state["x"][0].clone()
    for _ in range(3):
        eng.round()
        p = plans[-1]
        g = eng.model.batched_grad(xbar.expand(M, -1), eng.x_train[p.idx[0]], eng.y_train[p.idx[0]]).mean(0)
        xbar = xbar - p.lr * g
        assert torch.allclose(eng.state["x"], xbar.expand(M, -1), atol=1e-6)


def random_doubly_stochastic(m, seed):
    rng = np.random.default_rng(seed)
    W = sum(c * np.eye(m)[rng.permutation(m)] for c in rng.dirichlet(np.ones(4)))  # Birkhoff combination
    return W


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), beta=st.floats(0.1, 0.95))
def test_nesterov_mode_A_keeps_the_mean_mode_B_does_not(seed, beta):
    m, d = 7, 5
    W = torch.tensor(random_doubly_stochastic(m, seed), dtype=torch.float64)
    gen = torch.Generator().manual_seed(seed)
    x0, x1 = torch.randn(m, d, generator=gen, dtype=torch.float64), torch.randn(m, d, generator=gen,
                                                                                 dtype=torch.float64)
    means = {}
    for mode in "AB":
        rule = C.nesterov_extrapolation(beta, mode)
        cstate, state = rule.init(x0), {"x": x0.clone()}
        ctx = C.CommContext(0, m, torch.arange(m), None)
        ctx.W = lambda q=0: W
        rule.apply(state, cstate, ctx)  # round 0: a^0 = x0 in both modes
        state["x"] = x1.clone()
        rule.apply(state, cstate, ctx)
        means[mode] = state["x"].mean(0)
    assert torch.allclose(means["A"], x1.mean(0), atol=1e-12)
    assert not torch.allclose(means["B"], x1.mean(0), atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), Q=st.integers(1, 4))
def test_gossip_with_symmetric_doubly_stochastic_W_keeps_the_mean_and_contracts(seed, Q):
    m, d = 6, 4
    W = random_doubly_stochastic(m, seed)
    W = torch.tensor((W + W.T) / 2, dtype=torch.float64)  # symmetric doubly stochastic: |eigenvalues| <= 1
    X = torch.randn(m, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    state = {"x": X.clone()}
    ctx = C.CommContext(0, m, torch.arange(m), None)
    ctx.W = lambda q=0: W
    C.multi_gossip(Q).apply(state, {}, ctx)
    assert torch.allclose(state["x"].mean(0), X.mean(0), atol=1e-12)
    assert consensus(state["x"]) <= consensus(X) + 1e-12
    assert ctx.sent == Q * int(((W != 0) & ~torch.eye(m, dtype=torch.bool)).sum())


def test_sparse_and_dense_mixing_agree(data):
    dense = run_rounds(engine_for(data, "dfedsam-mgs", Q=2))
    sparse = run_rounds(engine_for(data, "dfedsam-mgs", Q=2, mixing=C.Mixing(ring(M), sparse=True)))
    assert torch.allclose(dense, sparse, atol=1e-6)


def test_models_sent_counts_links(data):
    eng = engine_for(data, "dfedsam-mgs", Q=3)
    eng.round()
    assert eng.sent == 3 * 2 * M  # ring: 2 neighbours per client, Q gossip steps
    eng = engine_for(data, "scaffold", participation=0.5)
    eng.round()
    assert eng.sent == 4 * (M // 2)  # models and control variates, up and down


def test_admm_message_identity(data):
    """Card dfedadmm §3.2 (iii): z_i^t = x_i^t - lam ghat_i^t exactly (visible with W = I)."""
    lam = 0.2
    eng = engine_for(data, "dfedadmm", mixing=C.Mixing(np.eye(M)), lam_pen=lam)
    for _ in range(3):
        x_start = eng.state["x"].clone()
        eng.round()
        assert torch.allclose(eng.state["x"], x_start - lam * eng.state["dual"], atol=1e-6)


def test_admm_aux_sequence_is_xbar_when_lr_equals_lam(data):
    """Card dfedadmm §3.2 (v): eta_l = lam gives gamma = 1 and w^t = x_bar^t."""
    eng = engine_for(data, "dfedadmm", lam_pen=0.05, lr=0.05)
    eng.lr_decay = 1.0
    eng.round()
    eng.round()
    assert torch.allclose(eng.aux_points()["w"], eng.x_bar(), atol=1e-7)
    eng2 = engine_for(data, "dfedadmm", lam_pen=0.2, lr=0.05)
    eng2.round()
    eng2.round()
    assert not torch.allclose(eng2.aux_points()["w"], eng2.x_bar(), atol=1e-5)


def test_dfedavg_fixed_point_bias_matches_closed_form():
    """Full-batch DFedAvg on f_i(x) = 1/(2n)||A_i x - b_i||^2: X* solves X = W (M_i x_i + r_i) blockwise with
    M_i = (I - eta H_i)^K, r_i = sum_{j<K} (I - eta H_i)^j eta c_i; its mean differs from x* (the bias)."""
    m, dim, K, lr = 4, 3, 4, 0.1
    fd = D.load("synthetic-quadratic", m, seed=3, dim=dim, n_per_client=8, heterogeneity=2.0)
    W = ring(m, self_weight=0.5)
    torch.manual_seed(0)
    model = FlatModel(nn.Sequential(nn.Flatten(), nn.Linear(dim, 1, bias=False)), loss_fn("regression"))
    eng = Engine(model, fd, A.make("dfedavg"), C.Mixing(W), K=K, lr=lr, batch_size=None)
    for _ in range(600):
        eng.round()
    H, c = [], []
    for ix in fd.client_indices:
        Ai, bi = fd.x_train[ix].double().numpy(), fd.y_train[ix].double().numpy()
        H.append(Ai.T @ Ai / len(ix))
        c.append(Ai.T @ bi / len(ix))
    I = np.eye(dim)
    Mi = [np.linalg.matrix_power(I - lr * h, K) for h in H]
    ri = [sum(np.linalg.matrix_power(I - lr * h, j) for j in range(K)) @ (lr * ci) for h, ci in zip(H, c)]
    big = np.kron(W, I) @ np.block([[Mi[i] if i == j else np.zeros((dim, dim)) for j in range(m)] for i in range(m)])
    X_star = np.linalg.solve(np.eye(m * dim) - big, np.kron(W, I) @ np.concatenate(ri)).reshape(m, dim)
    x_opt = np.linalg.solve(sum(H), sum(c))
    bias = X_star.mean(0) - x_opt
    assert np.linalg.norm(bias) > 1e-2  # heterogeneous clients and K > 1: the fixed point is biased
    X = eng.state["x"].double().numpy()
    assert np.abs(X - X_star).max() < 1e-4
    assert np.abs((X.mean(0) - x_opt) - bias).max() < 1e-4
    assert np.allclose(fd.constants["x_star"].numpy(), x_opt, atol=1e-6)


def test_sampler_draws_each_client_from_its_own_pool(data):
    sampler = ClientSampler(data.client_indices, 7)
    idx = sampler.draw(4, torch.Generator().manual_seed(0))
    assert idx.shape == (4, M, 7)
    for i, pool in enumerate(data.client_indices):
        assert set(idx[:, i].flatten().tolist()) <= set(pool.tolist())
    with pytest.raises(ValueError, match="equal client sizes"):
        ClientSampler(data.client_indices, None)


def test_metrics_are_the_stated_quantities(data):
    eng = engine_for(data, "dfedavg")
    run_rounds(eng, 2)
    ev = Evaluator(eng.model, data)
    rec = measure(eng, ev)
    X = eng.state["x"]
    assert rec["consensus"] == pytest.approx(float(((X - X.mean(0)) ** 2).sum(1).mean()), rel=1e-6)
    xbar = X.mean(0).requires_grad_(True)
    f = sum(eng.model.loss_at(xbar, *data.client_data(i)) for i in range(M)) / M
    (g,) = torch.autograd.grad(f, xbar)
    assert rec["train_loss"] == pytest.approx(float(f.detach()), rel=1e-5)
    assert rec["grad_norm_sq"] == pytest.approx(float((g**2).sum()), rel=1e-4)
    pred = eng.model.forward(X.mean(0), data.x_test).argmax(-1)
    assert rec["test_acc"] == pytest.approx(float((pred == data.y_test).double().mean()))
    assert rec["models_sent"] == 2 * 2 * M and rec["round"] == 2
    assert consensus(torch.ones(3, 4)) == 0.0


def test_engine_rejects_bad_inputs(data):
    with pytest.raises(ValueError, match="needs a topology"):
        Engine(FlatModel(net(data), loss_fn("classification")), data, A.make("dfedavg"), None, K=2, lr=0.1)
    with pytest.raises(ValueError, match="dfedavg declares no sequential .* drop --sequential"):
        engine_for(data, "dfedavg", sequential=True)
    with pytest.raises(ValueError, match="unknown algorithm"):
        A.make("dfedfoo")
    with pytest.raises(ValueError, match="mode"):
        A.make("dfedcata", mode="C")
    with pytest.raises(ValueError, match="clients"):
        engine_for(data, "dfedavg", mixing=C.Mixing(ring(M + 1)))


@pytest.mark.parametrize("name", ["cnn", "vgg11"])
def test_image_models_vectorize_like_the_reference(name):
    """The --gpu benchmark's VGG-11 (GroupNorm) and the CNN go through functional_call + vmap like the MLP."""
    from dfltheory.empirical.models import make_model

    g = torch.Generator().manual_seed(0)
    fd = D.FederatedData(x_train=torch.randn(8, 3, 32, 32, generator=g),
                         y_train=torch.randint(0, 10, (8,), generator=g),
                         x_test=torch.randn(4, 3, 32, 32, generator=g), y_test=torch.randint(0, 10, (4,), generator=g),
                         client_indices=[torch.arange(0, 4), torch.arange(4, 8)], num_classes=10,
                         input_shape=(3, 32, 32), name="random-images")
    torch.manual_seed(0)
    model = FlatModel(make_model(name, fd.input_shape, 10), loss_fn("classification"))
    algo = "dfedavg"  # one gradient per client: VGG-11 on CPU is slow
    eng = Engine(model, fd, A.make(algo, rho=0.05), C.Mixing(np.full((2, 2), 0.5)), K=1, lr=0.01, batch_size=1)
    plans = recorded(eng)
    x0 = eng.state["x"][0].clone()
    eng.round()
    torch.manual_seed(0)
    ref = ReferenceRun(algo, make_model(name, fd.input_shape, 10).eval(), loss_fn("classification"),
                       eng.x_train, eng.y_train, x0, 2, 1, hp={"rho": 0.05})
    ref.round(plans[-1], lambda q: eng.mixing.at(0))
    step = (eng.state["x"] - x0).abs().max()
    assert step > 0 and (eng.state["x"] - torch.stack(ref.x)).abs().max() < 1e-4 * step


def test_client_chunks_give_the_same_round(data):
    whole = engine_for(data, "dfedsam")
    chunked = engine_for(data, "dfedsam")
    chunked.client_chunk = 4  # vmap over 4, then 2 clients
    assert torch.allclose(run_rounds(whole), run_rounds(chunked), atol=1e-6)


@pytest.mark.parametrize("self_weight,grows", [(1 / 3, True), (2 / 3, False)])
def test_nesterov_mode_A_amplifies_disagreement_when_W_has_negative_eigenvalues(self_weight, grows):
    """y = ((1+beta)W - beta I) x: eigenvalue (1+beta) lambda - beta < -1 iff lambda < -(1-beta)/(1+beta).

    Ring of 6 with weights 1/3 has lambda_min = -1/3 (factor 1.53 per round at beta = 0.9); the lazy ring
    (self weight 2/3) has lambda_min = 1/3 and contracts (docs/empirical.md)."""
    W = torch.tensor(ring(6, self_weight))
    lam_min = float(torch.linalg.eigvalsh(W)[0])
    X = torch.randn(6, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    rule, state = C.nesterov_extrapolation(0.9, "A"), {"x": X.clone()}
    cstate = rule.init(X)
    ctx = C.CommContext(0, 6, torch.arange(6), None)
    ctx.W = lambda q=0: W
    for _ in range(20):
        rule.apply(state, cstate, ctx)
    assert (lam_min < -(1 - 0.9) / (1 + 0.9)) == grows
    assert (consensus(state["x"]) > consensus(X)) == grows


def test_push_sum_weights_keep_their_sum_and_debias(data):
    """Card dfedsgpsm §3.1: w^{t+1} = P w^t keeps sum_i w_i = m; the clients' models are z = x / w."""
    eng = engine_for(data, "dfedsgpsm", mixing=C.Mixing(RandomPushSumTopology(M)))
    run_rounds(eng, 3)
    w = eng.state["ps_weight"]
    assert abs(float(w.sum()) - M) < 1e-5 and float((w - 1).abs().max()) > 1e-2
    assert torch.allclose(eng.algo.client_models(eng.state), eng.state["x"] / w)
    assert torch.allclose(eng.x_bar(), eng.state["x"].mean(0))


def test_dfedpgp_never_mixes_personal_parameters_and_mixes_shared_ones(data):
    """Card dfedpgp §3.1: push-sum acts on u only. After round 0 (same start, same batches) the run with a random
    column-stochastic P and the run with P = I have the same v, and u_P = P u_I."""
    P = RandomPushSumTopology(M).matrix(0)
    mixed = engine_for(data, "dfedpgp", mixing=C.Mixing(P))
    alone = engine_for(data, "dfedpgp", mixing=C.Mixing(np.eye(M)))
    mixed.round()
    alone.round()
    v = ~mixed.shared
    X_P, X_I = mixed.state["x"], alone.state["x"]
    assert int(v.sum()) == 8 * data.num_classes + data.num_classes  # the last Linear layer: weight and bias
    assert torch.equal(X_P[:, v], X_I[:, v])
    assert torch.allclose(X_P[:, ~v], torch.tensor(P, dtype=X_I.dtype) @ X_I[:, ~v], atol=1e-6)
    assert (X_P[:, ~v] - X_I[:, ~v]).abs().max() > 1e-3
    assert torch.allclose(mixed.state["ps_weight"], torch.tensor(P, dtype=X_I.dtype).sum(1, keepdim=True))


def test_dfedpgp_split_option(data):
    model = FlatModel(net(data), loss_fn(data.task))
    first = A.make("dfedpgp", personal="1").split(model)
    assert int(first.sum()) == 64 * 8 + 8 and bool(first[: 64 * 8 + 8].all())
    assert not A.make("dfedpgp", personal="none").split(model).any()
    with pytest.raises(ValueError, match="unknown layer"):
        A.make("dfedpgp", personal="head").split(model)
    with pytest.raises(ValueError, match="every layer is personal"):
        A.make("dfedpgp").split(FlatModel(nn.Sequential(nn.Flatten(), nn.Linear(64, 10)), loss_fn(data.task)))
    with pytest.raises(ValueError, match="K_v"):
        A.make("dfedpgp", K_v=-1)


def test_dfedpgp_metrics_are_theorem_1s_quantities(data):
    """Card dfedpgp §2: Delta_ubar^{t-1} = ||grad_u F(ubar^{t-1}, V^t)||^2 (measured after round t-1) and
    Delta_v^t = (1/m) sum_i ||grad_v F_i(u_i^t, v_i^t)||^2 at the biased u_i^t."""
    eng = engine_for(data, "dfedpgp", mixing=C.Mixing(RandomPushSumTopology(M)))
    eng.round()
    ubar_prev = eng.state["x"].mean(0)
    eng.round()
    rec = measure(eng, Evaluator(eng.model, data))
    s, X = eng.shared, eng.state["x"]

    def F(U):  # (1/m) sum_i F_i(U[i]) on the whole local data
        return sum(eng.model.loss_at(U[i], *data.client_data(i)) for i in range(M)) / M

    u = ubar_prev.clone().requires_grad_(True)
    (g_u,) = torch.autograd.grad(F(torch.where(s, u, X)), u)  # (ubar^1, v_i^2) for every client i
    assert rec["grad_norm_sq_u"] == pytest.approx(float((g_u[s] ** 2).sum()), rel=1e-4)
    Xg = X.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(F(Xg) * M, Xg)  # row i: grad f_i(u_i, v_i)
    assert rec["grad_norm_sq_v"] == pytest.approx(float((g[:, ~s] ** 2).sum(1).mean()), rel=1e-4)
    assert rec["train_loss"] == pytest.approx(float(F(torch.where(s, X.mean(0), X))), rel=1e-5)
    Z = eng.client_models()
    assert torch.allclose(Z[:, ~s], X[:, ~s]) and not torch.allclose(Z[:, s], X[:, s])
    acc = [float((eng.model.forward(Z[i], data.x_test[ix]).argmax(-1) == data.y_test[ix]).double().mean())
           for i, ix in enumerate(data.client_test_indices) if len(ix)]
    assert rec["test_acc"] == pytest.approx(np.mean(acc))
    assert "grad_norm_sq" not in rec and rec["grad_norm_sq_v_z"] != rec["grad_norm_sq_v"]


def test_dfedsgpsm_s_needs_the_neighbour_selection_topology(data):
    with pytest.raises(ValueError, match="--topology neighbour-selection"):
        engine_for(data, "dfedsgpsm-s")
    eng = engine_for(data, "dfedsgpsm-s", mixing=C.Mixing(selection(M)))
    eng.round()
    assert eng.sent == 2 * M  # k = 2 out-neighbours per client
    assert abs(float(eng.state["ps_weight"].sum()) - M) < 1e-5


@pytest.mark.parametrize("name,opts", [("dfedavgm", {}), ("dfedpgp", {"momentum": 0.9})])
def test_a_momentum_buffer_reset_every_round_is_not_kept_between_rounds(data, name, opts):
    """The buffer restarts at 0 every round, so it is no part of the run's state (nor of its checkpoints)."""
    mixing = C.Mixing(RandomPushSumTopology(M)) if name == "dfedpgp" else None
    eng = engine_for(data, name, mixing=mixing, **opts)
    assert "momentum" not in eng.state
    eng.round()
    assert "momentum" not in eng.state and "momentum" not in eng.state_dict()["state"]


def test_dfedadmm_auxiliary_point_is_real_below_lambda_equal_eta_with_a_mean_step_count():
    """With local epochs K is the clients' mean step count (not an integer); at lam < eta the base 1 - eta/lam of
    gamma = 1 - (1 - eta/lam)^K is negative, and a fractional power of it would be complex: K is rounded there."""
    aux = A.make("dfedadmm", lam_pen=0.05).aux
    w = aux(torch.ones(3), torch.zeros(3), {}, 0.1, 7.3)["w"]  # base -1, K -> 7, gamma 2: w = 1 - 1/2
    assert w.dtype == torch.float32 and torch.allclose(w, torch.full((3,), 0.5))
    assert torch.allclose(aux(torch.ones(3), torch.zeros(3), {}, 0.01, 2.5)["w"],
                          torch.ones(3) + (1 - (1 - 0.8**2.5)) / (1 - 0.8**2.5))  # base 0.8 > 0: K as it is
