"""Sweeps (issue 26 item 2): ``dfltheory sweep FILE`` expands a base config by grid, zip and seeds, trains the runs
in parallel into a cache keyed by config, reads finished runs back instead of training them again, retrains a
damaged one, and prints and writes one summary row per run; a bad sweep file is one line naming the file and key."""

import csv
import json
import os

import pytest

from dfltheory import cli
from dfltheory.empirical.commands import read_sweep
from dfltheory.empirical.rundir import read_records
from dfltheory.empirical.sweep import RunCache, Sweep, run_sweep, summarize, table

BASE = {"algo": "dfedavg", "dataset": "synthetic-logistic", "n": 4, "rounds": 2, "K": 2, "batch_size": 8,
        "progress": False, "tensorboard": False}
SWEEP = """out = "ignored-by-out"
seeds = 2
[base]
algo = "dfedavg"
dataset = "synthetic-logistic"
clients = 4
rounds = 2
K = 2
batch-size = 8
tensorboard = false
[grid]
lr = [0.05, 0.1]
[zip]
algo = ["dfedavg", "dfedsam"]
rho = [0.0, 0.01]
"""


def test_the_runs_are_the_grid_times_the_zipped_rows_times_the_seeds():
    sweep = Sweep(BASE, {"lr": [0.1, 0.2], "K": [1, 2]}, {"algo": ["dfedavg", "dfedsam"], "rho": [0.0, 0.05]},
                  [0, 1])
    points = sweep.points()
    assert len(points) == 2 * 2 * 2 * 2 and sweep.swept == ["lr", "K", "algo", "rho", "seed"]
    assert points[:3] == [{"lr": 0.1, "K": 1, "algo": "dfedavg", "rho": 0.0, "seed": 0},
                          {"lr": 0.1, "K": 1, "algo": "dfedavg", "rho": 0.0, "seed": 1},
                          {"lr": 0.1, "K": 1, "algo": "dfedsam", "rho": 0.05, "seed": 0}]
    assert points[-1] == {"lr": 0.2, "K": 2, "algo": "dfedsam", "rho": 0.05, "seed": 1}
    configs = sweep.configs()
    assert all({**BASE, **p}.items() <= c.items() for p, c in configs) and configs[0][1]["threads"] == 1
    assert configs[0][1]["topology"] == "ring"  # completed by the command's defaults (recipes.resolve)
    assert Sweep(BASE).points() == [{}]  # the base alone, with its own seed


@pytest.mark.parametrize("kwargs, match", [
    ({"zipped": {"lr": [0.1, 0.2], "K": [1]}}, "zip lists differ in length \\(lr: 2, K: 1\\)"),
    ({"grid": {"lr": [0.1]}, "zipped": {"lr": [0.2]}}, "lr in both grid and zip"),
    ({"grid": {"lr": []}}, "grid.lr must be a non-empty list"),
    ({"grid": {"lr": 0.1}}, "grid.lr must be a non-empty list"),
    ({"seeds": [0, 0]}, "seeds must be distinct integers"),
    ({"seeds": [0], "grid": {"seed": [1, 2]}}, "seed is swept in grid or zip and by seeds"),
    ({"grid": {"out": ["a", "b"]}}, "grid sets out: a sweep places every run in OUT/runs/<key>"),
])
def test_a_malformed_sweep_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Sweep(BASE, **kwargs)


def test_a_bad_run_is_refused_naming_it_before_anything_is_trained(tmp_path):
    with pytest.raises(ValueError, match="the run lr=-0.1: --lr must be a finite number > 0"):
        run_sweep(Sweep(BASE, {"lr": [0.1, -0.1]}), tmp_path / "s")
    with pytest.raises(ValueError, match="no algo"):
        run_sweep(Sweep({k: v for k, v in BASE.items() if k != "algo"}), tmp_path / "s")
    jobs = (os.cpu_count() or 1) + 1
    with pytest.raises(ValueError, match=f"{jobs} processes \\(--jobs\\)"):
        run_sweep(Sweep(BASE), tmp_path / "s", workers=jobs)
    assert not list(tmp_path.rglob("metrics.jsonl"))


