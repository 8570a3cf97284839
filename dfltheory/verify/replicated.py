"""Replicated runs: S copies of one run trained as one float64 engine from the bound's x^0
(:func:`replicated_engine`), their per-round terms cached and checkpointed so that a cut run resumes bit-exactly
(:func:`replicated_terms`); the informative runs train them (:mod:`dfltheory.verify.informative`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np


def replicated_terms(cfg: Mapping, seeds: int, measure: str, values: Mapping[str, float], rounds: int, root: Path,
                     progress: Callable | None = None, checkpoint_every: int = 5000, progress_every: int = 1000,
                     compile: bool | None = None) -> tuple[np.ndarray, float]:
    """(seeds, rounds) per-round terms (:func:`dfltheory.verify.measures.per_round`) of ``seeds`` independent copies
    of the run ``cfg`` trained as one engine in float64 (:mod:`dfltheory.empirical.replicas`; ``torch.compile``d
    where a C++ compiler is found), and the seconds it took. Cached in ``root/<key>``: ``terms.npy`` once complete;
    ``checkpoint.pt`` every ``checkpoint_every`` rounds, from which a cut run resumes bit-exactly.
    ``progress(done, total, eta_seconds)`` every ``progress_every`` rounds. ``compile`` None: compiled where
    ``torch.compile`` can run (the cache key leaves it out: the two agree to float rounding)."""
    quantity = {"min": "grad_norm_sq", "avg": "grad_norm_sq", "avg_p": "grad_norm_sq_p", "avg_w": "grad_norm_sq_w",
                "avg_pgp": "delta_pgp"}[measure]
    from dfltheory.empirical.sweep import CACHE_VERSION

    # the version: entries written before every copy started at the bound's x0 (or before dpsgd's order changed)
    # are never read back as today's
    from dfltheory.empirical.algorithms import cache_form

    key_cfg = {**cache_form(cfg), "replicas": seeds, "rounds": rounds, "quantity": quantity, "_cache": CACHE_VERSION}
    out = Path(root) / hashlib.sha256(json.dumps(key_cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]
    out.mkdir(parents=True, exist_ok=True)
    from dfltheory.empirical import rundir

    with rundir.lock(out, "the informative run"):  # a second verify training the same run is refused
        return _replicated_terms(cfg, seeds, values, rounds, out, key_cfg, progress, checkpoint_every,
                                 progress_every, compile)


def _replicated_terms(cfg, seeds, values, rounds, out: Path, key_cfg, progress, checkpoint_every,
                      progress_every, compile) -> tuple[np.ndarray, float]:
    """:func:`replicated_terms` inside the lock of its cache entry ``out`` (``key_cfg``: the entry's key)."""
    import torch

    from dfltheory.empirical import rundir
    from dfltheory.empirical.engine import check_compile
    from dfltheory.empirical.replicas import Replicas
    from dfltheory.empirical.rundir import load_checkpoint, save_checkpoint

    quantity = key_cfg["quantity"]
    done_file, ckpt = out / "terms.npy", out / "checkpoint.pt"
    if done_file.exists():
        try:
            meta = json.loads((out / "run.json").read_text())
            terms = np.load(done_file)
            if terms.shape == (seeds, rounds) and np.all(np.isfinite(terms)):
                return terms, float(meta["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged or partial cache entry is trained again
        for entry in out.iterdir():  # the directory stays: its lock is held
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.name != rundir.LOCK:
                entry.unlink(missing_ok=True)
    (out / "config.json").write_text(json.dumps(key_cfg, indent=1, default=str) + "\n")
    compiled = compile
    if compiled is None:
        try:
            check_compile(torch.device(cfg.get("device", "cpu")))
            compiled = True
        except ValueError:
            compiled = False
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny problems: one thread is fastest
    engine, _ = replicated_engine(cfg, seeds, compiled, out)
    terms, seconds = None, 0.0
    if ckpt.exists():
        try:
            saved = load_checkpoint(ckpt, "bound-holds run", "it is trained again")
            state, terms, seconds = saved["engine"], saved["terms"], saved["seconds"]
            engine.load_state_dict(state)
        except (ValueError, KeyError):  # damaged (digest) or another run's: start again from round 0, fresh
            engine, _ = replicated_engine(cfg, seeds, compiled, out)
            terms, seconds = None, 0.0
    rep = Replicas(engine, seeds, quantity, (values.get("L_u", 1.0), values.get("L_v", 1.0)))
    start = time.perf_counter()

    def on_round(t, so_far):
        if t % checkpoint_every == 0 and t < rounds:
            save_checkpoint({"engine": engine.state_dict(), "terms": so_far.clone(),
                             "seconds": seconds + time.perf_counter() - start}, ckpt)
        if progress and t % progress_every == 0:
            rate = (time.perf_counter() - start) / max(t - (0 if terms is None else terms.shape[1]), 1)
            progress(t, rounds, rate * (rounds - t))

    try:
        result = rep.run(rounds, terms, on_round).cpu().numpy()
    finally:
        torch.set_num_threads(threads)
    seconds += time.perf_counter() - start
    np.save(done_file, result)
    (out / "run.json").write_text(json.dumps({"seconds": seconds, "compiled": compiled, "seeds": seeds,
                                              "rounds": rounds}) + "\n")
    ckpt.unlink(missing_ok=True)
    return result, seconds


def replicated_engine(cfg: Mapping, seeds: int, compiled: bool, folder: Path):
    """The engine of ``seeds`` copies of the run ``cfg`` in float64 (the model, and with it the data and the
    mixing), every copy starting at the x^0 of the bound: the single run's initial model as the float32 default
    draws it (:func:`dfltheory.verify.instances.start_point` evaluates f(x^0) there), written to ``folder/x0.pt``
    and read as the float64 build's ``init_weights`` (the float64 default draws other weights: f(x^0) - f* = 0.2550
    against the bound's 0.2183 on synthetic-robust-common, issue 33)."""
    import torch

    from dfltheory.empirical.runner import build

    single, _ = build({**cfg, "out": None})
    start = Path(folder) / "x0.pt"
    torch.save({k: v.detach().clone() for k, v in single.model.module.state_dict().items()}, start)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return build({**cfg, "out": None, "compile": compiled, "init_weights": str(start)}, replicas=seeds,
                     announce=False)  # verify's own start point: no note
    finally:
        torch.set_default_dtype(default)
