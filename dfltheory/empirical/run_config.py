"""A train run's configuration as a typed record: :class:`RunConfig`, whose fields are the ``train`` command's
options (their names are the config keys of ``config.json``, of run config files and of sweeps).

A run config is read and written as a dict (``config.json``, the run caches' keys); a RunConfig holds exactly the
options that dict gives (:class:`dfltheory.records.Record`), so that ``RunConfig.from_dict(cfg).to_dict() == cfg``
and a cache key, a hash of the dict (:class:`dfltheory.empirical.sweep.RunCache`), is the same for the record as for
the dict. The options' ranges are declared here once, as :mod:`dfltheory.constraints` (:data:`FLOAT_OPTIONS`,
:data:`INT_OPTIONS`, :data:`FLAG_OPTIONS`), for the command line and the Python API alike: :func:`check_options`;
:func:`check_config` also refuses a key that is no option, by name.

An option an algorithm took under another name before (its registration's ``renamed``: DFedADMM's penalty was
``lam``, the name of the spectral lambda everywhere else, and is ``lam_pen``) is read under today's name by
:func:`dfltheory.empirical.algorithms.current_names`, at every door a config comes in by: the train command,
:func:`dfltheory.empirical.runner.run`, a resume's stored config.json, a sweep, a stored claims result.
"""

from __future__ import annotations

import difflib
import math
import os
from dataclasses import dataclass, replace

import numpy as np

from dfltheory.constraints import INF, Interval, OfType, check, refusal
from dfltheory.records import UNSET, Record, entry

__all__ = ["RunConfig", "UNSET", "check_config", "check_options", "flag", "option_names"]

# the numeric options of `train`, declared once for the command line and the Python API (check_options)
FLOAT_OPTIONS = {key: Interval(low, high, closed, meaning=meaning, kind=(int, float)) for key, low, high, closed, meaning in [
    ("lr", 0, INF, "neither", "the learning rate eta"),
    ("lr_decay", 0, 1, "right", "the factor the learning rate is multiplied by after every round, 0.998 in the papers"),
    ("alpha", 0, INF, "neither", "the Dirichlet concentration"),
    ("rho", 0, INF, "left", "the SAM radius, 0 for plain gradients"),
    ("momentum", 0, 1, "left", "the local momentum coefficient"),
    ("lam_pen", 0, INF, "left", "the algorithm's penalty (DFedADMM's lambda, > 0; DFedCata's proximal penalty)"),
    ("lam", 0, INF, "neither", "lam_pen's former name for DFedADMM: its penalty lambda"),
    ("beta", 0, 1, "left", "DFedCata's Nesterov coefficient"),
    ("lr_v", 0, INF, "neither", "DFedPGP's personal-part learning rate"),
    ("mu", 0, INF, "left", "FedProx's proximal coefficient"),
    ("participation", 0, 1, "right", "the fraction of clients per round"),
    ("weight_decay", 0, INF, "left", "the weight decay"),
    ("clip", 0, INF, "neither", "the norm each local direction is clipped to"),
]}
SEED_MAX = 2 ** 32 - 1
#: integer options, by their smallest value; the seeds in [0, 2^32 - 1]
INT_OPTIONS = {**{key: Interval(low, integer=True, kind=int) for key, low in [
    ("n", 1), ("rounds", 0), ("K", 1), ("batch_size", 1), ("Q", 1), ("K_v", 1), ("classes_per_client", 1),
    ("eval_every", 1), ("checkpoint_every", 1), ("client_chunk", 1), ("threads", 1), ("nproc", 1)]},
               **{key: Interval(0, SEED_MAX, integer=True, meaning="2^32 - 1", kind=int) for key in ("seed", "data_seed")}}
FLOAT32_MAX = float(np.finfo(np.float32).max)  # a step size or radius multiplies float32 models


#: on/off options: a config (the Python API) must give them as booleans, not as truthy strings ('no')
FLAG_OPTIONS = ("epochs", "compile", "sequential", "local_eval", "fresh_gossip", "download", "sparse", "weighted",
                "progress")
FLAG = OfType(bool, "True or False")


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
        """Self, if every given option is in its range (:func:`check_options`)."""
        check_options(self.to_dict())
        return self


def option_names() -> tuple[str, ...]:
    """The config keys a run config may give: RunConfig's fields."""
    return RunConfig.keys()