def test_summary_has_the_final_and_best_of_each_recorded_metric():
    records = [{"round": 0, "train_loss": 2.0, "test_acc": 0.1, "grad_norm_sq": None},
               {"round": 5, "train_loss": 1.0, "test_acc": 0.5, "grad_norm_sq": 3.0},
               {"round": 10, "train_loss": 1.5, "test_acc": 0.4, "grad_norm_sq": None}]
    assert summarize(records, "diverged") == {
        "status": "diverged", "rounds": 10, "final_train_loss": 1.5, "best_train_loss": 1.0,
        "final_grad_norm_sq": None, "best_grad_norm_sq": 3.0, "final_test_acc": 0.4, "best_test_acc": 0.5}
    text = table([{"run": "runs/a", "lr": 0.1, **summarize(records, "diverged")}])
    assert text.splitlines()[0].split()[:3] == ["run", "lr", "status"] and " - " in text


def test_the_sweep_command_trains_in_parallel_reads_back_and_retrains_a_damaged_run(tmp_path, capsys):
    (tmp_path / "sweep.toml").write_text(SWEEP)
    out = tmp_path / "out"
    argv = ["sweep", str(tmp_path / "sweep.toml"), "--out", str(out)]
    assert cli.main([*argv, "--jobs", "2"]) == 0
    captured = capsys.readouterr()
    assert "sweep: 8/8 runs" in captured.err and f"wrote {out / 'sweep.csv'}" in captured.out
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:7] == ["run", "lr", "algo", "rho", "seed", "status", "rounds"]
    assert len(rows) == 8 and {(r["lr"], r["algo"], r["seed"]) for r in rows} == {
        (lr, algo, seed) for lr in ("0.05", "0.1") for algo in ("dfedavg", "dfedsam") for seed in ("0", "1")}
    for row in rows:  # the swept values are the run's, the metrics its records'
        cfg = json.loads((out / row["run"] / "config.json").read_text())
        assert (cfg["lr"], cfg["algo"], cfg["rho"], cfg["seed"]) == (float(row["lr"]), row["algo"],
                                                                      float(row["rho"]), int(row["seed"]))
        records = read_records(out / row["run"] / "metrics.jsonl")
        assert float(row["final_train_loss"]) == records[-1]["train_loss"]
        assert float(row["best_test_acc"]) == max(r["test_acc"] for r in records)
    assert captured.out.splitlines()[0].split()[:5] == ["run", "lr", "algo", "rho", "seed"]
    written = {r["run"]: (out / r["run"] / "metrics.jsonl").stat().st_mtime_ns for r in rows}
    damaged = rows[3]["run"]
    (out / damaged / "summary.json").unlink()  # as if killed before it ended
    assert cli.main(argv) == 0
    again = {r: (out / r / "metrics.jsonl").stat().st_mtime_ns for r in written}
    assert [r for r in written if again[r] != written[r]] == [damaged]  # only the unfinished run is trained again
    assert capsys.readouterr().out.splitlines()[:9] == captured.out.splitlines()[:9]


def test_a_run_of_a_sweep_is_the_run_of_its_config(tmp_path):
    """The cache is keyed by the resolved config: the verification's RunCache reads a sweep's run back."""
    ((point, cfg),) = Sweep(BASE, seeds=[4]).configs()
    run_sweep(Sweep(BASE, seeds=[4]), tmp_path)
    cache = RunCache(tmp_path / "runs")
    assert point == {"seed": 4} and cache.done(cfg) and cache.get(cfg)[1] == "completed"
    from dfltheory.verify.holds import RunCache as VerifyCache

    assert VerifyCache is RunCache


