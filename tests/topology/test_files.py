"""A user's own matrix: load_matrix reads .npy, .csv and .mtx; `topology --matrix FILE` prints the same constants."""

import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dfltheory.cli import main
from dfltheory.topology import analyze, analyze_matrix, build, load_matrix


def _write(path, W):
    if path.suffix == ".npy":
        np.save(path, W)
    elif path.suffix == ".csv":
        np.savetxt(path, W, delimiter=",")
    else:
        scipy.io.mmwrite(path, sp.coo_matrix(W))
    return path


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".mtx"])
def test_three_formats_read_back_the_same_matrix(tmp_path, suffix):
    W = build("watts-strogatz", 12, k=4, p=0.3, seed=1).matrix()
    got = load_matrix(_write(tmp_path / f"W{suffix}", W))
    assert sp.issparse(got) == (suffix == ".mtx")
    np.testing.assert_array_equal(got.toarray() if sp.issparse(got) else got, W)


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".mtx"])
def test_topology_matrix_gives_the_named_topologys_constants(tmp_path, suffix, capsys):
    path = _write(tmp_path / f"W{suffix}", build("ring", 10).matrix())
    assert main(["topology", "--matrix", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = analyze("ring", 10)
    assert got["topology"] == "matrix" and got["weights"] == "given" and got["params"] == {"file": str(path)}
    for key in ("lambda", "psi", "Phi", "sigma_2", "definition1", "D", "B", "Delta", "q_measured", "delta"):
        assert got[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-12), key  # Phi ~ 231: relative


def test_a_push_sum_matrix_gets_push_sum_constants_and_the_definition1_message(tmp_path, capsys):
    P = build("exponential-directed", 8, weights="push-sum").matrix()
    path = _write(tmp_path / "P.npy", P)
    assert main(["topology", "--matrix", str(path)]) == 0
    out = capsys.readouterr().out
    assert "note[psi]: psi (seed 004 Definition 1) is defined only for W satisfying Definition 1" in out
    assert "note[definition1]: the matrix fails 'symmetry' by 0.25" in out
    r = analyze_matrix(P)
    ref = analyze("exponential-directed", 8, weights="push-sum")
    assert r["directed"] and r["psi"] is None
    assert (r["C"], r["q"], r["q_measured"]) == pytest.approx((ref["C"], ref["q"], ref["q_measured"]))


@pytest.mark.parametrize("name, content, message", [
    ("missing.npy", None, "does not exist"),
    ("empty.csv", "", "is empty"),
    ("W.txt", "1,0\n0,1\n", "unknown type '.txt'; save the matrix as .npy"),
    ("rect.csv", "0.5,0.5,0\n0.5,0.5,0\n", r"must be square \(n x n\), got shape \(2, 3\)"),
    ("text.csv", "a,b\nc,d\n", "cannot be read as a .csv matrix .*could not convert string 'a'.*comma-separated"),
    ("junk.npy", "not numpy", "no .npy header"),
    ("junk.mtx", "%%MatrixMarket nonsense\n", "cannot be read as a .mtx matrix"),
    ("rows.csv", "0.5,0.6\n0.6,0.4\n", "neither row- nor column-stochastic"),
    ("nan.csv", "nan,1\n1,0\n", "NaN or infinite"),
    ("neg.csv", "1.5,-0.5\n-0.5,1.5\n", "negative entries"),
])
def test_bad_files_are_clear_errors(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=f"matrix file '{path}'.*{message}"):
        load_matrix(path)
    assert main(["topology", "--matrix", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dfltheory topology: error: matrix file")


def test_strings_in_a_npy_file_are_refused(tmp_path):
    path = tmp_path / "s.npy"
    np.save(path, np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="holds <U1 entries, not real numbers"):
        load_matrix(path)


def test_matrix_excludes_named_topology_options(tmp_path, capsys):
    path = _write(tmp_path / "W.npy", np.full((3, 3), 1 / 3))
    assert main(["topology", "ring", "--matrix", str(path), "--n", "5"]) == 2
    assert "drop a topology NAME, --n" in capsys.readouterr().err
    assert main(["topology"]) == 2
    assert "give a topology NAME" in capsys.readouterr().err
