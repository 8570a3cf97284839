"""DFedPGP's theorems cover no PEP model: its personalized objective (a shared part u and a personal part v per
client) has no model in :mod:`dfltheory.pep` (docs/pep.md); nothing is registered."""

from __future__ import annotations


def register() -> None:
    """Nothing to register (module docstring); present so that every paper has the same parts."""
