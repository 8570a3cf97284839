"""Loading a user's paper: a Python file or module that registers theorems, algorithms, verification plans and PEP
models through the public functions (docs/extending.md):

* :func:`dfltheory.bounds.register_paper` (theorems: :class:`~dfltheory.bounds.Theorem` data with sympy terms);
* :func:`dfltheory.empirical.algorithms.register_algorithm` (a local rule composed with a communication rule);
* :func:`dfltheory.verify.plans.register_plan` (how ``verify`` tests a theorem);
* :func:`dfltheory.pep.register_pep_model` (the PEP model ``pep`` runs for it);
* :func:`dfltheory.verify.claims.register_claims` (its experimental claims, with its options per data set) and
  :func:`dfltheory.verify.claims_index.register_card` (its card's §10 items in docs/claims.md);
* :func:`dfltheory.pep.register_pep_bound` (which built-in PEP models one of its theorems bounds).

``dfltheory --plugin FILE_OR_MODULE COMMAND ...`` (the option may also follow the command, and repeat) loads a plugin
before the command line is parsed, so that its ids are valid choices everywhere; installed packages may instead
declare an entry point in the group ``dfltheory.papers`` (loaded by every command). A plugin is loaded once per
process, whatever its spelling (a relative or absolute path, a symbolic link, its module name: the file it resolves
to); the plugins loaded are kept in the environment variable ``DFLTHEORY_PLUGINS`` so that worker processes started
by spawning (``train --nproc``) load them too (:func:`load_inherited`).

The registries a plugin extends are :class:`Registry` mappings: a plugin adds entries, but an entry registered by
dfltheory itself (a built-in algorithm, paper or theorem) cannot be replaced or removed (issue 32 item 5: a plugin that
reassigned ``ALGORITHMS["dfedsam"]`` trained DFedAvg under DFedSAM's name). A plugin that exits (``sys.exit``) or
raises at import is named with the line of its own file where that happened.

The built-in papers (:mod:`dfltheory.papers`) are loaded the same way, by module name (:func:`load_builtin`), each
pillar's part when that pillar's registry is first read.

A bottom-layer module: it imports no pillar itself (the plugin does), so that any layer may call it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

ENV = "DFLTHEORY_PLUGINS"
GROUP = "dfltheory.papers"
#: the package of the built-in papers (:mod:`dfltheory.papers`), loaded by name like a plugin: the one import of a
#: higher layer from below (tests/test_layers.py ``LOADER``)
BUILTIN = "dfltheory.papers"
#: the plugins loaded: identity (the resolved file, or the module name) -> (how to load it again, the module)
_LOADED: dict[str, tuple[str, object]] = {}
_SEALED: list[Registry] = []  # the registries whose built-in entries are fixed


class Registry(dict):
    """A registry (name -> entry) whose built-in entries, the ones present at :meth:`seal`, are fixed: setting one of
    them to another object, deleting or popping it raises a ValueError that names the entry and the fix. Entries
    added later (a plugin's) behave as in a dict. ``what`` names an entry in the errors ('algorithm').

    ``load``: the function that registers the built-in entries (the built-in papers' part of this pillar,
    :func:`load_builtin`) and seals the registry; it runs once, before the registry is first read or written, so that
    importing a pillar (or a paper's module, which imports its pillar) registers nothing by itself. It may run again
    while it is running (a registration reads the registry): it must return at once then."""

    def __init__(self, what: str, *args, load: Callable[[], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.what = what
        self.builtin: dict = {}
        self._load = load

    def _ready(self) -> None:
        if self._load is not None:
            self._load()

    def loaded(self) -> None:
        """The built-in entries are registered (called by ``load`` when it is done, after :meth:`seal`)."""
        self._load = None

    def seal(self) -> None:
        """The entries present now are the built-in ones."""
        self.builtin = dict.copy(self)
        if not any(r is self for r in _SEALED):
            _SEALED.append(self)

    def _refuse(self, key, verb: str):
        raise ValueError(f"the built-in {self.what} {key!r} cannot be {verb} by a plugin; register yours under a new "
                         "name")

    # reading: the built-in entries first
    def __getitem__(self, key):
        self._ready()
        return super().__getitem__(key)

    def __contains__(self, key):
        self._ready()
        return super().__contains__(key)

    def __iter__(self):
        self._ready()
        return super().__iter__()

    def __len__(self):
        self._ready()
        return super().__len__()

    def __repr__(self):
        self._ready()
        return super().__repr__()

    def __eq__(self, other):
        self._ready()
        return super().__eq__(other)

    __hash__ = None

    def get(self, key, default=None):
        self._ready()
        return super().get(key, default)

    def keys(self):
        self._ready()
        return super().keys()

    def values(self):
        self._ready()
        return super().values()

    def items(self):
        self._ready()
        return super().items()

    def copy(self):
        self._ready()
        return dict.copy(self)

    # writing: a built-in entry is fixed
    def __setitem__(self, key, value):
        self._ready()
        if key in self.builtin and value is not self.builtin[key]:
            self._refuse(key, "replaced")
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self._ready()
        if key in self.builtin:
            self._refuse(key, "removed")
        super().__delitem__(key)

    def pop(self, key, *default):
        self._ready()
        if key in self.builtin:
            self._refuse(key, "removed")
        return super().pop(key, *default)

    def popitem(self):
        self._ready()
        if self and next(reversed(self)) in self.builtin:
            self._refuse(next(reversed(self)), "removed")
        return super().popitem()

    def clear(self):
        self._ready()
        if self.builtin:
            self._refuse(next(iter(self.builtin)), "removed")
        super().clear()

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other):
        self.update(other)
        return self

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def __reduce__(self):  # a copy or a pickle is a plain dict of the entries
        return dict, (self.copy(),)

    def changed(self) -> list:
        """The built-in entries that are no longer what was registered (changed behind the mapping's methods)."""
        return [k for k, v in self.builtin.items() if dict.get(self, k, _MISSING) is not v]


_MISSING = object()


def _plugin_files(identity: str) -> tuple[Path, ...]:
    """The files that are the plugin's own: its file, or every file of its package."""
    path = Path(identity)
    if not path.is_absolute():
        return ()
    return (path.parent,) if path.name == "__init__.py" else (path,)


def _own(filename: str, files: tuple[Path, ...]) -> bool:
    if filename.startswith("<"):
        return False
    resolved = Path(filename).resolve()
    return any(resolved == f or f in resolved.parents for f in files)


def _failure(spec: str, err: BaseException, identity: str = "") -> ValueError:
    """One line: the plugin, where in it the error is (the last frame in the plugin's own file), and the cause."""
    package = Path(__file__).resolve().parent
    stack = traceback.extract_tb(err.__traceback__)
    files = _plugin_files(identity)
    own = [f for f in stack if _own(f.filename, files)] if files else \
        [f for f in stack if not f.filename.startswith("<") and not _own(f.filename, (package,))]
    if isinstance(err, SyntaxError) and err.lineno and (not files or _own(err.filename or "", files)):
        line = err.lineno
    else:
        line = own[-1].lineno if own else None
    at = f" (line {line})" if line else ""
    if isinstance(err, SystemExit):
        return ValueError(f"--plugin {spec}{at}: the plugin exits when imported (sys.exit({err.code!r})); a plugin "
                          "only registers what it declares: remove the exit (docs/extending.md)")
    message = " ".join(str(err).split()) or type(err).__name__
    ours = bool(stack) and _own(stack[-1].filename, (package,))
    if isinstance(err, ValueError) and ours:  # a registration refused it: the message names the problem and fix
        return ValueError(f"--plugin {spec}{at}: {message}")
    return ValueError(f"--plugin {spec}{at}: {type(err).__name__}: {message}; fix the plugin (docs/extending.md)")


def _identity(spec: str) -> tuple[str, str]:
    """(the plugin's identity: its resolved file, or its module name where it has no file; how to load it again)."""
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise ValueError(f"--plugin {spec}: no such file; give the path of a .py file or a module name")
        resolved = str(path.resolve())
        return resolved, resolved
    try:
        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError):
        found = None
    origin = getattr(found, "origin", None)
    if origin and Path(origin).is_file():
        return str(Path(origin).resolve()), spec
    return spec, spec


def _tampered(spec: str, identity: str) -> ValueError | None:
    """A built-in registration that the plugin changed behind the registries' methods (``dict.__setitem__``)."""
    for registry in list(_SEALED):
        for key in registry.changed():
            line = None
            for file in _plugin_files(identity):
                if file.is_file():
                    lines = file.read_text(errors="replace").splitlines()
                    pattern = re.compile(r"""['"]""" + re.escape(str(key)) + r"""['"]""")
                    line = next((n for n, text in enumerate(lines, 1) if pattern.search(text)), None)
            at = f" (line {line})" if line else ""
            return ValueError(f"--plugin {spec}{at}: the plugin changed the built-in {registry.what} {key!r}; a "
                              "plugin registers new names and cannot replace a built-in one")
    return None


def load(spec: str) -> object:
    """Import the plugin ``spec`` (a path to a ``.py`` file, or an importable module name) once; its import
    registers what it declares. Any failure is a ValueError naming the plugin, the line and the cause."""
    spec = str(spec)
    identity, again = _identity(spec)
    if identity in _LOADED:
        return _LOADED[identity][1]
    try:
        if Path(again).is_file():  # given as a path: imported from the file it resolves to
            name = f"dfltheory_plugin_{Path(again).stem}_{len(_LOADED)}"
            module_spec = importlib.util.spec_from_file_location(name, again)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(spec)
    except ModuleNotFoundError as err:
        if err.name and spec.split(".")[0] == err.name.split(".")[0]:
            raise ValueError(f"--plugin {spec}: no such file or module; give the path of a .py file or an "
                             "importable module name") from None
        raise _failure(spec, err, identity) from None
    except ValueError as err:
        if str(err).startswith(f"--plugin {spec}"):
            raise
        raise _failure(spec, err, identity) from None
    except (Exception, SystemExit) as err:  # noqa: BLE001  anything a user's file raises on import is its error
        raise _failure(spec, err, identity) from None
    tampered = _tampered(spec, identity)
    if tampered is not None:
        raise tampered
    _LOADED[identity] = (again, module)
    os.environ[ENV] = os.pathsep.join(again for again, _ in _LOADED.values())
    return module


def builtin_papers() -> dict[str, str]:
    """The built-in papers, id -> title, in the seed order (read from their packages' ``__init__``, which register
    nothing)."""
    package = importlib.import_module(BUILTIN)
    return {paper: importlib.import_module(f"{BUILTIN}.{paper}").TITLE for paper in package.BUILTIN}


def load_builtin(part: str) -> None:
    """Register one pillar's part of every built-in paper: import ``dfltheory.papers.<id>.<part>`` by name (as
    :func:`load` imports a plugin's module) and call its ``register()``, which hands the paper's declarations to
    the pillar's public ``register_*`` function. Each registry calls this once, when it is first read, then seals
    what is registered (:meth:`Registry.seal`)."""
    for paper in builtin_papers():
        importlib.import_module(f"{BUILTIN}.{paper}.{part}").register()


def load_once(guard: list, register: Callable[[], None], *registries: Registry) -> None:
    """Register the built-in entries of ``registries`` with ``register`` (which calls :func:`load_builtin`), once: a
    call while it runs returns at once (a registration reads the registry), and a failure is not a loaded registry
    (the next read runs it again, never a partial one); then each registry is marked loaded and sealed, its entries
    fixed (:meth:`Registry.seal`). ``guard``: the caller's list that is non-empty while loaded or loading."""
    if guard:
        return
    guard.append(True)
    before = [set(dict.keys(registry)) for registry in registries]
    try:
        register()
    except BaseException:
        guard.clear()
        for registry, keys in zip(registries, before):  # what this load added goes: the next read starts afresh
            for key in set(dict.keys(registry)) - keys:
                dict.__delitem__(registry, key)
        raise
    for registry in registries:
        registry.loaded()  # first: sealing must not load again
        registry.seal()


def load_entry_points() -> None:
    """Load the plugins installed packages declare in the entry-point group ``dfltheory.papers``."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=GROUP):
        module = ep.value.split(":")[0].strip()
        identity, again = _identity(module)
        if identity not in _LOADED:
            where = f"{ep.value} (entry point {ep.name!r} of {GROUP})"
            try:
                loaded = ep.load()
            except (Exception, SystemExit) as err:  # noqa: BLE001
                raise _failure(where, err, identity) from None
            tampered = _tampered(where, identity)
            if tampered is not None:
                raise tampered
            _LOADED.setdefault(identity, (again, loaded))


def load_inherited() -> None:
    """Load the plugins the parent process loaded (``DFLTHEORY_PLUGINS``): for processes started by spawning."""
    for spec in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        load(spec)


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """(argv without the ``--plugin X`` / ``--plugin=X`` options, the plugins named), wherever they stand."""
    rest, specs, args = [], [], iter(argv)
    for arg in args:
        if arg == "--plugin":
            spec = next(args, None)
            if spec is None:
                raise ValueError("--plugin needs a value: the path of a .py file or a module name")
            specs.append(spec)
        elif arg.startswith("--plugin="):
            specs.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return rest, specs
