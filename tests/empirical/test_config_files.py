"""Runs from files (issue 26 item 1): ``dfltheory train --config FILE`` (TOML or JSON) takes every ``train`` option;
the options given on the command line override the file's, exactly those given; a run's config.json is itself a
valid config file; a bad file is one line naming the file, the key and the fix."""

import json

import pytest

from dfltheory import cli
from dfltheory.empirical.commands import read_config

TRAIN = ["--algo", "dfedavgm", "--dataset", "synthetic-logistic", "--clients", "4", "--rounds", "2", "--K", "2",
         "--batch-size", "8", "--lr", "0.05", "--seed", "3", "--no-local-eval", "--no-tensorboard"]
TOML = """algo = "dfedavgm"
dataset = "synthetic-logistic"
clients = 4           # --clients (or n)
rounds = 2
K = 2
batch-size = 8        # '-' or '_'
lr_decay = 1.0
lr = 0.05
seed = 3
local_eval = false    # --no-local-eval
tensorboard = false
"""


def train(tmp_path, name, *argv) -> dict:
    out = tmp_path / name
    assert cli.main(["train", *argv, "--out", str(out), "--no-progress"]) == 0
    return json.loads((out / "config.json").read_text())


def metrics(path):
    return (path / "metrics.jsonl").read_text()


def test_a_toml_file_runs_as_the_same_command_line(tmp_path):
    (tmp_path / "run.toml").write_text(TOML)
    from_file = train(tmp_path, "file", "--config", str(tmp_path / "run.toml"))
    from_flags = train(tmp_path, "flags", *TRAIN)
    assert from_file == from_flags and from_file["n"] == 4 and from_file["local_eval"] is False
    assert metrics(tmp_path / "file") == metrics(tmp_path / "flags")


def test_a_stored_config_json_is_a_config_file_of_the_same_run(tmp_path):
    first = train(tmp_path, "first", *TRAIN, "--data-params", "dim=5", "--topology-params", "")
    again = train(tmp_path, "again", "--config", str(tmp_path / "first" / "config.json"))
    assert again == first and first["data_params"] == {"dim": 5}
    assert metrics(tmp_path / "again") == metrics(tmp_path / "first")


def test_the_command_line_overrides_exactly_the_options_it_gives(tmp_path):
    (tmp_path / "run.toml").write_text(TOML.replace("seed = 3", "seed = 7").replace("lr = 0.05", "lr = 0.2"))
    config = ["--config", str(tmp_path / "run.toml")]
    kept = train(tmp_path, "kept", *config)
    assert kept["seed"] == 7 and kept["lr"] == 0.2 and kept["tensorboard"] is False and kept["rounds"] == 2
    # a value equal to the command's default still overrides: --seed 0 is given, --lr and the flags are not
    given = train(tmp_path, "given", *config, "--seed", "0", "--tensorboard", "--rounds", "1")
    assert given["seed"] == 0 and given["lr"] == 0.2 and given["tensorboard"] is True and given["rounds"] == 1
    assert given["local_eval"] is False  # the file's, not the default True
    flags = train(tmp_path, "flags", *config, "--n", "3", "--no-epochs")
    assert flags["n"] == 3 and flags["epochs"] is False


