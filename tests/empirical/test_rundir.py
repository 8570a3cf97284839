"""Every file of a run directory, damaged at random, is refused with a message naming it, or the run resumes (and
reads back) exactly as an undamaged one (issue 24 item 1): :mod:`dfltheory.empirical.rundir`."""

import json
import shutil

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfltheory.empirical import rundir, runner

BASE = {"algo": "dfedadmm", "lam_pen": 1.0, "dataset": "synthetic-logistic", "n": 4, "topology": "ring", "K": 2,
        "lr": 0.1, "batch_size": 8, "seed": 3, "progress": False, "threads": 1, "checkpoint_every": 2}
FILES = ("config.json", "metrics.jsonl", "checkpoint.pt", "summary.json")
VOLATILE = ("wall_seconds", "wall_seconds_this_part")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An uninterrupted run of 4 rounds, and one stopped at round 2 (a checkpoint there) to resume from."""
    root = tmp_path_factory.mktemp("rundir")
    runner.run({**BASE, "rounds": 4, "out": root / "whole"})
    runner.run({**BASE, "rounds": 2, "out": root / "half"})
    return root


def damage(path, kind: str, where: float, byte: int) -> None:
    """Damage ``path`` in one of the ways a disk, a kill or a hand edit does."""
    data = path.read_bytes()
    pos = min(int(where * len(data)), len(data) - 1)
    if kind == "flip":
        path.write_bytes(data[:pos] + bytes([data[pos] ^ (byte or 1)]) + data[pos + 1:])
    elif kind == "truncate":
        path.write_bytes(data[:pos])
    elif kind == "delete":
        path.unlink()
    elif kind == "drop line":
        lines = data.splitlines(keepends=True)
        del lines[min(int(where * len(lines)), len(lines) - 1)]
        path.write_bytes(b"".join(lines))
    elif kind == "append":
        path.write_bytes(data + b'{"round": 99}\n')
    else:  # another JSON value in place of the file
        path.write_text(kind)


KINDS = st.sampled_from(["flip", "truncate", "delete", "drop line", "append", "null", "[]", "", "{}", '"x"'])


def damaged_copy(run, factory, name, kind, where, byte):
    out = factory.mktemp("damaged") / "r"
    shutil.copytree(run, out)
    damage(out / name, kind, where, byte)
    return out


def records(out):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rundir.read_records(out / "metrics.jsonl")]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES), kind=KINDS, where=st.floats(0, 1), byte=st.integers(0, 255))
def test_a_damaged_run_directory_is_refused_or_resumed_exactly(runs, tmp_path_factory, name, kind, where, byte):
    out = damaged_copy(runs / "half", tmp_path_factory, name, kind, where, byte)
    try:
        summary = runner.run({**BASE, "rounds": 4, "out": out}, resume=True)
    except ValueError as err:
        message = str(err)
        assert "Traceback" not in message and "\n" not in message
        assert any(f in message for f in FILES + ("no checkpoint",)), message  # it names the file
        return
    assert summary["last"] == json.loads((runs / "whole" / "summary.json").read_text())["last"]
    assert records(out) == records(runs / "whole")
    assert rundir.complete(out, 4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES), kind=KINDS, where=st.floats(0, 1), byte=st.integers(0, 255))
def test_a_damaged_finished_run_is_refused_or_read_back_exactly(runs, tmp_path_factory, name, kind, where, byte):
    """What reads a finished run (verify's cache, plot, constants) gets its records exactly, or a refusal."""
    out = damaged_copy(runs / "whole", tmp_path_factory, name, kind, where, byte)
    try:
        got = records(out)
    except ValueError as err:
        assert "metrics.jsonl" in str(err) or "summary.json" in str(err)
        assert not rundir.complete(out, 4)
        return
    assert got == records(runs / "whole")


def test_a_cached_run_cut_short_is_not_complete_for_its_horizon(runs, tmp_path):
    """The bound at T = 4 is never compared with a run that stopped at round 2 (verify's cache trains it again)."""
    assert rundir.complete(runs / "whole", 4) and not rundir.complete(runs / "whole", 8)
    assert not rundir.complete(runs / "half", 4) and rundir.complete(runs / "half", 2)
    out = tmp_path / "r"
    shutil.copytree(runs / "whole", out)
    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps({**summary, "rounds": 2}))  # says 2 rounds, its records say 4
    assert not rundir.complete(out, 2) and not rundir.complete(out, 4)


def test_a_flipped_byte_in_a_tensor_is_found():
    """``torch.load`` does not check its archive's CRCs: the digest does."""
    payload = {"x": torch.arange(8, dtype=torch.float64), "t": 3}
    assert rundir.digest(payload) == rundir.digest({"t": 3, "x": torch.arange(8, dtype=torch.float64)})
    changed = {**payload, "x": payload["x"].clone()}
    changed["x"][5] = 5.000001
    assert rundir.digest(changed) != rundir.digest(payload)
    assert rundir.digest({**payload, "x": payload["x"].float()}) != rundir.digest(payload)  # the dtype counts


def test_a_checkpoint_without_its_config_is_refused_by_name(runs, tmp_path_factory):
    """The property test draws this case at random; it is pinned here (it once raised FileNotFoundError)."""
    out = damaged_copy(runs / "half", tmp_path_factory, "config.json", "delete", 0.0, 0)
    with pytest.raises(ValueError, match=r"has a checkpoint but no config\.json; restore it .* or delete"):
        runner.run({**BASE, "rounds": 4, "out": out}, resume=True)
