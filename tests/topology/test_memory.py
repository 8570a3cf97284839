"""An analysis that cannot fit in memory is refused before anything is allocated, with the need and the largest n."""

import tracemalloc

import pytest

from dfltheory import cli
from dfltheory.topology import REGISTRY, analyze, build, memory


def test_a_billion_client_ring_is_refused_up_front(monkeypatch):
    """`topology ring --n 1000000000` allocated ~23 GB (first row and its FFT) and was killed."""
    monkeypatch.setattr(memory, "available_bytes", lambda: 24e9)
    with pytest.raises(ValueError, match=r"n = 1,000,000,000 needs about 160 GB for ring \(mostly the circulant "
                                         r"graph.*\), more than the 18 GB it may use \(75% of the 24 GB of memory "
                                         r"available\); the largest n that fits is about 112,000,000: lower n"):
        analyze("ring", 10 ** 9)


def test_the_refusal_comes_before_any_allocation(monkeypatch, capsys):
    monkeypatch.setattr(memory, "available_bytes", lambda: 5e8)  # 375 MB may be used; n = 10^7 needs 1.6 GB
    tracemalloc.start()
    try:
        assert cli.main(["topology", "ring", "--n", "10000000"]) == 2
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dfltheory topology: error: n = 10,000,000 needs about")


def test_the_limit_is_a_fraction_of_the_free_memory(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 1e9)  # 750 MB may be used
    with pytest.raises(ValueError, match=r"the largest n that fits is about (\d|,)+: lower n") as exc:
        build("exponential", 10 ** 6)
    largest = int(str(exc.value).rsplit("about ", 1)[1].split(":")[0].replace(",", ""))
    assert sum(memory.topology_bytes("exponential", largest, analysis=False).values()) <= 0.75e9
    assert analyze("exponential", largest // 100)["lambda"] < 1  # smaller sizes still run


def test_a_long_horizon_of_dense_rounds_names_the_horizon(monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda: 16e9)
    with pytest.raises(ValueError, match="push-sum constants over 1,000 dense round.*lower n or the horizon"):
        analyze("random", 2000, weights="push-sum", horizon=1000)


def test_dense_random_draws_count_n_squared():
    """random_k draws an n x (n-1) matrix: a k-out graph on 10^5 clients needs > 100 GB, not a few MB."""
    assert sum(memory.topology_bytes("k-out", 10 ** 5, analysis=False).values()) > 100e9


@pytest.mark.parametrize("name, n, params", [("ring", 200_000, {}), ("exponential", 50_000, {}),
                                             ("code-grid", 100_000, {}), ("watts-strogatz", 5_000, {}),
                                             ("erdos-renyi", 3_000, {}), ("random", 300, {"k": 5}),
                                             ("code-ws", 600, {}), ("torus", 3_000, {})])
def test_the_estimate_bounds_the_measured_peak(name, n, params):
    tracemalloc.start()
    try:
        analyze(name, n, weights="default", horizon=10, **params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rule = REGISTRY[name].default_weights
    assert peak <= sum(memory.topology_bytes(name, n, params, horizon=10, weights=rule).values())


def test_available_bytes_reads_the_machine():
    assert 0 < memory.available_bytes()
