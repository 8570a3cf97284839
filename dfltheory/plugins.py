"""Loading a user's paper: a Python file or module that registers theorems, algorithms, verification plans and PEP
models through the public functions (docs/extending.md):

* :func:`dfltheory.bounds.register_paper` (theorems: :class:`~dfltheory.bounds.Theorem` data with sympy terms);
* :func:`dfltheory.empirical.algorithms.register_algorithm` (a local rule composed with a communication rule);
* :func:`dfltheory.verify.plans.register_plan` (how ``verify`` tests a theorem);
* :func:`dfltheory.pep.register_pep_model` (the PEP model ``pep`` runs for it).

``dfltheory --plugin FILE_OR_MODULE COMMAND ...`` (the option may also follow the command, and repeat) loads a plugin
before the command line is parsed, so that its ids are valid choices everywhere; installed packages may instead
declare an entry point in the group ``dfltheory.papers`` (loaded by every command). A plugin is loaded once per
process; the paths loaded are kept in the environment variable ``DFLTHEORY_PLUGINS`` so that worker processes
started by spawning (``train --nproc``) load them too (:func:`load_inherited`).

A bottom-layer module: it imports no pillar itself (the plugin does), so that any layer may call it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path

ENV = "DFLTHEORY_PLUGINS"
GROUP = "dfltheory.papers"
_LOADED: dict[str, object] = {}


def _failure(spec: str, err: BaseException) -> ValueError:
    """One line: the plugin, where in it the error is (its own file and line), and the cause."""
    package = Path(__file__).resolve().parent
    stack = traceback.extract_tb(err.__traceback__)
    inside = [not f.filename.startswith("<") and package in Path(f.filename).resolve().parents for f in stack]
    frames = [f for f, own in zip(stack, inside) if not own and not f.filename.startswith("<")]  # the plugin's
    line = getattr(err, "lineno", None) if isinstance(err, SyntaxError) else (frames[-1].lineno if frames else None)
    at = f" (line {line})" if line else ""
    message = " ".join(str(err).split()) or type(err).__name__
    ours = bool(stack) and inside[-1]
    if isinstance(err, ValueError) and ours:  # a registration refused it: the message names the problem and fix
        return ValueError(f"--plugin {spec}{at}: {message}")
    return ValueError(f"--plugin {spec}{at}: {type(err).__name__}: {message}; fix the plugin (docs/extending.md)")


def load(spec: str) -> object:
    """Import the plugin ``spec`` (a path to a ``.py`` file, or an importable module name) once; its import
    registers what it declares. Any failure is a ValueError naming the plugin, the line and the cause."""
    spec = str(spec)
    if spec in _LOADED:
        return _LOADED[spec]
    path = Path(spec)
    try:
        if spec.endswith(".py") or path.is_file():
            if not path.is_file():
                raise ValueError(f"--plugin {spec}: no such file; give the path of a .py file or a module name")
            name = f"dfltheory_plugin_{path.stem}_{len(_LOADED)}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(spec)
    except ModuleNotFoundError as err:
        if err.name and spec.split(".")[0] == err.name.split(".")[0]:
            raise ValueError(f"--plugin {spec}: no such file or module; give the path of a .py file or an "
                             "importable module name") from None
        raise _failure(spec, err) from None
    except ValueError as err:
        if str(err).startswith(f"--plugin {spec}"):
            raise
        raise _failure(spec, err) from None
    except Exception as err:  # noqa: BLE001  anything a user's file raises on import is its error
        raise _failure(spec, err) from None
    _LOADED[spec] = module
    os.environ[ENV] = os.pathsep.join(_LOADED)
    return module


def load_entry_points() -> None:
    """Load the plugins installed packages declare in the entry-point group ``dfltheory.papers``."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=GROUP):
        if ep.value not in _LOADED:
            try:
                _LOADED[ep.value] = ep.load()
            except Exception as err:  # noqa: BLE001
                raise _failure(f"{ep.value} (entry point {ep.name!r} of {GROUP})", err) from None


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