def test_a_run_cached_before_the_cache_version_is_not_read_back(tmp_path):
    """The key hashes the config and the cache's format: a run cached under the old key (the config alone: before
    dpsgd became Lian et al.'s order) is not served as the new algorithm's run."""
    import hashlib
    import json

    from dfltheory.empirical import sweep

    ((_, cfg),) = Sweep({**BASE, "algo": "dpsgd"}, seeds=[4]).configs()
    cache = RunCache(tmp_path / "runs")
    old = hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert sweep.CACHE_VERSION >= 2 and cache.path(cfg).name != old
    run_sweep(Sweep({**BASE, "algo": "dpsgd"}, seeds=[4]), tmp_path)
    (tmp_path / "runs" / old).mkdir()  # an old entry beside it: the new key alone is read
    assert cache.done(cfg) and {p.name for p in (tmp_path / "runs").iterdir()} == {old, cache.path(cfg).name}


def test_the_base_may_be_a_run_config_file_next_to_the_sweep(tmp_path):
    (tmp_path / "run.toml").write_text('algo = "dfedsam"\nclients = 3\nlr = 0.2\n')
    (tmp_path / "sweep.toml").write_text('base = "run.toml"\nseeds = [5]\n[grid]\nK = [1, 2]\n')
    sweep, out = read_sweep(tmp_path / "sweep.toml")
    assert out is None and sweep.seeds == [5] and sweep.grid == {"K": [1, 2]}
    assert {"algo": "dfedsam", "n": 3, "lr": 0.2, "eval_every": 1, "seed": 0}.items() <= sweep.base.items()


@pytest.mark.parametrize("text, expected", [
    ("runs = 3\n", "sweep.toml: unknown key(s) runs; a sweep file holds base, grid, zip, seeds, out"),
    ("[grid]\nlr = [0.1, 'fast']\n", "sweep.toml: grid.lr[1] = 'fast': must be a number (the option --lr)"),
    ("[grid]\nlrr = [0.1]\n", "sweep.toml: unknown key 'grid.lrr' (did you mean 'lr'?)"),
    ("[zip]\nlr = 0.1\n", "sweep.toml: zip.lr = 0.1: must be a list of values"),
    ("[base]\nK = 'five'\n", "sweep.toml: base.K = 'five': must be an integer (the option --K)"),
    ("[base]\nout = 'x'\n", "sweep.toml: base sets out: a sweep places every run in OUT/runs/<key>"),
    ("seeds = 0\n", "sweep.toml: seeds = 0: a count must be >= 1"),
    ("seeds = [1, 1]\n", "sweep.toml: seeds must be distinct integers"),
    ("base = 'missing.toml'\n", "missing.toml: no such file"),
    ("[zip]\nlr = [0.1, 0.2]\nK = [1]\n", "sweep.toml: zip lists differ in length"),
])
def test_a_bad_sweep_file_is_one_line_naming_the_file_and_the_key(tmp_path, capsys, text, expected):
    (tmp_path / "sweep.toml").write_text(text)
    assert cli.main(["sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dfltheory sweep: error: "), err
    assert expected in err.replace(str(tmp_path) + "/", ""), err
    assert not (tmp_path / "o").exists()


def test_the_example_sweep_file_expands_to_sixteen_checked_runs():
    from pathlib import Path

    sweep, out = read_sweep(Path(__file__).parents[2] / "examples" / "sweep.toml")
    runs = sweep.configs()  # every run config checked, nothing trained
    assert out == "runs/sweep" and len(runs) == 2 * 2 * 2 * 2
    assert sweep.swept == ["topology", "lr", "algo", "rho", "seed"]
    assert {c["algo"] for _, c in runs} == {"dfedavg", "dfedsam"} and all(c["rounds"] == 20 for _, c in runs)


def test_the_options_a_sweep_takes_are_the_train_commands():
    """Sweep checks its keys against sweep.OPTIONS (RunConfig's fields): they must be every option of `dfltheory
    train` (the parser's) but out and resume, and nothing else."""
    from dfltheory.empirical.commands import _options
    from dfltheory.empirical.sweep import OPTIONS, OWN_KEYS

    assert OPTIONS == {a.dest for a in _options().values()} - set(OWN_KEYS)
