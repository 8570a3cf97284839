"""Runs: build an engine from a config, train with measurements, checkpoints, resume and divergence stop.

A run directory holds ``config.json`` (everything needed to rebuild the run), ``metrics.jsonl`` (one JSON
record per measured round, :mod:`dfltheory.empirical.metrics`), ``checkpoint.pt`` (engine state, the
sampling generator's state, the round) and ``summary.json`` (status and last record), each written and read back
validated by :mod:`dfltheory.empirical.rundir`. ``resume=True`` reloads the checkpoint (refused if damaged or
written by another run), drops metric lines written after it, and continues; the result is bit-identical to
an uninterrupted run on CPU with the same number of CPU threads (``threads`` in config.json; a resume with another
count warns: float sums then differ at about 1e-8). ``summary.json``'s ``wall_seconds`` is the total over all parts
(each checkpoint stores the time up to it; rounds redone after a kill count once), ``wall_seconds_this_part`` the
last part's. A non-finite model or loss stops the run with status ``diverged``; the metrics measured up to then are
kept. Every numeric option is checked before anything is built (:func:`check_options`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path

import torch

from dfltheory.empirical import algorithms as A
from dfltheory.empirical import rundir
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.metrics import Evaluator, measure
from dfltheory.empirical.recipes import ALGO_DEFAULTS
from dfltheory.empirical.run_config import (FLOAT_OPTIONS, SEED_MAX, check_config,  # noqa: F401 (re-exported)
                                            check_options, check_threads)
from dfltheory.empirical.replicas import BlockDiagonal, replicate
from dfltheory.empirical.weights import load_initial_weights

#: warnings already printed by this process (each distinct text once)
_WARNED: set[str] = set()

DEFAULT_MODEL = {"digits": "mlp", "synthetic-quadratic": "linear", "synthetic-logistic": "logreg",
                 "synthetic-robust": "linear", "synthetic-personal": "split-linear", "mnist": "mlp",
                 "fashion-mnist": "mlp", "cifar10": "cnn", "cifar100": "resnet18"}
ALGO_KEYS = ("rho", "Q", "momentum", "lam_pen", "beta", "mode", "mu", "participation", "weight_decay",
             "clip", "fresh_gossip", "K_v", "lr_v", "personal")
# may change on --resume (compile: the same arithmetic, rounded differently at about 1e-7; checkpoint_every and
# eval_every: when the run is saved and measured, not its trajectory)
VOLATILE = ("rounds", "device", "progress", "client_chunk", "threads", "nproc", "compile", "checkpoint_every",
            "eval_every")
def _warn_once(text: str) -> None:
    """Print ``dfltheory train: warning: text`` to stderr, once per process (a sweep of many runs says it once)."""
    if text not in _WARNED:
        _WARNED.add(text)
        print(f"dfltheory train: warning: {text}", file=sys.stderr)


def check_device(device: str) -> torch.device:
    """The torch device named ``device``; a name torch does not know, or CUDA where there is none, is a ValueError."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"--device {device!r} is not a device name; use cpu, cuda or cuda:N") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was requested but CUDA is not available here; use --device cpu")
    return dev


def with_recipe(cfg: dict) -> dict:
    """``cfg`` with its recipe's options filled in where it gives none (unchanged without ``recipe``)."""
    if not cfg.get("recipe"):
        return cfg
    from dfltheory.empirical.recipes import resolve

    return resolve(cfg)


def data_seed(cfg: dict) -> int:
    """The seed of the problem: the data, the partition, the initial model and a random graph (``data_seed``,
    default ``seed``). ``seed`` draws the minibatches, so runs that differ in ``seed`` alone sample the expectation
    E of the theorems on one fixed problem."""
    return cfg["data_seed"] if cfg.get("data_seed") is not None else cfg.get("seed", 0)


