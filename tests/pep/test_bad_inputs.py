"""Bad input to the PEP pillar (issue 24): NaN, an infinity, a negative or a huge value for any option of
`dfltheory pep` exits 2 with one `error:` line that names the option and the fix, before any solve (never a traceback,
the solver's own words, exit 3, or a 75 GiB matrix); the Python API refuses the same with a ValueError. The options
and the --set names are read from the parser and SETTABLE, so a new one is covered as soon as it exists."""

import argparse

import numpy as np
import pytest

from dfltheory.cli import build_parser, main
from dfltheory.pep import W_lambda, worst_case
from dfltheory.pep.commands import SETTABLE

BASE = ["pep", "dfedavg", "--T", "2", "--eta", "0.1"]
LAMBDA = ["--lambda", "0.5"]
#: the algorithm a --set name applies to, and what that algorithm needs besides
ALGORITHM = {"rho": "dfedsam-unnormalized", "lam_pen": "dfedadmm", "beta": "dfedcata-b", "alpha": "dfedsgpm"}
NEEDS = {"dfedadmm": {"lam_pen": "0.1"}, "dfedcata-b": {"lam_pen": "1", "beta": "0.3"}, "dfedsgpm": {"alpha": "0.5"}}
BAD = ["nan", "inf", "-inf", "1e300", "-1e300"]


def refused(capsys, argv):
    """Exit 2 and exactly one 'error:' line, no traceback (argparse's own refusals print their usage first)."""
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse: an int option given 'nan'
        code = stop.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, (argv, code, err)
    assert err.strip().splitlines()[-1] == errors[0], err
    return errors[0]


