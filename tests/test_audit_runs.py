"""Issue 32 (audit at 79fc492), items 3, 4, 6 and 7: the run directories, sweeps and horizons of the command line and
the API. Each test is one audit case, and failed before its fix: a traceback, a run written twice into one directory,
a refusal that took minutes (or the machine's memory), a silent wrong answer, workers left training."""

import errno
import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from dfltheory import cli
from dfltheory.empirical import rundir
from dfltheory.empirical import sweep as S
from dfltheory.empirical.rundir import read_records
from dfltheory.empirical.sweep import RunCache, Sweep, run_sweep, summarize

TRAIN = ["train", "--algo", "dfedavg", "--dataset", "synthetic-quadratic", "--n", "3", "--K", "1", "--batch-size",
         "4", "--no-progress", "--no-tensorboard"]
BASE = {"algo": "dfedavg", "dataset": "synthetic-logistic", "n": 3, "rounds": 1, "K": 1, "batch_size": 4,
        "progress": False, "tensorboard": False}


def one_error(capsys, argv) -> str:
    """The one stderr line of a refused command (exit 2, no traceback)."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


# item 3: one run per directory


def test_a_second_writer_of_a_run_directory_is_refused_with_the_holders_pid(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with open(out / ".lock", "w") as held:  # another process's lock (flock is per open file, so this is one)
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        err = one_error(capsys, [*TRAIN, "--rounds", "2", "--out", str(out)])
    assert "being written by another process (pid 4242" in err and "choose another --out" in err
    assert not (out / "metrics.jsonl").exists()  # before: both "completed", every round twice in metrics.jsonl


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".lock").write_text("999999\n")  # its process is gone: the kernel released its flock
    assert cli.main([*TRAIN, "--rounds", "2", "--out", str(out)]) == 0
    assert (out / ".lock").read_text().strip() == str(os.getpid())
    assert [r["round"] for r in read_records(out / "metrics.jsonl")] == [0, 1, 2]


def test_a_sweep_on_a_cache_in_use_is_refused(tmp_path):
    (tmp_path / "runs").mkdir()
    with open(tmp_path / ".runs.lock", "w") as held:  # beside the cache: every entry of the cache is a run
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4343\n")
        held.flush()
        with pytest.raises(ValueError, match="the run cache .* another process \\(pid 4343"):
            run_sweep(Sweep(BASE), tmp_path)


@pytest.mark.parametrize("fails_at, error", [
    (1, RuntimeError("[enforce fail at inline_container.cc:672] . PytorchStreamWriter failed writing file data/0: "
                     "file write failed")),  # torch.save's own error on a full disk: before, a traceback
    (2, OSError(errno.ENOSPC, "No space left on device")),
])
def test_a_full_disk_is_one_line_and_the_run_goes_on_with_resume(tmp_path, capsys, monkeypatch, fails_at, error):
    out, real, saves = tmp_path / "run", rundir.torch.save, []

    def full(obj, path):
        saves.append(path)
        if len(saves) == fails_at:
            open(path, "wb").write(b"PK\x03\x04 half")  # what it wrote before the disk filled
            raise error
        real(obj, path)

    monkeypatch.setattr(rundir.torch, "save", full)
    argv = [*TRAIN, "--rounds", "6", "--checkpoint-every", "2", "--out", str(out)]
    err = one_error(capsys, argv)
    assert "error: cannot write " in err and "no space left on" in err.lower()
    assert err.rstrip().endswith(f"dfltheory train ... --out {out} --resume") or "--resume (it restarts" in err
    assert not list(out.glob("*.tmp"))  # the half-written checkpoint is gone, the last whole one kept
    assert "already holds a run; pass --resume" in one_error(capsys, argv)  # the fresh start says the same
    monkeypatch.setattr(rundir.torch, "save", real)
    assert cli.main([*argv, "--resume"]) == 0  # before: --resume said 'start without --resume' (no checkpoint)
    assert [r["round"] for r in read_records(out / "metrics.jsonl")] == list(range(7))


def test_a_rule_that_raises_is_one_line_naming_the_algorithm_and_where(tmp_path, capsys):
    from dfltheory.empirical import communication as C
    from dfltheory.empirical import rules as R
    from dfltheory.empirical.algorithms import Algorithm, register_algorithm
    from dfltheory.testing.registries import isolated

    class boom(R.Transform):
        name = "boom"

        def direction(self, d, ctx):
            return 1 / 0

    with isolated():
        register_algorithm("boomalg", lambda hp: Algorithm("boomalg", R.chain(boom()), C.gossip()))
        argv = [*TRAIN[:2], "boomalg", *TRAIN[3:], "--rounds", "2", "--out", str(tmp_path / "run")]
        err = one_error(capsys, argv)  # before: a ZeroDivisionError traceback
    assert "algorithm boomalg failed in round 1 in boom.direction (" in err and "test_audit_runs.py, line" in err
    assert "ZeroDivisionError: division by zero" in err and "--resume" in err


def sleeper(job):
    """A worker's run for the pool tests: note the pid, then train for a minute."""
    with open(job["out"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)


def _gone(pids, within=10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        alive = []
        for pid in pids:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)  # a child of this process: reap it
            except ChildProcessError:
                done = pid
            if not done:
                alive.append(pid)
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _pids(files, within=20.0):
    end = time.monotonic() + within
    while time.monotonic() < end and not all(f.exists() and f.read_text() for f in files):
        time.sleep(0.1)
    return [int(f.read_text()) for f in files]


def test_a_sweep_stopped_by_sigterm_ends_its_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(S, "_train", sleeper)  # the workers are forked: they run this module's sleeper
    files = [tmp_path / "a", tmp_path / "b"]
    pids = []

    def kill():
        pids.extend(_pids(files))
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=kill, daemon=True).start()
    with pytest.raises(SystemExit) as stop:
        list(S._parallel([{"out": str(f)} for f in files], 2))
    assert stop.value.code == 128 + signal.SIGTERM and len(pids) == 2
    assert _gone(pids)  # before: both went on training after the sweep had gone