def _problem(cfg: dict, device: torch.device, initial: bool = True, announce: bool = True):
    """(data on ``device``, model module, model name) of ``cfg``'s problem: the data set, its partition and the
    initial model, all drawn from :func:`data_seed`; ``initial``: read ``init_weights``."""
    from dfltheory.empirical import data as D
    from dfltheory.empirical import models as M

    try:
        data = D.load(cfg["dataset"], cfg["n"], partition=cfg.get("partition", "dirichlet"),
                      alpha=cfg.get("alpha", 0.3), classes_per_client=cfg.get("classes_per_client", 2),
                      seed=data_seed(cfg), root=cfg.get("data_root"), download=cfg.get("download", False),
                      **(cfg.get("data_params") or {}))
    except (FileNotFoundError, D.DownloadError) as err:
        hint = "on the command line: --data-root DIR for the files, --download to fetch them"
        raise ValueError(f"{err} ({hint})") from None
    data = data.to(device)  # one copy on device
    torch.manual_seed(data_seed(cfg))  # the initial model is part of the problem
    name = cfg.get("model") or DEFAULT_MODEL[cfg["dataset"]]
    module = M.make_model(name, data.input_shape, data.num_classes)
    if initial and cfg.get("init_weights") is not None:
        note = load_initial_weights(module, name, cfg["init_weights"])
        if note not in _WARNED and announce:  # once per process
            _WARNED.add(note)
            print(f"dfltheory train: initial weights: {note}", file=sys.stderr)
    return data, module, name


def _topology(cfg: dict, algo):
    """The run's topology, drawn with :func:`data_seed` (a random graph belongs to the problem instance, as the data
    and x^0 do: runs that differ in ``seed`` then differ only in their minibatches, the randomness the theorems'
    expectations are over), checked row- or column-stochastic as ``algo`` needs."""
    from dfltheory.parsing import parse_params
    from dfltheory.topology import build as build_topology

    topo = build_topology(cfg.get("topology", "ring"), cfg["n"], weights=cfg.get("weights") or "default",
                          seed=data_seed(cfg), **parse_params(cfg.get("topology_params")))
    axis = 1 if algo.stochastic == "row" else 0
    if abs(topo.matrix(0).sum(axis) - 1).max() > 1e-6:
        fix = ("use --weights metropolis or uniform (push-sum weights are for push-sum algorithms)"
               if axis else "use --weights push-sum")
        raise ValueError(f"the mixing matrix of {cfg.get('topology')!r} with weights {topo.weights!r} is not "
                         f"{algo.stochastic}-stochastic as {algo.name} needs; {fix}")
    return topo


def _engine(cfg: dict, model: FlatModel, data, algo, source, device, x0=None) -> Engine:
    mixing = None if source is None else Mixing(source, sparse=cfg.get("sparse"), device=device)
    return Engine(model, data, algo, mixing, K=cfg.get("K") or ALGO_DEFAULTS["K"], lr=cfg.get("lr", 0.1),
                  lr_decay=cfg.get("lr_decay", 1.0), batch_size=cfg.get("batch_size", 32), seed=cfg.get("seed", 0),
                  device=device, sequential=cfg.get("sequential", False), client_chunk=cfg.get("client_chunk"),
                  epochs=bool(cfg.get("epochs")), compile=bool(cfg.get("compile")), x0=x0)


def _algorithm(cfg: dict, data):
    weights = data.client_sizes.numpy() if cfg.get("weighted") else None  # FedAvg's n_i-weighted average
    cfg = A.current_names(cfg)  # an option under its former name (the API's build): today's name
    return A.make(cfg["algo"], server_weights=weights, **{k: cfg.get(k) for k in ALGO_KEYS})


