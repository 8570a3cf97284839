"""The ``dfltheory pep`` command: worst case, dfedsam.thm4.1's bound at sigma_l = 0 and their ratio."""

import json

import numpy as np
import pytest

from dfltheory.cli import main

SET = ["--set", "sigma_g=1", "B=2"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_topology_bound_above_worst_case(capsys):
    code, out, _ = run(capsys, "pep", "dfedavg", "--K", "2", "--T", "3", "--eta", "0.05", *SET,
                       "--topology", "ring", "--n", "3", "--json")
    d = json.loads(out)
    assert code == 0 and d["theorem"] == "dfedsam.thm4.1" and d["lam"] == pytest.approx(0.0, abs=1e-12)
    assert 0 < d["worst_case"] < d["bound"] and d["ratio"] == pytest.approx(d["bound"] / d["worst_case"])
    assert d["pep"]["settings"]["m"] == 3 and not d["finding"]


def test_matrix_file_and_lambda_range_text(capsys, tmp_path):
    W = 0.5 * np.eye(3) + 0.5 * np.ones((3, 3)) / 3
    path = tmp_path / "W.npy"
    np.save(path, W)
    code, out, _ = run(capsys, "pep", "dfedavg", "--T", "2", "--eta", "0.1", *SET, "--matrix", str(path))
    assert code == 0 and "lambda = 0.5" in out and "ratio bound / worst case" in out
    code, out2, _ = run(capsys, "pep", "dfedavg", "--m", "3", "--T", "2", "--eta", "0.1", *SET,
                        "--lambda-range", "-0.5", "0.5")
    assert code == 0 and "spectral class [-0.5, 0.5]" in out2


def test_no_bound_without_B_or_when_a_condition_fails(capsys):
    code, out, _ = run(capsys, "pep", "dfedavg", "--T", "2", "--eta", "0.1", "--set", "sigma_g=1",
                       "--lambda-range", "-0.5", "0.5")
    assert code == 0 and "no bound" in out and "give B" in out
    code, out, _ = run(capsys, "pep", "dfedavg", "--T", "2", "--eta", "0.5", *SET, "--lambda-range", "-0.5", "0.5")
    assert code == 0 and "no bound" in out and "condition" in out


@pytest.mark.parametrize("argv, match", [
    (["--set", "sigma_l=1"], "sigma_l must be 0"),
    (["--set", "zeta=1"], "unknown"),
    (["--m", "4", "--topology", "ring", "--n", "3"], "--m 4 but the mixing matrix is 3 x 3"),
    (["--lambda-range", "-0.5", "1.5"], "hi < 1"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, match):
    base = ["pep", "dfedavg", "--T", "2", "--eta", "0.1"]
    if not any(a in argv for a in ("--topology", "--lambda-range")):
        argv = argv + ["--lambda-range", "-0.5", "0.5"]
    code, _, err = run(capsys, *base, *argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1
