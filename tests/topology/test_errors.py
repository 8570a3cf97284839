import numpy as np
import pytest

from dfltheory.topology import analyze, build, lam, validate
from dfltheory.topology.pushsum import check_sequence


@pytest.mark.parametrize("n", [1, 0, -3, 2.5, True, None, float("nan")])
def test_bad_n(n):
    with pytest.raises(ValueError, match="n must be"):
        build("ring", n)


def test_k_larger_than_n_minus_1():
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 9\] \(the neighbours per client"):
        build("random", 10, weights="push-sum", k=10)
    with pytest.raises(ValueError, match="k must be"):
        build("watts-strogatz", 6, k=6)


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown topology 'nope'"):
        build("nope", 10)
    with pytest.raises(ValueError, match="unknown weight rule 'best'"):
        build("ring", 10, weights="best")


def test_symmetric_rule_on_a_directed_graph_is_refused():
    with pytest.raises(ValueError, match="needs an undirected"):
        build("k-out", 10, weights="metropolis", k=2)
    with pytest.raises(ValueError, match="needs an undirected"):
        build("code-exp", 100, weights="metropolis")


@pytest.mark.parametrize("W, msg", [
    (np.ones((2, 3)) / 3, "square"),
    (np.array([[0.5, np.nan], [0.5, 0.5]]), "NaN"),
    (np.array([[1.5, -0.5], [-0.5, 1.5]]), "negative"),
    (np.ones((1, 1)), "n >= 2"),
])
def test_bad_matrices(W, msg):
    with pytest.raises(ValueError, match=msg):
        lam(W)
    with pytest.raises(ValueError, match=msg):
        validate(W)


def test_disconnected_graph_gives_lambda_one_and_infinite_phi():
    r = analyze("erdos-renyi", 30, p=0.0)  # no edges at all
    assert r["lambda"] == 1.0 and r["spectral_gap"] == 0.0
    assert r["Phi"] == float("inf") and r["phi_E2"] == float("inf")
    assert r["psi"] is None and "spectral_gap" in r["notes"]
    assert r["B"] == float("inf") and r["C"] == float("inf") and r["vacuous"]


def test_bad_push_sum_sequences():
    with pytest.raises(ValueError, match="empty"):
        check_sequence([])
    with pytest.raises(ValueError, match="column-stochastic"):
        check_sequence([np.array([[0.9, 0.5], [0.5, 0.5]])])
    with pytest.raises(ValueError, match="expected an 2 x 2"):
        check_sequence([np.eye(2), np.eye(3)])


def test_bad_Q_and_horizon():
    with pytest.raises(ValueError, match="Q"):
        analyze("ring", 10, Q=0)
    with pytest.raises(ValueError, match="horizon"):
        analyze("ring", 10, horizon=0)


def test_bad_parameter_name():
    with pytest.raises(ValueError, match="bad parameter"):
        build("ring", 10, k=3)


# ------------------------------------------------------------------------- issue 24 items 2-4: every bad number is
# refused by name before any work, and sizes are checked before anything is allocated
import inspect  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import scipy.sparse as sp  # noqa: E402

from dfltheory import cli  # noqa: E402
from dfltheory.topology import (REGISTRY, analyze_matrix, load_matrix, memory, mixing_matrix, phi,  # noqa: E402
                                phi_e2, spectral)
from dfltheory.topology.checks import ARGUMENTS, DEFAULT_K  # noqa: E402

NAN, INF = float("nan"), float("inf")
cli.build_parser()  # imports every pillar once: the timings below measure the refusal alone
PYTHON_ONLY = ("--topology-params", "sparse_matrix", "circulant_row", "check=False")  # not on this command line


def one_line_error(capsys, argv: list[str], command: str = "topology") -> str:
    """Run the command line: exit 2 within a second, one line `dfltheory COMMAND: error: ...`, no traceback, and no
    option or Python name that this command line does not have."""
    start = time.perf_counter()
    assert cli.main(argv) == 2
    assert time.perf_counter() - start < 1.0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"dfltheory {command}: error: "), err
    assert "Traceback" not in err and not any(name in err for name in PYTHON_ONLY), err
    return err