def build(cfg: dict, initial: bool = True, replicas: int = 1, announce: bool = True) -> tuple[Engine, Evaluator]:
    """Engine and evaluator for a config dict (keys as the ``train`` command's options; ``data_params``: the data
    set's keyword options, ``data_seed``: :func:`data_seed`; ``recipe``: a paper's setting,
    :func:`dfltheory.empirical.recipes.resolve`). ``replicas`` > 1: the engine trains that many independent copies
    of the run at once (:mod:`dfltheory.empirical.replicas`; the evaluator stays the single run's).
    ``initial=False`` (a resume: the checkpoint holds the state) skips
    reading ``init_weights``; ``announce=False`` leaves out the note on what it read (a caller that wrote the file)."""
    from dfltheory.empirical import models as M

    cfg = with_recipe(cfg)
    check_options(cfg)
    device = check_device(cfg.get("device", "cpu"))
    data, module, _ = _problem(cfg, device, initial, announce)
    model = FlatModel(module, M.loss_fn(data.task))
    algo = _algorithm(cfg, data)
    if replicas != 1 and not algo.decentralized:
        raise ValueError(f"{algo.name} averages at a server, over every client: its copies cannot be trained as "
                         "one engine; run its seeds separately (replicas=1)")
    source = None
    if algo.decentralized:
        topo = _topology(cfg, algo)
        source = topo if replicas == 1 else BlockDiagonal((topo,) * replicas)
    trained = data if replicas == 1 else replicate(data, replicas)  # the evaluator keeps the single run's data
    return _engine(cfg, model, trained, algo, source, device), Evaluator(model, data, device)


def load_run(run_dir) -> tuple[Engine, Evaluator, dict, torch.Tensor]:
    """(engine at the checkpoint, evaluator, config, x^0) of a run directory written by ``dfltheory train --out``
    (on the CPU where it ran on a GPU that is not here). Every file is validated (:mod:`dfltheory.empirical.rundir`):
    a missing or damaged config or checkpoint, or a checkpoint of another run, is a ValueError naming it."""
    run = Path(run_dir)
    again = f"train the run again into a new directory (dfltheory train ... --out {run})"
    if not run.is_dir():
        raise ValueError(f"{run} is not a directory: give a run directory written by `dfltheory train --out`")
    cfile, ckpt = run / "config.json", run / "checkpoint.pt"
    if not cfile.is_file():
        raise ValueError(f"{run} has no config.json: give a run directory written by `dfltheory train --out`")
    cfg = rundir.read_json(cfile, f"restore it from the options the run was started with, or {again}")
    if not all(key in cfg for key in ("dataset", "algo", "n")):
        raise ValueError(f"{cfile} is damaged: not a run configuration (a JSON object with dataset, algo, n); "
                         f"restore it, or {again}")
    cfg = A.current_names(cfg, stored=True)  # written under former option names: read as that run ran
    if not ckpt.is_file():
        raise ValueError(f"{run} has no checkpoint.pt (the run stopped before its first checkpoint, or ran 0 "
                         f"rounds); resume it with `dfltheory train ... --out {run} --resume --rounds R`, or {again}")
    if str(cfg.get("device", "cpu")).startswith("cuda") and not torch.cuda.is_available():
        cfg = {**cfg, "device": "cpu"}
    try:
        engine, evaluator = build(cfg)
    except (KeyError, TypeError) as err:
        raise ValueError(f"{cfile} is damaged: cannot rebuild the run ({type(err).__name__}: {err}); restore it, "
                         f"or {again}") from None
    x0 = engine.state["x"][0].clone()
    sd = rundir.load_checkpoint(ckpt, str(run), again)
    try:
        engine.load_state_dict(sd)
    except ValueError as err:
        raise ValueError(f"the checkpoint {ckpt} does not match {cfile.name} ({err}); {again}") from None
    return engine, evaluator, cfg, x0


def coupling(algo) -> str | None:
    """Why the clients of ``algo`` are coupled beyond their mixing matrix (then independent copies cannot share one
    engine), or None: a server average, or a graph drawn from every client's loss (DFedSGPSM-S)."""
    if not algo.decentralized:
        return "a server average"
    return "a graph drawn from all clients' losses" if algo.topology is not None else None


