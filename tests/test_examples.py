"""The examples run end to end (at toy sizes; their real sizes are for the reader)."""

import json
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[1] / "examples"


def test_topology_sweep_writes_table_and_figure(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["topology_sweep.py", "--n", "6", "--rounds", "3", "--out", str(tmp_path)])
    runpy.run_path(str(EXAMPLES / "topology_sweep.py"), run_name="__main__")
    rows = json.loads((tmp_path / "topology_sweep.json").read_text())["rows"]
    assert [r["topology"] for r in rows] == ["ring", "ring", "ring", "torus", "exponential", "full"]
    full = rows[-1]
    assert full["lambda"] == 0 and full["final_consensus"] < 1e-10  # one gossip with 11^T/n: exact consensus
    assert rows[0]["bound"] > rows[2]["bound"]  # more gossip steps (Q = 4) lower the bound on the same ring
    assert (tmp_path / "topology_sweep.png").stat().st_size > 1000
    assert "measured / full" in capsys.readouterr().out


def test_rate_in_T_fits_slopes(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["rate_in_T.py", "--n", "6", "--T", "4", "8", "--out", str(tmp_path)])
    runpy.run_path(str(EXAMPLES / "rate_in_T.py"), run_name="__main__")
    res = json.loads((tmp_path / "rate_in_T.json").read_text())
    assert [r["T"] for r in res["rows"]] == [4, 8]
    assert all(r["conditions_hold"] for r in res["rows"])  # c is chosen so that T >= 100 c^2 K at every T
    assert res["rows"][1]["bound"] < res["rows"][0]["bound"] and res["slopes"]["stated"] == -0.5
    assert res["T_leading"] >= 1 and (tmp_path / "rate_in_T.png").stat().st_size > 1000
    # two horizons: the one local slope is the fitted slope
    assert res["local_slopes"]["bound"] == [pytest.approx(res["slopes"]["bound"])]
    assert "slopes from the previous T" in capsys.readouterr().out
