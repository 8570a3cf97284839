"""Sweeps of runs: a base config crossed with a grid, walked along zipped lists and repeated over seeds; trained in
parallel, cached by config, and summarised (``dfltheory sweep SWEEP.toml``; docs/empirical.md, "Sweeps").

:class:`RunCache` keeps runs under ``root/<key>``, the key a hash of the run's config and the cache's format
(:data:`CACHE_VERSION`): a run whose files all read back
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
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dfltheory.empirical.run_config import RunConfig, check_config

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


def _checked_cfg(cfg, what: str = "cfg") -> Mapping:
    """A run config given to :class:`RunCache`: a mapping of train options (:class:`RunConfig`'s fields) with an
    integer ``rounds`` >= 0."""
    if not isinstance(cfg, Mapping):
        raise ValueError(f"{what} must be a run config (a dict of train options with rounds), got "
                         f"{type(cfg).__name__} {cfg!r:.60}")
    rounds = cfg.get("rounds")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"{what}['rounds'] must be an integer >= 0 (the run's horizon), got {rounds!r}; give "
                         "rounds in the config")
    check_config(dict(cfg))  # the schema: a misspelt option is refused by name instead of training a run no one asked
    return cfg


def _checked_progress(progress) -> None:
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function (done, total, eta_seconds) or None, got {progress!r}")


def _worker_start() -> None:
    """In each worker process: die with the parent (Linux's PR_SET_PDEATHSIG): a sweep killed by any signal, SIGKILL
    included, takes its workers with it rather than leave them training (and holding memory)."""
    import ctypes
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler (_parallel's), inherited by fork
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # not Linux: the parent's SIGTERM/SIGINT handling still ends them
        pass


class _Stop(SystemExit):
    """SIGTERM in the parent of a pool: unwinds like Ctrl-C, so that the workers are ended first, and exits with the
    shell's code for SIGTERM wherever it lands (inside the pool's loop or in the caller's code between two results:
    a SystemExit, never a traceback)."""

    def __init__(self):
        import signal

        super().__init__(128 + signal.SIGTERM)


#: the cache's format, hashed into every key: raised where a config's meaning changed, so that runs cached before are
#: not read back as the new one (2: ``dpsgd`` became Lian et al. 2017's order; its old runs are ``dpsgd-atc``'s)
CACHE_VERSION = 2


class RunCache:
    """Runs kept under ``root/<key>``, the key a hash of the config and :data:`CACHE_VERSION`: a finished run is read
    back, not re-run."""

    def __init__(self, root: Path):
        if isinstance(root, bool) or not isinstance(root, (str, os.PathLike)) or not str(root).strip():
            raise ValueError(f"root must be the cache's directory (a path), got {root!r}; e.g. RunCache('out/runs')")
        self.root = Path(root)
        self.trained = 0  # runs trained (not read back) by this cache object
        self.read_back = 0  # runs found complete by fill, not trained again

    def path(self, cfg: Mapping) -> Path:
        _checked_cfg(cfg)
        from dfltheory.empirical.algorithms import cache_form

        versioned = {**cache_form(cfg), "_cache": CACHE_VERSION}
        key = hashlib.sha256(json.dumps(versioned, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return self.root / key

    def done(self, cfg: Mapping) -> bool:
        """Whether the run of ``cfg`` is cached complete for its horizon, every file read back
        (:func:`dfltheory.empirical.rundir.complete`); otherwise :meth:`fill` trains it again."""
        from dfltheory.empirical.rundir import complete

        return complete(self.path(cfg), cfg["rounds"])

    def fill(self, cfgs: Sequence[Mapping], workers: int = 1, progress: Callable | None = None) -> None:
        """Train every run of ``cfgs`` that is not cached (a config given twice once), in ``workers`` processes (each
        run single-threaded); ``progress(done, total, eta_seconds)`` after each run, cached ones included. The cache
        is locked meanwhile (:func:`dfltheory.empirical.rundir.lock`: a second sweep or verification on it is
        refused); a SIGTERM or Ctrl-C ends the workers with it."""
        from dfltheory.empirical import rundir
        from dfltheory.paths import output_dir

        check_workers(workers)
        _checked_progress(progress)
        if isinstance(cfgs, (str, bytes, Mapping)) or not isinstance(cfgs, Sequence):
            raise ValueError(f"cfgs must be a list of run configs, got {type(cfgs).__name__}")
        unique = {self.path(_checked_cfg(c, f"cfgs[{i}]")): c for i, c in enumerate(cfgs)}
        root = output_dir(self.root, "the run cache")
        with rundir.lock(root, "the run cache", root.parent / f".{root.resolve().name}.lock"):  # its entries: runs
            todo = [dict(c) for c in unique.values() if not self.done(c)]
            total, done, start = len(unique), len(unique) - len(todo), time.perf_counter()
            self.read_back += done

            def tick(trained: int):
                if progress:
                    rate = (time.perf_counter() - start) / max(trained, 1)
                    progress(done, total, rate * (total - done))

            tick(0)
            jobs = [{**c, "out": str(self.path(c))} for c in todo]
            for job in jobs:
                shutil.rmtree(job["out"], ignore_errors=True)
            if workers > 1 and len(jobs) > 1:
                for n, _ in enumerate(_parallel(jobs, workers), 1):
                    done += 1
                    self.trained += 1
                    tick(n)
            else:
                for n, job in enumerate(jobs, 1):
                    _train(job)
                    done += 1
                    self.trained += 1
                    tick(n)

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


def _parallel(jobs: list[dict], workers: int):
    """Train ``jobs`` in a pool of ``workers`` processes, yielding as each ends. A failed run, Ctrl-C or SIGTERM
    (in the main thread) ends every worker before the error goes on; the workers also die with this process."""
    import signal
    import threading
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def stop(signum, frame):
        raise _Stop()

    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, stop) if main else None
    pool = ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=_worker_start)  # no idle processes
    try:
        for future in as_completed([pool.submit(_train, job) for job in jobs]):
            future.result()
            yield future
    except BaseException as err:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()  # a run in progress is not waited for: its directory is retrained next time
        pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(err, _Stop):
            raise SystemExit(128 + signal.SIGTERM) from None
        raise
    else:
        pool.shutdown()
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)


def _train(cfg: dict) -> None:
    """One run (a module-level function, so that worker processes can run it)."""
    from dfltheory.empirical.runner import run

    run({**cfg, "progress": False}, again="run the sweep (or verification) again: it trains the runs it does not hold "
        "complete afresh")


#: the config keys a sweep may set: the ``train`` command's options by their config names (the fields of
#: :class:`dfltheory.empirical.run_config.RunConfig`, the one schema of a run config), but :data:`OWN_KEYS`
OPTIONS = frozenset(RunConfig.keys()) - set(OWN_KEYS)


def _key(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class Sweep:
    """A base run config (``train`` options as config keys: ``n``, ``lr``, ``K_v``, ...), a ``grid`` (option ->
    values: every combination), ``zipped`` lists (option -> values, walked together: the sweep file's ``zip``) and
    ``seeds`` (each point once per seed: a list, or a count n for 0 .. n-1, kept as a range; None: the base's
    ``seed`` alone). The runs are the grid's product (in the order its options are given, the last varying fastest)
    times the zipped rows times the seeds; :attr:`size` counts them without listing them."""

    base: Mapping
    grid: Mapping = field(default_factory=dict)
    zipped: Mapping = field(default_factory=dict)
    seeds: Sequence[int] | int | None = None

    def __post_init__(self):
        import difflib

        from dfltheory.empirical.run_config import SEED_MAX

        known = OPTIONS
        for name, table in (("base", self.base), ("grid", self.grid), ("zip", self.zipped)):
            if not isinstance(table, Mapping):
                raise ValueError(f"{name} must be a dict of train options (option -> "
                                 f"{'value' if name == 'base' else 'list of values'}), got {type(table).__name__} "
                                 f"{table!r:.60}")
            own = sorted(set(table) & set(OWN_KEYS))
            if own:
                raise ValueError(f"{name} sets {', '.join(own)}: a sweep places every run in OUT/runs/<key> and "
                                 "reads a finished one back; remove the key (give the sweep's directory with --out)")
            for key in table:
                if key not in known:
                    near = difflib.get_close_matches(str(key), known, n=1)
                    hint = f" (did you mean {near[0]!r}?)" if near else ""
                    raise ValueError(f"{name}: unknown option {key!r}{hint}; the keys are the config names of the "
                                     "options of dfltheory train (n, lr, K, batch_size, ...)")
        for name, table in (("grid", self.grid), ("zip", self.zipped)):
            for key, values in table.items():
                if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                    raise ValueError(f"{name}.{key} must be a non-empty list of values, got {values!r}; e.g. "
                                     f"{key} = [{values!r}, ...]")
        lengths = {key: len(values) for key, values in self.zipped.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"zip lists differ in length ({', '.join(f'{k}: {n}' for k, n in lengths.items())}); "
                             "zipped lists are walked together: give them one length (or move one to grid)")
        for key, values in self.grid.items():
            seen = {}
            for value in values:
                if _key(value) in seen:
                    raise ValueError(f"grid.{key} lists {value!r} twice: both would be the same runs; remove the "
                                     "repeat")
                seen[_key(value)] = value
        rows = [_key(row) for row in zip(*self.zipped.values())]
        if len(set(rows)) < len(rows):
            raise ValueError(f"zip repeats a row of values ({', '.join(self.zipped)}): both would be the same runs; "
                             "remove the repeat")
        both = sorted(set(self.grid) & set(self.zipped))
        if both:
            raise ValueError(f"{', '.join(both)} in both grid and zip; sweep each option in one of them")
        if self.seeds is not None:
            self._check_seeds(SEED_MAX)

    def _check_seeds(self, high: int) -> None:
        seeds = self.seeds
        if "seed" in self.grid or "seed" in self.zipped:
            raise ValueError("seed is swept in grid or zip and by seeds; give the seeds in one place")
        if isinstance(seeds, int) and not isinstance(seeds, bool):
            if seeds < 1:
                raise ValueError(f"seeds = {seeds}: a count must be >= 1 (or give a list of seeds)")
            object.__setattr__(self, "seeds", seeds := range(seeds))
        why = f"seeds must be distinct integers in [0, {high}] (or a count n: seeds 0 .. n-1)"
        if isinstance(seeds, range):
            if not seeds or seeds.step < 0 or seeds[0] < 0 or seeds[-1] > high:
                raise ValueError(f"{why}, got {seeds!r}")
            return
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
            raise ValueError(f"{why}, got {seeds!r:.60}")
        bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= high]
        if bad or not seeds or len(set(seeds)) < len(seeds):
            raise ValueError(f"{why}, got {list(seeds)!r:.200}")

    @property
    def size(self) -> int:
        """The number of runs, counted from the lists' lengths (nothing is listed)."""
        rows = len(next(iter(self.zipped.values()))) if self.zipped else 1
        return math.prod(len(v) for v in self.grid.values()) * rows * (len(self.seeds) if self.seeds else 1)

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
        ``workers`` processes use that many cores); each config is checked (its keys, its values' ranges, its former
        option names: :func:`dfltheory.empirical.run_config.check_config`) before anything is trained, an error naming
        the run."""
        from dfltheory.empirical.algorithms import FormerNameConflict, current_names
        from dfltheory.empirical.recipes import resolve

        out = []
        for point in self.points():
            try:
                cfg = resolve({**self.base, **point})
                if cfg.get("algo") is None:
                    raise ValueError("no algo: give algo (or a recipe) in the base config")
                check_config(current_names(cfg))  # a former option name that contradicts today's: before any run
            except ValueError as err:
                fix = ("; give each algorithm its own value in zip (algo = [...] beside that option's list)"
                       if isinstance(err, FormerNameConflict) else "")
                raise ValueError(f"the run {_label(point) or 'of the base config'}: {err}{fix}") from None
            out.append((point, {**cfg, "threads": cfg.get("threads") or 1}))
        return out

    def estimate(self, workers: int = 1) -> dict:
        """Before anything is listed: ``runs`` (:attr:`size`), ``seconds`` (a lower estimate of the wall time in
        ``workers`` processes: :data:`RUN_SECONDS` per run plus :data:`STEP_SECONDS` per client local step, the
        steps rounds x n x K averaged over the swept values) and ``bytes`` (this process's memory for the runs'
        configs and summary rows, :data:`RUN_BYTES` each)."""
        from dfltheory.empirical.recipes import resolve

        try:
            base = resolve(dict(self.base))
        except (ValueError, KeyError, TypeError):
            base = dict(self.base)

        def mean(key: str, default: float) -> float:
            values = self.grid.get(key) or self.zipped.get(key) or [base.get(key) or default]
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            return sum(numbers) / len(numbers) if numbers else default

        runs = self.size
        steps = mean("rounds", 100) * mean("n", 10) * mean("K", 1)
        return {"runs": runs, "seconds": runs * (RUN_SECONDS + STEP_SECONDS * steps) / max(workers, 1),
                "bytes": runs * RUN_BYTES}


#: a sweep of more runs, or of a longer estimated time, starts only when confirmed (``sweep --yes``, ``yes=True``)
MAX_RUNS = 10_000
MAX_SECONDS = 24 * 3600.0
#: lower estimates of a run's cost (:meth:`Sweep.estimate`): starting it (data, model, engine, its files) and one
#: client's local step on the smallest models (measured on 2 CPU cores: 1-3 s and 20-100 us)
RUN_SECONDS = 1.0
STEP_SECONDS = 2e-5
#: the memory this process holds per run: its resolved config and summary row (measured 2.9 kB with tracemalloc on
#: the defaults' config) and a copy of the config while the runs are trained
RUN_BYTES = 8e3


def check_size(sweep: Sweep, workers: int = 1, yes: bool = False) -> dict:
    """:meth:`Sweep.estimate`, refused before anything is listed with its numbers: memory beyond what is free always,
    more than :data:`MAX_RUNS` runs or :data:`MAX_SECONDS` unless ``yes``."""
    from dfltheory.empirical.budget import gib, require
    from dfltheory.parsing import duration

    est = sweep.estimate(workers)
    numbers = (f"{est['runs']:,} runs, at least about {duration(est['seconds'])} in {workers} process(es) and "
               f"{gib(est['bytes'])} of memory to list them")
    require(est["bytes"], f"the sweep ({numbers})", "sweep fewer values (grid, zip, seeds), or split the sweep "
            "into several files")
    if not yes and (est["runs"] > MAX_RUNS or est["seconds"] > MAX_SECONDS):
        raise ValueError(f"the sweep is large: {numbers} (more than {MAX_RUNS:,} runs or {duration(MAX_SECONDS)}); "
                         "sweep fewer values, or confirm with --yes (yes=True)")
    return est


def _label(point: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def summarize(records: Sequence[Mapping], status: str) -> dict:
    """A run's summary: status, last round, and for every key of :data:`METRICS` it records, the last value
    (``final_<key>``) and the best over the records (``best_<key>``; None where every value is non-finite)."""
    from dfltheory.empirical.rundir import STATUSES

    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence) or not records:
        raise ValueError(f"records must be a non-empty list of metrics records (dicts with 'round'), got "
                         f"{records!r:.60}; read them with RunCache.get or rundir.read_records")
    for i, rec in enumerate(records):
        rnd = rec.get("round") if isinstance(rec, Mapping) else None
        if isinstance(rnd, bool) or not isinstance(rnd, int):
            raise ValueError(f"records[{i}] must be a metrics record (a dict with an integer 'round'), got {rec!r:.80}")
        for key in METRICS:
            value = rec.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"records[{i}]['{key}'] must be a number or None, got {value!r:.60}")
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)} (a run's summary status), got {status!r}")
    row = {"status": status, "rounds": records[-1]["round"]}
    for key, better in METRICS.items():
        values = [r[key] for r in records if r.get(key) is not None and not math.isnan(r[key])]
        if any(key in r for r in records):
            row[f"final_{key}"] = records[-1].get(key)
            row[f"best_{key}"] = better(values) if values else None
    return row


def run_sweep(sweep: Sweep, out, workers: int = 1, progress: Callable | None = None, yes: bool = False,
              counts: dict | None = None) -> list[dict]:
    """Train the runs of ``sweep`` that ``out/runs`` does not hold complete (in ``workers`` processes) and return
    one row per run: ``run`` (its directory under ``out``), the swept values, then :func:`summarize`'s columns.
    ``progress(done, total, eta_seconds)`` as :meth:`RunCache.fill` calls it. The size is checked first
    (:func:`check_size`; ``yes`` confirms a large sweep); ``counts``, a dict, receives ``read_back`` and ``trained``."""
    from dfltheory.paths import output_dir

    if not isinstance(sweep, Sweep):
        raise ValueError(f"sweep must be a Sweep(base, grid, zipped, seeds), got {type(sweep).__name__}")
    if out is None or isinstance(out, bool) or not isinstance(out, (str, os.PathLike)):
        raise ValueError(f"out must be the sweep's directory (a path), got {out!r}; e.g. run_sweep(sweep, 'runs/s')")
    if counts is not None and not isinstance(counts, dict):
        raise ValueError(f"counts must be a dict (it receives read_back and trained) or None, got {counts!r}")
    check_workers(workers)
    _checked_progress(progress)
    if not str(out).strip():
        output_dir(out, "--out")  # its error: an empty name
    check_size(sweep, workers, yes)
    runs = sweep.configs()  # every config checked before anything is trained
    out = output_dir(out, "--out")
    cache = RunCache(out / "runs")
    cache.fill([cfg for _, cfg in runs], workers, progress)
    if counts is not None:
        counts.update(read_back=cache.read_back, trained=cache.trained)
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