def build_cohort(cfg: dict, seeds) -> tuple[Engine, list[Evaluator]]:
    """One engine for the runs of ``cfg`` with ``seed`` = ``data_seed`` = s for every s in ``seeds``: copy c holds
    clients c m .. c m + m - 1 with its own partition, initial model and random graph (the block-diagonal mixing of
    :class:`dfltheory.empirical.replicas.BlockDiagonal` keeps the copies apart) and minibatches from the engine's
    one generator, seeded by ``seeds[0]`` (:mod:`dfltheory.empirical.cohort`). Returns the engine and one evaluator
    per copy."""
    from dfltheory.empirical import models as M

    cfg = with_recipe(cfg)
    check_config(cfg)
    device = check_device(cfg.get("device", "cpu"))
    seeds = [int(s) for s in seeds]
    copies = [{**cfg, "seed": s, "data_seed": s} for s in seeds]
    problems = [_problem(c, device) for c in copies]
    data = [p[0] for p in problems]
    if any(not torch.equal(d.x_train, data[0].x_train) for d in data[1:]):
        raise ValueError(f"data set {cfg['dataset']!r} draws its samples from the data seed; a cohort needs the "
                         "seeds to differ in the partition and the initial model only (use digits or a fixed "
                         "data set)")
    models = [FlatModel(p[1], M.loss_fn(d.task)) for p, d in zip(problems, data)]
    algo = _algorithm(cfg, data[0])
    why = coupling(algo)
    if len(seeds) > 1 and why:
        raise ValueError(f"{algo.name} couples every client ({why}): its seeds cannot share one engine; run them "
                         "one by one")
    if models[0].n_stats:
        raise ValueError("a cohort keeps one set of initial running statistics; use a model without BatchNorm")
    topos = tuple(_topology(c, algo) for c in copies)
    source = topos[0] if len(topos) == 1 else BlockDiagonal(topos)
    merged = replicate(data[0], len(seeds), parts=data)
    x0 = torch.stack([m.initial() for m in models]).repeat_interleave(cfg["n"], 0)
    engine = _engine({**cfg, "seed": seeds[0], "sparse": True}, models[0], merged, algo, source, device, x0=x0)
    engine.copies = len(seeds)  # the sequential schedule runs client c of every copy at once
    return engine, [Evaluator(m, d, device) for m, d in zip(models, data)]


def _as_run(cfg: dict, stored: bool = False) -> dict:
    """A config as the run it describes, for comparing a resume's options with the stored ones: the algorithm's
    hyper-parameters as it takes them (a default given explicitly equals one left out; an option the algorithm does
    not read is left out of the comparison), the K of an algorithm that fixes it (D-PSGD, SGP: 1), and an unset
    ``epochs`` as false. Configs stored before K, DFedPGP's momentum and ``epochs`` were resolved thus resume."""
    cfg = A.current_names({**cfg, **({"epochs": bool(cfg["epochs"])} if "epochs" in cfg else {})}, stored=stored)
    algo = cfg.get("algo")
    if algo not in A.ALGORITHMS:
        return cfg
    try:
        made = A.make(algo, **{k: cfg.get(k) for k in ALGO_KEYS})
    except (ValueError, TypeError):  # a value this version refuses: compared as written
        return cfg
    rest = {k: v for k, v in cfg.items() if k not in ALGO_KEYS}
    return {**rest, **made.hyper, **({"K": made.K} if made.K else {})}


def _load_checkpoint(engine: Engine, ckpt: Path, out: Path) -> dict:
    """Restore ``engine`` from ``ckpt`` (read on the CPU: a run checkpointed on a GPU resumes on the CPU and the
    reverse; ``load_state_dict`` moves the state to the engine's device); returns the checkpoint's payload. A damaged
    file, or one written by another algorithm, model or client count, is a ValueError naming it."""
    again = f"delete {out} (or choose another --out) and start the run again without --resume"
    sd = rundir.load_checkpoint(ckpt, "--resume", again)
    try:
        engine.load_state_dict(sd)
    except ValueError as err:
        raise ValueError(f"--resume: the checkpoint {ckpt} does not belong to this run ({err}); use the options "
                         f"the run was started with, or {again}") from None
    return sd


