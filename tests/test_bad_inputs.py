"""Issue 11 §4: bad input gives one clear line `dfltheory CMD: error: ...` and exit 2, never a traceback, a silent
answer or an exhausted machine. Each case here was a traceback, a run that "diverged" or a silent number before."""

import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from dfltheory import cli, paths  # noqa: E402
from dfltheory.empirical import runner  # noqa: E402

TRAIN = ["train", "--algo", "dfedavgm", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "2", "--K", "2",
         "--batch-size", "8", "--no-progress"]
BASE = {"algo": "dfedavgm", "dataset": "synthetic-logistic", "n": 4, "topology": "ring", "K": 2, "lr": 0.1,
        "batch_size": 8, "seed": 3, "progress": False, "rounds": 2}


def one_line_error(capsys, argv, command) -> str:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"dfltheory {command}: error: ")
    return err


SAM = ["train", "--algo", "dfedsam", "--dataset", "synthetic-quadratic", "--n", "4", "--rounds", "3", "--K", "2",
       "--batch-size", "8", "--seed", "3", "--no-progress"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "run"
    assert cli.main([*SAM, "--out", str(out)]) == 0
    return out


# ------------------------------------------------------------------------------------------------ train options
@pytest.mark.parametrize("option, value, message", [
    ("--lr", "nan", "--lr must be a finite number > 0 (the learning rate eta), got nan"),  # was: "diverged"
    ("--lr", "inf", "--lr must be a finite number > 0"),
    ("--lr", "0", "--lr must be a finite number > 0"),
    ("--lr-decay", "inf", "--lr-decay must be a finite number in (0, 1]"),  # was: "diverged"
    ("--lr-decay", "1.5", "--lr-decay must be a finite number in (0, 1]"),
    ("--alpha", "inf", "--alpha must be a finite number > 0"),
    ("--weight-decay", "-1", "--weight-decay must be a finite number >= 0"),  # was: accepted
    ("--rho", "nan", "--rho must be a finite number >= 0"),  # was: accepted
    ("--mu", "-1", "--mu must be a finite number >= 0"),  # was: accepted
    ("--lam-pen", "-1", "--lam-pen must be a finite number >= 0"),
    ("--beta", "1", "--beta must be a finite number in [0, 1)"),
    ("--lr-v", "nan", "--lr-v must be a finite number > 0"),
    ("--clip", "inf", "--clip must be a finite number > 0"),
    ("--seed", "-1", "--seed must be an integer in [0, 4294967295] (2^32 - 1), got -1"),  # was: "expected
    ("--seed", str(2 ** 32), "--seed must be an integer in [0, 4294967295]"),           # non-negative integer"
    ("--threads", "0", "--threads must be an integer >= 1"),  # was: accepted
    ("--client-chunk", "0", "--client-chunk must be an integer >= 1"),  # was: a vmap message
])
def test_train_refuses_meaningless_numbers(tmp_path, capsys, option, value, message):
    err = one_line_error(capsys, [*TRAIN, "--out", str(tmp_path / "r"), option, value], "train")
    assert message in err
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_a_missing_data_set_is_one_line_naming_the_root_and_the_options(tmp_path, capsys):
    """Was a FileNotFoundError traceback (its message is kept)."""
    argv = ["train", "--algo", "dfedavgm", "--dataset", "mnist", "--n", "4", "--rounds", "1", "--out",
            str(tmp_path / "r"), "--data-root", str(tmp_path / "nowhere")]
    err = one_line_error(capsys, argv, "train")
    assert f"mnist (MNIST) not found under root directory '{tmp_path / 'nowhere'}'" in err
    assert "--data-root DIR" in err and "--download" in err
    assert not (tmp_path / "r").exists()  # no empty run directory left behind


# ------------------------------------------------------------------------------------------------ output places
def test_train_out_that_is_a_file_or_under_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    err = one_line_error(capsys, [*TRAIN, "--out", str(tmp_path / "f")], "train")
    assert "a file of that name exists; give a directory" in err
    err = one_line_error(capsys, [*TRAIN, "--out", str(tmp_path / "f" / "run")], "train")
    assert f"{tmp_path / 'f'} is a file, so no directory can be created under it" in err


def test_out_in_a_place_that_cannot_be_created(capsys):
    err = one_line_error(capsys, [*TRAIN, "--out", "/proc/dfltheory-nope/run"], "train")
    assert "cannot create the directory /proc/dfltheory-nope/run" in err and "writable directory" in err


def test_unwritable_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(paths.os, "access", lambda path, mode: False)  # root ignores chmod: simulate it
    with pytest.raises(ValueError, match="is not writable; choose a writable place"):
        paths.output_dir(tmp_path / "d")


def test_report_out_under_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    err = one_line_error(capsys, ["report", "--no-train", "--out", str(tmp_path / "f" / "rep")], "report")
    assert "is a file, so no directory can be created under it" in err


def test_plot_creates_missing_directories_and_refuses_bad_places(tmp_path, capsys):
    fig = tmp_path / "new" / "sub" / "t.png"
    assert cli.main(["plot", "topology", "ring", "--n", "8", "16", "--out", str(fig)]) == 0
    assert fig.is_file()
    capsys.readouterr()
    (tmp_path / "f").write_text("x")
    for out, message in ((tmp_path / "f" / "t.png", "is a file, so no directory can be created under it"),
                         (tmp_path / "new", "is a directory; give a file name"),
                         (tmp_path / "t.xyz", "unknown figure type 'xyz'; end the name with a type matplotlib "
                                              "writes: .png, .pdf, .svg")):
        err = one_line_error(capsys, ["plot", "topology", "ring", "--n", "8", "--out", str(out)], "plot")
        assert message in err


# ------------------------------------------------------------------------------------------------ damaged files
@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_a_damaged_checkpoint_names_the_file_and_the_way_out(tmp_path, capsys, run_dir, damage):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    ckpt = out / "checkpoint.pt"
    ckpt.write_bytes(b"" if damage == "empty" else ckpt.read_bytes()[:200])
    err = one_line_error(capsys, [*SAM, "--rounds", "4", "--out", str(out), "--resume"], "train")
    assert f"the checkpoint {ckpt} is damaged (" in err
    assert f"delete {out} (or choose another --out) and start the run again without --resume" in err


def test_plot_run_names_a_damaged_config_or_metrics_file(tmp_path, capsys, run_dir):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    argv = ["plot", "run", str(out), "dfedsam.thm4.1", "--set", "L=1", "--out", str(tmp_path / "f.png")]
    (out / "metrics.jsonl").write_text((run_dir / "metrics.jsonl").read_text() + '{"round": 3, "train_lo')
    err = one_line_error(capsys, argv, "plot")
    assert f"{out / 'metrics.jsonl'} is damaged at line 5: not valid JSON" in err and "--resume" in err
    shutil.copy(run_dir / "metrics.jsonl", out / "metrics.jsonl")
    (out / "config.json").write_text('{"algo": "dfedsam",\n')
    err = one_line_error(capsys, argv, "plot")
    assert f"{out / 'config.json'} is damaged: not valid JSON (Expecting property name" in err
    (out / "config.json").write_text("[1, 2]")
    err = one_line_error(capsys, argv, "plot")
    assert "is damaged: it holds a JSON list, not an object" in err


def test_resume_names_a_damaged_config(tmp_path, capsys, run_dir):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    (out / "config.json").write_text("{")
    err = one_line_error(capsys, [*SAM, "--out", str(out), "--resume"], "train")
    assert f"{out / 'config.json'} is damaged: not valid JSON" in err


# ------------------------------------------------------------------------------------------------ DFedADMM
def test_dfedadmm_at_eta_equal_lambda_warns_in_one_line(tmp_path, capsys, monkeypatch):
    from dfltheory.empirical import runner

    monkeypatch.setattr(runner, "_WARNED", set())  # a process says each warning once: start from none said
    argv = ["train", "--algo", "dfedadmm", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "1", "--K", "3",
            "--no-progress", "--lr", "0.1"]
    assert cli.main([*argv, "--out", str(tmp_path / "a")]) == 0  # the papers' eta = lambda = 0.1: a warning only
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dfltheory train: warning: dfedadmm with --lr 0.1 and --lam-pen 0.1")
    assert "1 - eta/lambda = 0: every local step nearly restarts from x^t and the K = 3 local steps act as about one"\
        in err[0] and "e.g. --lam-pen 1 with --lr 0.1" in err[0]
    assert cli.main([*argv, "--lam-pen", "1", "--out", str(tmp_path / "b")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert cli.main([*argv, "--out", str(tmp_path / "c")]) == 0  # the same warning again in this process: silent
    assert "warning" not in capsys.readouterr().err


def test_train_results_json_is_unchanged_by_the_checks(tmp_path):
    summary = runner.run({**BASE, "out": tmp_path / "r"})
    assert summary["status"] == "completed"
    assert json.loads((tmp_path / "r" / "config.json").read_text())["threads"] >= 1


# ------------------------------------------------------------------------------------------------ run sweeps
@pytest.mark.parametrize("command", ["claims", "verify"])
def test_more_processes_than_cpus_is_refused_before_any_process_starts(tmp_path, capsys, command):
    import os

    jobs = (os.cpu_count() or 1) + 1
    err = one_line_error(capsys, [command, "dfedsam", "--quick", "--out", str(tmp_path / "o"), "--jobs", str(jobs)],
                         command)
    assert f"{jobs} processes (--jobs)" in err and "or fewer" in err
    assert not list((tmp_path / "o").rglob("metrics.jsonl"))  # nothing trained


@pytest.mark.parametrize("argv", [["claims", "dfedsam", "--quick"], ["verify", "dfedsam", "--quick"],
                                  ["sweep", str(Path(__file__).parents[1] / "examples" / "sweep.toml")]])
def test_no_process_is_refused_naming_jobs(tmp_path, capsys, argv):
    """One check (empirical.sweep.check_workers) for every command that trains runs in processes."""
    err = one_line_error(capsys, [*argv, "--out", str(tmp_path / "o"), "--jobs", "0"], argv[0])
    assert "--jobs must be >= 1 (processes that train runs), got 0" in err


@pytest.mark.parametrize("extra, match", [
    (["--K", "1000000000"], "batch plan would hold 1.28e\\+11 sample indices"),
    (["--batch-size", "1000000000"], "lower --K \\(or --K-v\\) or --batch-size"),
])
def test_a_batch_plan_that_would_exhaust_the_memory_is_refused(tmp_path, capsys, extra, match):
    argv = ["train", "--algo", "dfedavg", "--dataset", "digits", "--clients", "4", "--rounds", "1", "--no-progress",
            "--threads", "1", *extra, "--out", str(tmp_path / "r")]
    assert re.search(match, one_line_error(capsys, argv, "train"))


@pytest.mark.parametrize("params, match", [("fake=no", "fake must be true or false, got 'no'"),
                                           ("fake=true,train_size=2.5", "train_size must be a whole number"),
                                           ("fake=true,test_size=abc", "test_size must be a whole number")])
def test_fake_data_parameters_are_checked(tmp_path, capsys, params, match):
    argv = ["train", "--algo", "dfedavg", "--dataset", "mnist", "--clients", "4", "--rounds", "1", "--no-progress",
            "--data-params", params, "--out", str(tmp_path / "r")]
    assert match in one_line_error(capsys, argv, "train")


def test_an_on_off_option_given_as_a_string_is_refused(tmp_path):
    cfg = {"algo": "dfedavg", "dataset": "digits", "n": 4, "rounds": 1, "epochs": "no", "progress": False,
           "out": str(tmp_path / "r")}
    with pytest.raises(ValueError, match="epochs must be True or False .*got 'no'"):
        runner.run(cfg)


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_out_is_refused_not_the_current_directory(capsys, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, [*TRAIN, "--out", name], "train")
    assert "--out is empty; give a directory name" in err
    assert list(tmp_path.iterdir()) == []  # nothing written into the current directory


def test_a_pep_too_large_is_refused_before_its_mixing_matrix_is_built(capsys, monkeypatch):
    """`pep --m 100000 --lambda 0.5` built the 100000 x 100000 matrix (75 GiB) before the size guard: now the
    smallest PEP of m, K, T is sized first (issue 24)."""
    import importlib

    sweep = importlib.import_module("dfltheory.pep.sweep")  # the module (dfltheory.pep.sweep is also a function)

    def no_matrix(*args, **kwargs):
        raise AssertionError("the m x m matrix was built before the size check")

    monkeypatch.setattr(sweep, "W_lambda", no_matrix)
    err = one_line_error(capsys, ["pep", "dfedavg", "--m", "100000", "--lambda", "0.5", "--eta", "0.1"], "pep")
    assert "PEP too large: Gram matrix 400001 x 400001 at m = 100000" in err and "reduce m, K or T" in err


# ------------------------------------------------------------------------------------------------ issue 24 (empirical)
@pytest.mark.parametrize("key", sorted(runner.FLOAT_OPTIONS))
def test_every_float_option_refuses_a_number_no_float32_holds(key):
    """1e300 passed every range check and crashed a round with 'value cannot be converted to type float'."""
    with pytest.raises(ValueError, match=rf"--{key.replace('_', '-')} must be a finite number .*at most 3.4e\+38, "
                                         r"the largest float32\), got 1e\+300"):
        runner.check_options({key: 1e300})


def test_report_names_a_verification_file_that_is_missing_or_not_results(tmp_path, capsys):
    argv = ["report", "--no-train", "--no-network", "--no-pep", "--no-claims", "--out", str(tmp_path / "rep")]
    err = one_line_error(capsys, [*argv, "--verification", str(tmp_path / "none.json")], "report")
    assert "--verification" in err and "no such file; give the JSON that dfltheory.verify.holds.verify returns" in err
    for content, says in [("root:x:0:0", "is damaged: not valid JSON"), ("[1]", "holds a JSON list, not an object"),
                          ('{"a": 1}', "not verification results")]:
        (tmp_path / "v.json").write_text(content)
        err = one_line_error(capsys, [*argv, "--verification", str(tmp_path / "v.json")], "report")
        assert says in err and "Expecting value" not in err.split(";")[-1]


@pytest.mark.parametrize("argv, says", [
    (["plot", "bound", "dfedsam.thm4.1", "--x", "eta", "--range", "1e-4", "1e-2", "--points", "1000000000000"],
     "--points must be an integer from 2 to 100,000"),  # was: an out-of-memory traceback
    (["plot", "bound", "dfedsam.thm4.1", "--x", "eta", "--range", "1e-4", "inf"], "need finite LOW < HIGH"),
    (["plot", "topology", "ring", "--key", "nope"], "--key 'nope' is not a topology constant"),  # was: 'nope'
    (["plot", "topology", "ring", "--n", "0"], "--n must be an integer >= 2"),
    (["check", "dfedsam.thm4.1", "--set", "eta=0.001", "--solve", "nope"], "--solve 'nope' is not a symbol of"),
])
def test_plot_and_check_options_are_named(tmp_path, capsys, argv, says):
    out = ["--out", str(tmp_path / "f.png")] if argv[0] == "plot" else []
    err = one_line_error(capsys, [*argv, *out], argv[0])
    assert says in err
