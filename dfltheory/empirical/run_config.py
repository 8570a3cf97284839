"""A train run's configuration as a typed record: :class:`RunConfig`, whose fields are the ``train`` command's
options (their names are the config keys of ``config.json``, of run config files and of sweeps).

A run config is read and written as a dict (``config.json``, the run caches' keys); a RunConfig holds exactly the
options that dict gives, a given ``None`` included (an option left out stays :data:`UNSET` and out of
:meth:`RunConfig.to_dict`), so that ``RunConfig.from_dict(cfg).to_dict() == cfg`` and a cache key, a hash of the
dict (:class:`dfltheory.empirical.sweep.RunCache`), is the same for the record as for the dict. The options' ranges
are :func:`dfltheory.empirical.runner.check_options`'s, declared once as :mod:`dfltheory.constraints`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


class _Unset:
    """An option the config does not give (its default applies)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _option(doc: str):
    return field(default=UNSET, metadata={"doc": doc})


@dataclass(frozen=True)
class RunConfig:
    """The options of one ``train`` run; each field: its type when given (``None``: the default) and its meaning."""

    recipe: str | None = _option("a paper's experimental setting: its data set, model, topology, rounds, lr, ...")
    algo: str | None = _option("the algorithm (a name of dfltheory.empirical.algorithms)")
    dataset: str | None = _option("the data set (digits, synthetic-*, mnist, fashion-mnist, cifar10, cifar100)")
    data_params: dict | None = _option("the data set's options, name -> number, bool or string (e.g. dim=10)")
    data_seed: int | None = _option("seed of the problem: data, partition, initial model, random graph (default: seed)")
    n: int | None = _option("number of clients m")
    partition: str | None = _option("client partition (dirichlet, pathological, ...)")
    alpha: float | None = _option("Dirichlet concentration of the partition")
    classes_per_client: int | None = _option("classes per client of the pathological partition")
    model: str | None = _option("the model (logreg, mlp, cnn, resnet18, ...; default per data set)")
    init_weights: str | None = _option("file of initial parameters (torch.save(state_dict)), stored resolved")
    topology: str | None = _option("mixing topology (a dfltheory.topology name)")
    weights: str | None = _option("mixing weights (metropolis, uniform, push-sum, ...; default: the topology's own)")
    topology_params: str | None = _option("topology parameters, 'k=10' or 'p=0.1'")
    sparse: bool | None = _option("multiply with W as a sparse (True) or dense matrix (default: by density)")
    rounds: int | None = _option("communication rounds T")
    K: int | None = _option("local steps per round (local epochs with epochs); config.json stores the K that ran")
    epochs: bool | None = _option("K counts local epochs over each client's shuffled data instead of sampled steps")
    lr: float | None = _option("local learning rate eta")
    lr_decay: float | None = _option("factor of lr after every round, in (0, 1]")
    batch_size: int | None = _option("minibatch size")
    seed: int | None = _option("seed of the minibatches (and of the problem without data_seed), in [0, 2^32 - 1]")
    rho: float | None = _option("SAM radius")
    Q: int | None = _option("gossip steps per round")
    fresh_gossip: bool | None = _option("a new W per gossip step (multi-gossip)")
    momentum: float | None = _option("local momentum coefficient")
    lam: float | None = _option("ADMM penalty lambda")
    lam_pen: float | None = _option("proximal penalty of the catalyst algorithm")
    beta: float | None = _option("Nesterov coefficient of the catalyst algorithm")
    mode: str | None = _option("Nesterov reading of the catalyst algorithm: A (code) or B (proof)")
    sequential: bool | None = _option("the catalyst algorithm's in-place aggregation (its public code)")
    K_v: int | None = _option("local steps on the personal part per round")
    lr_v: float | None = _option("personal-part learning rate eta_v (default: lr)")
    personal: str | None = _option("personal layers, comma-separated module names; 'none' shares everything")
    mu: float | None = _option("FedProx proximal coefficient")
    participation: float | None = _option("fraction of clients per round (centralized baselines)")
    weighted: bool | None = _option("server average weighted by client sizes (centralized baselines)")
    weight_decay: float | None = _option("L2 weight decay")
    clip: float | None = _option("norm each local direction is clipped to")
    out: str | None = _option("run directory (not stored in config.json)")
    resume: bool | None = _option("continue the run in out from its checkpoint (not stored in config.json)")
    eval_every: int | None = _option("rounds between measurements")
    checkpoint_every: int | None = _option("rounds between checkpoints")
    local_eval: bool | None = _option("measure the per-client test accuracy")
    device: str | None = _option("torch device (cpu, cuda, cuda:N)")
    nproc: int | None = _option("processes the clients are split over (torch.distributed)")
    client_chunk: int | None = _option("clients vmapped at a time (default: from the free memory)")
    compile: bool | None = _option("run each local step as one torch.compile'd function")
    threads: int | None = _option("torch CPU threads; config.json stores the count that ran")
    data_root: str | None = _option("directory of the data set's files")
    download: bool | None = _option("fetch missing data set files")
    progress: bool | None = _option("print the progress of the run")
    tensorboard: bool | None = _option("write TensorBoard event files next to metrics.jsonl")

    @classmethod
    def from_dict(cls, cfg) -> RunConfig:
        """The record of a config dict; a key that is no ``train`` option is a ValueError naming it."""
        if not isinstance(cfg, dict):
            raise ValueError(f"a run config must be a dict of train options, got {type(cfg).__name__}")
        names = option_names()
        unknown = [k for k in cfg if k not in names]
        if unknown:
            raise ValueError(f"run config: {unknown[0]!r} is not a train option; use the options of "
                             f"`dfltheory train --help` (docs/schema.md), e.g. {', '.join(sorted(names)[:4])}, ...")
        return cls(**cfg)

    def to_dict(self) -> dict:
        """The options given, in the record's field order (a cache key sorts them: the same hash as the dict's)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not UNSET}

    def check(self) -> RunConfig:
        """Self, if every given option is in its range (:func:`dfltheory.empirical.runner.check_options`)."""
        from dfltheory.empirical.runner import check_options

        check_options(self.to_dict())
        return self


def option_names() -> tuple[str, ...]:
    """The config keys a run config may give: RunConfig's fields."""
    return tuple(f.name for f in fields(RunConfig))
