"""A run directory's files, written so that a damaged one is found, and read back validated (issue 24 item 1).

A run directory (``dfltheory train --out DIR``) holds four files:

``config.json``
    a JSON object: everything needed to rebuild the run;
``metrics.jsonl``
    one JSON object per measured round, ``round`` an integer, strictly increasing from 0;
``checkpoint.pt``
    the engine's state with what wrote it (:meth:`dfltheory.empirical.engine.Engine.identity`), the length and
    SHA-256 of ``metrics.jsonl`` at that round, and a SHA-256 of all of it (:func:`digest`): ``torch.load`` does
    not check the CRCs of its zip archive, so a changed byte in a tensor would otherwise load as a wrong number;
``summary.json``
    a JSON object (status, rounds, last record, and the length and SHA-256 of ``metrics.jsonl``), written when a
    part of the run ends and removed when a resumed run starts (it then describes a file that is being rewritten).

TensorBoard event files (``events.out.tfevents.*``, :mod:`dfltheory.empirical.tensorboard`): extra, not validated.
``.lock`` (:func:`lock`): held by the process that writes the directory, with its pid, so that a second writer is
refused rather than interleaving its rounds with the first's (a run cache's lock, ``.<cache>.lock``, sits beside it).

Every file is written whole or not at all (a temporary file, then ``os.replace``): a full disk or a kill leaves the
previous version, so the directory stays resumable; :func:`disk_full` turns the OSError into one line that says so.

Every reader here refuses what it cannot trust with a ValueError naming the file, where it breaks and the fix:
a resumed run continues only from a checkpoint whose digest, identity and metrics prefix match; a finished run is
read only if its metrics match its summary (:func:`read_records`, :func:`complete`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
from pathlib import Path

import torch

#: keys of a checkpoint besides the engine's state: its digest and the metrics mark
DIGEST, METRICS = "digest", "metrics"
STATUSES = ("completed", "diverged")


LOCK = ".lock"
_HELD: dict[Path, list] = {}  # directory -> [open lock file, depth]: this process's locks (re-entered, not re-taken)


@contextlib.contextmanager
def lock(out, what: str = "--out", file=None):
    """Hold ``out/.lock`` (or ``file``, a lock kept beside a directory whose entries must all be runs: a run cache)
    with ``fcntl.flock`` and this process's pid in it while the block runs: a second process that writes ``out`` is
    refused with a ValueError naming the holder's pid. The kernel releases the lock when its process ends, however it
    ends, so a lock file left by a dead process is taken over. Re-entrant in one process."""
    out = Path(out).resolve()
    path = Path(file).resolve() if file is not None else out / LOCK
    held = _HELD.get(path)
    if held is not None:
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    fh = open(path, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        pid = fh.read().strip() or "?"
        fh.close()
        raise ValueError(f"{what} {out} is being written by another process (pid {pid}, a train, sweep, verify or "
                         f"claims run); wait for it to end (or stop it: kill {pid}), or choose another {what}") from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    _HELD[path] = [fh, 1]
    try:
        yield
    finally:
        del _HELD[path]
        fh.close()  # releases the lock; the file stays (removing it would race a process taking it)


#: what ``torch.save`` raises (a RuntimeError without an errno) where its zip writer cannot write: a full disk
TORCH_WRITE_FAILED = ("file write failed", "unexpected pos")


def disk_full(path, err: BaseException, fix: str) -> ValueError | None:
    """The one-line error for a write to ``path`` (the error's own file name where it has one) that failed for lack
    of space (OSError ENOSPC or EDQUOT; :func:`atomic_save` gives ``torch.save``'s failed write as one), naming
    ``fix``; None for another error."""
    if not isinstance(err, OSError) or err.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    return ValueError(f"cannot write {err.filename or path}: {err.strerror or 'no space left on the device'}; the "
                      f"files there are whole (each is written to a temporary file, then renamed): free some space, "
                      f"then {fix}")


def _replace(tmp: Path, path: Path, write) -> None:
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_save(obj, path: Path) -> None:
    """``torch.save`` to a temporary file, then renamed: a kill or a full disk never leaves a half-written ``path``."""
    path = Path(path)

    def write(tmp: Path) -> None:
        try:
            torch.save(obj, tmp)
        except RuntimeError as err:  # its zip writer hides the errno of a failed write
            if not any(m in str(err) for m in TORCH_WRITE_FAILED):
                raise
            raise OSError(errno.ENOSPC, "no space left on the device (torch.save: file write failed)",
                          str(path)) from None

    _replace(path.with_suffix(path.suffix + ".tmp"), path, write)


def atomic_write(data: str | bytes, path: Path) -> None:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``: whole or the previous version."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    _replace(path.with_suffix(path.suffix + ".tmp"), path, lambda tmp: tmp.write_bytes(raw))


def _feed(h, obj) -> None:
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous().reshape(-1)
        h.update(f"T{t.dtype}{tuple(obj.shape)};".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    elif isinstance(obj, dict):
        h.update(f"D{len(obj)};".encode())
        for key in sorted(obj, key=repr):
            _feed(h, key)
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(f"L{len(obj)};".encode())
        for item in obj:
            _feed(h, item)
    elif obj is None or isinstance(obj, (bool, int, float, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    else:
        raise TypeError(f"a checkpoint holds tensors, numbers, strings and their dicts and lists, not {type(obj)}")


def digest(obj) -> str:
    """SHA-256 of a checkpoint's contents (tensors by dtype, shape and bytes; dicts by sorted key)."""
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def save_checkpoint(payload: dict, path: Path) -> None:
    """Write ``payload`` with its :func:`digest`, atomically."""
    atomic_save({**payload, DIGEST: digest(payload)}, path)


def load_checkpoint(path: Path, label: str, fix: str) -> dict:
    """The payload of a checkpoint written by :func:`save_checkpoint`, read on the CPU; a file that cannot be read,
    or whose contents do not match their digest, is a ValueError ``'{label}: the checkpoint ... is damaged'``."""
    def damaged(detail: str) -> ValueError:
        return ValueError(f"{label}: the checkpoint {path} is damaged ({detail}); {fix}")

    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001  empty or cut short: EOFError, RuntimeError (zip), UnpicklingError, ...
        raise damaged(" ".join(str(err).split()).split(". ")[0][:100] or type(err).__name__) from None
    if not isinstance(saved, dict) or not isinstance(saved.get(DIGEST), str):
        raise damaged("not a dfltheory checkpoint: no digest of its contents")
    payload = {k: v for k, v in saved.items() if k != DIGEST}
    try:
        same = digest(payload) == saved[DIGEST]
    except TypeError as err:
        raise damaged(str(err)) from None
    if not same:
        raise damaged("its contents do not match their SHA-256 digest")
    return payload


def read_json(path, fix: str) -> dict:
    """The JSON object in ``path``; a damaged file, or one that holds no JSON object, is a ValueError naming it,
    where it breaks, and ``fix``."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is damaged: not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
                         f"{fix}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is damaged: not text (UTF-8); {fix}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is damaged: it holds a JSON {type(data).__name__}, not an object; {fix}")
    return data


class MetricsLog:
    """``metrics.jsonl`` written one record per line, with the SHA-256 of what was written so far (:meth:`mark`),
    so that a checkpoint and the summary record exactly which bytes they describe."""

    def __init__(self, path: Path, written: bytes = b""):
        self.path, self.hash, self.size = Path(path), hashlib.sha256(written), len(written)

    @classmethod
    def resume(cls, path: Path, mark: dict, label: str, fix: str) -> MetricsLog:
        """The log as it was at a checkpoint's ``mark``; the lines written after it (rounds that are redone, or a
        line cut by a kill) are dropped. Lines missing or changed before it are a ValueError naming the file."""
        path = Path(path)
        data = path.read_bytes() if path.exists() else b""
        size = mark.get("bytes") if isinstance(mark, dict) else None
        if not isinstance(size, int) or len(data) < size or hashlib.sha256(data[:size]).hexdigest() != mark["sha256"]:
            lines = data[:size].count(b"\n") if isinstance(size, int) else "?"
            raise ValueError(f"{label}: {path} does not hold the {lines} metric lines the checkpoint was written after "
                             f"(lines missing or changed); {fix}")
        if len(data) > size:
            atomic_write(data[:size], path)
        return cls(path, data[:size])

    def append(self, record: dict) -> None:
        """Append one record; where the write fails (a full disk) the file is cut back to the records before it."""
        line = (json.dumps(record) + "\n").encode()
        try:
            with self.path.open("ab") as f:
                f.write(line)
                f.flush()
        except OSError:
            with contextlib.suppress(OSError):
                os.truncate(self.path, self.size)
            raise
        self.hash.update(line)
        self.size += len(line)

    def mark(self) -> dict:
        return {"bytes": self.size, "sha256": self.hash.hexdigest()}


def read_records(path) -> list[dict]:
    """The records of a run's ``metrics.jsonl``. A missing file, a line that is not a JSON object with an integer
    ``round``, rounds that do not increase from 0, or a file that differs from what its run's ``summary.json``
    recorded is a ValueError naming the file, the line and the fix."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist: give a run directory written by `dfltheory train --out`")
    fix = ("resume the run (`dfltheory train ... --resume` drops lines after its checkpoint) or train it again"
           if path.name == "metrics.jsonl" else "delete the line")
    data = path.read_bytes()
    try:
        lines = data.decode().splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{path} is damaged: not text (UTF-8); {fix}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is damaged at line {number}: not valid JSON ({err.msg}: column {err.colno}); "
                             f"{fix}") from None
        rnd = rec.get("round") if isinstance(rec, dict) else None
        if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 0:
            raise ValueError(f"{path} is damaged at line {number}: not a metrics record (a JSON object with an "
                             f"integer 'round' >= 0); {fix}")
        if rnd <= (records[-1]["round"] if records else -1) or (not records and rnd != 0):
            after = f"after round {records[-1]['round']}" if records else "as the first record (not 0)"
            raise ValueError(f"{path} is damaged at line {number}: round {rnd} {after}: the rounds must increase "
                             f"from 0; {fix}")
        records.append(rec)
    if not records:
        raise ValueError(f"{path} holds no records: the run measured nothing yet; train it first")
    summary = path.parent / "summary.json"
    if path.name == "metrics.jsonl" and summary.is_file():
        mark = read_json(summary, "train the run again").get(METRICS)
        if mark is not None and mark != {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}:
            raise ValueError(f"{path} is damaged: it is not the file its {summary.name} was written after (lines "
                             f"missing, added or changed); {fix}")
    return records


