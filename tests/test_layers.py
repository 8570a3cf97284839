"""The package's layers, read from its source: every import of a ``dfltheory`` module (at the top of a file or
lazily inside a function, and every module named by a string, as ``cli`` names the pillars' ``commands`` modules
for ``importlib``) points down the layers of :data:`LAYERS` or stays inside its own pillar, and no modules import
each other in a circle.

A pillar's ``commands`` module is its command line: it belongs to its pillar, so it may import within the pillar
and below, like the rest of the pillar; ``figures`` and ``cli`` only present what the layers below computed.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dfltheory"

#: unit (a pillar, or a module of the package's floor and top) -> layer; a unit may import the units of lower
#: layers and its own modules. The longest unit that prefixes a module's name is its unit.
LAYERS = {
    "dfltheory": 0,  # the package itself (its version) and its output paths: the floor
    "dfltheory.paths": 0,
    "dfltheory.plugins": 0,  # loads a user's file: it imports no pillar itself
    "dfltheory.parsing": 0,  # the command line's text (counts, NAME:key=value specs, JSON, durations), for every pillar
    "dfltheory.records": 0,  # typed records of the dicts written as JSON or hashed (from_dict/to_dict, schema tables)
    "dfltheory.constraints": 0,  # input constraints as data (Interval, Options) and the one check, for every pillar
    "dfltheory.topology": 1,
    "dfltheory.program": 1,  # an algorithm written once (step programs): pure Python, interpreted by the pillars
    "dfltheory.bounds": 2,
    "dfltheory.empirical": 2,
    "dfltheory.pep": 3,  # performance estimation: topology and bounds; the report's pipeline (verify) runs it
    "dfltheory.verify": 4,
    "dfltheory.papers": 5,  # the built-in papers: each registers into the pillars below (its theorems, plan, ...)
    "dfltheory.testing": 6,  # test helpers: above verify (registries saved and restored), beside figures
    "dfltheory.figures": 6,
    "dfltheory.cli": 7,
    "dfltheory.__main__": 8,
}
#: the one import against the layers: the registries load the built-in papers by module name, through the floor's
#: loader (:func:`dfltheory.plugins.load_builtin`, the path a user's plugin takes), so that no pillar names them
LOADER = ("dfltheory.plugins", "dfltheory.papers")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def unit(module: str) -> str:
    return max((u for u in LAYERS if module == u or module.startswith(u + ".")), key=len)


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name ``from ... import`` reads from (relative imports counted from ``module``'s package)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _named_by_string(node: ast.AST) -> tuple[str, bool] | None:
    """(module, exactly) for a module a string names: ``"dfltheory.figures.commands"`` (a pillar for
    ``importlib``; exactly), or the package under which ``import_module(f"dfltheory.papers.{paper}")`` finds its
    module (not exactly: some module of that package, which counts for the layers but not for the circles)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES:
        return node.value, True
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        prefix = str(node.values[0].value)
        return (prefix[:-1], False) if prefix.endswith(".") and prefix[:-1] in MODULES else None
    return None


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, exactly) for every ``dfltheory`` module ``module`` imports, wherever the import
    stands (``exactly``: the module itself, not one of a package's modules that a string leaves open)."""
    found = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(), str(MODULES[module]))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, True) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            found += [(f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source, node.lineno, True)
                      for alias in node.names]
        elif (named := _named_by_string(node)) is not None:
            found.append((named[0], node.lineno, named[1]))
    return [(target, line, exactly) for target, line, exactly in found if target in MODULES and target != module]


GRAPH = {module: imports(module) for module in MODULES}


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}"


def test_every_module_has_a_layer():
    """A new pillar or top-level module needs its row in LAYERS (else it would count as the package's floor)."""
    unplaced = [m for m in MODULES if unit(m) == "dfltheory" and m != "dfltheory"]
    assert not unplaced, f"modules without a layer (add them to LAYERS): {unplaced}"
    assert set(LAYERS) <= set(MODULES), "a unit of LAYERS names no module of the package"


def test_no_import_goes_up_or_across_the_layers():
    upward = [f"{where(module, line)}: {module} ({unit(module)}, layer {LAYERS[unit(module)]}) imports {target} "
              f"({unit(target)}, layer {LAYERS[unit(target)]})"
              for module, targets in GRAPH.items() for target, line, _ in targets
              if unit(target) != unit(module) and LAYERS[unit(target)] >= LAYERS[unit(module)]
              and (module, target) != LOADER]
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one circle through them."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while v not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                found.append(circle(graph, v, component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def circle(graph: dict[str, list[str]], start: str, component: set[str]) -> list[str]:
    """A path from ``start`` back to itself inside ``component`` (breadth first: a shortest one)."""
    previous, frontier = {}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in graph[v]:
                if w in component and w not in previous:
                    previous[w] = v
                    nxt.append(w)
        if start in previous:
            break
        frontier = nxt
    path = [start, previous[start]]
    while path[-1] != start:
        path.append(previous[path[-1]])
    return path[::-1]


def test_only_the_loader_names_the_built_in_papers_from_below():
    """The exemption LOADER is used, and is the only way down to the papers: the loader names the package (not a
    paper's module), and no module of a lower layer names dfltheory.papers or one of its modules."""
    assert (LOADER[1], True) in {(t, exactly) for t, _, exactly in GRAPH[LOADER[0]]}
    below = [f"{where(module, line)}: {module} names {target}" for module, targets in GRAPH.items()
             for target, line, _ in targets
             if unit(target) == LOADER[1] and LAYERS[unit(module)] < LAYERS[LOADER[1]] and module != LOADER[0]]
    assert not below, "modules below the papers that name them (load them with plugins.load_builtin):\n" + \
        "\n".join(below)


def test_no_modules_import_each_other_in_a_circle():
    exact = {module: sorted({t for t, _, exactly in targets if exactly}) for module, targets in GRAPH.items()}
    found = cycles(exact)
    lines = {}  # (module, imported) -> the first line that imports it
    for module, targets in GRAPH.items():
        for target, line, _ in targets:
            lines.setdefault((module, target), line)
    text = ["\n".join(f"  {where(a, lines[a, b])}: {a} imports {b}" for a, b in zip(c, c[1:])) for c in found]
    assert not found, "modules that import each other in a circle:\n" + "\n\n".join(text)


def test_the_reader_finds_lazy_imports_and_named_modules():
    """The graph is read from the whole source: an import inside a function and a name handed to importlib."""
    assert ("dfltheory.figures.commands", True) in {(t, exactly) for t, _, exactly in GRAPH["dfltheory.cli"]}
    assert "dfltheory.empirical.allocator" in {t for t, _, _ in GRAPH["dfltheory.cli"]}  # inside main()
    assert ("dfltheory.papers", True) in {(t, exactly) for t, _, exactly in GRAPH["dfltheory.plugins"]}
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c", "a"]]
