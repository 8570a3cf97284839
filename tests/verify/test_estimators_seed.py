"""``dfltheory constants RUN --seed`` beyond what a torch generator takes: one line naming --seed and its range
(it was "Overflow when unpacking long long" from torch)."""

import pytest

from dfltheory.cli import main
from dfltheory.empirical.runner import SEED_MAX
from dfltheory.verify import estimators as E


@pytest.mark.parametrize("seed", [SEED_MAX + 1, 10 ** 21, -1])
def test_a_seed_out_of_range_is_refused_before_the_run_is_read(tmp_path, seed):
    with pytest.raises(ValueError, match=rf"--seed must be an integer in \[0, {SEED_MAX}\].*got {seed}"):
        E.estimate_run(tmp_path / "no-such-run", seed=seed)


def test_the_largest_seed_passes_the_check(tmp_path):
    """SEED_MAX itself is a seed: the error is then about the missing run, not the seed."""
    with pytest.raises(Exception) as err:
        E.estimate_run(tmp_path / "no-such-run", seed=SEED_MAX)
    assert "--seed" not in str(err.value)


def test_the_command_says_one_line_and_exits_2(tmp_path, capsys):
    assert main(["constants", str(tmp_path / "run"), "--seed", "1000000000000000000000"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--seed must be an integer in [0, 4294967295]" in err
    assert "Overflow" not in err