def read_summary(run) -> dict:
    """``summary.json`` of a run directory, checked: a status of :data:`STATUSES` and an integer ``rounds``."""
    path = Path(run) / "summary.json"
    fix = "train the run again (or resume it with --resume)"
    summary = read_json(path, fix)
    rounds = summary.get("rounds")
    if summary.get("status") not in STATUSES or isinstance(rounds, bool) or not isinstance(rounds, int):
        raise ValueError(f"{path} is damaged: not a run summary (status {' or '.join(STATUSES)}, integer rounds); "
                         f"{fix}")
    return summary


def finished(run, rounds: int) -> tuple[list[dict], dict] | None:
    """(records, summary) of the run directory ``run`` where it holds a finished run of ``rounds`` rounds whose files
    all read back: its summary says completed at ``rounds`` (or diverged before), and its metrics match the summary
    and end there; else None."""
    try:
        summary = read_summary(run)
        records = read_records(Path(run) / "metrics.jsonl")
    except (ValueError, OSError):
        return None
    last = records[-1]["round"]
    ok = (summary["rounds"] == rounds == last if summary["status"] == "completed" else
          last == summary["rounds"] <= rounds)
    return (records, summary) if ok else None


def complete(run, rounds: int) -> bool:
    """Whether :func:`finished` finds a finished run of ``rounds`` rounds in ``run``."""
    return finished(run, rounds) is not None
