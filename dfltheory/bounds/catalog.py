"""The catalog: every theorem, corollary and key lemma of the five papers, by stable id."""

from __future__ import annotations

import importlib
from functools import cache

from dfltheory.bounds.theorem import Theorem

#: One module per paper; each defines ``THEOREMS``, a tuple of :class:`Theorem`.
PAPERS = {
    "dfedsgpsm": "seed 000: DFedSGPSM (push-sum + SAM + momentum on directed graphs)",
    "dfedsam": "seed 001: DFedSAM and DFedSAM-MGS (SAM + multiple gossip steps)",
    "dfedcata": "seed 002: DFedCata (Catalyst / Nesterov acceleration)",
    "dfedpgp": "seed 003: DFedPGP (personalized, directed push-sum)",
    "dfedadmm": "seed 004: DFedADMM and DFedADMM-SAM (primal-dual)",
}


@cache
def catalog() -> dict[str, Theorem]:
    """All theorems by id, in paper order."""
    out: dict[str, Theorem] = {}
    for paper in PAPERS:
        module = importlib.import_module(f"dfltheory.bounds.{paper}")
        for thm in module.THEOREMS:
            if thm.id in out:
                raise RuntimeError(f"duplicate theorem id {thm.id!r}")
            if thm.paper != paper or not thm.id.startswith(paper + "."):
                raise RuntimeError(f"theorem {thm.id!r} is registered under paper {paper!r}")
            out[thm.id] = thm
    for thm in out.values():
        for ref in (thm.parent, thm.variant_of):
            if ref is not None and ref not in out:
                raise RuntimeError(f"{thm.id} refers to unknown theorem {ref!r}")
    return out


def get(theorem_id: str) -> Theorem:
    """The theorem with this id; a clear error lists the close matches or the valid ids."""
    cat = catalog()
    if not isinstance(theorem_id, str):
        raise TypeError(f"a theorem id is a string such as 'dfedsam.thm4.1', got {theorem_id!r}; list the ids with "
                        "dfltheory.bounds.ids() or `dfltheory bounds list`")
    if theorem_id in cat:
        return cat[theorem_id]
    import difflib

    close = difflib.get_close_matches(theorem_id, cat, n=5, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"valid ids: {', '.join(cat)}"
    raise KeyError(f"unknown theorem id {theorem_id!r}; {hint} (list them with `dfltheory bounds list`)")


def ids(paper: str | None = None) -> list[str]:
    """Theorem ids, optionally of one paper."""
    if paper is not None and paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; valid papers: {', '.join(PAPERS)}")
    return [i for i, t in catalog().items() if paper is None or t.paper == paper]
