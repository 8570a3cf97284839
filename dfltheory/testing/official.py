"""A harness for the DFedCata authors' public code: the test oracle of the engine's code mode
(``tests/empirical/test_official_dfedcata.py``) and the baseline of ``benchmarks/bench_official.py``.

The authors' classes (``server.DFedCata``, ``client.dfedcata``, ``models.client_model``; ``OFFICIAL``, MIT) are
imported unmodified, never copied, and run by their own ``Server.train`` loop. The harness replaces only what reads
or writes outside the process: their ``dataset.Dataset`` (downloads and transforms; here the tensors are handed over
as they are), the ``DataLoader`` their clients build (a ``loader`` callable of the caller's: one full local batch,
or one sampled minibatch, per local epoch), their evaluation and their result files.

The code lives beside this repository (``../shared/reference``); in a user's clone it is absent and
:func:`available` is False: callers skip.
"""

from __future__ import annotations

import contextlib
import sys
import types
from pathlib import Path

import torch

OFFICIAL = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "dfedcata-official"
_NAMES = ("utils", "dataset", "client", "server", "optimizer", "models")  # their generic top-level names
MAX_NORM = 10  # hard-coded in their Client (self.max_norm = 10)


def available() -> bool:
    return OFFICIAL.is_dir()


def full_batch_loader(dataset, batch_size, shuffle):
    """One local epoch = the client's whole local data set as one batch, in order."""
    if batch_size < len(dataset[1]):
        raise ValueError(f"the full-batch loader feeds whole local data sets; batch size {batch_size} is smaller "
                         f"than the client's {len(dataset[1])} samples")
    return [dataset]


class _Sampled:
    """A client's loader: every iteration (one local epoch) draws one new minibatch of ``batch_size`` samples with
    replacement from the client's data."""

    def __init__(self, dataset, batch_size, generator):
        self.x, self.y = dataset
        self.batch_size, self.generator = batch_size, generator

    def __iter__(self):
        pos = torch.randint(len(self.y), (self.batch_size,), generator=self.generator)
        yield self.x[pos], self.y[pos]


def sampled_loader(generator: torch.Generator):
    """One local epoch = one new minibatch of ``batch_size`` draws with replacement from the client's data (the
    engine's ``ClientSampler``), so ``local_epochs = K`` gives K SGD steps whatever the local data set's size."""
    return lambda dataset, batch_size, shuffle: _Sampled(dataset, batch_size, generator)


@contextlib.contextmanager
def official_modules(loader=full_batch_loader):
    """Import the authors' ``server`` and ``models`` modules with their data loading replaced by ``loader``
    (``(dataset, batch_size, shuffle) -> iterable of (inputs, labels)``); yields a namespace with both. Their
    top-level names leave ``sys.modules`` and ``sys.path`` afterwards (whatever was there before is restored)."""
    if not available():
        raise FileNotFoundError(f"the authors' DFedCata code is not at {OFFICIAL}")
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in _NAMES}
    for k in saved:
        del sys.modules[k]
    stub = types.ModuleType("dataset")  # their dataset.py downloads data; the harness hands tensors directly
    stub.Dataset = lambda data_x, data_y, train=False, dataset_name="": (data_x, data_y)
    sys.modules["dataset"] = stub
    root = str(OFFICIAL)
    sys.path.insert(0, root)
    try:
        import client.client
        import models
        import server

        client.client.data = types.SimpleNamespace(DataLoader=loader)
        yield types.SimpleNamespace(server=server, models=models)
    finally:
        sys.path.remove(root)
        for k in [k for k in sys.modules if k.split(".")[0] in _NAMES]:
            del sys.modules[k]
        sys.modules.update(saved)


def dfedcata_server(modules, model_fn, x0: torch.Tensor, client_x, client_y, *, rounds: int, K: int,
                    batch_size: int, lr: float, lam_pen: float = 0.05, beta: float = 0.9, weight_decay: float = 5e-4,
                    lr_decay: float = 0.998, device="cpu", on_round=None):
    """Their ``server.DFedCata`` on a ring (``cs='ring'``: neighbours i +- 1 and i, mean of 3), ``K`` local epochs
    (their ``local_epochs``), every client's model starting at the flat vector ``x0`` (their client models and
minibatches on ``device``, their model table on the CPU as they keep it). ``on_round(t, srv)``
    replaces their ``_test_`` (evaluation); their summary and result files are switched off. ``srv.train()`` runs
    the rounds; ``srv.time[t]`` is their own wall-clock time of round t."""
    m = len(client_x)
    args = types.SimpleNamespace(
        comm_rounds=rounds, total_client=m, active_ratio=0.5, cs="ring", local_epochs=K, batchsize=batch_size,
        weight_decay=weight_decay, lamb=lam_pen, beta=beta, local_learning_rate=lr, lr_decay=lr_decay,
        momentum=0.0, rho=0.0, seed=0, method="DFedCata", dataset="fake", out_file="")
    datasets = types.SimpleNamespace(client_x=list(client_x), client_y=list(client_y))
    with contextlib.redirect_stdout(None):  # their constructor prints the storage sizes
        srv = modules.server.DFedCata(str(device), model_fn, model_fn().to(device), x0.cpu().clone(), datasets,
                                      "DFedCata", args)
    srv._test_ = (lambda t, selected_clients: on_round(t, srv)) if on_round else (lambda t, selected_clients: None)
    srv._summary_, srv._save_results_ = (lambda: None), (lambda: None)
    return srv
