"""Sweeps of runs: a base config crossed with a grid, walked along zipped lists and repeated over seeds; trained in
parallel, cached by config, and summarised (``dfltheory sweep SWEEP.toml``; docs/empirical.md, "Sweeps").

:class:`RunCache` keeps runs under ``root/<key>``, the key a hash of the run's config: a run whose files all read back
complete (:func:`dfltheory.empirical.rundir.complete`) is read, not trained again; a missing or unfinished one is
trained (afresh) in worker processes. ``verify`` keeps its runs in one too. :class:`Sweep` expands into run configs;
:func:`run_sweep` trains them (or reads them back) and returns one row per run: the swept values, the status, and
the final and best value of each metric of :data:`METRICS`; :func:`write_csv` and :func:`table` present the rows.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: metric -> the better of two values: the summary's "best" column (a key a run does not record is left out)
METRICS = {"train_loss": min, "grad_norm_sq": min, "test_acc": max, "test_loss": min}
#: config keys a sweep sets itself: each run's directory is the cache's, and a cached run is never resumed by hand
OWN_KEYS = ("out", "resume")


def check_workers(workers) -> None:
    """``workers`` (processes that train runs, one CPU thread each): an integer from 1 to the CPU count."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"--jobs must be >= 1 (processes that train runs), got {workers!r}")
    cpus = os.cpu_count() or 1
    if workers > cpus:  # each process trains on one CPU thread: more processes than CPUs only wait for each other
        raise ValueError(f"{workers} processes (--jobs) for {cpus} CPU(s): each trains on one thread, so more than "
                         f"the CPU count only competes for them; give --jobs {cpus} or fewer")


