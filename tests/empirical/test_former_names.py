"""One name per quantity: DFedADMM's penalty is the option ``lam_pen`` (the bounds' and the programs' name; ``lam`` is
the spectral lambda everywhere else). Its former name ``lam``, which its registration declares ``renamed``, is read
under today's name at every door a config comes in by (:func:`dfltheory.empirical.algorithms.current_names`): the
command line (a warning), a run config file, a resume's stored config.json (silently), a stored claims result; a
former name the algorithm never read is dropped, as it was then."""

from __future__ import annotations

import json

import pytest

from dfltheory import cli
from dfltheory.empirical import algorithms as A
from dfltheory.empirical.algorithms import current_names

RUN = ["train", "--algo", "dfedadmm", "--dataset", "synthetic-logistic", "--n", "4", "--rounds", "2", "--K", "2",
       "--lr", "0.05", "--no-progress", "--no-tensorboard", "--threads", "1", "--checkpoint-every", "1"]


def _metrics(path):
    return [{k: v for k, v in json.loads(line).items() if k != "wall_seconds"}
            for line in (path / "metrics.jsonl").read_text().splitlines()]


def test_the_former_name_trains_the_same_run_and_says_the_name_today(tmp_path, capsys):
    assert cli.main([*RUN, "--lam-pen", "0.5", "--out", str(tmp_path / "today")]) == 0
    capsys.readouterr()
    assert cli.main([*RUN, "--lam", "0.5", "--out", str(tmp_path / "former")]) == 0
    err = capsys.readouterr().err
    assert "--lam is the former name of --lam-pen for dfedadmm; write --lam-pen" in err
    stored = json.loads((tmp_path / "former" / "config.json").read_text())
    assert stored["lam_pen"] == 0.5 and "lam" not in stored  # config.json speaks today's names only
    assert _metrics(tmp_path / "former") == _metrics(tmp_path / "today")