def _clean(rec: dict) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in rec.items()}


def _where(err: BaseException) -> str:
    """Where in the code ``err`` was raised, for a one-line error: the innermost frame outside torch and the standard
    library (a plugin's file, else this package's), as 'Class.method (file, line N)'."""
    import sysconfig
    import traceback

    torch_dir, stdlib = str(Path(torch.__file__).resolve().parent), str(Path(sysconfig.get_paths()["stdlib"]).resolve())

    def library(frame) -> bool:
        path = str(Path(frame.f_code.co_filename).resolve())
        return path.startswith(torch_dir) or (path.startswith(stdlib) and "site-packages" not in path)

    frames = [(f, n) for f, n in traceback.walk_tb(err.__traceback__) if not library(f)]
    if not frames:
        return "torch"
    frame, line = frames[-1]
    owner = frame.f_locals.get("self")
    name = f"{type(owner).__name__}.{frame.f_code.co_name}" if owner is not None else frame.f_code.co_name
    return f"{name} ({frame.f_code.co_filename}, line {line})"


def _failure(err: Exception, engine: Engine, out: Path, saved: int | None, fix: str) -> ValueError:
    """The one-line error of a run stopped by ``err``: a full disk (the directory stays resumable), or an exception of
    the algorithm's code (a rule of a plugin, most often) named by algorithm, round and place; ``saved``: the round
    of the run's last checkpoint (None: none yet)."""
    full = rundir.disk_full(getattr(err, "filename", None) or out, err, fix)
    if full is not None:
        return full
    at = f"its checkpoint at round {saved}" if saved is not None else "round 0"
    message = " ".join(str(err).split())[:300] or "(no message)"
    return ValueError(f"algorithm {engine.algo.name} failed in round {engine.t + 1} in {_where(err)}: "
                      f"{type(err).__name__}: {message}; fix it (a plugin's rule: docs/extending.md), then "
                      f"{fix} (it restarts from {at})")


def train(engine: Engine, evaluator: Evaluator, out, rounds: int, *, config: dict | None = None, eval_every: int = 1,
          checkpoint_every: int = 10, resume: bool = False, progress: bool = True, local_eval: bool = True,
          again: str | None = None) -> dict:
    """Train ``engine`` up to round ``rounds`` in run directory ``out``; returns the summary dict. TensorBoard event
    files go next to metrics.jsonl unless ``config['tensorboard']`` is False (:mod:`dfltheory.empirical.tensorboard`).
    The directory is locked for the run (:func:`dfltheory.empirical.rundir.lock`: a second writer is refused). A run
    stopped by a full disk or by an exception of the algorithm is a one-line ValueError ending in ``again`` (default:
    continue it with ``--resume``, which also restarts a run stopped before its first checkpoint)."""
    from dfltheory.paths import output_dir

    if rounds < 0 or eval_every < 1 or checkpoint_every < 1:
        raise ValueError("rounds must be >= 0 and eval_every, checkpoint_every >= 1")
    out = output_dir(out, "--out")
    with rundir.lock(out):
        return _train(engine, evaluator, out, rounds, config, eval_every, checkpoint_every, resume, progress,
                      local_eval, again or f"continue the run: dfltheory train ... --out {out} --resume")


