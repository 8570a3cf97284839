import json

from dfltheory.cli import main

STABLE = {"topology", "n", "weights", "lambda", "spectral_gap", "psi", "lambda_2", "lambda_min",
          "doubly_stochastic", "symmetric", "C", "q", "delta", "lambda_Q", "Phi", "D", "B", "Delta", "a"}


def test_single_topology_json(capsys):
    assert main(["topology", "ring", "--n", "20", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert STABLE <= set(r)
    assert r["topology"] == "ring" and r["n"] == 20 and r["weights"] == "metropolis"
    assert 0 < r["lambda"] < 1 and r["symmetric"] is True


def test_push_sum_json_writes_infinity_as_a_string(capsys):
    assert main(["topology", "full", "--n", "8", "--weights", "push-sum", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["q"] == "inf" and r["vacuous"] is True  # n D^-1 = 1: the SGP lemma is void


def test_compare_prints_one_row_per_topology(capsys):
    assert main(["topology", "compare", "code-ring", "code-exp", "watts-strogatz:k=4,p=0.2", "--n", "30"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:3] == ["topology", "weights", "lambda"]
    assert [line.split()[0] for line in out[3:]] == ["code-ring", "code-exp", "watts-strogatz"]


def test_plain_output_and_list(capsys):
    assert main(["topology", "random", "--n", "20", "--horizon", "5"]) == 0
    out = capsys.readouterr().out
    assert "q_measured" in out and "note[lambda]" in out
    assert main(["topology", "list"]) == 0
    assert "neighbour-selection" in capsys.readouterr().out


def test_errors_are_one_line(capsys):
    assert main(["topology", "ring", "--n", "1"]) == 2
    assert "--n must be an integer >= 2 (the number of clients), got 1" in capsys.readouterr().err
    assert main(["topology", "hypercube", "--n", "8"]) == 2
    assert "unknown topology 'hypercube'" in capsys.readouterr().err
    assert main(["topology", "ring", "--n", "8", "--weights", "magic"]) == 2
    assert "unknown weight rule" in capsys.readouterr().err
