"""The ``dfltheory`` command: topology constants, bounds, checks, training and the verification report.

Each pillar contributes its subcommands through a ``register(subparsers)`` function in its ``commands``
module; a subcommand sets ``func`` (called with the parsed arguments, returning the exit code). A user error
(ValueError, KeyError, or an OSError such as a missing or unwritable file) prints one line
``dfltheory COMMAND: error: ...`` and exits with 2; :mod:`dfltheory.paths` turns a bad output path into such an
error before anything is computed.
"""

from __future__ import annotations

import argparse
import os
import sys

from dfltheory import __version__

PILLARS = ("dfltheory.topology.commands", "dfltheory.bounds.commands", "dfltheory.empirical.commands",
           "dfltheory.figures.commands", "dfltheory.figures.verification", "dfltheory.figures.claims",
           "dfltheory.verify.commands", "dfltheory.pep.commands", "dfltheory.empirical.data_commands")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="dfltheory",
        description="Put the convergence theory of decentralized federated learning papers to the test.",
    )
    parser.add_argument("--version", action="version", version=f"dfltheory {__version__}")
    parser.add_argument("--plugin", action="append", metavar="FILE_OR_MODULE",
                        help="load a user's paper (theorems, algorithms, plans; docs/extending.md) before the "
                             "command; may follow the command and repeat")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in PILLARS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from dfltheory import plugins

    try:  # before the parser: a plugin's ids are valid choices of every command
        argv, specs = plugins.split_argv(sys.argv[1:] if argv is None else list(argv))
        plugins.load_entry_points()
        for spec in specs:
            plugins.load(spec)
    except ValueError as exc:
        print(f"dfltheory: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from dfltheory.empirical.allocator import keep_freed_memory

    try:
        keep_freed_memory()  # the engine's fresh tensors reuse freed memory instead of faulting pages in again
        return int(args.func(args) or 0)
    except KeyboardInterrupt:  # Ctrl-C: stop quietly with the shell's code for SIGINT (a run resumes: --resume)
        print(f"dfltheory {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, KeyError, OSError) as exc:  # user errors: one clear line, no traceback
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dfltheory {args.command}: error: {' '.join(str(msg).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
