"""The ``dfltheory`` command: topology constants, bounds, checks, training and the verification report.

Each pillar contributes its subcommands through a ``register(subparsers)`` function in its ``commands``
module; a subcommand sets ``func`` (called with the parsed arguments, returning the exit code).
"""

from __future__ import annotations

import argparse
import os
import sys

from dfltheory import __version__

PILLARS = ("dfltheory.topology.commands", "dfltheory.bounds.commands", "dfltheory.empirical.commands",
           "dfltheory.figures.commands")


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
    try:
        return int(args.func(args) or 0)
    except (ValueError, KeyError) as exc:  # user errors: one clear line, no traceback
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dfltheory {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