def test_keys_take_either_spelling_and_the_params_take_tables(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('algo = "dfedpgp"\nK-v = 2\nlr_v = 0.5\nn = 4\nfresh-gossip = true\n'
                    'data_params = { dim = 5, heterogeneity = 2.0, shared_design = true }\n'
                    'topology_params = { k = 2, direction = "out" }\nsparse = false\n')
    assert read_config(path) == {"algo": "dfedpgp", "K_v": 2, "lr_v": 0.5, "n": 4, "fresh_gossip": True,
                                 "data_params": {"dim": 5, "heterogeneity": 2.0, "shared_design": True},
                                 "topology_params": "k=2,direction=out", "sparse": False}
    path.write_text('lr = 1\ndata_params = "dim=5,noise=true"\n')
    assert read_config(path) == {"lr": 1.0, "data_params": {"dim": 5, "noise": True}}
    assert isinstance(read_config(path)["lr"], float)


def test_a_recipe_in_the_file_is_resolved_and_the_command_line_overrides_it(tmp_path):
    (tmp_path / "run.toml").write_text('recipe = "dfedadmm-mnist"\nclients = 2\nrounds = 1\n'
                                       'data_params = { fake = true, train_size = 16, test_size = 8 }\n')
    cfg = train(tmp_path, "r", "--config", str(tmp_path / "run.toml"), "--lam-pen", "1.0", "--no-tensorboard")
    assert cfg["recipe"] == "dfedadmm-mnist" and cfg["algo"] == "dfedadmm" and cfg["model"] == "mlp"
    assert cfg["n"] == 2 and cfg["lam_pen"] == 1.0 and cfg["batch_size"] == 128


@pytest.mark.parametrize("name, text, expected", [
    ("run.toml", 'algo = "dfedsam"\nlrr = 0.1\n', "run.toml: unknown key 'lrr' (did you mean 'lr'?); the keys are "
                                                  "the options of dfltheory train"),
    ("run.toml", 'lr = "fast"\n', "run.toml: lr = 'fast': must be a number (the option --lr), e.g. 0.1"),
    ("run.toml", "rounds = 2.5\n", "run.toml: rounds = 2.5: must be an integer (the option --rounds)"),
    ("run.toml", "local-eval = 1\n", "run.toml: local-eval = 1: must be true or false (the option --no-local-eval)"),
    ("run.toml", 'partition = "random"\n', "run.toml: partition = 'random': not one of the choices of --partition: "
                                           "dirichlet, pathological, iid"),
    ("run.toml", "clients = 4\nn = 5\n", "run.toml: clients and n both give n; keep one"),
    ("run.toml", "data_params = { dim = [1] }\n", "run.toml: data_params = {'dim': [1]}: must be a string"),
    ("run.toml", 'algo = "dfedsam\n', "run.toml: not valid TOML (Illegal character"),
    ("run.json", '{"algo": "dfedsam",}', "run.json: not valid JSON (Expecting property name"),
    ("run.json", "[1, 2]", "run.json: holds a JSON list, not an object of train options"),
    ("run.yaml", "algo: dfedsam\n", "run.yaml: unknown config type '.yaml'; give a .toml or a .json file"),
    ("run.json", '{"config": "other.json"}', "run.json: unknown key 'config'"),
])
def test_a_bad_file_is_one_line_naming_the_file_the_key_and_the_fix(tmp_path, capsys, name, text, expected):
    (tmp_path / name).write_text(text)
    assert cli.main(["train", "--config", str(tmp_path / name), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"dfltheory train: error: {tmp_path / name}"), err
    assert expected in err.replace(str(tmp_path) + "/", ""), err
    assert not (tmp_path / "r").exists()


def test_a_missing_file_or_a_run_directory_is_named(tmp_path, capsys):
    assert cli.main(["train", "--config", str(tmp_path / "none.toml"), "--out", str(tmp_path / "r")]) == 2
    assert f"{tmp_path / 'none.toml'}: no such file; give a config file" in capsys.readouterr().err
    train(tmp_path, "run", *TRAIN)
    assert cli.main(["train", "--config", str(tmp_path / "run"), "--out", str(tmp_path / "r")]) == 2
    assert f"a directory; give its run config, {tmp_path / 'run' / 'config.json'}" in capsys.readouterr().err


def test_a_value_out_of_range_from_a_file_is_refused_like_on_the_command_line(tmp_path, capsys):
    (tmp_path / "run.toml").write_text(TOML.replace("lr = 0.05", "lr = inf"))
    assert cli.main(["train", "--config", str(tmp_path / "run.toml"), "--out", str(tmp_path / "r")]) == 2
    assert "--lr must be a finite number > 0" in capsys.readouterr().err


def test_the_example_run_file_trains(tmp_path):
    from pathlib import Path

    example = Path(__file__).parents[2] / "examples" / "run.toml"
    assert read_config(example)["algo"] == "dfedsam"
    cfg = train(tmp_path, "ex", "--config", str(example), "--rounds", "1", "--clients", "4")
    assert (cfg["algo"], cfg["n"], cfg["rounds"], cfg["rho"], cfg["local_eval"]) == ("dfedsam", 4, 1, 0.01, False)