def _train(engine, evaluator, out: Path, rounds, config, eval_every, checkpoint_every, resume, progress, local_eval,
           again: str) -> dict:
    ckpt, mfile, cfile = out / "checkpoint.pt", out / "metrics.jsonl", out / "config.json"
    config = json.loads(json.dumps(config or {}, default=str))  # as it will read back from config.json
    wall_before, log = 0.0, rundir.MetricsLog(mfile)
    if resume and not ckpt.exists() and not cfile.exists():
        raise ValueError(f"--resume: no run in {out} to continue; start it without --resume")
    if resume:
        again_fresh = f"delete {out} and start again"
        if not cfile.exists():  # a checkpoint without the options it was trained with cannot be resumed
            raise ValueError(f"--resume: {out} has a checkpoint but no config.json; restore it from the options the "
                             f"run was started with, or {again_fresh}")
        saved = rundir.read_json(cfile, f"restore it from the options the run was started with, or {again_fresh}")
        if "seed" in saved and "data_seed" in config:  # written before data_seed/data_params existed
            saved = {"data_seed": saved["seed"], "data_params": {}, **saved}
        saved_run, this_run = _as_run(saved, stored=True), _as_run(config)
        diff = sorted(k for k in set(saved) | set(config) if k not in VOLATILE + ("resume", "tensorboard")
                      and saved_run.get(k) != this_run.get(k))
        if config and diff:
            raise ValueError(f"--resume with a different config ({', '.join(diff)}) than {cfile} records; use the "
                             "original options (or restore the file)")
        if saved.get("threads") is not None and config.get("threads") not in (None, saved["threads"]):
            print(f"dfltheory train: warning: {out} was started with {saved['threads']} CPU thread(s) and resumes with "
                  f"{config['threads']}; sums then differ at about 1e-8, so the result is not bit-identical to an "
                  f"uninterrupted run (pass --threads {saved['threads']} for that)", file=sys.stderr)
            config["threads"] = saved["threads"]  # config.json keeps the count the run started with
    if resume and not ckpt.exists():  # stopped before its first checkpoint (a full disk, a kill): start it over
        if engine.t != 0:
            raise ValueError(f"--resume: {out} has no checkpoint to continue from; give an engine at round 0")
        print(f"dfltheory train: {out} stopped before its first checkpoint; starting it again from round 0",
              file=sys.stderr)
        mfile.unlink(missing_ok=True)
        (out / "summary.json").unlink(missing_ok=True)
        resume = False
    elif resume:
        sd = _load_checkpoint(engine, ckpt, out)
        wall_before = sd.get("wall_seconds", 0.0)
        if rounds < engine.t:
            raise ValueError(f"--resume: the checkpoint is at round {engine.t}, past --rounds {rounds}; "
                             f"give --rounds {engine.t} or more")
        log = rundir.MetricsLog.resume(mfile, sd.get(rundir.METRICS), "--resume", f"delete {out} and start again")
        (out / "summary.json").unlink(missing_ok=True)  # it describes the metrics being rewritten
    elif ckpt.exists() or mfile.exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    try:
        rundir.atomic_write(json.dumps({**config, "rounds": rounds}, indent=2, default=str) + "\n", cfile)
    except OSError as err:  # before anything else is written: a fresh run starts the same way again
        fix = again if resume or not again.endswith("--resume") else "run the same command again"
        raise rundir.disk_full(cfile, err, fix) or err from None
    events = None  # TensorBoard event files next to metrics.jsonl; a resume writes them afresh from the kept records
    bar, saved = None, (engine.t if resume else None)
    try:
        if config.get("tensorboard", True):
            from dfltheory.empirical.tensorboard import EventLog

            events = EventLog(out, {**config, "rounds": rounds}, rundir.read_records(mfile) if resume else ())

        def record() -> dict:
            rec = _clean(measure(engine, evaluator, local=local_eval))
            log.append(rec)
            if events is not None:
                events.add(rec)
            return rec

        start = time.perf_counter()

        def wall() -> float:
            return wall_before + time.perf_counter() - start

        last = record() if not resume else rundir.read_records(mfile)[-1]
        status = "completed"
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=rounds, initial=engine.t, desc=engine.algo.name, unit="round", leave=False)
        while engine.t < rounds:
            try:
                engine.round()
            except Exception as err:  # noqa: BLE001  the algorithm's code, a plugin's rule included (a ValueError too)
                raise _failure(err, engine, out, saved, again) from None
            finite = bool(torch.isfinite(engine.state["x"]).all())
            if not finite or engine.t % eval_every == 0 or engine.t == rounds:
                last = record()
                if bar is not None:
                    bar.set_postfix(loss=last["train_loss"], refresh=False)
                finite = finite and last["finite"]
            if bar is not None:
                bar.update(1)
            if not finite:
                status = "diverged"
                print(f"dfltheory train: diverged at round {engine.t} (non-finite model or loss); stopped. "
                      f"Metrics up to it are in {mfile}; lower the learning rate or check the mixing weights.",
                      file=sys.stderr)
                break
            if engine.t % checkpoint_every == 0 or engine.t == rounds:
                rundir.save_checkpoint({**engine.state_dict(), "wall_seconds": wall(), rundir.METRICS: log.mark()},
                                       ckpt)
                saved = engine.t
        part = time.perf_counter() - start
        summary = {"status": status, "rounds": engine.t, "wall_seconds": wall_before + part,
                   "wall_seconds_this_part": part, "last": last, rundir.METRICS: log.mark()}
        rundir.atomic_write(json.dumps(summary, indent=2) + "\n", out / "summary.json")
    except ValueError:
        raise
    except Exception as err:  # noqa: BLE001  a full disk, or the algorithm's own code: one line that says what next
        raise _failure(err, engine, out, saved, again) from None
    finally:
        if bar is not None:
            bar.close()
        if events is not None:
            try:
                events.close()
            except Exception:  # noqa: BLE001  extra files: their failure (a full disk) must not hide the first error
                pass
    return summary


