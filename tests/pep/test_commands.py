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


def test_sweep_lambda_json_and_figure(capsys, tmp_path):
    fig = tmp_path / "sub" / "lam.png"
    code, out, _ = run(capsys, "pep", "dfedavg", "--K", "1", "--T", "3", "--eta", "0.1", *SET, "--lambda", "0.5",
                       "--sweep", "lambda=0,0.9", "--figure", str(fig), "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["value"] for r in rows] == [0.0, 0.9] and fig.stat().st_size > 0
    assert rows[0]["bound"] < rows[1]["bound"] and all(r["ratio"] > 1 for r in rows)


def test_sweep_T_is_non_increasing_text(capsys):
    code, out, _ = run(capsys, "pep", "dfedavg", "--K", "1", "--T", "3", "--eta", "0.1", *SET,
                       "--lambda-range", "-0.5", "0.5", "--sweep", "T=1,2,3")
    values = [float(line.split()[1]) for line in out.splitlines()[2:5]]
    assert code == 0 and values[0] == pytest.approx(2.0, rel=1e-5) and values == sorted(values, reverse=True)


@pytest.mark.parametrize("argv, match", [
    (["--lambda", "0.5", "--figure", "x.png"], "--figure draws a --sweep"),
    (["--topology", "ring", "--n", "3", "--sweep", "lambda=0.5"], "--sweep lambda needs"),
    (["--lambda", "0.5", "--sweep", "eta=0.1"], "NAME=V1,V2"),
    (["--lambda", "0.5", "--sweep", "T=1.5"], "not an integer"),
    (["--lambda", "-0.9"], "no doubly stochastic"),
])
def test_bad_sweep_is_one_line_exit_2(capsys, argv, match):
    code, _, err = run(capsys, "pep", "dfedavg", "--T", "2", "--eta", "0.1", *argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_variants_of_the_theorem_are_compared(capsys):
    code, out, _ = run(capsys, "pep", "dfedavg-mgs", "--K", "1", "--T", "3", "--eta", "0.1",
                       "--set", "sigma_g=1", "B=2", "Q=2", "--lambda", "0.5", "--json")
    d = json.loads(out)
    ids = {v["theorem"] for v in d["variants"]}
    assert code == 0 and "dfedsam.thm4.1.tight" in ids and "dfedsam.thm4.1.E2" not in ids  # E2 models Q = 1 only
    assert all(v["bound"] > d["worst_case"] for v in d["variants"])


def test_dfedadmm_average_metric_and_its_theorem(capsys):
    code, out, _ = run(capsys, "pep", "dfedadmm", "--K", "2", "--T", "2", "--eta", "0.005",
                       "--set", "lam_pen=0.01", "sigma_g=1", "B=2", "--lambda", "0.5", "--json")
    d = json.loads(out)
    assert code == 0 and d["theorem"] == "dfedadmm.thm1" and d["pep"]["settings"]["metric"] == "average"
    assert 0 < d["worst_case"] < d["bound"] and d["pep"]["settings"]["lam_pen"] == 0.01
    code, _, err = run(capsys, "pep", "dfedadmm", "--T", "2", "--eta", "0.1", "--lambda", "0.5")
    assert code == 2 and "needs the ADMM penalty lam_pen" in err


def test_dfedcata_reading_b_with_its_consensus_reading(capsys):
    code, out, _ = run(capsys, "pep", "dfedcata-b", "--K", "2", "--T", "2", "--eta", "0.05",
                       "--set", "lam_pen=1", "beta=0.3", "sigma_g=1", "--lambda", "0.5")
    assert code == 0 and "dfedcata.thm1 at sigma_l = 0" in out and "variant dfedcata.thm1.consensus" in out
    assert "minus" in out and "beta = 0.3" in out


def test_push_sum_matrix_file_without_lambda(capsys, tmp_path):
    P = np.array([[0.5, 0, 1 / 3], [0.5, 0.5, 1 / 3], [0, 0.5, 1 / 3]])
    path = tmp_path / "P.npy"
    np.save(path, P)
    code, out, _ = run(capsys, "pep", "dfedsgpm", "--K", "2", "--T", "2", "--eta", "0.02", "--set", "alpha=0.5",
                       "sigma_g=1", "B=2", "--matrix", str(path))
    assert code == 0 and "column-stochastic (push-sum)" in out and "dfedsgpsm.thm1 at sigma_l = 0" in out
    assert "numerators' mean" in out


def test_pep_table_rows_are_json_safe():
    from dfltheory.pep import pep_table
    from dfltheory.pep.sweep import W_lambda

    rows = pep_table([("dfedadmm", dict(K=2, T=2, eta=0.005, lam_pen=0.01, W=W_lambda(3, 0.5)), "W(0.5)", 0.5),
                      ("sgp", dict(K=1, T=2, eta=0.02, W=W_lambda(3, 0.5)), "W(0.5)", None)])
    json.dumps(rows, allow_nan=False)
    assert [r["theorem"] for r in rows[:3]] == ["dfedadmm.thm1", "dfedadmm.thm1.dfedadmm", "dfedsgpsm.thm1"]
    assert rows[0]["status"] == "holds" and rows[0]["ratio"] == pytest.approx(rows[0]["bound"] / rows[0]["worst_case"])
    assert all(r["bound"] is None and r["status"].startswith("no bound") for r in rows[2:])  # K = 1, alpha = 0
    assert set(rows[0]) == {"algorithm", "instance", "quantity", "worst_case", "theorem", "bound", "ratio", "status",
                            "seconds"}


#: every algorithm a theorem covers, with settings inside its theorem's conditions (docs/pep.md has T = 5 numbers)
COVERED = [("dpsgd-atc", ["--K", "1", "--eta", "0.1"], []),
           ("dfedavg", ["--eta", "0.05"], []),
           ("dfedavg-mgs", ["--eta", "0.05"], ["Q=2"]),
           ("dfedadmm", ["--eta", "0.005"], ["lam_pen=0.01"]),
           ("dfedadmm-sam-unnormalized", ["--eta", "0.005"], ["lam_pen=0.01", "rho=0.05"]),
           ("dfedcata-a", ["--eta", "0.05"], ["lam_pen=1", "beta=0.3"]),
           ("dfedcata-b", ["--eta", "0.05"], ["lam_pen=1", "beta=0.3"]),
           ("dfedsgpm", ["--eta", "0.02"], ["alpha=0.5"]),
           ("dfedsgpsm-unnormalized", ["--eta", "0.02"], ["alpha=0.5", "rho=0.05"])]


@pytest.mark.parametrize("algorithm, options, settings", COVERED, ids=[c[0] for c in COVERED])
def test_every_covered_algorithm_has_a_ratio_in_both_representations(capsys, algorithm, options, settings):
    """Issue 14's "done when": a worst case and a bound / worst-case ratio in both mixing representations."""
    ratios = {}
    for mixing in (["--lambda", "0.5"], ["--lambda-range", "-0.5", "0.5"]):
        argv = ["pep", algorithm, "--m", "2", "--K", "2", "--T", "3", *options, "--set", "sigma_g=1", "B=2", *settings,
                *mixing, "--json"]
        code, out, _ = run(capsys, *argv)
        d = json.loads(out)
        assert code == 0 and d["lam"] == 0.5 and d["ratio"] > 1 and not d["finding"], (mixing, d["reason"])
        ratios[mixing[0]] = d
    explicit, cls = ratios["--lambda"], ratios["--lambda-range"]
    assert explicit["worst_case"] <= cls["worst_case"] * (1 + 1e-4)  # W(0.5) belongs to the class
    assert cls["theorem"] == explicit["theorem"] and cls["bound"] >= explicit["bound"] * (1 - 1e-9)


def test_push_sum_over_the_class_and_on_a_random_topology(capsys):
    code, out, _ = run(capsys, "pep", "dfedsgpm", "--K", "2", "--T", "3", "--eta", "0.02", "--set", "alpha=0.5",
                       "sigma_g=1", "B=2", "--lambda-range", "-0.5", "0.5")
    assert code == 0 and "spectral class [-0.5, 0.5], lambda = 0.5" in out and "dfedsgpsm.thm1 at sigma_l = 0" in out
    code, out, _ = run(capsys, "pep", "dfedsgpm", "--K", "2", "--T", "3", "--eta", "0.02", "--set", "alpha=0.5",
                       "sigma_g=1", "B=2", "--topology", "random:k=1", "--n", "3", "--seed", "1", "--json")
    d = json.loads(out)
    assert code == 0 and "a new draw in each of 3 rounds" in d["mixing"] and d["ratio"] > 1
    assert len(d["pep"]["settings"]["mixing_args"]["W"]) == 2  # T - 1 rounds gossip


def test_matrix_sequence_file(capsys, tmp_path):
    W = [0.2 * np.eye(3) + 0.8 / 3, 0.6 * np.eye(3) + 0.4 / 3]
    path = tmp_path / "Ws.npy"
    np.save(path, np.stack(W))
    code, out, _ = run(capsys, "pep", "dfedavg", "--K", "2", "--T", "3", "--eta", "0.05", *SET, "--matrix", str(path))
    assert code == 0 and "matrix sequence" in out and "lambda = 0.6 (the largest over the rounds' W_t)" in out
    np.save(path, np.stack([W[0], np.array([[0.5, 0.5, 0], [0.2, 0.3, 0.5], [0.3, 0.2, 0.5]])]))
    code, _, err = run(capsys, "pep", "dfedavg", "--T", "3", "--eta", "0.05", "--matrix", str(path))
    assert code == 2 and "round 1: W is not symmetric" in err and len(err.strip().splitlines()) == 1
    u = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    signed = np.ones((3, 3)) / 3 + 0.9 * np.outer(u, u)  # symmetric, doubly stochastic, one entry -0.117
    for stack, match in ((np.stack([W[0], signed]), "matrix 1 of the sequence: the mixing matrix has negative"),
                         (np.stack(W) + 1j, "holds complex128 entries")):  # refused as a single matrix file is
        np.save(path, stack)
        code, _, err = run(capsys, "pep", "dfedavg", "--T", "3", "--eta", "0.05", *SET, "--matrix", str(path))
        assert code == 2 and match in err and len(err.strip().splitlines()) == 1, err


def test_sweep_T_on_a_random_topology_draws_enough_rounds(capsys):
    code, out, _ = run(capsys, "pep", "dfedavg", "--K", "1", "--T", "2", "--eta", "0.1", *SET, "--topology",
                       "random:k=1,direction=undirected", "--weights", "metropolis", "--n", "3", "--sweep", "T=2,4",
                       "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["value"] for r in rows] == [2.0, 4.0] and rows[1]["worst_case"] < rows[0]["worst_case"]
    assert all(r["ratio"] > 1 for r in rows)


def test_time_varying_class(capsys):
    code, out, _ = run(capsys, "pep", "dfedsgpm", "--K", "2", "--T", "3", "--eta", "0.02", "--set", "alpha=0.5",
                       "sigma_g=1", "B=2", "--lambda-range", "-0.5", "0.5", "--time-varying", "--json")
    d = json.loads(out)
    assert code == 0 and d["mixing"] == "time-varying spectral class [-0.5, 0.5]" and d["ratio"] > 1
    assert d["pep"]["settings"]["mixing_args"]["time_varying"] is True
    code, _, err = run(capsys, "pep", "dfedavg", "--T", "3", "--eta", "0.05", "--lambda", "0.5", "--time-varying")
    assert code == 2 and "--time-varying applies to --lambda-range" in err


def test_a_failed_solve_without_sigma_g_or_B_names_the_likely_cause(capsys):
    code, _, err = run(capsys, "pep", "sgp", "--m", "3", "--T", "3", "--eta", "0.1", "--lambda-range", "-0.5", "0.5")
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert "the worst case may be unbounded: give --set sigma_g=... or B=..." in err


def test_one_agent_is_refused_on_the_command_line(capsys):
    code, _, err = run(capsys, "pep", "dfedavg", "--m", "1", "--T", "2", "--eta", "0.1", *SET, "--lambda", "0.5")
    assert code == 2 and "--m must be at least 2 agents" in err


def test_the_degenerate_class_instance_refused_after_a_failed_check_solves(capsys):
    """The audit's instance (issue 24): Clarabel ended at an accepted 'optimal_inaccurate', the answer failed the
    residual checks, and the command exited 3 although a stronger regularization solves it; every failed check is now
    retried. The class [0.5, 0.5] is the one W(0.5), whose explicit PEP is the independent value."""
    argv = ["pep", "dfedavg", "--m", "3", "--K", "2", "--T", "5", "--eta", "0.05", *SET, "--json"]
    code, out, _ = run(capsys, *argv, "--lambda-range", "0.5", "0.5")
    d = json.loads(out)
    code_w, out_w, _ = run(capsys, *argv, "--lambda", "0.5")
    explicit = json.loads(out_w)["worst_case"]
    assert code == 0 and code_w == 0 and abs(d["worst_case"] - explicit) <= 1e-4 * explicit, (d["worst_case"], explicit)
    diag = d["pep"]["diagnostics"]
    assert diag["proof_error"] <= 1e-4 * d["worst_case"] and diag["interpolation"]["interpolable"]
