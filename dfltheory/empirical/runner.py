"""Runs: build an engine from a config, train with measurements, checkpoints, resume and divergence stop.

A run directory holds ``config.json`` (everything needed to rebuild the run), ``metrics.jsonl`` (one JSON
record per measured round, :mod:`dfltheory.empirical.metrics`), ``checkpoint.pt`` (engine state, the
sampling generator's state, the round) and ``summary.json`` (status and last record). ``resume=True``
reloads the checkpoint, drops metric lines written after it, and continues; the result is bit-identical to
an uninterrupted run on CPU. A non-finite model or loss stops the run with status ``diverged``; the metrics
measured up to then are kept.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import torch

from dfltheory.empirical import algorithms as A
from dfltheory.empirical.communication import Mixing
from dfltheory.empirical.engine import Engine
from dfltheory.empirical.functional import FlatModel
from dfltheory.empirical.metrics import Evaluator, measure

DEFAULT_MODEL = {"digits": "mlp", "synthetic-quadratic": "linear", "synthetic-logistic": "logreg", "mnist": "mlp",
                 "fashion-mnist": "mlp", "cifar10": "cnn", "cifar100": "resnet18"}
ALGO_KEYS = ("rho", "Q", "momentum", "lam", "lam_pen", "beta", "mode", "mu", "participation", "weight_decay",
             "clip", "fresh_gossip", "K_v", "lr_v", "personal")
VOLATILE = ("rounds", "device", "progress", "client_chunk")  # may change on --resume


def check_device(device: str) -> torch.device:
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was requested but CUDA is not available here; use --device cpu")
    return dev


def build(cfg: dict) -> tuple[Engine, Evaluator]:
    """Engine and evaluator for a config dict (keys as the ``train`` command's options)."""
    from dfltheory.empirical import data as D
    from dfltheory.empirical import models as M

    device = check_device(cfg.get("device", "cpu"))
    data = D.load(cfg["dataset"], cfg["n"], partition=cfg.get("partition", "dirichlet"), alpha=cfg.get("alpha", 0.3),
                  classes_per_client=cfg.get("classes_per_client", 2), seed=cfg.get("seed", 0),
                  root=cfg.get("data_root"), download=cfg.get("download", False)).to(device)  # one copy on device
    torch.manual_seed(cfg.get("seed", 0))
    module = M.make_model(cfg.get("model") or DEFAULT_MODEL[cfg["dataset"]], data.input_shape, data.num_classes)
    model = FlatModel(module, M.loss_fn(data.task))
    weights = data.client_sizes.numpy() if cfg.get("weighted") else None  # FedAvg's n_i-weighted average
    algo = A.make(cfg["algo"], server_weights=weights, **{k: cfg.get(k) for k in ALGO_KEYS})
    mixing = None
    if algo.decentralized:
        from dfltheory.topology import build as build_topology
        from dfltheory.topology.commands import parse_params

        topo = build_topology(cfg.get("topology", "ring"), cfg["n"], weights=cfg.get("weights") or "default",
                              seed=cfg.get("seed", 0), **parse_params(cfg.get("topology_params")))
        axis = 1 if algo.stochastic == "row" else 0
        if abs(topo.matrix(0).sum(axis) - 1).max() > 1e-6:
            fix = ("use --weights metropolis or uniform (push-sum weights are for push-sum algorithms)"
                   if axis else "use --weights push-sum")
            raise ValueError(f"the mixing matrix of {cfg.get('topology')!r} with weights {topo.weights!r} is not "
                             f"{algo.stochastic}-stochastic as {algo.name} needs; {fix}")
        mixing = Mixing(topo, sparse=cfg.get("sparse"), device=device)
    engine = Engine(model, data, algo, mixing, K=cfg.get("K", 5), lr=cfg.get("lr", 0.1),
                    lr_decay=cfg.get("lr_decay", 1.0), batch_size=cfg.get("batch_size", 32), seed=cfg.get("seed", 0),
                    device=device, sequential=cfg.get("sequential", False), client_chunk=cfg.get("client_chunk"))
    return engine, Evaluator(model, data, device)


def _last_record(mfile: Path) -> dict | None:
    """The last metrics record of a run being resumed (what its summary reports if no round is left)."""
    lines = mfile.read_text().splitlines() if mfile.exists() else []
    return json.loads(lines[-1]) if lines else None


def _clean(rec: dict) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in rec.items()}


def _save(obj, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _truncate(mfile: Path, t: int) -> None:
    if not mfile.exists():
        return
    keep = []
    for ln in mfile.read_text().splitlines():
        try:
            if json.loads(ln)["round"] <= t:
                keep.append(ln)
        except (json.JSONDecodeError, KeyError):  # a line cut short by the kill
            continue
    lines = keep
    mfile.write_text("".join(ln + "\n" for ln in lines))


def train(engine: Engine, evaluator: Evaluator, out, rounds: int, *, config: dict | None = None, eval_every: int = 1,
          checkpoint_every: int = 10, resume: bool = False, progress: bool = True, local_eval: bool = True) -> dict:
    """Train ``engine`` up to round ``rounds`` in run directory ``out``; returns the summary dict."""
    if rounds < 0 or eval_every < 1 or checkpoint_every < 1:
        raise ValueError("rounds must be >= 0 and eval_every, checkpoint_every >= 1")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt, mfile, cfile = out / "checkpoint.pt", out / "metrics.jsonl", out / "config.json"
    config = json.loads(json.dumps(config or {}, default=str))  # as it will read back from config.json
    if resume:
        if not ckpt.exists():
            raise ValueError(f"--resume: no checkpoint in {out}; start the run without --resume")
        saved = json.loads(cfile.read_text()) if cfile.exists() else {}
        diff = sorted(k for k in set(saved) | set(config) if k not in VOLATILE + ("resume",)
                      and saved.get(k) != config.get(k))
        if config and diff:
            raise ValueError(f"--resume with a different config ({', '.join(diff)}); use the original options")
        engine.load_state_dict(torch.load(ckpt, map_location=engine.device, weights_only=True))
        if rounds < engine.t:
            raise ValueError(f"--resume: the checkpoint is at round {engine.t}, past --rounds {rounds}; "
                             f"give --rounds {engine.t} or more")
        _truncate(mfile, engine.t)
    elif ckpt.exists() or mfile.exists():
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    cfile.write_text(json.dumps({**config, "rounds": rounds}, indent=2, default=str) + "\n")

    def record() -> dict:
        rec = _clean(measure(engine, evaluator, local=local_eval))
        with mfile.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        return rec

    start = time.perf_counter()
    last = record() if not resume else _last_record(mfile)
    status = "completed"
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=rounds, initial=engine.t, desc=engine.algo.name, unit="round", leave=False)
    while engine.t < rounds:
        engine.round()
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
            _save(engine.state_dict(), ckpt)
    if bar is not None:
        bar.close()
    summary = {"status": status, "rounds": engine.t, "wall_seconds": time.perf_counter() - start, "last": last}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def run(cfg: dict, resume: bool = False) -> dict:
    """Build from ``cfg`` and train into ``cfg['out']``."""
    engine, evaluator = build(cfg)
    keep = {k: v for k, v in cfg.items() if k not in ("out", "resume", "func", "command")}
    return train(engine, evaluator, cfg["out"], cfg["rounds"], config=keep, eval_every=cfg.get("eval_every", 1),
                 checkpoint_every=cfg.get("checkpoint_every", 10), resume=resume,
                 progress=cfg.get("progress", True), local_eval=cfg.get("local_eval", True))
