"""Tests of dfltheory.empirical.data: partitions, loaders, stacked client batches, exact synthetic constants."""

import os
import pickle
import urllib.error

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import functional_call, grad, vmap

from dfltheory.empirical import data as D
from dfltheory.empirical.models import loss_fn, make_model


def _assert_disjoint_cover(parts, n):
    allix = np.concatenate(parts)
    assert len(allix) == n and len(np.unique(allix)) == n  # every sample exactly once


# ---------------------------------------------------------------------------------------------------- partitions
@settings(max_examples=30, deadline=None)
@given(n_classes=st.integers(2, 6), n_clients=st.integers(1, 12), alpha=st.floats(0.3, 10.0),
       seed=st.integers(0, 2**16))
def test_dirichlet_partition_is_disjoint_cover_without_empty_clients(n_classes, n_clients, alpha, seed):
    labels = np.random.default_rng(seed).integers(0, n_classes, 120)
    parts = D.dirichlet_partition(labels, n_clients, alpha, seed)
    assert len(parts) == n_clients
    _assert_disjoint_cover(parts, len(labels))
    assert min(len(p) for p in parts) >= 1
    again = D.dirichlet_partition(labels, n_clients, alpha, seed)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))  # reproducible


def test_dirichlet_partition_that_cannot_fill_every_client_says_how_to_fix_it():
    """alpha = 0.0625 puts each of 2 classes on about one client: 9 clients cannot all get a sample."""
    labels = np.random.default_rng(0).integers(0, 2, 120)
    with pytest.raises(ValueError, match="raise alpha, lower n_clients or lower min_size"):
        D.dirichlet_partition(labels, 9, 0.0625, 0)


def test_dirichlet_alpha_controls_label_skew():
    labels = np.repeat(np.arange(10), 200)
    def mean_classes(alpha):
        parts = D.dirichlet_partition(labels, 20, alpha, seed=1)
        return np.mean([len(np.unique(labels[p])) for p in parts])
    assert mean_classes(0.05) < 4 < 9.5 < mean_classes(100.0)


def test_dirichlet_min_size_is_enforced():
    labels = np.repeat(np.arange(5), 40)
    parts = D.dirichlet_partition(labels, 8, 0.5, seed=0, min_size=10)
    assert min(len(p) for p in parts) >= 10


@pytest.mark.parametrize("alpha", [0.0, -1.0, float("nan")])
def test_dirichlet_rejects_nonpositive_alpha(alpha):
    with pytest.raises(ValueError, match="alpha"):
        D.dirichlet_partition(np.zeros(10, int), 2, alpha, 0)
    with pytest.raises(ValueError, match="alpha"):
        D.load("digits", 4, partition="dirichlet", alpha=alpha)


def test_dirichlet_impossible_split_raises_clear_message():
    labels = np.repeat(np.arange(2), 10)
    with pytest.raises(ValueError, match="at least 1 sample"):
        D.dirichlet_partition(labels, 20, 1e-3, seed=0, max_tries=5)
    with pytest.raises(ValueError, match="clients"):
        D.dirichlet_partition(labels, 21, 1.0, seed=0)


