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