@pytest.mark.parametrize("argv, message", [
    (["--n", "1"], "--n must be an integer >= 2 (the number of clients), got 1"),
    (["--n", "-5"], "--n must be an integer >= 2"),
    (["--seed", "-1"], "--seed must be an integer >= 0 (the seed of random topologies), got -1"),  # was: numpy's
    (["--Q", "0"], "--Q must be an integer >= 1 (gossip steps per round), got 0"),  # "expected non-negative integer"
    (["--horizon", "0"], "--horizon must be an integer >= 1"),
    (["--d", "nan"], "--d must be a finite number > 0 (the model dimension in the SGP bound on C), got nan"),  # C inf
    (["--d", "inf"], "--d must be a finite number > 0"),
    (["--d", "0"], "--d must be a finite number > 0"),  # was: "math domain error"
    (["--d", "-1"], "--d must be a finite number > 0"),
    (["--K-u", "0"], "--K-u must be an integer >= 1"),  # was: accepted (E = 0)
    (["--K-u", "-1"], "--K-u must be an integer >= 1"),
])
def test_every_option_of_topology_refuses_a_meaningless_number(capsys, argv, message):
    assert message in one_line_error(capsys, ["topology", "random:k=3", "--n", "10", *argv])


@pytest.mark.parametrize("spec, message", [
    ("random:k=20", "k must be an integer in [1, 9] (the neighbours per client, at most n - 1), got 20"),
    ("random:k=2.5", "k must be an integer in [1, 9]"),
    ("random:k=nan", "k must be an integer in [1, 9]"),
    ("k-out:k=0", "k must be an integer in [1, 9]"),
    ("random:k=3,direction=sideways", "direction must be 'out', 'in', 'undirected' or 'regular'"),
    ("erdos-renyi:p=1e9", "p must be a finite number in [0, 1] (an edge probability), got 1000000000.0"),  # was:
    ("erdos-renyi:p=nan", "p must be a finite number in [0, 1]"),                        # "lower the horizon"
    ("watts-strogatz:k=4,p=inf", "p must be a finite number in [0, 1]"),
    ("code-grid:stride=0", "stride must be an integer >= 1"),  # was: accepted (a ring)
    ("code-grid:stride=nan", "stride must be an integer >= 1"),  # was: "negative axis 0 index"
    ("code-grid:stride=2.5", "stride must be an integer >= 1"),  # was: accepted
    ("grid:rows=nan", "rows must be an integer in [1, 10]"),
    ("grid:rows=3", "rows must divide n=10, got rows=3"),
    ("neighbour-selection:losses=3", "losses must be a sequence of 10 finite numbers"),
    ("ring:=3", "bad parameter '=3'"),
    ("ring:k=3", "bad parameter k for topology 'ring'"),
])
def test_every_topology_parameter_is_checked_before_any_memory_estimate(capsys, spec, message):
    assert message in one_line_error(capsys, ["topology", spec, "--n", "10"])


def test_a_bad_parameter_of_a_huge_topology_is_reported_as_itself_not_as_memory(capsys):
    """k > n - 1 read "needs about ... GB ...; lower the horizon" (a command with no horizon in `check`)."""
    for spec in ("random:k=0", "erdos-renyi:p=2", "code-grid:stride=-1"):
        err = one_line_error(capsys, ["topology", spec, "--n", str(10 ** 9)])
        assert "GB" not in err and "horizon" not in err


@pytest.mark.parametrize("name", sorted(DEFAULT_K))
def test_the_default_k_works_for_every_n(name):
    """`topology random --n 10` failed with its default k = 10 > n - 1; the default is now min(k, n - 1)."""
    for n in (2, 3, 10, 11):
        assert build(name, n, weights=REGISTRY[name].default_weights).graph(0).number_of_nodes() == n


@pytest.mark.parametrize("key", [k for k, p in inspect.signature(analyze).parameters.items()
                                 if k in ARGUMENTS or isinstance(p.default, (int, float))])
@pytest.mark.parametrize("bad", [NAN, INF, -1, 2.5, "3", True])
def test_every_numeric_argument_of_analyze_refuses_a_meaningless_value(key, bad):
    """A numeric argument added to analyze() without a range in checks.ARGUMENTS fails here (d = nan gave C = inf);
    build() and analyze_matrix() check the ones they take alike."""
    assert key in ARGUMENTS
    if bad == 2.5 and not ARGUMENTS[key].get("integer"):
        return  # a real number, e.g. d = 2.5
    with pytest.raises(ValueError, match=f"^{key} must be "):
        analyze(**{"name": "ring", "n": 10, key: bad})
    with pytest.raises(ValueError, match=f"^{key} must be "):
        if key in inspect.signature(analyze_matrix).parameters:
            analyze_matrix(np.full((3, 3), 1 / 3), **{key: bad})
        else:
            build(**{"name": "ring", "n": 10, key: bad})


