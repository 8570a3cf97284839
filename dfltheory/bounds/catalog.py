"""The catalog: every theorem, corollary and key lemma by stable id, paper by paper, in a registry that a user's
own paper extends (:func:`register_paper`; docs/extending.md).

The five built-in papers are registered through the same function, from their ``theorems`` modules
(``dfltheory/papers/<id>/theorems.py``: ``THEOREMS`` and the experimental settings ``EXPERIMENTS``), when the catalog
is first read (:func:`dfltheory.plugins.load_builtin`); a plugin's paper is registered when the
plugin is loaded (``dfltheory --plugin FILE``, :mod:`dfltheory.plugins`) and then works in every command.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from dfltheory.bounds.theorem import Theorem
from dfltheory.plugins import Registry, builtin_papers, load_builtin, load_once

#: every registered paper: id -> title (the built-in ones, :mod:`dfltheory.papers`, first, then the plugins' in the
#: order loaded)
PAPERS: dict[str, str] = Registry("paper", builtin_papers())
PAPERS.seal()  # fixed from the start: a plugin may run before the built-in theorems are first read
#: paper id -> its experimental settings (:class:`dfltheory.bounds.settings.ExperimentSetting`)
EXPERIMENTS: dict[str, tuple] = Registry("paper's experimental settings")
#: the forms of the heterogeneity assumption on sigma_g (card §4 of each paper)
SIGMA_G_FORMS = {"mean": "(1/m) sum_i ||grad f_i(x) - grad f(x)||^2 <= sigma_g^2 for every x",
                 "client": "||grad f_i(x) - grad f(x)||^2 <= sigma_g^2 for every client i and x",
                 "personal": "the client form on the shared block u, for every (u, V) (DFedPGP)"}
#: paper id -> the form of sigma_g its theorems assume (None: the paper has no sigma_g, or does not say)
SIGMA_G_FORM: dict[str, str | None] = Registry("paper's sigma_g form")
#: paper id -> {topology symbol's key -> the key of dfltheory.topology.analyze's report its theorems read instead}:
#: the push-sum constants of a paper's own lemma (DFedPGP's C_pgp, q_pgp) in place of the cited lemma's C, q
TOPOLOGY_KEYS: dict[str, dict[str, str]] = Registry("paper's topology keys")
_THEOREMS: dict[str, Theorem] = Registry("theorem")
_LOADED: list[bool] = []  # the built-in papers are registered (once)
PAPER_ID = re.compile(r"^[a-z][a-z0-9_-]*$")


def _load_builtins() -> None:
    # each built-in paper's theorems module calls register_paper, as a plugin does; a plugin adds papers and
    # theorems, it cannot replace or remove a built-in one
    load_once(_LOADED, lambda: load_builtin("theorems"), PAPERS, EXPERIMENTS, SIGMA_G_FORM, TOPOLOGY_KEYS, _THEOREMS)


def register_paper(paper: str, title: str, theorems: Iterable[Theorem], *, experiments: Iterable = (),
                   sigma_g_form: str | None = None, topology_keys: Mapping[str, str] | None = None,
                   origin: str = "") -> None:
    """Add a paper and its theorems to the catalog.

    ``paper``: an id of lower-case letters, digits, '-' and '_' (e.g. ``'minisgd'``); every theorem's ``paper`` is
    it and its id starts with ``'<paper>.'``; ids are unique over the catalog; ``parent`` / ``variant_of`` name a
    theorem of the catalog or of this call. ``experiments``: the paper's experimental settings (for ``check`` at
    the paper's settings). ``sigma_g_form``: the form of the heterogeneity assumption its theorems' sigma_g bounds,
    a key of :data:`SIGMA_G_FORMS` (``verify`` takes that form of the problem's constant). ``topology_keys``: where
    its theorems take a topology constant from another key of :func:`dfltheory.topology.analyze`'s report than the
    symbol's own (``{"q": "q_pgp", "C": "C_pgp"}``: the paper's own push-sum lemma). ``origin`` names where
    the declaration comes from (a plugin file) in the errors, each a ValueError that names the problem and the fix.
    """
    where = f"{origin}: " if origin else ""
    _load_builtins()  # the built-in papers come first (a no-op while they are being registered)
    if not isinstance(paper, str) or not PAPER_ID.match(paper):
        raise ValueError(f"{where}paper id {paper!r} must be lower-case letters, digits, '-' or '_', starting with a "
                         "letter (e.g. 'minisgd')")
    if not isinstance(title, str) or not title:
        raise ValueError(f"{where}paper {paper!r}: title={title!r} must be a non-empty string (one line)")
    if not isinstance(origin, str):
        raise ValueError(f"paper {paper!r}: origin={origin!r} must be a string (the plugin file, __file__)")
    if any(t.paper == paper for t in _THEOREMS.values()):
        raise ValueError(f"{where}paper {paper!r} is already registered; choose another id")
    if sigma_g_form is not None and (not isinstance(sigma_g_form, str) or sigma_g_form not in SIGMA_G_FORMS):
        raise ValueError(f"{where}paper {paper!r}: sigma_g_form {sigma_g_form!r} is not one of "
                         f"{', '.join(SIGMA_G_FORMS)} (or None)")
    if topology_keys is not None and (not isinstance(topology_keys, Mapping) or
                                      not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in topology_keys.items())):
        raise ValueError(f"{where}paper {paper!r}: topology_keys {_short(topology_keys)} must map a topology key to "
                         "another key of the topology report (strings), e.g. {'q': 'q_pgp'}")
    if isinstance(theorems, (Theorem, str)) or not isinstance(theorems, Iterable):
        raise ValueError(f"{where}paper {paper!r}: theorems is {_short(theorems)}; give a list of Theorems, e.g. "
                         "[THEOREM]")
    if isinstance(experiments, str) or not isinstance(experiments, Iterable):
        raise ValueError(f"{where}paper {paper!r}: experiments is {_short(experiments)}; give a list of "
                         "dfltheory.bounds.settings.ExperimentSetting (or () for none)")
    theorems, experiments = tuple(theorems), tuple(experiments)
    for setting in experiments:  # an ExperimentSetting (bounds.settings, which reads the catalog: not imported here)
        if type(setting).__name__ != "ExperimentSetting" or setting.paper != paper:
            raise ValueError(f"{where}paper {paper!r}: experiment {_short(setting)} must be an ExperimentSetting "
                             f"of paper={paper!r}")
    if not theorems:
        raise ValueError(f"{where}paper {paper!r} declares no theorem; give at least one Theorem")
    batch: dict[str, Theorem] = {}
    for thm in theorems:
        if not isinstance(thm, Theorem):
            raise ValueError(f"{where}paper {paper!r}: {_short(thm)} is not a dfltheory.bounds.Theorem")
        if thm.paper != paper or not thm.id.startswith(paper + "."):
            raise ValueError(f"{where}theorem {thm.id!r} must have paper={paper!r} and an id starting with "
                             f"'{paper}.'")
        for cond in thm.conditions:
            try:
                cond.margin
            except TypeError as err:
                raise ValueError(f"{where}theorem {thm.id!r}: condition {cond.text!r} is not an inequality "
                                 f"({err}); give a sympy relation <, <=, > or >=") from None
        if thm.id in _THEOREMS or thm.id in batch:
            raise ValueError(f"{where}duplicate theorem id {thm.id!r}; give each theorem its own id")
        batch[thm.id] = thm
    for thm in batch.values():
        for ref in (thm.parent, thm.variant_of):
            if ref is not None and ref not in _THEOREMS and ref not in batch:
                raise ValueError(f"{where}{thm.id} refers to unknown theorem {ref!r}; declare it, or name one of "
                                 "the catalog (`dfltheory bounds list`)")
    PAPERS[paper] = title
    EXPERIMENTS[paper] = experiments
    SIGMA_G_FORM[paper] = sigma_g_form
    TOPOLOGY_KEYS[paper] = dict(topology_keys or {})
    _THEOREMS.update(batch)


def _short(value) -> str:
    """A value as the errors name it: its repr, cut short, with its type."""
    import reprlib

    return f"{reprlib.repr(value)} ({type(value).__name__})"


def catalog() -> dict[str, Theorem]:
    """All theorems by id, in paper order (read it, do not change it: :func:`register_paper` adds)."""
    _load_builtins()
    return _THEOREMS


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


def sigma_g_form(paper: str | None) -> str | None:
    """The form of sigma_g a registered paper assumes (:data:`SIGMA_G_FORMS`), None where it says none."""
    catalog()
    return SIGMA_G_FORM.get(paper)


def topology_keys(paper: str | None) -> dict[str, str]:
    """The topology keys a registered paper's theorems read in place of their symbols' own (``{}``: none)."""
    catalog()
    return TOPOLOGY_KEYS.get(paper, {})


def experiments(paper: str) -> tuple:
    """The experimental settings of a registered paper (``()`` where it declares none)."""
    catalog()
    return EXPERIMENTS.get(paper, ())