def test_both_names_with_different_values_is_one_line_naming_both(tmp_path, capsys):
    assert cli.main([*RUN, "--lam", "1", "--lam-pen", "0.5", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "gives --lam 1.0 and --lam-pen 0.5" in err and "give --lam-pen alone" in err
    assert not (tmp_path / "r").exists()


def test_the_former_name_on_an_algorithm_that_never_read_it_is_ignored_as_it_was(tmp_path, capsys):
    """``--lam`` was DFedADMM's alone: dfedcata ignored it then and ignores it now; it does not become its lam_pen."""
    cfg = current_names({"algo": "dfedcata", "lam": 0.7, "lam_pen": None}, warn=print)
    assert cfg == {"algo": "dfedcata", "lam_pen": None}
    assert "dfedcata does not use lam" in capsys.readouterr().out
    assert A.make("dfedcata", **{k: v for k, v in cfg.items() if k != "algo"}).hyper["lam_pen"] == 0.05


def test_a_run_stored_under_the_former_name_resumes_bit_for_bit(tmp_path, capsys):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert cli.main([*RUN, "--lam-pen", "0.5", "--out", str(whole)]) == 0
    argv = [*RUN, "--lam-pen", "0.5", "--out", str(cut)]
    argv[argv.index("--rounds") + 1] = "1"
    assert cli.main(argv) == 0
    cfile = cut / "config.json"  # as a run trained before the rename wrote it
    stored = json.loads(cfile.read_text())
    cfile.write_text(json.dumps({("lam" if k == "lam_pen" else k): v for k, v in stored.items()}))
    capsys.readouterr()
    assert cli.main([*RUN, "--lam-pen", "0.5", "--out", str(cut), "--resume"]) == 0
    assert "warning" not in capsys.readouterr().err  # a stored config is read silently
    assert _metrics(cut) == _metrics(whole)
    assert json.loads(cfile.read_text())["lam_pen"] == 0.5
    cfile.write_text(json.dumps({("lam" if k == "lam_pen" else k): v for k, v in stored.items()}))
    assert cli.main([*RUN, "--lam-pen", "0.2", "--rounds", "3", "--out", str(cut), "--resume"]) == 2
    assert "--resume with a different config (lam_pen)" in capsys.readouterr().err


def test_a_run_config_file_giving_the_former_name(tmp_path, capsys):
    (tmp_path / "run.toml").write_text("lam = 0.5\n")
    assert cli.main([*RUN, "--config", str(tmp_path / "run.toml"), "--out", str(tmp_path / "r")]) == 0
    assert "--lam is the former name of --lam-pen" in capsys.readouterr().err
    assert json.loads((tmp_path / "r" / "config.json").read_text())["lam_pen"] == 0.5


def test_a_stored_claims_arm_is_read_under_todays_names():
    from dfltheory.verify.claims import current_arm

    def arm(algo):
        return {"algo": algo, "config": {"algo": algo, "lr": 0.1, "lam": 0.1, "rho": 0.1},
                "command": f"dfltheory train --lr 0.1 --lam 0.1 --rho 0.1 --algo {algo} --out run  (seed s ...)"}

    admm, avg = current_arm(arm("dfedadmm")), current_arm(arm("dfedavg"))
    assert admm["config"] == {"algo": "dfedadmm", "lr": 0.1, "lam_pen": 0.1, "rho": 0.1}
    assert admm["command"] == "dfltheory train --lr 0.1 --lam-pen 0.1 --rho 0.1 --algo dfedadmm --out run  (seed s ...)"
    assert avg["config"] == {"algo": "dfedavg", "lr": 0.1, "rho": 0.1}  # dfedavg never read it
    assert avg["command"] == "dfltheory train --lr 0.1 --rho 0.1 --algo dfedavg --out run  (seed s ...)"


def test_no_committed_result_or_built_in_config_uses_a_former_name():
    """The committed results were migrated (current_arm); the papers' claims, plans and recipes speak today's names."""
    from pathlib import Path

    from dfltheory.empirical import recipes
    from dfltheory.verify import claims as C

    root = Path(__file__).resolve().parents[2]
    former = A.former_names()
    assert former == {"lam"}
    for path in sorted((root / "docs").glob("claims-*.json")):
        for row in json.loads(path.read_text())["claims"]:
            for a in row["arms"]:
                assert not former & set(a["config"]) and " --lam " not in a["command"], (path.name, row["id"])
    for claim in C.CLAIMS.values():
        for a in claim.arms:
            assert not former & set(C.run_config(claim, a, C.SIZES["quick"]))
    for name in recipes.NAMES:
        assert not former & set(recipes.resolve({"recipe": name}))


def test_a_plugin_algorithm_declares_its_own_renamed_option():
    """The mechanism is the registration's data, not a table of built-in names."""
    from dfltheory.empirical import communication as C
    from dfltheory.empirical import rules as R
    from dfltheory.empirical.composed import Algorithm
    from dfltheory.testing.registries import isolated

    def factory(hp):
        return Algorithm("renamed-sgd", R.chain(R.gradient(), R.weight_decay(hp.get("decay", 0.0))), C.gossip())

    with isolated():
        with pytest.raises(ValueError, match="must map an option's former name to its name today"):
            A.register_algorithm("renamed-sgd", factory, renamed={"wd": 3})
        try:
            A.register_algorithm("renamed-sgd", factory, renamed={"wd": "decay"})
            assert A.renamed_options("renamed-sgd") == {"wd": "decay"} and "wd" in A.former_names()
            assert current_names({"algo": "renamed-sgd", "wd": 0.1}) == {"algo": "renamed-sgd", "decay": 0.1}
            assert current_names({"algo": "dfedavg", "wd": 0.1}) == {"algo": "dfedavg"}
        finally:
            A.RENAMED_OPTIONS.pop("renamed-sgd", None)
    assert "wd" not in A.former_names()


def test_a_cache_key_changes_only_where_the_config_gives_an_option_its_algorithm_took_under_a_former_name(tmp_path):
    """Before the rename dfedadmm ignored ``lam_pen``; a config giving it now trains another run, so its key must
    differ from the one of before (a cache filled then would be read back as today's run). Every other config keeps
    its key: an old sweep file's ``lam``, dfedcata's ``lam_pen``."""
    import hashlib

    from dfltheory.empirical.sweep import CACHE_VERSION, RunCache

    def before(cfg):  # RunCache.path's hash before the rename
        blob = json.dumps({**cfg, "_cache": CACHE_VERSION}, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    base = {"dataset": "synthetic-logistic", "n": 2, "rounds": 1}
    cache = RunCache(tmp_path)
    for cfg in ({**base, "algo": "dfedadmm", "lam": 1.0}, {**base, "algo": "dfedcata", "lam_pen": 0.05},
                {**base, "algo": "dfedadmm", "lam": None, "lam_pen": None}):
        assert cache.path(cfg).name == before(cfg)
    cfg = {**base, "algo": "dfedadmm", "lam_pen": 0.05}
    assert cache.path(cfg).name != before(cfg)


def test_a_stored_config_giving_both_names_is_read_as_its_run_ran(tmp_path, capsys):
    """The train command stored every option, the former name included: for dfedadmm ``lam`` was read and
    ``lam_pen`` ignored. A run stored with ``"lam": null, "lam_pen": 0.05`` ran the default 0.1: resuming it with
    --lam-pen 0.05 is another config; one stored with both given loads with lam's value."""
    from dfltheory.empirical.runner import load_run

    cut = tmp_path / "cut"
    argv = [*RUN, "--lam-pen", "0.1", "--out", str(cut)]
    argv[argv.index("--rounds") + 1] = "1"
    assert cli.main(argv) == 0
    cfile = cut / "config.json"
    stored = json.loads(cfile.read_text())
    old = {**{k: v for k, v in stored.items() if k != "lam_pen"}, "lam": None, "lam_pen": 0.05}
    cfile.write_text(json.dumps(old))
    capsys.readouterr()
    assert cli.main([*RUN, "--lam-pen", "0.05", "--rounds", "2", "--out", str(cut), "--resume"]) == 2
    assert "--resume with a different config (lam_pen)" in capsys.readouterr().err
    cfile.write_text(json.dumps({**old, "lam": 0.1}))
    engine, _, cfg, _ = load_run(cut)
    assert cfg["lam_pen"] == 0.1 and "lam" not in cfg and engine.algo.hyper["lam_pen"] == 0.1
    assert cli.main([*RUN, "--lam-pen", "0.1", "--rounds", "2", "--out", str(cut), "--resume"]) == 0


def test_make_reads_the_former_name_with_a_future_warning():
    with pytest.warns(FutureWarning, match="lam is the former name of lam_pen for dfedadmm; write lam_pen"):
        algo = A.make("dfedadmm", lam=0.3)
    assert algo.hyper["lam_pen"] == 0.3


def test_a_sweep_whose_former_name_contradicts_todays_is_refused_before_any_run(tmp_path):
    from dfltheory.empirical.commands import read_sweep

    path = tmp_path / "sweep.toml"
    path.write_text('[base]\ndataset = "synthetic-logistic"\nn = 2\nrounds = 1\nlam = 1.0\nlam_pen = 0.05\n'
                    '[grid]\nalgo = ["dfedcata", "dfedadmm"]\n')
    sweep, _ = read_sweep(path)
    with pytest.raises(ValueError, match="the run algo=dfedadmm: .*gives lam 1.0 and lam_pen 0.05.*give each "
                                         "algorithm its own value in zip"):
        sweep.configs()


def test_a_former_name_another_algorithm_still_reads_is_refused():
    """Declaring ``rho`` a former name would take dfedsam's SAM radius from it (it would be dropped as unused)."""
    from dfltheory.empirical import communication as C
    from dfltheory.empirical import rules as R
    from dfltheory.empirical.composed import Algorithm
    from dfltheory.testing.registries import isolated

    def factory(hp):
        return Algorithm("my-sam", R.chain(R.sam(hp.get("radius", 0.1))), C.gossip())

    with isolated():
        with pytest.raises(ValueError, match="'rho' as a former name, but .*dfedsam.* an option of that name"):
            A.register_algorithm("my-sam", factory, renamed={"rho": "radius"})
        with pytest.raises(ValueError, match="renamed='lam' must map"):
            A.register_algorithm("my-sam", factory, renamed="lam")
    assert current_names({"algo": "dfedsam", "rho": 0.2}) == {"algo": "dfedsam", "rho": 0.2}


def test_rejudge_reads_a_stored_result_under_todays_names():
    from pathlib import Path

    from dfltheory.verify.claims import rejudge

    root = Path(__file__).resolve().parents[2]
    result = json.loads((root / "docs" / "claims-mnist.json").read_text())
    row = next(r for r in result["claims"] if any(a["algo"] == "dfedadmm" for a in r["arms"]))
    arm = next(a for a in row["arms"] if a["algo"] == "dfedadmm")
    value = arm["config"]["lam_pen"]
    arm["config"] = {("lam" if k == "lam_pen" else k): v for k, v in arm["config"].items()}  # as stored before
    arm["command"] = arm["command"].replace("--lam-pen ", "--lam ")
    again = rejudge(result)
    back = next(a for r in again["claims"] if r["id"] == row["id"] for a in r["arms"] if a["algo"] == "dfedadmm")
    assert back["config"]["lam_pen"] == value and "lam" not in back["config"]
    assert f"--lam-pen {value!r}" in back["command"] and " --lam " not in back["command"]


@pytest.mark.parametrize("flag", ["--lam-pen", "--lam"])
def test_a_zero_admm_penalty_is_refused_naming_the_option(flag, tmp_path, capsys):
    """DFedADMM divides by its penalty; dfedcata's lam_pen may be 0, so the range is the algorithm's."""
    assert cli.main([*RUN, flag, "0", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "lam_pen (--lam-pen) must be a finite number > 0 (DFedADMM's penalty lambda" in err
    assert not (tmp_path / "r").exists()