@pytest.mark.parametrize("call, message", [
    (lambda: spectral.lambda_q(1.5, 2), r"lambda must be a finite number in \[0, 1\]"),  # was: 2.25
    (lambda: phi(1.5, 10), r"lambda must be a finite number in \[0, 1\]"),  # was: inf
    (lambda: phi_e2(NAN), r"lambda must be a finite number in \[0, 1\]"),
    (lambda: phi(0.5, NAN), "m must be an integer >= 1"),  # was: 6.0
    (lambda: phi(0.5, 2.5), "m must be an integer >= 1"),
    (lambda: spectral.circulant_spectrum([2.0, 0.0, 0.0]), "sum to 1, got shape"),  # was: lambda = 2
    (lambda: spectral.spectrum("abc"), "must be an n x n array of real numbers, got a str"),
    (lambda: spectral.spectrum(np.eye(2) * (1 + 0j)), "of real numbers, got a ndarray of complex128"),
    (lambda: mixing_matrix(np.ones((2, 3)), "metropolis"), r"graph adjacency must be square"),  # AttributeError
    (lambda: mixing_matrix(np.array([[0, NAN], [1, 0]]), "metropolis"), "NaN or infinite"),  # was: accepted
    (lambda: validate(np.eye(2), atol=NAN), "atol must be a finite number >= 0"),
    (lambda: build("neighbour-selection", 4, weights="push-sum", losses=[0, 1, NAN, 2]), "1 NaN or infinite"),
    (lambda: build("ring", 30000).matrix(), r"too large for a dense mixing matrix \(7.2 GB; n <= 20,000\); lower n"),
])
def test_the_python_api_validates_like_the_command_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_non_stochastic_matrix_has_no_lambda():
    with pytest.raises(ValueError, match="neither row- nor column-stochastic"):
        spectral.spectrum(sp.csr_array(2 * np.eye(3)))


# ---------------------------------------------------------------- declared sizes: refused before they are allocated
@pytest.fixture
def eight_gb(monkeypatch):
    """A machine with 8 GB free (6 GB may be used), so that the refusals do not depend on the test machine."""
    monkeypatch.setattr(memory, "available_bytes", lambda: 8e9)


def refused_before_allocation(capsys, argv: list[str]) -> str:
    tracemalloc.start()
    try:
        err = one_line_error(capsys, argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6, peak
    return err


def _matrix_market(path, header: str) -> str:
    path.write_text(f"%%MatrixMarket matrix {header}\n1 1 1.0\n2 2 1.0\n")
    return str(path)


@pytest.mark.parametrize("header, need", [("coordinate real general\n1000000000 1000000000 2", "40 GB"),
                                          ("array real general\n100000 100000", "160 GB")])
def test_a_matrix_market_header_declaring_a_huge_n_is_refused_before_reading(capsys, tmp_path, eight_gb, header,
                                                                              need):
    """n = 10^9 with two entries allocated 8 GB (the CSR row pointers) before any check, then died."""
    path = _matrix_market(tmp_path / "big.mtx", header)
    err = refused_before_allocation(capsys, ["topology", "--matrix", path])
    assert f"matrix file {path!r}: n = " in err and f"needs about {need} for a matrix (mostly reading the matrix " \
        "file" in err and err.endswith("; analyse a smaller matrix")
    with pytest.raises(ValueError, match="needs about"):
        load_matrix(path)


def test_a_npy_header_declaring_more_than_the_file_holds_is_not_read(capsys, tmp_path):
    path = tmp_path / "big.npy"
    with open(path, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 5, 10 ** 5)})
        fh.write(np.ones(4).tobytes())
    assert "cannot be read as a .npy matrix" in refused_before_allocation(capsys, ["topology", "--matrix", str(path)])


@pytest.mark.parametrize("spec", ["ring", "k-out:k=3", "random:k=3", "one-peer-exponential"])
def test_a_huge_horizon_is_refused_before_allocation(capsys, eight_gb, spec):
    """`topology ring --n 10 --horizon 1e9` allocated 8 GB for the measured kernel before any check."""
    err = refused_before_allocation(capsys, ["topology", spec, "--n", "10", "--horizon", "1e9"])
    assert "n = 10 needs about" in err and "over 1,000,000,000" in err
    assert re.search(r"; the longest horizon that fits at n = 10 is about [\d,]+: lower the horizon$", err), err


def test_a_huge_n_is_refused_before_allocation(capsys, eight_gb):
    for spec in ("ring", "full", "random:k=3,direction=undirected", "erdos-renyi", "star"):
        assert "the largest n that fits is about" in refused_before_allocation(
            capsys, ["topology", spec, "--n", "1e12"])


def test_every_estimate_is_finite_and_positive_for_every_topology():
    for name in REGISTRY:
        need = sum(memory.topology_bytes(name, 10 ** 9, horizon=10 ** 9).values())
        assert math.isfinite(need) and need > 1e9
