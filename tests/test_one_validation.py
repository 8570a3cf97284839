"""Issue 35 item 3: one validation. A constraint is declared once (dfltheory.constraints) and the command line and
the Python API refuse a value with the same sentence: the CLI's one line (exit 2) is the API's ValueError, the
option's dashes aside."""

from __future__ import annotations

import pytest

from dfltheory import cli


def _api_error(call) -> str:
    with pytest.raises(ValueError) as err:
        call()
    return str(err.value)


def _train(**cfg):
    from dfltheory.empirical.runner import check_options

    return lambda: check_options(cfg)


def _topology(**kw):
    from dfltheory.topology import analyze

    return lambda: analyze("ring", 8, **kw)


def _pep(**kw):
    from dfltheory.pep.problem import worst_case

    return lambda: worst_case("dfedavg", 4, **{"K": 1, "T": 2, "eta": 0.1, **kw})


@pytest.mark.parametrize("argv, command, api, name", [
    (["train", "--algo", "dfedavg", "--lr", "-1"], "train", _train(lr=-1.0), "--lr"),
    (["train", "--algo", "dfedavg", "--seed", "-1"], "train", _train(seed=-1), "--seed"),
    (["train", "--algo", "dfedavg", "--lr-decay", "1.5"], "train", _train(lr_decay=1.5), "--lr-decay"),
    (["topology", "ring", "--n", "8", "--Q", "0"], "topology", _topology(Q=0), "Q"),
    (["topology", "ring", "--n", "8", "--d", "0"], "topology", _topology(d=0.0), "d"),
    (["pep", "dfedavg", "--m", "4", "--lambda", "0.5", "--eta", "0"], "pep", _pep(eta=0.0), "eta"),
    (["pep", "dfedavg", "--m", "4", "--lambda", "0.5", "--eta", "0.1", "--K", "0"], "pep", _pep(K=0), "K"),
])
def test_the_command_line_and_the_api_refuse_with_one_sentence(capsys, tmp_path, argv, command, api, name):
    if command == "train":
        argv = [*argv, "--out", str(tmp_path / "run")]
    assert cli.main(argv) == 2
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1 and line.startswith(f"dfltheory {command}: error: ")
    cli_text = line.removeprefix(f"dfltheory {command}: error: ")
    api_text = _api_error(api)
    assert api_text.startswith(f"{name} must be ") and " got " in api_text
    assert cli_text.lstrip("-") == api_text.lstrip("-"), (cli_text, api_text)
    assert not (tmp_path / "run").exists()  # refused before anything is built