def quick(job):
    """A worker's run that ends at once."""
    with open(job["out"], "w") as f:
        f.write(str(os.getpid()))


def test_a_sigterm_between_two_results_exits_quietly_with_143(tmp_path, monkeypatch):
    """The signal may land in the caller's code while the pool's loop waits at a yield: it is a SystemExit there
    too (it was a bare BaseException: a traceback and exit code 1)."""
    monkeypatch.setattr(S, "_train", quick)
    with pytest.raises(SystemExit) as stop:
        for _ in S._parallel([{"out": str(tmp_path / name)} for name in "ab"], 2):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs here, in the caller's frame
    assert stop.value.code == 128 + signal.SIGTERM


def test_a_sweep_killed_outright_takes_its_workers_with_it(tmp_path):
    """SIGKILL leaves the parent no time to clean up: the workers die with it (PR_SET_PDEATHSIG)."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from dfltheory.empirical import sweep
        from test_audit_runs import sleeper
        sweep._train = sleeper
        list(sweep._parallel([{{"out": {str(tmp_path / "a")!r}}}, {{"out": {str(tmp_path / "b")!r}}}], 2))
    """)
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        pids = _pids([tmp_path / "a", tmp_path / "b"])
        parent.kill()
        parent.wait()

        def alive(pid):
            try:
                os.kill(pid, 0)
                return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
            except (ProcessLookupError, FileNotFoundError):
                return False

        end = time.monotonic() + 10
        while time.monotonic() < end and any(alive(p) for p in pids):
            time.sleep(0.1)
        assert not any(alive(p) for p in pids)
    finally:
        parent.kill()


# item 4: size before work


