"""Output paths checked before anything is computed: :func:`output_dir` and :func:`output_file` turn a bad path
(empty, a file in the way, not writable) into a ValueError that names the option and the fix.

A bottom-layer helper: every pillar (and the command line above them) writes its outputs through it.
"""

from __future__ import annotations

import os
from pathlib import Path


def _make_dir(path: Path, label: str) -> Path:
    blocker = next(p for p in (path, *path.parents) if p.exists())
    if not blocker.is_dir():
        raise ValueError(f"{label}: {blocker} is a file, so no directory can be created under it; choose another path")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"{label}: cannot create the directory {path} ({err.strerror or err}); choose a path in a "
                         "writable directory") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{label}: the directory {path} is not writable; choose a writable place")
    return path


def output_dir(path, option: str = "--out") -> Path:
    """Create directory ``path`` (with its parents) for output; ValueError naming ``option`` if it cannot be
    written: a file of that name exists, a file sits on the way, or the place is not writable. An empty or blank
    name is refused (``Path('')`` is the current directory: a run would spread its files there)."""
    if not str(path).strip():
        raise ValueError(f"{option} is empty; give a directory name (e.g. {option} runs/one)")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path}: a file of that name exists; give a directory (it is created if missing)")
    return _make_dir(path, f"{option} {path}")


def output_file(path, option: str = "--out") -> Path:
    """Make ``path`` writable as an output file: missing parent directories are created; a directory of that
    name, a file on the way or an unwritable place is a ValueError naming ``option``."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option} {path}: is a directory; give a file name (e.g. {path / 'figure.png'})")
    _make_dir(path.parent, f"{option} {path}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{option} {path}: the file exists and is not writable; choose another name")
    return path