@settings(max_examples=25, deadline=None)
@given(n_clients=st.integers(1, 15), c=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_pathological_partition_gives_exactly_c_classes(n_clients, c, seed):
    labels = np.repeat(np.arange(5), 30)
    parts = D.pathological_partition(labels, n_clients, c, seed)
    assert [len(np.unique(labels[p])) for p in parts] == [c] * n_clients
    allix = np.concatenate(parts)
    assert len(np.unique(allix)) == len(allix)  # disjoint
    if n_clients * c >= 5:
        assert len(allix) == len(labels)  # balanced class assignment drops no data


@pytest.mark.parametrize("c", [0, 6, 1.5])
def test_pathological_rejects_bad_class_count(c):
    with pytest.raises(ValueError, match="classes_per_client"):
        D.pathological_partition(np.repeat(np.arange(5), 4), 3, c, 0)


def test_iid_partition_is_balanced():
    parts = D.iid_partition(np.zeros(103), 10, seed=0)
    _assert_disjoint_cover(parts, 103)
    assert {len(p) for p in parts} == {10, 11}


def test_matching_test_partition_follows_train_labels():
    rng = np.random.default_rng(0)
    y_tr, y_te = rng.integers(0, 10, 500), rng.integers(0, 10, 200)
    parts = D.pathological_partition(y_tr, 10, 2, seed=0)
    test_parts = D.matching_test_partition(y_tr, parts, y_te, seed=0)
    _assert_disjoint_cover(test_parts, 200)
    for p, q in zip(parts, test_parts):
        assert set(y_te[q]) <= set(y_tr[p])


# ---------------------------------------------------------------------------------------------------- load / API
def test_load_rejects_bad_names_listing_valid_ones():
    with pytest.raises(ValueError, match="synthetic-quadratic.*cifar100"):
        D.load("imagenet", 4)
    with pytest.raises(ValueError, match="dirichlet, pathological, iid"):
        D.load("digits", 4, partition="shards")
    with pytest.raises(ValueError, match="test_fraction"):
        D.load("digits", 4, bogus=1)
    with pytest.raises(ValueError, match="n_per_client"):
        D.load("synthetic-logistic", 4, n_per_client=0)
    with pytest.raises(ValueError, match="heterogeneity"):
        D.load("synthetic-quadratic", 4, heterogeneity=-1.0)


@pytest.mark.parametrize("partition", ["dirichlet", "pathological", "iid"])
def test_load_digits(partition):
    fd = D.load("digits", 12, partition=partition, alpha=0.3, classes_per_client=3, seed=2)
    assert fd.x_train.dtype == torch.float32 and fd.y_train.dtype == torch.int64
    assert fd.input_shape == (1, 8, 8) and fd.num_classes == 10 and fd.task == "classification"
    assert len(fd.x_train) + len(fd.x_test) == 1797 and fd.constants == {}
    _assert_disjoint_cover([ix.numpy() for ix in fd.client_indices], len(fd.y_train))
    assert min(fd.client_sizes) >= 1
    if partition == "pathological":
        assert all(len(fd.y_train[ix].unique()) == 3 for ix in fd.client_indices)
    assert 0 <= fd.x_train.min() and fd.x_train.max() <= 1


def test_seed_varies_partition_not_the_train_test_split():
    a, b = D.load("digits", 5, seed=0), D.load("digits", 5, seed=1)
    assert torch.equal(a.x_test, b.x_test) and torch.equal(a.y_train, b.y_train)
    assert not all(torch.equal(p, q) for p, q in zip(a.client_indices, b.client_indices))
    c = D.load("digits", 5, seed=0)
    assert all(torch.equal(p, q) for p, q in zip(a.client_indices, c.client_indices))


def test_client_batches_shapes_reproducible_and_from_own_pool():
    m, n = 4, 5
    x = torch.arange(m * n, dtype=torch.float32)[:, None]  # feature = sample index
    fd = D.FederatedData(x, torch.arange(m * n), x[:2], torch.arange(2),
                         [torch.arange(i * n, i * n + n - i) for i in range(m)], 20, (1,), "toy")
    xb, yb = fd.client_batches(50, torch.Generator().manual_seed(3))
    assert xb.shape == (m, 50, 1) and yb.shape == (m, 50)
    for i in range(m):  # client i only ever sees its own samples, and all of them (with replacement)
        assert set(yb[i].tolist()) == set(fd.client_indices[i].tolist())
    xb2, _ = fd.client_batches(50, torch.Generator().manual_seed(3))
    xb3, _ = fd.client_batches(50, torch.Generator().manual_seed(4))
    assert torch.equal(xb, xb2) and not torch.equal(xb, xb3)
    with pytest.raises(ValueError, match="batch_size"):
        fd.client_batches(0, torch.Generator())


def test_client_batches_sample_uniformly():
    fd = D.FederatedData(torch.zeros(4, 1), torch.arange(4), torch.zeros(1, 1), torch.arange(1),
                         [torch.arange(4)], 4, (1,), "toy")
    _, yb = fd.client_batches(40000, torch.Generator().manual_seed(0))
    freq = torch.bincount(yb[0], minlength=4) / 40000
    assert torch.allclose(freq, torch.full((4,), 0.25), atol=0.01)


def test_empty_client_is_rejected():
    with pytest.raises(ValueError, match="at least one training sample"):
        D.FederatedData(torch.zeros(3, 1), torch.zeros(3, dtype=torch.long), torch.zeros(1, 1),
                        torch.zeros(1, dtype=torch.long), [torch.arange(3), torch.arange(0)], 2, (1,), "toy")


# ---------------------------------------------------------------------------------------------------- synthetics
def _client_grads(fd, x):
    """Full local gradients grad f_i(x) of the linear least-squares model, autograd oracle (per-client loop)."""
    model, loss = make_model("linear", fd.input_shape, 1), loss_fn("regression")
    params = {"1.weight": x.reshape(1, -1).float().requires_grad_(True)}
    out = []
    for i in range(fd.n_clients):
        xi, yi = fd.client_data(i)
        f = loss(functional_call(model, params, (xi,)), yi)
        out.append((torch.autograd.grad(f, params["1.weight"])[0].reshape(-1).double(), f.item()))
    return torch.stack([g for g, _ in out]), np.array([f for _, f in out])


def test_quadratic_constants_match_autograd():
    fd = D.load("synthetic-quadratic", 5, dim=6, n_per_client=30, heterogeneity=0.7, noise=0.3, seed=1)
    c = fd.constants
    assert fd.task == "regression" and fd.y_train.dtype == torch.float32 and fd.num_classes == 1
    g, f = _client_grads(fd, c["x_star"])
    assert g.mean(0).norm() < 1e-4  # grad f(x*) = 0
    assert f.mean() == pytest.approx(c["f_star"], rel=1e-5)
    assert (g**2).sum(1).mean().item() == pytest.approx(c["sigma_g2_star"], rel=1e-4)
    hess = [xi.double().T @ xi.double() / len(xi) for xi, _ in map(fd.client_data, range(5))]
    assert c["L"] == pytest.approx(max(torch.linalg.eigvalsh(h)[-1].item() for h in hess), rel=1e-9)
    assert c["L_global"] == pytest.approx(torch.linalg.eigvalsh(sum(hess) / 5)[-1].item(), rel=1e-9)
    assert 0 < c["mu"] <= c["L_global"] <= c["L"]
    delta = torch.randn(6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    g_rand, f_rand = _client_grads(fd, c["x_star"] + delta)
    assert f_rand.mean() > c["f_star"]
    het = ((g_rand - g_rand.mean(0)) ** 2).sum(1).mean().item()
    assert het <= (np.sqrt(c["sigma_g2_star"]) + np.sqrt(c["zeta2"]) * delta.norm().item()) ** 2 + 1e-6
    assert "sigma_g2_sup" not in c  # distinct client Hessians: heterogeneity is unbounded in x


def test_quadratic_sample_variance_matches_per_sample_gradients():
    fd = D.load("synthetic-quadratic", 3, dim=4, n_per_client=20, seed=5)
    model, loss = make_model("linear", (4,), 1), loss_fn("regression")
    params = {"1.weight": fd.constants["x_star"].reshape(1, -1).float()}
    per_sample = vmap(grad(lambda p, x, y: loss(functional_call(model, p, (x[None],)), y[None])),
                      in_dims=(None, 0, 0))
    worst = 0.0
    for i in range(3):
        gs = per_sample(params, *fd.client_data(i))["1.weight"].reshape(20, -1).double()
        worst = max(worst, ((gs - gs.mean(0)) ** 2).sum(1).mean().item())
    assert worst == pytest.approx(fd.constants["sigma_l2_star"], rel=1e-4)


def test_quadratic_heterogeneity_knob_is_exact():
    c = [D.load("synthetic-quadratic", 4, dim=5, heterogeneity=h, noise=0.0, seed=3).constants for h in (0, 1, 2)]
    assert c[0]["sigma_g2_star"] < 1e-8 and c[0]["f_star"] < 1e-8  # one shared model, no noise
    assert c[2]["sigma_g2_star"] == pytest.approx(4 * c[1]["sigma_g2_star"], rel=1e-4)  # grows as h^2
    assert c[1]["L"] == c[2]["L"]  # the knob moves b_i only


def test_quadratic_shared_design_has_exact_sup_heterogeneity():
    fd = D.load("synthetic-quadratic", 4, dim=5, n_per_client=40, shared_design=True, seed=0)
    c = fd.constants
    assert c["sigma_g2_sup"] == c["sigma_g2_star"] > 0
    g, _ = _client_grads(fd, 3 * torch.randn(5, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    het = ((g - g.mean(0)) ** 2).sum(1).mean().item()
    assert het == pytest.approx(c["sigma_g2_sup"], rel=1e-3)  # constant in x


def test_logistic_constants_bound_hessian_and_gradients():
    fd = D.load("synthetic-logistic", 3, dim=4, n_per_client=25, heterogeneity=1.5, seed=0)
    c = fd.constants
    assert fd.num_classes == 2 and set(fd.y_train.unique().tolist()) == {0, 1}
    model, loss = make_model("logreg", (4,), 2), loss_fn("classification")
    names = [n for n, _ in model.named_parameters()]
    shapes = [p.shape for _, p in model.named_parameters()]
    def unflat(theta):
        out, k = {}, 0
        for n, s in zip(names, shapes):
            out[n] = theta[k:k + s.numel()].reshape(s)
            k += s.numel()
        return out
    gen = torch.Generator().manual_seed(0)
    for i in range(3):
        xi, yi = fd.client_data(i)
        xi = xi.double()
        model.double()
        for _ in range(3):
            theta = 3 * torch.randn(10, generator=gen, dtype=torch.float64)
            H = torch.autograd.functional.hessian(lambda t: loss(functional_call(model, unflat(t), (xi,)), yi), theta)
            assert torch.linalg.eigvalsh(H)[-1].item() <= c["L"] + 1e-9
            gs = vmap(grad(lambda t, x, y: loss(functional_call(model, unflat(t), (x[None],)), y[None])),
                      in_dims=(None, 0, 0))(theta, xi, yi)
            assert gs.norm(dim=1).max().item() <= c["B_sample"] + 1e-9  # every stochastic gradient
            assert gs.mean(0).norm().item() <= c["B"] + 1e-9  # the client gradient (Assumption 'bounded gradient')
            assert ((gs - gs.mean(0)) ** 2).sum(1).mean().item() <= c["sigma_l2_bound"] + 1e-9
    at_zero = []  # at theta = 0, p = 1/2 and the Hessian bound is attained: L is tight
    for i in range(3):
        xi, yi = fd.client_data(i)
        H = torch.autograd.functional.hessian(
            lambda t: loss(functional_call(model, unflat(t), (xi.double(),)), yi), torch.zeros(10, dtype=torch.float64))
        at_zero.append(torch.linalg.eigvalsh(H)[-1].item())
    assert max(at_zero) == pytest.approx(c["L"], rel=1e-9)
    assert c["L"] <= c["L_sample"] and c["B"] <= c["B_sample"] and c["sigma_g2_bound"] <= c["B"] ** 2


# ---------------------------------------------------------------------------------------------------- torchvision
def _write_idx(path, arr, magic):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(np.array([magic, *arr.shape], dtype=">i4").tobytes())
        f.write(arr.astype(np.uint8).tobytes())


@pytest.mark.parametrize("name,folder", [("mnist", "MNIST"), ("fashion-mnist", "FashionMNIST")])
def test_mnist_family_from_fake_files(tmp_path, name, folder):
    rng = np.random.default_rng(0)
    raw = tmp_path / folder / "raw"
    for split, n in (("train", 60), ("t10k", 20)):
        _write_idx(raw / f"{split}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28)), 2051)
        _write_idx(raw / f"{split}-labels-idx1-ubyte", np.arange(n) % 10, 2049)
    fd = D.load(name, 5, partition="pathological", classes_per_client=2, root=tmp_path, seed=0)
    assert fd.x_train.shape == (60, 1, 28, 28) and fd.x_test.shape == (20, 1, 28, 28)
    assert fd.input_shape == (1, 28, 28) and fd.num_classes == 10
    assert torch.equal(fd.y_train, torch.arange(60) % 10)
    assert abs(fd.x_train.mean().item()) < 1e-4 and fd.x_train.std().item() == pytest.approx(1.0, rel=1e-2)
    sub = D.load(name, 2, partition="iid", root=tmp_path, train_size=10, test_size=4)
    assert len(sub.y_train) == 10 and len(sub.y_test) == 4


@pytest.mark.parametrize("name,num_classes", [("cifar10", 10), ("cifar100", 100)])
def test_cifar_from_fake_pickles(tmp_path, monkeypatch, name, num_classes):
    import torchvision.datasets.cifar as cifar

    monkeypatch.setattr(cifar, "check_integrity", lambda fpath, md5=None: os.path.isfile(fpath))  # no md5 of fakes
    cls = cifar.CIFAR10 if name == "cifar10" else cifar.CIFAR100
    folder = tmp_path / cls.base_folder
    folder.mkdir()
    rng = np.random.default_rng(0)
    key = "labels" if name == "cifar10" else "fine_labels"
    files = [f for f, _ in cls.train_list + cls.test_list]
    for f in files:
        batch = {"data": rng.integers(0, 256, (num_classes, 3072), dtype=np.uint8), key: list(range(num_classes))}
        (folder / f).write_bytes(pickle.dumps(batch))
    (folder / cls.meta["filename"]).write_bytes(pickle.dumps({cls.meta["key"]: [str(k) for k in range(num_classes)]}))
    fd = D.load(name, 4, partition="dirichlet", alpha=1.0, root=tmp_path, seed=0)
    n_train = num_classes * len(cls.train_list)
    assert fd.x_train.shape == (n_train, 3, 32, 32) and fd.x_test.shape == (num_classes, 3, 32, 32)
    assert fd.num_classes == num_classes and fd.input_shape == (3, 32, 32)
    assert torch.allclose(fd.x_train.mean(dim=(0, 2, 3)), torch.zeros(3), atol=1e-4)  # per-channel standardised


def test_missing_dataset_names_root(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "nowhere")):
        D.load("cifar10", 4, root=tmp_path / "nowhere", download=False)


def test_download_flag_reaches_torchvision_and_failure_names_root(tmp_path, monkeypatch):
    import torchvision.datasets.cifar as cifar

    calls = []
    def offline(url, root, **kw):
        calls.append(url)
        raise urllib.error.URLError("network unreachable")
    monkeypatch.setattr(cifar, "download_and_extract_archive", offline)
    with pytest.raises(RuntimeError, match=f"could not download cifar100 into root directory '{tmp_path}'"):
        D.load("cifar100", 4, root=tmp_path, download=True)
    assert calls and "cifar-100" in calls[0]


@pytest.mark.parametrize("name,shape,classes", [("mnist", (1, 28, 28), 10), ("cifar100", (3, 32, 32), 100)])
def test_fake_images_have_the_data_sets_shapes_and_read_nothing(tmp_path, name, shape, classes):
    a = D.load(name, 4, root=tmp_path / "none", fake=True, train_size=300, test_size=40, seed=0)
    b = D.load(name, 4, root=tmp_path / "none", fake=True, train_size=300, test_size=40, seed=1)
    assert a.input_shape == shape and a.num_classes == classes and len(a.y_train) == 300 and len(a.y_test) == 40
    assert not (tmp_path / "none").exists()
    assert torch.equal(a.x_train, b.x_train) and a.client_sizes.tolist() != b.client_sizes.tolist()  # seed: split only
    assert abs(float(a.x_train.mean())) < 1e-3 and float(a.x_train.std()) == pytest.approx(1.0, abs=1e-3)
    # each class has its own pattern: the class means differ by more than the noise of a mean
    means = torch.stack([a.x_train[a.y_train == k].mean(0) for k in a.y_train.unique()[:2]])
    assert float((means[0] - means[1]).abs().mean()) > 0.3
    with pytest.raises(ValueError, match=r"train_size must lie in \[1, "):
        D.load(name, 4, fake=True, train_size=10**6)
