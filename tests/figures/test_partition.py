"""Partitions you can see (issue 26 item 4): the clients' label counts (empirical layer) and their stacked bar chart
(figures), from Python with a run's or a claim's config and from ``dfltheory plot partition``."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from dfltheory import cli  # noqa: E402
from dfltheory.empirical import data as D  # noqa: E402
from dfltheory.figures.partition import plot_label_counts, plot_partition  # noqa: E402


def bar_heights(ax, m: int, classes: int) -> np.ndarray:
    """(m, classes) heights of the stacked bars, in the order they were drawn (class by class)."""
    return np.array([p.get_height() for p in ax.patches]).reshape(classes, m).T


@pytest.mark.parametrize("partition", ["dirichlet", "pathological", "iid"])
def test_label_counts_are_each_clients_labels(partition):
    data = D.load("digits", 7, partition=partition, alpha=0.3, seed=2)
    counts = D.label_counts(data)
    assert counts.shape == (7, 10) and counts.dtype == np.int64
    assert counts.sum(1).tolist() == data.client_sizes.tolist() and counts.sum() == len(data.y_train)
    for i, ix in enumerate(data.client_indices):
        assert counts[i].tolist() == np.bincount(data.y_train[ix].numpy(), minlength=10).tolist()
    if partition == "pathological":
        assert ((counts > 0).sum(1) <= 2).all()


def test_a_regression_problem_has_no_labels_to_count():
    with pytest.raises(ValueError, match="synthetic-quadratic is a regression problem"):
        D.label_counts(D.load("synthetic-quadratic", 3, seed=0))


def test_the_bars_are_the_counts_stacked_with_the_sizes_on_top():
    counts = np.array([[3, 0, 1], [0, 5, 2]])
    ax = plot_label_counts(counts, title="toy")
    assert bar_heights(ax, 2, 3).tolist() == counts.tolist()
    assert [p.get_y() for p in ax.patches[4:6]] == [3, 5]  # class 2 sits on classes 0 and 1
    assert [t.get_text() for t in ax.texts] == ["4", "7"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["class 0", "class 1", "class 2"]
    assert ax.get_title().startswith("toy\nm = 2 clients, n_i from 4 to 7")
    with pytest.raises(ValueError, match="non-empty \\(clients, classes\\) array"):
        plot_label_counts(np.array([1, 2]))


def test_a_claims_data_config_gives_the_partition_its_runs_use():
    from dfltheory.verify.claims import COMMON

    cfg = {**COMMON, "n": 20, "seed": 1, "data_seed": 1}
    ax = plot_partition(cfg)
    data = D.load("digits", 20, partition="dirichlet", alpha=0.3, seed=1)
    assert bar_heights(ax, 20, 10).tolist() == D.label_counts(data).tolist()
    assert "digits: Dirichlet, alpha = 0.3, data seed 1" in ax.get_title()
    assert ax.figure is not None


def test_plot_partition_command_writes_the_figure(tmp_path, capsys):
    out = tmp_path / "figs" / "partition.png"
    argv = ["plot", "partition", "--dataset", "digits", "--clients", "20", "--alpha", "0.3", "--seed", "4"]
    assert cli.main([*argv, "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000 and f"wrote {out}" in capsys.readouterr().out
    assert cli.main([*argv, "--partition", "pathological", "--out", str(tmp_path / "p.svg")]) == 0


@pytest.mark.parametrize("args, message", [
    (["--dataset", "synthetic-quadratic"], "synthetic-quadratic is a regression problem"),
    (["--alpha", "0"], "--alpha must be a finite number > 0"),
    (["--clients", "0"], "--n must be an integer >= 1"),
    (["--partition", "random"], "unknown partition 'random'; valid partitions: dirichlet, pathological, iid"),
    (["--dataset", "mnist", "--data-root", "NOWHERE"], "give --data-root DIR where the files are"),
])
def test_plot_partition_refuses_bad_input_in_one_line(tmp_path, capsys, args, message):
    assert cli.main(["plot", "partition", *args, "--out", str(tmp_path / "f.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dfltheory plot: error: ") and message in err, err


@pytest.mark.parametrize("counts", [[["a", "b"]], [[1.0, float("nan")]], [[1, -1]], None, [[]], [1, 2]])
def test_label_counts_that_are_not_counts_are_refused_by_name(counts):
    """Strings (a TypeError from numpy before), NaN (drawn silently before), negatives, nothing, one dimension."""
    with pytest.raises(ValueError, match="counts must be a non-empty .* array of finite counts >= 0"):
        plot_label_counts(counts)
