"""The ``dfltheory`` command: topology constants, bounds, checks, training and the verification report.

Each pillar contributes its subcommands through a ``register(subparsers)`` function in its ``commands``
module; a subcommand sets ``func`` (called with the parsed arguments, returning the exit code). A user error
(ValueError, KeyError, or an OSError such as a missing or unwritable file) prints one line
``dfltheory COMMAND: error: ...`` and exits with 2; :func:`output_dir` and :func:`output_file` turn a bad output
path into such an error before anything is computed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dfltheory import __version__

PILLARS = ("dfltheory.topology.commands", "dfltheory.bounds.commands", "dfltheory.empirical.commands",
           "dfltheory.figures.commands", "dfltheory.figures.verification", "dfltheory.figures.claims",
           "dfltheory.verify.commands", "dfltheory.pep.commands")


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


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="dfltheory",
        description="Put the convergence theory of decentralized federated learning papers to the test.",
    )
    parser.add_argument("--version", action="version", version=f"dfltheory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in PILLARS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from dfltheory.empirical.allocator import keep_freed_memory

    try:
        keep_freed_memory()  # the engine's fresh tensors reuse freed memory instead of faulting pages in again
        return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, KeyError, OSError) as exc:  # user errors: one clear line, no traceback
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dfltheory {args.command}: error: {' '.join(str(msg).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
