"""A train run's configuration as a typed record: :class:`RunConfig`, whose fields are the ``train`` command's
options (their names are the config keys of ``config.json``, of run config files and of sweeps).

A run config is read and written as a dict (``config.json``, the run caches' keys); a RunConfig holds exactly the
options that dict gives (:class:`dfltheory.records.Record`), so that ``RunConfig.from_dict(cfg).to_dict() == cfg``
and a cache key, a hash of the dict (:class:`dfltheory.empirical.sweep.RunCache`), is the same for the record as for
the dict. The options' ranges are :func:`dfltheory.empirical.runner.check_options`'s, declared once as :mod:`dfltheory.constraints`.

An option an algorithm took under another name before (its registration's ``renamed``: DFedADMM's penalty was
``lam``, the name of the spectral lambda everywhere else, and is ``lam_pen``) is read under today's name by
:func:`dfltheory.empirical.algorithms.current_names`, at every door a config comes in by: the train command, :func:`dfltheory.empirical.runner.run`,
a resume's stored config.json, a sweep, a stored claims result.
"""

from __future__ import annotations

from dataclasses import dataclass

from dfltheory.records import UNSET, Record, entry

__all__ = ["RunConfig", "UNSET", "option_names"]


@dataclass(frozen=True)
class RunConfig(Record):
    """The options of one ``train`` run; each field: its type when given (``None``: the default) and its meaning."""

    recipe: str | None = entry("a paper's experimental setting: its data set, model, topology, rounds, lr, ...")
    algo: str | None = entry("the algorithm (a name of dfltheory.empirical.algorithms)")
    dataset: str | None = entry("the data set (digits, synthetic-*, mnist, fashion-mnist, cifar10, cifar100)")
    data_params: dict | None = entry("the data set's options, name -> number, bool or string (e.g. dim=10)")
    data_seed: int | None = entry("seed of the problem: data, partition, initial model, random graph (default: seed)")
    n: int | None = entry("number of clients m")
    partition: str | None = entry("client partition (dirichlet, pathological, ...)")
    alpha: float | None = entry("Dirichlet concentration of the partition")
    classes_per_client: int | None = entry("classes per client of the pathological partition")
    model: str | None = entry("the model (logreg, mlp, cnn, resnet18, ...; default per data set)")
    init_weights: str | None = entry("file of initial parameters (torch.save(state_dict)), stored resolved")
    topology: str | None = entry("mixing topology (a dfltheory.topology name)")
    weights: str | None = entry("mixing weights (metropolis, uniform, push-sum, ...; default: the topology's own)")
    topology_params: str | None = entry("topology parameters, 'k=10' or 'p=0.1'")
    sparse: bool | None = entry("multiply with W as a sparse (True) or dense matrix (default: by density)")
    rounds: int | None = entry("communication rounds T")
    K: int | None = entry("local steps per round (local epochs with epochs); config.json stores the K that ran")
    epochs: bool | None = entry("K counts local epochs over each client's shuffled data instead of sampled steps")
    lr: float | None = entry("local learning rate eta")
    lr_decay: float | None = entry("factor of lr after every round, in (0, 1]")
    batch_size: int | None = entry("minibatch size")
    seed: int | None = entry("seed of the minibatches (and of the problem without data_seed), in [0, 2^32 - 1]")
    rho: float | None = entry("SAM radius")
    Q: int | None = entry("gossip steps per round")
    fresh_gossip: bool | None = entry("a new W per gossip step (multi-gossip)")
    momentum: float | None = entry("local momentum coefficient")
    lam_pen: float | None = entry("the algorithm's penalty: the ADMM penalty lambda (dfedadmm), the catalyst "
                                  "algorithm's proximal penalty (dfedcata)")
    lam: float | None = entry("deprecated: lam_pen's former name for dfedadmm, read as lam_pen (current_names); "
                              "config.json never stores it")
    beta: float | None = entry("Nesterov coefficient of the catalyst algorithm")
    mode: str | None = entry("Nesterov reading of the catalyst algorithm: A (code) or B (proof)")
    sequential: bool | None = entry("the catalyst algorithm's in-place aggregation (its public code)")
    K_v: int | None = entry("local steps on the personal part per round")
    lr_v: float | None = entry("personal-part learning rate eta_v (default: lr)")
    personal: str | None = entry("personal layers, comma-separated module names; 'none' shares everything")
    mu: float | None = entry("FedProx proximal coefficient")
    participation: float | None = entry("fraction of clients per round (centralized baselines)")
    weighted: bool | None = entry("server average weighted by client sizes (centralized baselines)")
    weight_decay: float | None = entry("L2 weight decay")
    clip: float | None = entry("norm each local direction is clipped to")
    out: str | None = entry("run directory (not stored in config.json)")
    resume: bool | None = entry("continue the run in out from its checkpoint (not stored in config.json)")
    eval_every: int | None = entry("rounds between measurements")
    checkpoint_every: int | None = entry("rounds between checkpoints")
    local_eval: bool | None = entry("measure the per-client test accuracy")
    device: str | None = entry("torch device (cpu, cuda, cuda:N)")
    nproc: int | None = entry("processes the clients are split over (torch.distributed)")
    client_chunk: int | None = entry("clients vmapped at a time (default: from the free memory)")
    compile: bool | None = entry("run each local step as one torch.compile'd function")
    threads: int | None = entry("torch CPU threads; config.json stores the count that ran")
    data_root: str | None = entry("directory of the data set's files")
    download: bool | None = entry("fetch missing data set files")
    progress: bool | None = entry("print the progress of the run")
    tensorboard: bool | None = entry("write TensorBoard event files next to metrics.jsonl")

    def check(self) -> RunConfig:
        """Self, if every given option is in its range (:func:`dfltheory.empirical.runner.check_options`)."""
        from dfltheory.empirical.runner import check_options

        check_options(self.to_dict())
        return self


def option_names() -> tuple[str, ...]:
    """The config keys a run config may give: RunConfig's fields."""
    return RunConfig.keys()