def run(cfg: dict, resume: bool = False, wrap=None, again: str | None = None) -> dict:
    """Build from ``cfg`` and train into ``cfg['out']`` (``cfg['threads']``: torch CPU threads; the count used is
    stored in config.json), the directory locked from before the data are loaded (:func:`dfltheory.empirical.rundir.
    lock`). Prints the algorithm's warning about its step sizes (``Algorithm.warning``) to stderr where it applies.
    ``wrap(engine)`` replaces the engine before
    training (rank 0 of a distributed run: :mod:`dfltheory.empirical.distributed`); ``again``: what a stopped run's
    error advises (:func:`train`)."""
    from dfltheory.paths import output_dir

    cfg = A.current_names(with_recipe(cfg), "the run config", warn=_warn_once)  # config.json: today's names
    check_config(cfg)  # a key that is no option is refused by name, not ignored
    new = not Path(cfg["out"]).exists()
    out = output_dir(cfg["out"], "--out")  # before the data are loaded
    with rundir.lock(out):
        if cfg.get("threads"):
            torch.set_num_threads(cfg["threads"])
        cfg = {**cfg, "threads": torch.get_num_threads(), "data_seed": data_seed(cfg),
               "data_params": dict(cfg.get("data_params") or {})}  # stored resolved in config.json
        try:
            engine, evaluator = build(cfg, initial=not (resume and (out / "checkpoint.pt").exists()))
            if wrap is not None:
                engine = wrap(engine)
            cfg = {**cfg, "K": engine.algo.K or cfg.get("K") or ALGO_DEFAULTS["K"]}  # config.json: the K that ran
            warning = engine.algo.warning
            note = warning and warning(cfg.get("lr", 0.1), cfg.get("lr_decay", 1.0), int(engine.local_steps.max()),
                                       cfg["rounds"])
            if note:
                _warn_once(note)
            keep = {k: v for k, v in cfg.items() if k not in ("out", "resume", "func", "command")}
            return train(engine, evaluator, cfg["out"], cfg["rounds"], config=keep,
                         eval_every=cfg.get("eval_every", 1), checkpoint_every=cfg.get("checkpoint_every", 10),
                         resume=resume, progress=cfg.get("progress", True), local_eval=cfg.get("local_eval", True),
                         again=again)
        except BaseException:
            with contextlib.suppress(OSError):  # the cleanup never hides the error that stopped the run
                if new and all(p.name == rundir.LOCK for p in out.iterdir()):
                    (out / rundir.LOCK).unlink(missing_ok=True)
                    out.rmdir()  # leave no empty run directory behind a run that never started
            raise
