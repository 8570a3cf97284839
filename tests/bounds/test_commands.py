"""The bounds command line: list, show, verify, experiments and check (with a named topology)."""

import json

import numpy as np
import pytest

from dfltheory.bounds import get
from dfltheory.cli import main

SAM = ["eta=0.001", "K=5", "T=1000", "L=10", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "f0_minus_fstar=2.3", "Q=1"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_has_every_paper(capsys):
    code, out, _ = run(capsys, "bounds", "list", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["paper"] for r in rows} == {"dfedsgpsm", "dfedsam", "dfedcata", "dfedpgp", "dfedadmm"}
    assert {"dfedsam.thm4.1", "dfedsam.cor4.1.2", "dfedadmm.thm1"} <= {r["id"] for r in rows}


def test_check_push_sum_constants_theory_or_measured(capsys):
    sgpsm = ["eta=0.001", "K=5", "T=1000", "L=1", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "alpha=0.5",
             "f0_minus_fstar=2.3", "x0_sq_mean=1"]
    topo = ["--topology", "random", "--weights", "push-sum", "--n", "30", "--json"]
    res = {}
    for kind in ("theory", "measured"):
        code, out, _ = run(capsys, "check", "dfedsgpsm.thm1", "--set", *sgpsm, *topo, "--push-sum", kind)
        assert code == 0
        res[kind] = json.loads(out)
    rep = res["theory"]["topology"]
    assert res["theory"]["values"]["q"] == pytest.approx(rep["q"])
    assert res["measured"]["values"]["q"] == pytest.approx(rep["q_measured"])
    assert res["measured"]["values"]["C"] == pytest.approx(rep["C_measured"])
    assert res["measured"]["values"]["delta"] == res["theory"]["values"]["delta"] == pytest.approx(rep["delta"])
    assert rep["q_measured"] < rep["q"]  # the cited lemma's rate is far slower than the network's
    assert res["measured"]["value"] < res["theory"]["value"]


def test_show_prints_provenance_and_conditions(capsys):
    code, out, _ = run(capsys, "bounds", "show", "dfedsam.thm4.1")
    assert code == 0 and "seed 001" in out and "eta <= 1/(10*K*L)" in out


def test_check_with_topology_json(capsys):
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "ring", "--n", "100",
                       "--json", "--solve", "eta")
    res = json.loads(out)
    assert code == 0
    assert set(res) >= {"id", "value", "terms", "conditions", "topology", "solve"}
    lam = res["topology"]["lambda"]
    assert lam == pytest.approx(0.998684, abs=1e-6) and res["values"]["m"] == 100
    expected = get("dfedsam.thm4.1").evaluate(**{k: float(v) for k, v in (s.split("=") for s in SAM)}, lam=lam, m=100)
    assert res["value"] == pytest.approx(expected)
    assert all({"text", "holds", "margin"} <= set(c) for c in res["conditions"])
    assert res["solve"]["largest"] == pytest.approx(1 / 500)


def test_check_exit_code_is_one_when_a_condition_fails(capsys):
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM[1:], "eta=0.01", "lam=0.5", "m=100")
    assert code == 1 and "FAIL" in out


