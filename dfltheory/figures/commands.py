"""Subcommand ``dfltheory report``: the full verification report with figures."""

from __future__ import annotations

from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report", help="the full verification report (markdown, JSON, figures)",
        description="Topology constants, the catalog, stated against derived rates, the papers' own settings "
                    "against their conditions, and a predicted-against-measured training run.")
    p.add_argument("--out", default="report", help="directory for report.md, report.json and figures")
    p.add_argument("--no-train", action="store_true", help="skip the training run (seconds instead of a minute)")
    p.add_argument("--n", type=int, default=100, help="number of clients for the topology table")
    p.set_defaults(func=_report)


def _report(args) -> int:
    from dfltheory.figures.report import build_report

    build_report(args.out, train=not args.no_train, n=args.n)
    print((Path(args.out) / "report.md").read_text())
    return 0
