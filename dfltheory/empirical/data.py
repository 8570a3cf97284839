"""Federated data sets: loaders, client partitions and minibatches stacked over clients.

Every loader returns a :class:`FederatedData`: the pooled train/test tensors plus one index pool per client.
``client_batches`` draws one minibatch per client and stacks them on a leading client axis ``m``, the layout the
vmapped training engine consumes.

Partitions (card section 8 of every spec, ``../shared/spec/*.md``):

* ``dirichlet``: label-ratio split of Hsu, Qi & Brown (2019), the reading used by the FL code bases the papers build
  on: for every class ``k`` draw ``p_k ~ Dir(alpha * 1_m)`` and hand the class's samples to the clients in those
  proportions; redraw the whole split until every client holds at least ``min_size`` samples
  (dfedadmm.md §8, dfedsam.md §8, dfedsgpsm.md §8, dfedcata.md §8, dfedpgp.md §8; the cards note that the papers
  do not state the minimum size).
* ``pathological``: ``c`` classes per client (dfedcata.md §8 "each client has solely 2 randomly chosen classes",
  dfedpgp.md §8 "c classes per client sampled uniformly"). Classes are drawn at random among the least-used ones so
  that every class is held by about ``m c / K`` clients and no data are dropped; each class is split evenly among
  its holders.
* ``iid``: a uniform random split into ``m`` near-equal parts.

The test set is split to follow each client's training label distribution (``client_test_indices``; dfedpgp.md §8
evaluates personal models on such splits); the pooled test set serves the global-model metrics.

Synthetic problems with exactly known constants (``synthetic-quadratic``, ``synthetic-logistic``) are generated per
client; their formulas are in ``docs/empirical-data-models.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

DATASETS = ("digits", "synthetic-quadratic", "synthetic-logistic", "mnist", "fashion-mnist", "cifar10", "cifar100")
PARTITIONS = ("dirichlet", "pathological", "iid")
_SPLIT_SEED = 0  # train/test splits and subsets are fixed; load(seed=...) varies the partition only
_TORCHVISION = {  # name -> (torchvision class, number of classes)
    "mnist": ("MNIST", 10),
    "fashion-mnist": ("FashionMNIST", 10),
    "cifar10": ("CIFAR10", 10),
    "cifar100": ("CIFAR100", 100),
}


class DownloadError(RuntimeError):
    """A torchvision data set could not be downloaded (network, disk, or a corrupted archive)."""


@dataclass
class FederatedData:
    """Pooled train/test tensors and one disjoint index pool per client.

    ``y`` holds int64 labels for ``task='classification'`` and float32 targets for ``task='regression'``.
    ``constants`` holds the problem constants known exactly (or as stated bounds) for the synthetic problems and is
    empty for real data. ``client_test_indices`` (optional) splits the test set like each client's training data.
    """

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    client_indices: list[torch.Tensor]
    num_classes: int
    input_shape: tuple[int, ...]
    name: str
    task: str = "classification"
    constants: dict = field(default_factory=dict)
    client_test_indices: list[torch.Tensor] | None = None

    def __post_init__(self):
        if self.task not in ("classification", "regression"):
            raise ValueError(f"task must be 'classification' or 'regression', got {self.task!r}")
        sizes = [int(ix.numel()) for ix in self.client_indices]
        if not sizes or min(sizes) == 0:
            raise ValueError(f"every client needs at least one training sample; client sizes are {sizes}")
        self._pool = None  # (m, max n_i) padded index matrix, built on first use

    @property
    def n_clients(self) -> int:
        return len(self.client_indices)

    @property
    def client_sizes(self) -> torch.Tensor:
        """n_i, the number of training samples of each client (LongTensor of length m)."""
        return torch.tensor([ix.numel() for ix in self.client_indices], dtype=torch.long)

    def client_data(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        """All training samples of client ``i`` (for full local gradients and test oracles)."""
        ix = self.client_indices[i].to(self.x_train.device)
        return self.x_train[ix], self.y_train[ix]

    def client_batches(self, batch_size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """One minibatch per client, stacked: ``x (m, batch_size, *input_shape)``, ``y (m, batch_size)``.

        Client i draws ``batch_size`` samples uniformly with replacement from its own pool, so the minibatch
        gradient is an unbiased estimate of grad f_i with variance sigma_i^2 / batch_size. All randomness comes
        from ``generator`` (one ``torch.rand`` call), so a seeded generator reproduces the batches.
        """
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        device = self.x_train.device
        if self._pool is None or self._pool.device != device:
            sizes = self.client_sizes
            pool = torch.zeros(self.n_clients, int(sizes.max()), dtype=torch.long)
            for i, ix in enumerate(self.client_indices):
                pool[i, : ix.numel()] = ix
            self._pool, self._sizes = pool.to(device), sizes.to(device)
        u = torch.rand(self.n_clients, int(batch_size), generator=generator, device=generator.device).to(device)
        pos = torch.minimum((u * self._sizes[:, None]).long(), self._sizes[:, None] - 1)
        idx = torch.gather(self._pool, 1, pos)
        return self.x_train[idx], self.y_train[idx]

    def to(self, device) -> FederatedData:
        """A copy with the four data tensors on ``device`` (index pools stay on the CPU)."""
        return replace(
            self,
            x_train=self.x_train.to(device),
            y_train=self.y_train.to(device),
            x_test=self.x_test.to(device),
            y_test=self.y_test.to(device),
        )


# ----------------------------------------------------------------------------------------------------- partitions
def _check_clients(n_clients, n_samples):
    if int(n_clients) != n_clients or n_clients < 1:
        raise ValueError(f"n_clients must be a positive integer, got {n_clients!r}")
    if n_clients > n_samples:
        raise ValueError(f"cannot give {n_clients} clients at least one sample each from {n_samples} samples; "
                         "use fewer clients or more data")


def iid_partition(labels, n_clients, seed=None) -> list[np.ndarray]:
    """Uniform random split of ``range(len(labels))`` into ``n_clients`` near-equal parts."""
    n = len(labels)
    _check_clients(n_clients, n)
    perm = np.random.default_rng(seed).permutation(n)
    return [np.sort(p) for p in np.array_split(perm, n_clients)]


def dirichlet_partition(labels, n_clients, alpha, seed=None, min_size=1, max_tries=1000) -> list[np.ndarray]:
    """Label-ratio Dirichlet split (Hsu, Qi & Brown 2019): class k goes to the clients in proportions Dir(alpha 1_m).

    The split is redrawn until every client holds at least ``min_size`` samples; after ``max_tries`` draws a
    ``ValueError`` asks for a larger ``alpha``, fewer clients or a smaller ``min_size``. Small ``alpha`` gives
    clients few classes; ``alpha -> inf`` approaches the iid split.
    """
    labels = np.asarray(labels)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha must be a positive finite number (Dirichlet concentration), got {alpha!r}")
    if min_size < 1:
        raise ValueError(f"min_size must be at least 1 so that no client is empty, got {min_size!r}")
    _check_clients(n_clients, len(labels))
    if n_clients * min_size > len(labels):
        raise ValueError(f"{n_clients} clients x min_size {min_size} exceeds the {len(labels)} samples")
    rng = np.random.default_rng(seed)
    by_class = [np.flatnonzero(labels == k) for k in np.unique(labels)]
    for _ in range(max_tries):
        parts = [[] for _ in range(n_clients)]
        for ix in by_class:
            ix = rng.permutation(ix)
            # rounded cut points: sample j goes to the client whose share covers j + 1/2; truncated cuts would
            # hand every small class's remainder to the last client
            shares = np.cumsum(rng.dirichlet(np.full(n_clients, float(alpha))))[:-1]
            cuts = np.round(shares * len(ix)).astype(int)
            for client, chunk in enumerate(np.split(ix, cuts)):
                parts[client].append(chunk)
        parts = [np.sort(np.concatenate(p)) for p in parts]
        if min(len(p) for p in parts) >= min_size:
            return parts
    raise ValueError(f"no Dirichlet(alpha={alpha}) split of {len(labels)} samples over {n_clients} clients gave "
                     f"every client at least {min_size} sample(s) in {max_tries} draws; raise alpha, lower "
                     "n_clients or lower min_size")


def pathological_partition(labels, n_clients, classes_per_client, seed=None) -> list[np.ndarray]:
    """Each client holds exactly ``classes_per_client`` classes; each class is split evenly among its holders.

    Clients pick their classes one after another, uniformly among the classes held by the fewest clients so far,
    so every class has ``floor`` or ``ceil`` of ``m c / K`` holders (no data dropped when ``m c >= K``).
    """
    labels = np.asarray(labels)
    classes = np.unique(labels)
    c = classes_per_client
    if int(c) != c or not 1 <= c <= len(classes):
        raise ValueError(f"classes_per_client must be an integer in [1, {len(classes)}] (the number of classes), "
                         f"got {c!r}")
    _check_clients(n_clients, len(labels))
    rng = np.random.default_rng(seed)
    load = np.zeros(len(classes), dtype=int)
    holders = [[] for _ in classes]
    for client in range(n_clients):
        order = np.lexsort((rng.random(len(classes)), load))  # least-used first, random tie-break
        for k in order[: int(c)]:
            holders[k].append(client)
            load[k] += 1
    parts = [[] for _ in range(n_clients)]
    for k, owners in enumerate(holders):
        ix = rng.permutation(np.flatnonzero(labels == classes[k]))
        if owners and len(ix) < len(owners):
            raise ValueError(f"class {classes[k]} has {len(ix)} samples but {len(owners)} clients hold it; "
                             "use fewer clients or fewer classes_per_client")
        for client, chunk in zip(owners, np.array_split(ix, len(owners)) if owners else []):
            parts[client].append(chunk)
    return [np.sort(np.concatenate(p)) for p in parts]


def make_partition(labels, n_clients, partition="dirichlet", alpha=0.3, classes_per_client=2, seed=None,
              min_size=1) -> list[np.ndarray]:
    """Dispatch to the named partition (``dirichlet``, ``pathological`` or ``iid``)."""
    if partition == "dirichlet":
        return dirichlet_partition(labels, n_clients, alpha, seed, min_size=min_size)
    if partition == "pathological":
        return pathological_partition(labels, n_clients, classes_per_client, seed)
    if partition == "iid":
        return iid_partition(labels, n_clients, seed)
    raise ValueError(f"unknown partition {partition!r}; valid partitions: {', '.join(PARTITIONS)}")


def matching_test_partition(train_labels, train_parts, test_labels, seed=None) -> list[np.ndarray]:
    """Split the test set so that client i's test labels follow its training label counts.

    Class k's test samples are shuffled and cut in proportion to the clients' training counts of class k
    (dfedpgp.md §8: "distribution of the test datasets is the same as in training"). A client may get no test
    sample when its classes are rare in the test set.
    """
    train_labels, test_labels = np.asarray(train_labels), np.asarray(test_labels)
    rng = np.random.default_rng(seed)
    parts = [[] for _ in train_parts]
    for k in np.unique(test_labels):
        counts = np.array([np.count_nonzero(train_labels[p] == k) for p in train_parts], dtype=float)
        if counts.sum() == 0:
            continue
        ix = rng.permutation(np.flatnonzero(test_labels == k))
        cuts = np.round(np.cumsum(counts)[:-1] / counts.sum() * len(ix)).astype(int)
        for client, chunk in enumerate(np.split(ix, cuts)):
            parts[client].append(chunk)
    return [np.sort(np.concatenate(p)) if p else np.zeros(0, dtype=int) for p in parts]


# ---------------------------------------------------------------------------------------------------- synthetics
def quadratic_constants(A_list, b_list) -> dict:
    """Exact constants of f(x) = (1/m) sum_i f_i(x), f_i(x) = 1/(2 n_i) ||A_i x - b_i||^2 (float64).

    H_i = A_i^T A_i / n_i, H = mean_i H_i, x* = H^{-1} mean_i A_i^T b_i / n_i, f* = f(x*).
    'L' = max_i lambda_max(H_i) (Assumption 1 of every card, per client); 'L_global' = lambda_max(H);
    'mu' = lambda_min(H); 'sigma_g2_star' = (1/m) sum_i ||grad f_i(x*)||^2 (grad f(x*) = 0), the heterogeneity at
    the optimum; 'zeta2' = lambda_max((1/m) sum_i (H_i - H)^2), so that for every x
    (1/m) sum_i ||grad f_i(x) - grad f(x)||^2 <= (sqrt(sigma_g2_star) + sqrt(zeta2) ||x - x*||)^2;
    'sigma_g2_sup' = sup_x of the same quantity, present only when it is finite (all H_i equal, then it equals
    sigma_g2_star); 'sigma_l2_star' = max_i (1/n_i) sum_j ||a_ij (a_ij^T x* - b_ij) - grad f_i(x*)||^2, the
    single-sample gradient variance at x* (divide by the batch size for with-replacement minibatches).
    """
    A_list = [np.asarray(A, dtype=np.float64) for A in A_list]
    b_list = [np.asarray(b, dtype=np.float64) for b in b_list]
    H_i = np.stack([A.T @ A / len(A) for A in A_list])
    c_i = np.stack([A.T @ b / len(A) for A, b in zip(A_list, b_list)])
    H = H_i.mean(0)
    x_star = np.linalg.solve(H, c_i.mean(0))
    f_i = np.array([0.5 * np.mean((A @ x_star - b) ** 2) for A, b in zip(A_list, b_list)])
    g_i = H_i @ x_star - c_i
    D = H_i - H
    zeta2 = float(np.linalg.eigvalsh(np.einsum("iab,ibc->ac", D, D) / len(D))[-1])
    sample_var = []
    for A, b, g in zip(A_list, b_list, g_i):
        per_sample = A * (A @ x_star - b)[:, None]
        sample_var.append(np.mean(np.sum((per_sample - g) ** 2, axis=1)))
    eig_H = np.linalg.eigvalsh(H)
    constants = {
        "L": float(max(np.linalg.eigvalsh(h)[-1] for h in H_i)),
        "L_global": float(eig_H[-1]),
        "mu": float(eig_H[0]),
        "x_star": torch.from_numpy(x_star),
        "f_star": float(f_i.mean()),
        "sigma_g2_star": float(np.mean(np.sum(g_i**2, axis=1))),
        "zeta2": zeta2,
        "sigma_l2_star": float(max(sample_var)),
    }
    if zeta2 <= 1e-12 * max(1.0, constants["L"] ** 2):
        constants["sigma_g2_sup"] = constants["sigma_g2_star"]
    return constants


def _check_sizes(dim, n_per_client, n_test_per_client):
    for key, value, low in (("dim", dim, 1), ("n_per_client", n_per_client, 1),
                            ("n_test_per_client", n_test_per_client, 0)):
        if int(value) != value or value < low:
            raise ValueError(f"{key} must be an integer >= {low}, got {value!r}")


def _synthetic_quadratic(n_clients, seed, dim=20, n_per_client=100, n_test_per_client=50, heterogeneity=1.0,
                         noise=0.5, shared_design=False):
    """Client i: rows a ~ N(0, I_d), b = A_i (x_0 + heterogeneity u_i) + noise eps with u_i, eps ~ N(0, I)."""
    _check_sizes(dim, n_per_client, n_test_per_client)
    if heterogeneity < 0 or noise < 0:
        raise ValueError(f"heterogeneity and noise must be >= 0, got {heterogeneity!r} and {noise!r}")
    rng = np.random.default_rng(seed)
    n_tot = n_per_client + n_test_per_client
    x0 = rng.standard_normal(dim)
    shifts = rng.standard_normal((n_clients, dim))
    shared = rng.standard_normal((n_tot, dim))
    A = np.stack([shared if shared_design else rng.standard_normal((n_tot, dim)) for _ in range(n_clients)])
    eps = rng.standard_normal((n_clients, n_tot))
    b = np.einsum("ind,id->in", A, x0 + heterogeneity * shifts) + noise * eps
    A, b = A.astype(np.float32), b.astype(np.float32)  # constants are exact for the stored float32 data
    tr, te = slice(0, n_per_client), slice(n_per_client, n_tot)
    constants = quadratic_constants(A[:, tr], b[:, tr])
    constants["heterogeneity"] = float(heterogeneity)
    return _per_client_data(A[:, tr], b[:, tr], A[:, te], b[:, te], 1, (dim,), "synthetic-quadratic",
                            "regression", constants)


def _synthetic_logistic(n_clients, seed, dim=20, n_per_client=100, n_test_per_client=50, heterogeneity=1.0):
    """Client i: a ~ N(heterogeneity v_i, I_d), P(y = 1 | a) = sigmoid(a^T (w_0 + heterogeneity u_i)).

    Constants for the two-logit softmax model ``make_model('logreg', (d,), 2)`` (weights W in R^{2 x d} and a
    bias), valid for every parameter value. With a~ = (a, 1), the Hessian of one sample's cross-entropy is
    p(1-p) [[1, -1], [-1, 1]] (x) a~ a~^T, whose largest eigenvalue is 2 p (1-p) ||a~||^2 <= ||a~||^2 / 2
    (the classical ||a||^2/4 of the one-vector sigmoid parameterisation, doubled by the two-logit one), so
    'L' = max_i lambda_max(A~_i^T A~_i / n_i) / 2 and 'L_sample' = max_j ||a~_j||^2 / 2 bound the client and
    per-sample smoothness. The gradient of one sample's loss is (p - e_y) a~^T with ||p - e_y||^2 <= 2, so
    'B' = sqrt(2) max_j ||a~_j|| bounds every ||grad f_i(x)|| (Assumption 4 of dfedadmm.md §4). Both the
    heterogeneity (1/m) sum_i ||grad f_i - grad f||^2 = mean_i ||grad f_i||^2 - ||grad f||^2 and the one-sample
    variance are at most B^2: 'sigma_g2_bound' = 'sigma_l2_bound' = B^2. These are upper bounds, not exact values.
    """
    _check_sizes(dim, n_per_client, n_test_per_client)
    if heterogeneity < 0:
        raise ValueError(f"heterogeneity must be >= 0, got {heterogeneity!r}")
    rng = np.random.default_rng(seed)
    n_tot = n_per_client + n_test_per_client
    w0 = rng.standard_normal(dim) * 2 / np.sqrt(dim)
    u = rng.standard_normal((n_clients, dim)) * 2 / np.sqrt(dim)
    v = rng.standard_normal((n_clients, dim)) / np.sqrt(dim)
    A = rng.standard_normal((n_clients, n_tot, dim)) + heterogeneity * v[:, None, :]
    logits = np.einsum("ind,id->in", A, w0 + heterogeneity * u)
    y = (rng.random((n_clients, n_tot)) < 1 / (1 + np.exp(-logits))).astype(np.int64)
    A = A.astype(np.float32)
    At = np.concatenate([A[:, :n_per_client], np.ones((n_clients, n_per_client, 1), np.float32)], axis=2)
    At = At.astype(np.float64)
    B = float(np.sqrt(2) * np.sqrt(np.max(np.sum(At**2, axis=2))))
    constants = {
        "L": float(max(np.linalg.eigvalsh(a.T @ a / len(a))[-1] for a in At)) / 2,
        "L_sample": float(np.max(np.sum(At**2, axis=2))) / 2,
        "B": B,
        "sigma_g2_bound": B**2,
        "sigma_l2_bound": B**2,
        "heterogeneity": float(heterogeneity),
    }
    tr, te = slice(0, n_per_client), slice(n_per_client, n_tot)
    return _per_client_data(A[:, tr], y[:, tr], A[:, te], y[:, te], 2, (dim,), "synthetic-logistic",
                            "classification", constants)


def _per_client_data(A_tr, y_tr, A_te, y_te, num_classes, input_shape, name, task, constants):
    m, n_tr, n_te = A_tr.shape[0], A_tr.shape[1], A_te.shape[1]
    return FederatedData(
        x_train=torch.from_numpy(np.ascontiguousarray(A_tr.reshape(m * n_tr, -1))),
        y_train=torch.from_numpy(np.ascontiguousarray(y_tr.reshape(-1))),
        x_test=torch.from_numpy(np.ascontiguousarray(A_te.reshape(m * n_te, -1))),
        y_test=torch.from_numpy(np.ascontiguousarray(y_te.reshape(-1))),
        client_indices=[torch.arange(i * n_tr, (i + 1) * n_tr) for i in range(m)],
        client_test_indices=[torch.arange(i * n_te, (i + 1) * n_te) for i in range(m)],
        num_classes=num_classes, input_shape=input_shape, name=name, task=task, constants=constants,
    )


# ---------------------------------------------------------------------------------------------------- real data
def default_root() -> Path:
    """``$DFLTHEORY_DATA`` if set, else ``~/.cache/dfltheory/data``."""
    return Path(os.environ.get("DFLTHEORY_DATA", Path.home() / ".cache" / "dfltheory" / "data"))


def _digits(test_fraction=0.25):
    """scikit-learn's 8x8 digits (1,797 images, shipped with the package), as (1, 8, 8) images in [0, 1].

    The train/test split is fixed (seed 0), so that ``load``'s ``seed`` varies only the client partition.
    """
    from sklearn.datasets import load_digits

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    perm = np.random.default_rng(_SPLIT_SEED).permutation(len(x))
    n_test = int(round(test_fraction * len(x)))
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], d.target[tr].astype(np.int64), x[te], d.target[te].astype(np.int64), 10


def _torchvision(name, root, download, train_size=None, test_size=None):
    """MNIST / Fashion-MNIST (1, 28, 28) and CIFAR-10/100 (3, 32, 32), read straight from the arrays.

    ``train_size`` / ``test_size`` keep fixed random subsets (seed 0, independent of ``load``'s ``seed``).
    """
    import torchvision.datasets

    cls_name, num_classes = _TORCHVISION[name]
    root = Path(root) if root is not None else default_root()
    cls = getattr(torchvision.datasets, cls_name)
    arrays = []
    for train in (True, False):
        try:
            ds = cls(str(root), train=train, download=bool(download))
        except (RuntimeError, OSError) as err:
            if download:
                raise DownloadError(f"could not download {name} into root directory '{root}': {err}") from err
            raise FileNotFoundError(f"{name} ({cls_name}) not found under root directory '{root}'; pass "
                                    "download=True where the network is reachable, or put the torchvision files "
                                    "there") from err
        x = np.asarray(ds.data)
        x = x[:, None] if x.ndim == 3 else x.transpose(0, 3, 1, 2)  # (N, C, H, W)
        arrays += [x, np.asarray(ds.targets, dtype=np.int64)]
    rng = np.random.default_rng(_SPLIT_SEED)
    for j, size in ((0, train_size), (2, test_size)):
        if size is not None:
            if not 1 <= size <= len(arrays[j]):
                raise ValueError(f"{'train' if j == 0 else 'test'}_size must lie in [1, {len(arrays[j])}], "
                                 f"got {size!r}")
            keep = np.sort(rng.choice(len(arrays[j]), size, replace=False))
            arrays[j], arrays[j + 1] = arrays[j][keep], arrays[j + 1][keep]
    return (*arrays, num_classes)


def _standardize(x_train, x_test):
    """Per-channel standardisation with the training set's mean and standard deviation."""
    x_train = x_train.astype(np.float32) / 255.0 if x_train.dtype == np.uint8 else x_train.astype(np.float32)
    x_test = x_test.astype(np.float32) / 255.0 if x_test.dtype == np.uint8 else x_test.astype(np.float32)
    axes = (0, 2, 3)
    mean, std = x_train.mean(axis=axes, keepdims=True), x_train.std(axis=axes, keepdims=True) + 1e-8
    return (x_train - mean) / std, (x_test - mean) / std


_KW = {
    "digits": ("test_fraction",),
    "synthetic-quadratic": ("dim", "n_per_client", "n_test_per_client", "heterogeneity", "noise", "shared_design"),
    "synthetic-logistic": ("dim", "n_per_client", "n_test_per_client", "heterogeneity"),
    **{name: ("train_size", "test_size") for name in _TORCHVISION},
}


def load(name, n_clients, partition="dirichlet", alpha=0.3, classes_per_client=2, seed=0, root=None,
         download=False, min_size=1, **kw) -> FederatedData:
    """Load data set ``name`` split over ``n_clients`` clients.

    names: 'digits' (embedded default), 'synthetic-quadratic', 'synthetic-logistic', 'mnist', 'fashion-mnist',
    'cifar10', 'cifar100'. partition: 'dirichlet' (concentration ``alpha``), 'pathological'
    (``classes_per_client``) or 'iid'. The synthetic problems are generated client by client and ignore
    ``partition``; their heterogeneity is set by ``heterogeneity=``. torchvision data are read from ``root``
    (default :func:`default_root`) and fetched only with ``download=True``. Extra keywords per data set:
    digits ``test_fraction``; synthetics ``dim, n_per_client, n_test_per_client, heterogeneity`` (+ ``noise,
    shared_design`` for the quadratic); torchvision ``train_size, test_size`` (fixed random subsets).
    ``seed`` draws the partition (and the synthetic data); the train/test split of real data does not depend on it.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; valid names: {', '.join(DATASETS)}")
    if partition not in PARTITIONS:
        raise ValueError(f"unknown partition {partition!r}; valid partitions: {', '.join(PARTITIONS)}")
    unknown = sorted(set(kw) - set(_KW[name]))
    if unknown:
        raise ValueError(f"unexpected keyword(s) {unknown} for {name!r}; accepted: {', '.join(_KW[name])}")
    if int(n_clients) != n_clients or n_clients < 1:
        raise ValueError(f"n_clients must be a positive integer, got {n_clients!r}")
    if partition == "dirichlet" and not alpha > 0:
        raise ValueError(f"alpha must be > 0 for the Dirichlet partition, got {alpha!r}")
    if name == "synthetic-quadratic":
        return _synthetic_quadratic(int(n_clients), seed, **kw)
    if name == "synthetic-logistic":
        return _synthetic_logistic(int(n_clients), seed, **kw)
    if name == "digits":
        x_tr, y_tr, x_te, y_te, num_classes = _digits(**kw)
    else:
        x_tr, y_tr, x_te, y_te, num_classes = _torchvision(name, root, download, **kw)
        x_tr, x_te = _standardize(x_tr, x_te)
    parts = make_partition(y_tr, int(n_clients), partition, alpha, classes_per_client, seed, min_size)
    test_parts = (iid_partition(y_te, int(n_clients), seed) if partition == "iid" and len(y_te) >= n_clients
                  else matching_test_partition(y_tr, parts, y_te, seed))
    return FederatedData(
        x_train=torch.from_numpy(np.ascontiguousarray(x_tr)),
        y_train=torch.from_numpy(y_tr),
        x_test=torch.from_numpy(np.ascontiguousarray(x_te)),
        y_test=torch.from_numpy(y_te),
        client_indices=[torch.from_numpy(p.astype(np.int64)) for p in parts],
        client_test_indices=[torch.from_numpy(p.astype(np.int64)) for p in test_parts],
        num_classes=num_classes, input_shape=tuple(x_tr.shape[1:]), name=name, task="classification",
    )