@pytest.mark.parametrize("argv,message", [
    (["check", "dfedsam.thm4.1", "--set", "eta=0.1"], "missing value(s)"),
    (["check", "dfedsam.thm4.1", "--set", "eta"], "NAME=VALUE"),
    (["check", "dfedsam.thm4.1", "--set", *SAM, "lam=0.5", "m=10", "zzz=1"], "unknown symbol(s) ['zzz']"),
    (["check", "dfedsam.thm4.1", "--set", *SAM, "lam=1.5", "m=10"], "lam = 1.5 is outside its domain"),
    (["check", "dfedsam.thm4.11"], "did you mean"),
    (["check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "ring"], "needs n"),
    (["check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "nosuch", "--n", "10"], "nosuch"),
])
def test_bad_input_is_one_clear_line(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_verify_one_corollary_json(capsys):
    code, out, err = run(capsys, "bounds", "verify", "dfedsam.cor4.1.1", "--json")
    assert err.startswith("bounds verify: 1/1 dfedsam.cor4.1.1 (")  # progress on stderr (issue 32: 197 s silent)
    (rep,) = json.loads(out)
    assert code == 0 and rep["derived_rate"] == "T^-1/2" and rep["stated_rate"] == "T^-1/2"
    assert any(c["under_schedule"].startswith("T >= ") for c in rep["conditions"])


def test_experiments_report_violated_ranges(capsys):
    code, out, _ = run(capsys, "bounds", "experiments", "dfedadmm", "--json")
    rows = json.loads(out)
    assert code == 0 and rows
    assert any(c["violated_for"] for r in rows for c in r["conditions"])


def test_check_topology_guards(capsys):
    sam = ["eta=0.001", "K=20", "T=1000", "L=1", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "Q=4",
           "f0_minus_fstar=2.3"]
    # NAME:key=value parameters, as `dfltheory topology` takes them
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *sam, "--topology", "watts-strogatz:k=4", "--n", "10")
    assert code == 0 and "lam = " in out
    # lambda of a W outside Definition 1 is refused, not substituted
    code, _, err = run(capsys, "check", "dfedsam.thm4.1", "--set", *sam, "--topology", "k-out:k=3", "--n", "20")
    assert code == 2 and "Definition 1" in err and "symmetric = False" in err
    # a disconnected graph: lambda = 1, an infinite bound, and the JSON stays valid (inf as a string)
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *sam, "--topology", "erdos-renyi", "--n", "10",
                       "--json")
    res = json.loads(out)
    assert res["value"] == "inf" and res["topology"]["Phi"] == "inf"
    # a vacuous push-sum lemma names itself and the way out
    sgpsm = ["eta=0.001", "K=5", "T=100", "L=1", "alpha=0.5", "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1",
             "f0_minus_fstar=1", "x0_sq_mean=1"]
    code, _, err = run(capsys, "check", "dfedsgpsm.thm1", "--set", *sgpsm, "--topology", "full", "--n", "10")
    assert code == 2 and "vacuous" in err and "--push-sum measured" in err


def test_solve_for_a_symbol_without_closed_form_is_solved_numerically_and_says_so(capsys):
    args = ["check", "dfedsgpsm.thm1", "--set", "eta=0.1", "K=5", "T=100", "L=1", "rho=0.1", "sigma_l=1",
            "sigma_g=1", "B=1", "f0_minus_fstar=1", "x0_sq_mean=1", "C=2", "q=0.5", "delta=0.5", "alpha=0.5",
            "--solve", "alpha"]
    code, out, _ = run(capsys, *args)  # eta = 0.1 breaks eta < delta/(8 L K): exit 1, but alpha is solved
    assert code == 1 and "admissible under all conditions" in out and "[numeric (" in out
    code, out, _ = run(capsys, *args, "--json")
    sol = json.loads(out)["solve"]
    assert sol["method"].startswith("numeric") and 0 < sol["largest"] < 1
    thm, vals = get("dfedsgpsm.thm1"), dict(eta=0.1, K=5, L=1, delta=0.5, q=0.5)
    alpha_ok = [c for c in thm.conditions if "alpha" in c.names]
    at = {**vals, "alpha": sol["largest"]}
    assert all(c.holds_at(at) for c in alpha_ok)
    assert not all(c.holds_at({**at, "alpha": float(np.nextafter(sol["largest"], 1))}) for c in alpha_ok)


def test_check_prints_both_verdicts_and_no_bound_where_a_condition_fails(capsys):
    """Issue 11 §1.3-1.4: the paper's conditions alone or all of them; a violated one means no bound."""
    base = ["check", "dfedsgpsm.thm1", "--set", "alpha=0.99", "delta=1", "K=20", "L=1", "eta=0.006", "T=1000",
            "rho=0.01", "sigma_l=1", "sigma_g=1", "B=1", "f0_minus_fstar=1", "x0_sq_mean=1", "C=2", "q=0.5"]
    code, out, _ = run(capsys, *base, "--solve", "eta")
    assert code == 1 and "NO BOUND" in out and "<- dominant" not in out
    assert "paper's conditions: all hold; derived conditions: violated" in out
    assert "largest 0.00625" in out and "largest 0.00506" in out
    code, out, _ = run(capsys, *base, "--conditions", "paper", "--json")
    res = json.loads(out)
    assert code == 0 and res["is_bound"] and res["dominant_term"] is not None
    assert res["paper_conditions_hold"] and not res["all_conditions_hold"]
    code, out, _ = run(capsys, "check", "dfedsam.cor4.1.1", "--set", "K=5", "T=1000", "L=10", "sigma_l=1", "B=1",
                       "f0_minus_fstar=2.3", "beta_h=1", "lam=0.5", "--json")  # c (only in a condition) missing: undecidable, exit 3
    res = json.loads(out)
    assert code == 3 and res["is_bound"] and not res["all_conditions_hold"]


def test_check_names_the_weight_rule_it_used(capsys):
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "ring", "--n", "16")
    assert code == 0 and "weights metropolis" in out and "weights default" not in out


def test_experiments_bad_free_symbol_and_admm_finding(capsys):
    code, _, err = run(capsys, "bounds", "experiments", "dfedadmm", "--free", "zeta")
    assert code == 2 and "'zeta' is not a symbol of dfedadmm.thm1" in err
    code, out, _ = run(capsys, "bounds", "experiments", "dfedadmm", "--json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert any("restarts from x^t" in f for f in rows["dfedadmm.exp.cifar_sam"]["findings"])
    assert rows["dfedadmm.exp.cifar_sam_last_round"]["findings"] == []  # eta = 0.037, lambda = 0.1: no collapse


def test_cancelling_effective_step_is_an_error_not_a_silent_inf():
    from dfltheory.bounds import DomainError

    t = get("dfedcata.thm1")
    v = dict(Delta0=0, G_het=1, K=5, L=1, T=100, beta=0.5, eta=0.01, f0_minus_fstar=1, m=10, sigma_l=1)
    v = {k: x for k, x in v.items() if k in t.required}
    assert t.evaluate(lam_pen=1e-9, **v) == pytest.approx(3.616, rel=1e-3)
    with pytest.raises(DomainError, match="overflows to inf"):
        t.evaluate(lam_pen=1e-15, **v)


def test_check_takes_the_users_own_matrix(capsys, tmp_path):
    """Issue 11 §5: --matrix FILE gives the same constants as the named topology it stores."""
    path = tmp_path / "ring16.npy"
    np.save(path, _ring(16))
    named = json.loads(run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--topology", "ring", "--n", "16",
                           "--json")[1])
    code, out, _ = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--matrix", str(path), "--json")
    mine = json.loads(out)
    assert code == 0 and mine["values"]["lam"] == pytest.approx(named["values"]["lam"], rel=1e-12)
    assert mine["value"] == pytest.approx(named["value"], rel=1e-12)
    code, _, err = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--matrix", str(path), "--topology", "ring")
    assert code == 2 and "drop --topology" in err
    code, _, err = run(capsys, "check", "dfedsam.thm4.1", "--set", *SAM, "--matrix", str(tmp_path / "no.npy"))
    assert code == 2 and "does not exist" in err


def _ring(n):
    W = np.zeros((n, n))
    for i in range(n):
        W[i, i] = W[i, (i + 1) % n] = W[i, (i - 1) % n] = 1 / 3
    return W