def test_a_billion_seeds_are_refused_from_their_number_in_seconds(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('seeds = 1000000000\n[base]\nalgo = "dfedavg"\nrounds = 2\n')
    start = time.perf_counter()
    err = one_error(capsys, ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")])
    assert time.perf_counter() - start < 10  # before: list(range(10^9)) exhausted the memory
    assert "1,000,000,000 runs" in err and "GiB" in err and "years" in err


def test_a_million_point_grid_is_refused_with_its_numbers_unless_confirmed(tmp_path, capsys):
    values = ", ".join(str(i + 1) for i in range(1000))
    (tmp_path / "s.toml").write_text(f'[base]\nalgo = "dfedavg"\n[grid]\nK = [{values}]\nbatch-size = [{values}]\n')
    err = one_error(capsys, ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")])
    assert "the sweep is large: 1,000,000 runs, at least about" in err and "confirm with --yes" in err
    assert not (tmp_path / "o").exists()  # before: a million configs listed and checked, for many minutes


def test_a_long_horizon_is_refused_with_its_estimate_unless_confirmed(capsys):
    start = time.perf_counter()
    err = one_error(capsys, ["topology", "ring", "--n", "10", "--horizon", "100000000"])
    assert time.perf_counter() - start < 10  # before: an hour's loop, no estimate
    assert "--horizon 100,000,000 rounds would take about" in err and "confirm with --yes" in err
    fits = int(err.split("(about ")[2].split(" fits")[0].replace(",", ""))
    assert 10**6 < fits < 10**8


# item 6: the API validates its arguments; item 3/6: the sweep's --out and its counts


def test_an_empty_sweep_out_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / "s.toml").write_text('[base]\nalgo = "dfedavg"\nrounds = 1\n')
    monkeypatch.chdir(tmp_path)
    err = one_error(capsys, ["sweep", "s.toml", "--out", ""])  # before: '' ignored, runs/s used
    assert "--out is empty" in err and not (tmp_path / "runs").exists()


def test_the_sweep_says_how_many_runs_it_read_back_and_trained(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('seeds = 2\n[base]\nalgo = "dfedavg"\ndataset = "synthetic-logistic"\n'
                                     'clients = 3\nrounds = 1\nK = 1\nbatch-size = 4\ntensorboard = false\n')
    argv = ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--no-progress"]
    assert cli.main(argv) == 0 and "0 read back, 2 trained" in capsys.readouterr().out
    assert cli.main(argv) == 0 and "2 read back, 0 trained" in capsys.readouterr().out


def test_a_repeated_grid_value_is_refused_by_name():
    with pytest.raises(ValueError, match="grid.lr lists 0.1 twice: both would be the same runs; remove the repeat"):
        Sweep(BASE, {"lr": [0.1, 0.2, 0.1]})  # before: 'pass --resume ... or choose another --out', neither a
    with pytest.raises(ValueError, match="zip repeats a row"):  # sweep option
        Sweep(BASE, zipped={"lr": [0.1, 0.1], "K": [1, 1]})


@pytest.mark.parametrize("call, match", [
    (lambda t: Sweep(BASE, {"lrr": [0.1, 0.2]}), "grid: unknown option 'lrr' \\(did you mean 'lr'\\?\\)"),
    (lambda t: Sweep({**BASE, "clients": 4}), "base: unknown option 'clients' \\(did you mean"),
    (lambda t: Sweep(None), "base must be a dict of train options"),
    (lambda t: Sweep(BASE, grid=None), "grid must be a dict of train options"),
    (lambda t: Sweep(BASE, zipped=[1, 2]), "zip must be a dict of train options"),
    (lambda t: Sweep(BASE, seeds=-1), "seeds = -1: a count must be >= 1"),
    (lambda t: Sweep(BASE, seeds=[2**40]), "seeds must be distinct integers in \\[0, 4294967295\\]"),
    (lambda t: run_sweep("sweep.toml", t), "sweep must be a Sweep"),
    (lambda t: run_sweep(Sweep(BASE), None), "out must be the sweep's directory"),
    (lambda t: run_sweep(Sweep(BASE), t, progress=5), "progress must be a function"),
    (lambda t: RunCache(None), "root must be the cache's directory"),
    (lambda t: RunCache(t).path(None), "cfg must be a run config"),
    (lambda t: RunCache(t).done({"algo": "dfedavg"}), "cfg\\['rounds'\\] must be an integer >= 0"),
    (lambda t: RunCache(t).get({"rounds": "ten"}), "cfg\\['rounds'\\] must be an integer >= 0"),
    (lambda t: RunCache(t).fill("runs"), "cfgs must be a list of run configs"),
    (lambda t: summarize([], "completed"), "records must be a non-empty list"),
    (lambda t: summarize(None, "completed"), "records must be a non-empty list"),
    (lambda t: summarize([{"round": 0, "train_loss": "low"}], "completed"), "records\\[0\\]\\['train_loss'\\] must"),
    (lambda t: summarize([{"loss": 1.0}], "completed"), "records\\[0\\] must be a metrics record"),
    (lambda t: summarize([{"round": 0}], "done"), "status must be one of completed, diverged"),
])
def test_the_api_refuses_a_bad_argument_naming_it(tmp_path, call, match):
    with pytest.raises(ValueError, match=match):  # before: TypeError, KeyError, IndexError, or identical runs
        call(tmp_path)
    assert not list(tmp_path.rglob("metrics.jsonl"))


def test_a_seed_count_is_kept_as_a_range_and_sized_without_listing():
    sweep = Sweep(BASE, {"lr": [0.1, 0.2]}, seeds=10**9)
    assert sweep.seeds == range(10**9) and sweep.size == 2 * 10**9
    est = sweep.estimate(workers=2)
    assert est["runs"] == 2 * 10**9 and est["seconds"] >= 10**9 * S.RUN_SECONDS and est["bytes"] > 10**13
    assert json.dumps(Sweep(BASE, seeds=3).points()) == json.dumps([{"seed": 0}, {"seed": 1}, {"seed": 2}])
