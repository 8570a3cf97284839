"""The ``dfltheory`` command: topology constants, bounds, checks, training and the verification report.

Each pillar contributes its subcommands through a ``register(subparsers)`` function in its ``commands``
module; a subcommand sets ``func`` (called with the parsed arguments, returning the exit code). A user error
(ValueError, KeyError, or an OSError such as a missing or unwritable file) prints one line
``dfltheory COMMAND: error: ...`` and exits with 2; :mod:`dfltheory.paths` turns a bad output path into such an
error before anything is computed.

The command line starts at once: :data:`COMMANDS` lists every command with the module that registers it and its
one-line help, so that ``dfltheory --help`` (and ``dfltheory`` alone) prints the command list without importing any
pillar, and a command imports only the module that registers it (tests/test_cli.py keeps the table equal to what the
modules register; benchmarks/bench_startup.py times it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Iterable

from dfltheory import __version__

#: command -> (the module whose ``register`` adds it, its one-line help), in the order of the command list; the
#: commands of one module stand together
COMMANDS = {
    "topology": ("dfltheory.topology.commands",
                 "topology constants (lambda, psi, Phi, push-sum C, q, delta, beta_pi, kappa_pi, n_eff, ...)"),
    "bounds": ("dfltheory.bounds.commands", "the catalog of theorems, corollaries and lemmas"),
    "check": ("dfltheory.bounds.commands", "evaluate a bound and check hyper-parameters against its conditions"),
    "train": ("dfltheory.empirical.commands", "train one algorithm on federated data (vectorized over clients)"),
    "sweep": ("dfltheory.empirical.commands",
              "train the runs of a sweep file (grid, zip, seeds) in parallel, cached; a summary table"),
    "report": ("dfltheory.figures.commands",
               "the verification report, verdict first (HTML, Markdown, JSON, figures)"),
    "plot": ("dfltheory.figures.commands", "one comparison figure, saved to --out"),
    "verify": ("dfltheory.figures.verification",
               "every main theorem against training: bound-holds verdicts, overlays, rates"),
    "claims": ("dfltheory.figures.claims",
               "the papers' experimental claims re-run on digits, MNIST or Fashion-MNIST: table, verdicts and figures"),
    "constants": ("dfltheory.verify.commands",
                  "estimate L, sigma_l, sigma_g, B, f(x0) - f* (and each paper's forms) from a run"),
    "pep": ("dfltheory.pep.commands", "worst case by performance estimation (PEP) vs the theorem's bound"),
    "certify": ("dfltheory.pep.commands",
                "a bound for every T by a Lyapunov certificate (one-round SDP) vs the worst case and the theorem"),
    "data": ("dfltheory.empirical.data_commands",
             "fetch MNIST / Fashion-MNIST into the data directory; list what is there"),
}
#: the modules that register the commands, in the order of the command list
PILLARS = tuple(dict.fromkeys(module for module, _ in COMMANDS.values()))


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Without ``commands``: every command, each module of :data:`PILLARS` imported and
    registering its own (the whole parser, as tests walk it). With ``commands`` (names of :data:`COMMANDS`): only the
    modules that register them are imported and register theirs; every other command is a stub with its name and
    help, for the command list and argparse's errors (``build_parser(())`` imports no pillar)."""
    parser = argparse.ArgumentParser(
        prog="dfltheory",
        description="Put the convergence theory of decentralized federated learning papers to the test.",
    )
    parser.add_argument("--version", action="version", version=f"dfltheory {__version__}")
    parser.add_argument("--plugin", action="append", metavar="FILE_OR_MODULE",
                        help="load a user's paper (theorems, algorithms, plans; docs/extending.md) before the "
                             "command; may follow the command and repeat")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if commands is None:
        for name in PILLARS:
            importlib.import_module(name).register(sub)
        return parser
    wanted = {COMMANDS[name][0] for name in commands}
    for name, (module, text) in COMMANDS.items():
        if module in wanted:
            wanted.discard(module)
            importlib.import_module(module).register(sub)
        elif name not in sub.choices:
            sub.add_parser(name, help=text)
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
    command = next((arg for arg in argv if arg in COMMANDS), None)  # only the top-level options stand before it
    parser = build_parser(() if command is None else (command,))
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
