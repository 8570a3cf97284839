"""Subcommand ``dfltheory constants RUN_DIR``: each paper's assumption constants estimated from a user's own run
(:mod:`dfltheory.verify.estimators`). ``dfltheory verify`` presents the bound-holds experiments and lives with the
figures it draws (:mod:`dfltheory.figures.verification`)."""

from __future__ import annotations


def register(subparsers) -> None:
    from dfltheory.verify import estimators

    p = subparsers.add_parser(
        "constants", help="estimate L, sigma_l, sigma_g, B, f(x0) - f* (and each paper's forms) from a run",
        description="Local, trajectory-based estimates of the papers' assumption constants at points of a run "
                    "(x0, the clients' final models, their mean, points between them): not global constants.")
    estimators.add_arguments(p)
    p.set_defaults(func=estimators.command)