class RunCache:
    """Runs kept under ``root/<key>``, the key a hash of the config: a finished run is read back, not re-run."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.trained = 0  # runs trained (not read back) by this cache object

    def path(self, cfg: Mapping) -> Path:
        key = hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return self.root / key

    def done(self, cfg: Mapping) -> bool:
        """Whether the run of ``cfg`` is cached complete for its horizon, every file read back
        (:func:`dfltheory.empirical.rundir.complete`); otherwise :meth:`fill` trains it again."""
        from dfltheory.empirical.rundir import complete

        return complete(self.path(cfg), cfg["rounds"])

    def fill(self, cfgs: Sequence[Mapping], workers: int = 1, progress: Callable | None = None) -> None:
        """Train every run of ``cfgs`` that is not cached, in ``workers`` processes (each run single-threaded);
        ``progress(done, total, eta_seconds)`` after each run, cached ones included."""
        todo = [dict(c) for c in cfgs if not self.done(c)]
        total, done, start = len(cfgs), len(cfgs) - len(todo), time.perf_counter()

        def tick(trained: int):
            if progress:
                rate = (time.perf_counter() - start) / max(trained, 1)
                progress(done, total, rate * (total - done))

        tick(0)
        jobs = [{**c, "out": str(self.path(c))} for c in todo]
        for job in jobs:
            shutil.rmtree(job["out"], ignore_errors=True)
        if workers > 1 and len(jobs) > 1:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:  # no idle processes
                for n, future in enumerate(as_completed([pool.submit(_train, job) for job in jobs]), 1):
                    future.result()
                    done += 1
                    tick(n)
        else:
            for n, job in enumerate(jobs, 1):
                _train(job)
                done += 1
                tick(n)
        self.trained += len(jobs)

    def get(self, cfg: Mapping) -> tuple[list[dict], str]:
        """(metrics rows, status) of a cached run (:meth:`fill` trains it); a run not complete for its horizon is
        a ValueError (it would compare a bound at T with fewer rounds)."""
        from dfltheory.empirical.rundir import finished

        out = self.path(cfg)
        found = finished(out, cfg["rounds"])  # the files read once: checked and returned
        if found is None:
            raise ValueError(f"the cached run {out} is not complete for its {cfg['rounds']} rounds; run the "
                             "sweep or verification again (it retrains the run)")
        records, summary = found
        return records, summary["status"]


def _train(cfg: dict) -> None:
    """One run (a module-level function, so that worker processes can run it)."""
    from dfltheory.empirical.runner import run

    run({**cfg, "progress": False})


@dataclass(frozen=True)
class Sweep:
    """A base run config (``train`` options as config keys: ``n``, ``lr``, ``K_v``, ...), a ``grid`` (option ->
    values: every combination), ``zipped`` lists (option -> values, walked together: the sweep file's ``zip``) and
    ``seeds`` (each point once per seed; None: the base's ``seed`` alone). The runs are the grid's product (in the
    order its options are given, the last varying fastest) times the zipped rows times the seeds."""

    base: Mapping
    grid: Mapping = field(default_factory=dict)
    zipped: Mapping = field(default_factory=dict)
    seeds: Sequence[int] | None = None

    def __post_init__(self):
        for name, table in (("base", self.base), ("grid", self.grid), ("zip", self.zipped)):
            own = sorted(set(table) & set(OWN_KEYS))
            if own:
                raise ValueError(f"{name} sets {', '.join(own)}: a sweep places every run in OUT/runs/<key> and "
                                 "reads a finished one back; remove the key (give the sweep's directory with --out)")
        for name, table in (("grid", self.grid), ("zip", self.zipped)):
            for key, values in table.items():
                if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                    raise ValueError(f"{name}.{key} must be a non-empty list of values, got {values!r}; e.g. "
                                     f"{key} = [{values!r}, ...]")
        lengths = {key: len(values) for key, values in self.zipped.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"zip lists differ in length ({', '.join(f'{k}: {n}' for k, n in lengths.items())}); "
                             "zipped lists are walked together: give them one length (or move one to grid)")
        both = sorted(set(self.grid) & set(self.zipped))
        if both:
            raise ValueError(f"{', '.join(both)} in both grid and zip; sweep each option in one of them")
        if self.seeds is not None:
            if "seed" in self.grid or "seed" in self.zipped:
                raise ValueError("seed is swept in grid or zip and by seeds; give the seeds in one place")
            bad = [s for s in self.seeds if isinstance(s, bool) or not isinstance(s, int)]
            if bad or not self.seeds or len(set(self.seeds)) < len(self.seeds):
                raise ValueError(f"seeds must be distinct integers (or a count n: seeds 0 .. n-1), got "
                                 f"{list(self.seeds)!r}")

    @property
    def swept(self) -> list[str]:
        """The options that vary from run to run, in the order of the summary's columns."""
        return [*self.grid, *self.zipped, *(("seed",) if self.seeds is not None else ())]

    def points(self) -> list[dict]:
        """The swept values of every run, in order."""
        rows = list(zip(*self.zipped.values())) or [()]
        return [{**dict(zip(self.grid, g)), **dict(zip(self.zipped, z)), **({"seed": s} if s is not None else {})}
                for g in itertools.product(*self.grid.values()) for z in rows for s in (self.seeds or (None,))]

    def configs(self) -> list[tuple[dict, dict]]:
        """(swept values, run config) of every run: the base updated by the values, completed by its recipe
        (:func:`dfltheory.empirical.recipes.resolve`), on one CPU thread unless ``threads`` is given (so that
        ``workers`` processes use that many cores); each config is checked (:func:`dfltheory.empirical.runner.
        check_options`) before anything is trained, an error naming the run."""
        from dfltheory.empirical.recipes import resolve
        from dfltheory.empirical.runner import check_options

        out = []
        for point in self.points():
            try:
                cfg = resolve({**self.base, **point})
                if cfg.get("algo") is None:
                    raise ValueError("no algo: give algo (or a recipe) in the base config")
                check_options(cfg)
            except ValueError as err:
                raise ValueError(f"the run {_label(point) or 'of the base config'}: {err}") from None
            out.append((point, {**cfg, "threads": cfg.get("threads") or 1}))
        return out


def _label(point: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def summarize(records: Sequence[Mapping], status: str) -> dict:
    """A run's summary: status, last round, and for every key of :data:`METRICS` it records, the last value
    (``final_<key>``) and the best over the records (``best_<key>``; None where every value is non-finite)."""
    row = {"status": status, "rounds": records[-1]["round"]}
    for key, better in METRICS.items():
        values = [r[key] for r in records if r.get(key) is not None]
        if any(key in r for r in records):
            row[f"final_{key}"] = records[-1].get(key)
            row[f"best_{key}"] = better(values) if values else None
    return row


def run_sweep(sweep: Sweep, out, workers: int = 1, progress: Callable | None = None) -> list[dict]:
    """Train the runs of ``sweep`` that ``out/runs`` does not hold complete (in ``workers`` processes) and return
    one row per run: ``run`` (its directory under ``out``), the swept values, then :func:`summarize`'s columns.
    ``progress(done, total, eta_seconds)`` as :meth:`RunCache.fill` calls it."""
    from dfltheory.paths import output_dir

    check_workers(workers)
    runs = sweep.configs()  # every config checked before anything is trained
    out = output_dir(out, "--out")
    cache = RunCache(out / "runs")
    cache.fill([cfg for _, cfg in runs], workers, progress)
    rows = []
    for point, cfg in runs:
        records, status = cache.get(cfg)
        rows.append({"run": str(cache.path(cfg).relative_to(out)), **point, **summarize(records, status)})
    return rows


def _columns(rows: Sequence[Mapping]) -> list[str]:
    return list(dict.fromkeys(k for row in rows for k in row))


def write_csv(rows: Sequence[Mapping], path) -> Path:
    """The rows as CSV (one column per key of any row, empty where a run has none)."""
    path = Path(path)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=_columns(rows), restval="")
        writer.writeheader()
        writer.writerows([{k: "" if v is None else v for k, v in row.items()} for row in rows])
    return path


def table(rows: Sequence[Mapping]) -> str:
    """The rows as an aligned text table (numbers to 4 significant digits, '-' where a run has no value)."""
    columns = _columns(rows)

    def cell(value) -> str:
        if value is None:
            return "-"
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    cells = [columns] + [[cell(row.get(k)) for k in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells) + "\n"
