"""RunConfig: the train run's config as a typed record whose dict form, and so every run cache's key, is the
dict's own (the configs of the train command, the sweeps, the claims and the bound-holds grid)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfltheory.empirical.run_config import INT_OPTIONS, UNSET, RunConfig, option_names
from dfltheory.empirical.sweep import RunCache

ROOT = Path(__file__).resolve().parents[2]


def _key(cfg) -> str:
    return RunCache(ROOT / "unused").path(cfg).name


def test_the_fields_are_the_train_commands_options_each_with_a_type_and_a_doc():
    from dataclasses import fields

    from dfltheory.empirical.commands import train_parser

    dests = {a.dest for a in train_parser()._actions} - {"help", "config"}
    assert set(option_names()) == dests
    for f in fields(RunConfig):
        assert f.metadata["doc"] and f.type.endswith("| None") and f.default is UNSET, f.name


#: cache keys computed from the dicts before RunConfig existed: a record must reproduce them
PINNED = [({"algo": "dfedavg", "dataset": "digits", "n": 4, "rounds": 2, "seed": 0}, "9059297016039b60")]


@pytest.mark.parametrize("cfg, key", PINNED)
def test_a_records_cache_key_is_the_dicts_of_before(cfg, key):
    assert _key(RunConfig.from_dict(cfg).to_dict()) == _key(cfg) == key


def _producers():
    from dfltheory.empirical.commands import read_config, read_sweep, train_defaults
    from dfltheory.verify import claims as C

    yield {**train_defaults(), **read_config(ROOT / "examples" / "run.toml"), "out": "runs/x", "resume": False}
    sweep, _ = read_sweep(ROOT / "examples" / "sweep.toml")
    yield from (cfg for _, cfg in sweep.configs())
    for size in ("quick", "full"):
        for claim in C.CLAIMS.values():
            for arm in claim.arms:
                yield from C.run_configs(claim, arm, C.SIZES[size])
    from dfltheory.verify import instances
    from dfltheory.verify.plans import plans
    from dfltheory.verify.problems import PROBLEMS

    for plan in plans().values():  # the bound-holds grid's runs, every target on every topology
        for target in plan.targets:
            for topo in plan.topologies:
                values = {k: 1 if k in INT_OPTIONS else 0.1 for k in plan.config}  # in range: the cache checks
                yield instances.run_config(plan, PROBLEMS[plan.problem], target, topo, values, 0.01, plan.K, 10,
                                           instances.SIZES["quick"], 0)


def test_every_producers_config_round_trips_with_its_key_and_json():
    n = 0
    for cfg in _producers():
        back = RunConfig.from_dict(cfg).to_dict()
        assert back == cfg and _key(back) == _key(cfg)
        assert json.dumps(back) == json.dumps(cfg)  # key order too
        n += 1
    assert n > 100


def test_a_given_none_is_kept_and_a_missing_option_stays_out():
    rec = RunConfig.from_dict({"algo": "dfedavg", "model": None})
    assert rec.model is None and rec.lr is UNSET and rec.to_dict() == {"algo": "dfedavg", "model": None}


def test_an_unknown_key_and_a_bad_value_are_value_errors_naming_them():
    with pytest.raises(ValueError, match="RunConfig: 'learning_rate' is not one of its keys"):
        RunConfig.from_dict({"algo": "dfedavg", "learning_rate": 0.1})
    with pytest.raises(ValueError, match="read from a dict"):
        RunConfig.from_dict([("algo", "dfedavg")])
    with pytest.raises(ValueError, match=r"--lr must be a finite number > 0 \(the learning rate eta\), got -0.1"):
        RunConfig(algo="dfedavg", lr=-0.1).check()


@pytest.mark.parametrize("door", ["run", "cache", "cohort"])
def test_every_door_of_a_run_config_refuses_a_key_that_is_no_option(door, tmp_path):
    """RunConfig is the schema on the run path: runner.run (the train command's and the API's), the run cache's
    keys (sweeps, verify) and the claims' cohorts refuse a misspelt option by name (it was silently ignored)."""
    from dfltheory.empirical import runner

    cfg = {"algo": "dfedavg", "dataset": "synthetic-logistic", "n": 2, "rounds": 1, "lrr": 0.1,
           "out": str(tmp_path / "r"), "progress": False}
    with pytest.raises(ValueError, match="the run config's key 'lrr' is no option of dfltheory train \\(did you mean "
                                         "'lr'\\?\\)"):
        if door == "run":
            runner.run(cfg)
        elif door == "cache":
            RunCache(tmp_path).path(cfg)
        else:
            runner.build_cohort(cfg, [0, 1])
    assert not (tmp_path / "r").exists()

