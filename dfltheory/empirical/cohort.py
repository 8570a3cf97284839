"""The seeds of one arm trained in one engine: S runs that differ in their seed *and* their problem (issue 22).

A comparison of algorithms is a statistical test over seeds, and its spread must include what a user's next run
would change: the partition, the initial model, the random graph (all drawn from ``data_seed``) and the minibatches.
:func:`dfltheory.empirical.runner.build_cohort` stacks the S runs ``seed = data_seed = s`` as S m clients of one
engine (copy c: its own partition, initial model and graph; the mixing is block-diagonal, applied sparsely so that
a copy that diverges cannot reach the others). One round is then a few batched operations over S m rows instead of
S rounds, the lever that makes 10 seeds per arm affordable. The copies draw their minibatches from the engine's one
generator (seeded by the first seed), so copy c is not the single run ``--seed s`` of ``train``; a cohort is
reproducible from its seeds, and bit-exactly resumable from its checkpoint.

:func:`run_cohort` trains a cohort with a record per copy every ``eval_every`` rounds (the keys of
:func:`dfltheory.empirical.metrics.measure`, each copy seen through :class:`dfltheory.empirical.replicas.Copy`), a
checkpoint every ``checkpoint_every`` rounds, and marks a copy ``diverged`` from its first non-finite record on;
``finetune`` steps after the last round add each copy's personal accuracy after local fine-tuning
(:mod:`dfltheory.empirical.finetune`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from dfltheory.empirical.metrics import measure
from dfltheory.empirical.replicas import Copy
from dfltheory.empirical.rundir import load_checkpoint, save_checkpoint


def _records(engine, evaluators, prev, local: bool) -> list[dict]:
    m = engine.m // len(evaluators)
    return [measure(Copy(engine, c, m, None if prev is None else prev[c]), ev, local=local)
            for c, ev in enumerate(evaluators)]


def _averages(engine, copies: int) -> list[torch.Tensor]:
    m = engine.m // copies
    return [Copy(engine, c, m).x_bar().clone() for c in range(copies)]


def run_cohort(cfg: dict, seeds: Sequence[int], out: str | Path, *, rounds: int, eval_every: int = 1,
               checkpoint_every: int | None = None, local_eval: bool = True, finetune: int | None = None,
               on_round: Callable[[int], None] | None = None,
               final: Callable[[object, Sequence, int], list] | None = None) -> dict:
    """Train (or resume from ``out``) the cohort of ``cfg`` over ``seeds`` for ``rounds`` rounds; returns and
    stores in ``out/records.json`` {"seeds", "records": per copy the list of records, "status": per copy
    'completed' or 'diverged', "finetuned": per copy the personal accuracy after ``finetune`` local steps (None
    without), "final": per copy ``final(engine, evaluators, copies)``'s value (a measurement of the trained models,
    such as the sharpness at each copy's x_bar; None without), "wall_seconds", "rounds"}. A file in ``out`` that
    cannot be read is replaced by training again."""
    from dfltheory.empirical.finetune import finetune as finetune_models
    from dfltheory.empirical.finetune import personal_accuracy
    from dfltheory.empirical.runner import build_cohort

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    done = _read(out / "records.json")
    if done is not None and done.get("rounds") == rounds and done.get("seeds") == list(seeds):
        return done
    engine, evaluators = build_cohort(cfg, seeds)
    S = len(seeds)
    records: list[list[dict]] = [[] for _ in range(S)]
    wall, start = 0.0, time.perf_counter()
    ckpt = out / "checkpoint.pt"
    saved, prev = _load(ckpt), None
    if saved is not None and saved.get("seeds") == list(seeds) and saved.get("t", rounds + 1) <= rounds:
        try:
            engine.load_state_dict(saved["engine"])
            records, wall, prev = saved["records"], saved["wall_seconds"], saved["prev"]
        except (ValueError, KeyError):  # another cohort's checkpoint: trained again from the start
            engine, evaluators = build_cohort(cfg, seeds)
    status = ["completed"] * S
    every = checkpoint_every or rounds
    while True:
        t = engine.t
        if t % eval_every == 0 or t == rounds:
            if not records[0] or records[0][-1]["round"] < t:
                for c, rec in enumerate(_records(engine, evaluators, prev, local_eval)):
                    records[c].append(rec)
        if t == rounds:
            break
        prev = _averages(engine, S)
        engine.round()
        if on_round is not None:
            on_round(engine.t)
        if engine.t % every == 0 and engine.t < rounds:
            save_checkpoint({"seeds": list(seeds), "t": engine.t, "engine": engine.state_dict(), "records": records,
                             "prev": prev, "wall_seconds": wall + time.perf_counter() - start}, ckpt)
    for c in range(S):
        if not all(r["finite"] for r in records[c]):
            status[c] = "diverged"
    tuned = None
    if finetune is not None:
        X = finetune_models(engine, finetune)
        m = engine.m // S
        tuned = [personal_accuracy(ev, X[c * m:(c + 1) * m]) if status[c] == "completed" else None
                 for c, ev in enumerate(evaluators)]
    measured = None
    if final is not None:
        measured = [v if status[c] == "completed" else None for c, v in enumerate(final(engine, evaluators, S))]
    result = {"seeds": list(seeds), "rounds": rounds, "records": records, "status": status, "finetuned": tuned,
              "final": measured, "wall_seconds": wall + time.perf_counter() - start}
    tmp = out / "records.json.part"
    tmp.write_text(json.dumps(result, allow_nan=True))
    tmp.replace(out / "records.json")
    ckpt.unlink(missing_ok=True)
    return result


def _read(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("records"), list) else None


def _load(path: Path) -> dict | None:
    """A checkpoint read on the CPU (the engine moves it to its device); None where missing or damaged (its
    digest does not match: :mod:`dfltheory.empirical.rundir`)."""
    if not path.exists():
        return None
    try:
        return load_checkpoint(path, "cohort", "it is trained again")
    except ValueError:
        return None