def flag(key: str) -> str:
    """The ``train`` option of config key ``key``: ``lam_pen`` -> ``--lam-pen``."""
    return f"--{key.replace('_', '-')}"


def _beyond_float32(value) -> bool:
    """A finite number no float32 holds (1e300 passed every range check and crashed a round)."""
    try:
        return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                and abs(value) > FLOAT32_MAX)
    except OverflowError:  # an int beyond every float: the range check refuses it
        return False


def check_options(cfg: dict) -> None:
    """Refuse, naming the option, a float option that is NaN, infinite, outside its range or beyond the largest
    float32, an integer option outside its range (:data:`FLOAT_OPTIONS`, :data:`INT_OPTIONS`), a flag that is not a
    bool, and data parameters that are not a dict of names to numbers, booleans or strings (a non-finite number
    included). None means "the default" and is not checked; the data set itself checks the parameters' names and
    ranges."""
    for key, constraint in FLOAT_OPTIONS.items():
        value = cfg.get(key)
        if value is None:
            continue
        if _beyond_float32(value):
            raise refusal(flag(key), value, replace(
                constraint, meaning=f"{constraint.meaning}; at most {FLOAT32_MAX:.3g}, the largest float32"))
        check(flag(key), value, constraint)
    for key, constraint in INT_OPTIONS.items():
        if key != "nproc" and cfg.get(key) is not None:  # nproc: _check_processes, after the threads
            check(flag(key), cfg[key], constraint)
    for key in FLAG_OPTIONS:
        value = cfg.get(key)
        if value is not None:
            check(key, value, replace(FLAG, meaning=f"the {flag(key)} flag"))
    _check_processes(cfg)
    params = cfg.get("data_params")
    if params is None:
        return
    bad = (not isinstance(params, dict) or not all(isinstance(k, str) for k in params)
           or not all(isinstance(v, (bool, int, float, str)) for v in params.values()))
    if bad or any(isinstance(v, float) and not math.isfinite(v) for v in params.values()):
        raise ValueError(f"--data-params must map names to finite numbers, booleans or strings (e.g. "
                         f"dim=10,heterogeneity=2.0), got {params!r}")


def check_threads(threads) -> None:
    """``--threads``: an integer from 1 to the machine's CPU cores (torch allocates per thread: 100000 exhaust it)."""
    cores = os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= cores:
        raise ValueError(f"--threads must be an integer from 1 to {cores} (the CPU cores of this machine), got "
                         f"{threads!r}")


def _check_processes(cfg: dict) -> None:
    """Threads and processes before any is started: at most one CPU thread per core (``--threads``), and
    ``--nproc`` processes of at least one client each, at most one per core where they are spawned here on the CPU."""
    cores = os.cpu_count() or 1
    threads, nproc, n = cfg.get("threads"), cfg.get("nproc"), cfg.get("n")
    if threads is not None:
        check_threads(threads)
    if nproc is None:
        return
    check("--nproc", nproc, INT_OPTIONS["nproc"])
    if isinstance(n, int) and nproc > n:
        raise ValueError(f"--nproc {nproc} for {n} clients: every process needs at least one client; give --nproc "
                         f"{n} or fewer (or more clients, --n)")
    spawned = "WORLD_SIZE" not in os.environ  # under torchrun the ranks may span machines
    if spawned and str(cfg.get("device", "cpu")).startswith("cpu") and nproc > cores:
        raise ValueError(f"--nproc {nproc}: this machine has {cores} CPU cores, one process each at most; give "
                         f"--nproc {cores} or fewer")


def check_config(cfg) -> dict:
    """``cfg`` if it is a run config: a dict whose every key is an option of ``train`` (a RunConfig field; a
    misspelt key is refused by name, with the nearest option, instead of being ignored) and whose every value is in
    its range (:func:`check_options`)."""
    if not isinstance(cfg, dict):
        raise ValueError(f"a run config is a dict of train options (option -> value), got {type(cfg).__name__} "
                         f"{cfg!r:.60}")
    names = RunConfig.keys()
    unknown = [k for k in cfg if k not in names]
    if unknown:
        near = difflib.get_close_matches(str(unknown[0]), names, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"the run config's key {unknown[0]!r} is no option of dfltheory train{hint}; the keys are "
                         "the options' config names (docs/schema.md, RunConfig)")
    check_options(cfg)
    return cfg
