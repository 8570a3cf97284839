"""Issue 24 items 2-4 for `bounds`, `check` and `topology`: every numeric option and every symbol refuses NaN,
infinities and out-of-range values by name, in one line, before any topology is built; a value outside its domain is
reported as itself, not as the other values missing; the Python API refuses what the command line refuses."""

import argparse
import math
import time

import pytest

from dfltheory import cli
from dfltheory.bounds import DomainError, catalog, get
from dfltheory.parsing import integer

SAM = ["eta=0.001", "K=5", "T=1000", "L=10", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "f0_minus_fstar=2.3", "Q=1"]
PGP = ["--topology", "random:k=3", "--n", "10"]
#: a valid command line of each (sub)command with numeric options, to which one bad option value is added
BASE = {"topology": ["topology", "random:k=3", "--n", "10"],
        "check": ["check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "ring", "--n", "10"]}


def error_line(capsys, argv: list[str]) -> str:
    """Exit 2 within a second with one `error:` line (argparse adds its usage above a value that is no number of
    the option's type) and no traceback."""
    start = time.perf_counter()
    try:
        code = cli.main(argv)
    except SystemExit as stop:  # argparse: "argument --n: invalid integer value: 'nan'"
        code = stop.code
    assert time.perf_counter() - start < 1.0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def numeric_options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, option) of every option of ``parser`` and its subcommands that takes a number."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from numeric_options(sub, (*path, name))
        elif action.option_strings and action.type in (int, float, integer):
            yield " ".join(path), action.option_strings[0]


OPTIONS = [(path, option) for path, option in numeric_options(cli.build_parser())
           if path.split()[0] in ("topology", "bounds", "check")]


def test_the_numeric_options_are_found():
    assert {("topology", "--d"), ("topology", "--horizon"), ("check", "--n"), ("check", "--seed")} <= set(OPTIONS)


@pytest.mark.parametrize("path, option", OPTIONS)
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf"])
def test_every_numeric_option_refuses_a_meaningless_number_by_name(capsys, path, option, value):
    """A numeric option added to `topology`, `bounds` or `check` without a check fails here (a new command path
    needs its valid command line in BASE)."""
    line = error_line(capsys, [*BASE[path], option, value])
    assert option in line, line


@pytest.mark.parametrize("thm", sorted(catalog()))
def test_every_symbol_refuses_nan_and_infinity_by_name(thm):
    theorem = get(thm)
    for name, var in theorem.symbols.items():
        for bad in (math.nan, math.inf, -math.inf):
            if bad == var.high and var.infinite_at_high:
                continue  # a documented infinite end
            with pytest.raises(DomainError, match=f"^{name} = -?(nan|inf) is outside its domain"):
                theorem.validate(**{name: bad})


@pytest.mark.parametrize("name", sorted(get("dfedsam.thm4.1").symbols))
def test_a_bad_value_is_itself_the_error_not_the_values_missing(capsys, name):
    """`check dfedsam.thm4.1 --set eta=nan` said "missing value(s) for [...]"; `lam=nan` printed `array(nan)`."""
    line = error_line(capsys, ["check", "dfedsam.thm4.1", "--set", f"{name}=nan"])
    assert f"error: {name} = nan is outside its domain" in line and "missing" not in line and "array" not in line


@pytest.mark.parametrize("argv, message", [
    (["--set", *SAM[:-1], "Q=inf", "--topology", "ring", "--n", "10"], "Q = inf is outside its domain"),  # traceback
    (["--set", *SAM[:-1], "Q=nan", "--topology", "ring", "--n", "10"], "Q = nan is outside"),  # "cannot convert ..."
    (["--set", *SAM[:-1], "Q=2.5", "--topology", "ring", "--n", "10"], "Q = 2.5 is outside"),  # analysed at Q = 2
    (["--set", *SAM, "--topology", "ring", "--n", "10", "--seed", "-1"], "--seed must be an integer >= 0"),
    (["--set", *SAM, "--topology", "ring", "--n", "1"], "--n must be an integer >= 2 (the number of clients)"),
    (["--set", *SAM, "--topology", "random:k=20", "--n", "10"], "k must be an integer in [1, 9]"),
    (["--set", *SAM, "--topology", "erdos-renyi:p=1e9", "--n", "10"], "p must be a finite number in [0, 1]"),
    (["--set", *SAM, "lam=0.5", "m=10", "eta=1e308"], "not defined (NaN) at 1 of the given points: values this "
                                                      "extreme overflow double precision"),  # named no cause
])
def test_check_refuses_bad_values_before_the_topology(capsys, argv, message):
    line = error_line(capsys, ["check", "dfedsam.thm4.1", *argv])
    assert message in line and "--topology-params" not in line, line


def test_dfedpgp_K_u_nan_is_named(capsys):
    """Was "cannot convert float NaN to integer" (int() of the --set value for the topology's q)."""
    line = error_line(capsys, ["check", "dfedpgp.thm1", "--set", "K_u=nan", *PGP])
    assert "K_u = nan is outside its domain" in line


def test_the_python_api_refuses_the_same_values():
    from dfltheory.bounds import topology_values

    thm = get("dfedpgp.thm1")
    with pytest.raises(ValueError, match="^K_u must be an integer >= 1"):
        topology_values(thm, "random:k=3", 10, K_u=0)
    with pytest.raises(ValueError, match="^seed must be an integer >= 0"):
        topology_values(thm, "random:k=3", 10, seed=-1)
    with pytest.raises(DomainError, match="^eta = nan is outside its domain"):
        get("dfedsam.thm4.1").evaluate(eta=math.nan)