def numeric_options():
    """(option, nargs) of every option of `pep` that takes numbers."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return [(a.option_strings[-1], a.nargs) for a in sub.choices["pep"]._actions
            if a.option_strings and a.type in (int, float)]


def option_cases():
    cases = []
    for option, nargs in numeric_options():
        mixing = [] if option in ("--lambda", "--lambda-range") else (["--topology", "ring"] if option in
                                                                      ("--n", "--seed") else LAMBDA)
        base = [a for i, a in enumerate(BASE) if option not in (a, BASE[i - 1])]  # the option's own value replaced
        for v in BAD:
            if nargs == 2:
                cases += [(option, base + [option, v, "0.5"] + mixing), (option, base + [option, "-0.5", v] + mixing)]
            else:
                cases.append((option, base + [f"{option}={v}"] + mixing))
    return cases


def names_option(err: str, option: str) -> bool:
    """Whether an error line names the option: as given (``--lam-pen``) or as its setting (``lam_pen``)."""
    name = option.lstrip("-")
    return option in err or name in err or name.replace("-", "_") in err


@pytest.mark.parametrize("option, argv", option_cases(), ids=lambda a: a if isinstance(a, str) else " ".join(a[2:]))
def test_every_numeric_option_refuses_nan_infinite_and_huge_values(capsys, option, argv):
    err = refused(capsys, argv)
    assert names_option(err, option), err  # the refusal names the option given the bad value


@pytest.mark.parametrize("name, value", [(n, v) for n in SETTABLE for v in ["nan", "inf", "-inf", "-1", "1e300"]]
                         + [("L", "1e-300"), ("f0_minus_fstar", "1e-300"), ("lam_pen", "1e-300"),
                            ("beta", "0.99999999999"), ("Q", "0"), ("Q", "1.5"), ("Q", "1e5")])
def test_every_set_name_refuses_bad_values(capsys, name, value):
    algorithm = ALGORITHM.get(name, "dfedavg")
    settings = {"sigma_g": "1", "B": "2"} | NEEDS.get(algorithm, {}) | {name: value}
    err = refused(capsys, ["pep", algorithm, *BASE[2:], "--set", *(f"{k}={v}" for k, v in settings.items()),
                           *LAMBDA])
    key = "Delta" if name == "f0_minus_fstar" else name
    assert key in err, err  # the message names the setting


@pytest.mark.parametrize("argv, match", [
    (["--eta", "1e300"], "eta L = 1e+300 exceeds 10000"),  # was exit 3, the solver's "data contains NaN or Inf"
    (["--eta", "1e6"], "eta L = 1e+06 exceeds"),  # was exit 3, proof error 1.07
    (["--set", "sigma_g=1e300"], "sigma_g / sqrt(L Delta)"),  # was an OverflowError traceback (sigma_g ** 2)
    (["--set", "Q=1e300"], "Q = ~1e300 gossip steps"),  # was an IndexError traceback (W^Q drifted to 0)
    (["--set", "L=1e300"], "L = 1e+300 is outside"),  # was exit 3, "Solver 'CLARABEL' failed"
    (["--set", "f0_minus_fstar=1e300"], "Delta = 1e+300 is outside"),  # was exit 3, status 'unbounded_inaccurate'
    (["--T", "1" + "0" * 200], "PEP too large: Gram matrix ~1e200"),  # was an OverflowError traceback
    (["--m", "100000"], "PEP too large: Gram matrix 200001"),
    (["--sweep", "T=inf"], "--sweep T: inf is not an integer >= 1"),  # was an OverflowError traceback
    (["--sweep", "T=nan"], "--sweep T: nan is not an integer"),  # was "cannot convert float NaN to integer"
    (["--sweep", "T=1e300"], "PEP too large"),
    (["--sweep", "lambda=1e300"], "lambda = 1e+300 gives no doubly stochastic"),
])
def test_huge_and_non_finite_values_name_the_real_cause(capsys, argv, match):
    argv = [*BASE, "--set", "sigma_g=1", "B=2", *LAMBDA] + argv
    assert match in refused(capsys, argv)


def test_a_topology_too_large_is_refused_before_it_is_built(capsys):
    err = refused(capsys, [*BASE, "--topology", "ring", "--n", "100000"])  # was "use sparse_matrix(t)", a Python fix
    assert "PEP too large" in err and "reduce m, K or T" in err


def test_a_negative_seed_is_named(capsys):
    err = refused(capsys, [*BASE, "--topology", "random:k=1,direction=undirected", "--weights", "metropolis",
                           "--seed=-1"])  # was numpy's "expected non-negative integer"
    assert "--seed must be an integer >= 0" in err


@pytest.mark.parametrize("W, match", [(np.full((3, 3), np.nan), "NaN or infinite"),
                                      (np.array([[1.5, -0.5], [-0.5, 1.5]]), "negative entries"),
                                      (np.eye(3) * 1e300, "neither row- nor column-stochastic"),
                                      (np.stack([np.eye(3), np.full((3, 3), np.inf)]), "matrix 1 of the sequence")])
def test_bad_matrix_files(capsys, tmp_path, W, match):
    path = tmp_path / "W.npy"
    np.save(path, W)
    assert match in refused(capsys, [*BASE, "--matrix", str(path)])


@pytest.mark.parametrize("kwargs, match", [
    (dict(W=np.array([[1.5, -0.5], [-0.5, 1.5]])), "eigenvalue 2, outside \\[-1, 1\\]: it is not a mixing matrix"),
    (dict(max_seconds=float("nan")), "max_seconds must be a finite number"),  # nan turned the time limit off
    (dict(max_seconds=float("inf")), "max_seconds must be a finite number"),
    (dict(max_seconds=0), "max_seconds must be a finite number"),
    (dict(solver="OSQP"), "not an SDP solver"),
    (dict(eta=1e300), "eta L = 1e\\+300 exceeds"),
    (dict(sigma_g=1e300), "sigma_g / sqrt\\(L Delta\\)"),
    (dict(B=1e300), "B / sqrt\\(L Delta\\)"),
    (dict(L=1e-300), "L = 1e-300 is outside"),
    (dict(rho=1e300, algorithm="dfedsam-unnormalized"), "rho L"),
    (dict(Q=10 ** 400), "Q = ~1e400 gossip steps"),
    (dict(T=10 ** 200), "PEP too large"),
    (dict(algorithm="dfedadmm", lam_pen=1e300), "lam_pen / eta"),  # gamma underflowed to 0: "use eta <= lam_pen"
    (dict(algorithm="dfedcata-b", lam_pen=1e300, beta=0.3), "eta lam_pen"),
])
def test_the_python_api_refuses_the_same(kwargs, match):
    kw = dict(algorithm="dfedavg", m=2, K=1, T=2, eta=0.1, W=W_lambda(2, 0.5), sigma_g=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        worst_case(**kw)


@pytest.mark.parametrize("m, lam, match", [(0, 0.5, "m must be an integer in \\[1, 400\\]"), (2.5, 0.5, "m must"),
                                           (True, 0.5, "m must"), (100000, 0.5, "m must"),
                                           (3, float("nan"), "lambda = nan"), (3, 1.0, "lambda = 1.0"),
                                           (3, -0.6, "lambda = -0.6"), (3, "0.5", "lambda = 0.5")])
def test_W_lambda_refuses_what_is_no_mixing_matrix(m, lam, match):
    """W_lambda(0, 0.5) returned a 0 x 0 array; W_lambda(100000, .) would allocate 75 GiB."""
    with pytest.raises(ValueError, match=match):
        W_lambda(m, lam)


def test_a_solver_exception_is_one_line_with_the_fix_in_the_commands_options(capsys, monkeypatch):
    """Library text without option or fix (a KeyError('status') once printed "error: status") is wrapped: the cause,
    the retry, and the fix in the command's own options; exit 3 (the solve failed)."""
    from PEPit import PEP

    def broken(self, *args, **kwargs):
        raise KeyError("status")

    monkeypatch.setattr(PEP, "solve", broken)
    code = main([*BASE, "--set", "sigma_g=1", *LAMBDA])
    err = capsys.readouterr().err.strip()
    assert code == 3 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "stopped with an error ('status')" in err and "retry" in err and "try a smaller --K or --T" in err
