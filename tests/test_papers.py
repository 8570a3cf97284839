"""A paper is one folder: everything that is a built-in paper's own lives in ``dfltheory/papers/<id>/`` and reaches the
shared code as data (its registrations and its plan's fields), never as a branch or a lookup on its name.

The rule, read from the source (string literals only: docstrings and comments may name papers):

* every module of ``dfltheory`` outside ``dfltheory/papers/`` and ``dfltheory/testing/`` is shared code;
* a string literal that starts with ``"<paper id>."`` (a theorem, claim or card item id: ``"dfedsam.thm4.1"``) is a
  paper's name wherever it stands, except a citation of its theorem card (``"dfedsam.md §7"``: a source, not a key);
* a string literal equal to a paper id is a paper's name, except in the pillars that know algorithms and not papers
  (``dfltheory.empirical``: its baseline table, reference oracle and recipes; ``dfltheory.pep`` and
  ``dfltheory.program``: their tables of PEP models and step programs, being rewritten), where it is the name of the
  paper's algorithm of the same name (the algorithm ``"dfedsam"``);
* what cannot move yet is listed in :data:`EXCEPTIONS`, each with the reason; a listed exception that is gone fails too,
  so that the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

from dfltheory.papers import BUILTIN

PACKAGE = Path(__file__).resolve().parents[1] / "dfltheory"
OWN = ("papers", "testing")  # the papers' own folder, and the test helpers (fixtures of the papers' numbers)
ALGORITHM_PILLARS = ("empirical", "pep", "program")  # where a bare paper id names the paper's algorithm

#: (file, literal) -> why it still stands in shared code; (file, None): every paper name of that file
EXCEPTIONS: dict[tuple[str, str | None], str] = {}  # none left (issue 35 item 1): keep it so


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def _names_a_paper(text: str, pillar: str) -> bool:
    if any(text.startswith(paper + ".") and not text.startswith(paper + ".md") for paper in BUILTIN):
        return True
    return text in BUILTIN and pillar not in ALGORITHM_PILLARS


def paper_names() -> list[tuple[str, int, str]]:
    """(file relative to the repository, line, literal) for every paper name in shared code."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] in OWN:
            continue
        pillar = parts[0] if len(parts) > 1 else ""
        tree = ast.parse(path.read_text(), str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip and \
                    _names_a_paper(node.value, pillar):
                found.append((str(path.relative_to(PACKAGE.parent)), node.lineno, node.value))
    return found


def test_shared_code_names_no_paper():
    """Every paper-name literal outside dfltheory/papers/ is a listed exception."""
    unexplained = [f"{file}:{line}: {text!r}" for file, line, text in paper_names()
                   if (file, text) not in EXCEPTIONS and (file, None) not in EXCEPTIONS]
    assert not unexplained, ("shared code names a built-in paper (move it into the paper's folder, a field of its "
                             "plan or registration; tests/test_papers.py states the rule):\n" + "\n".join(unexplained))


def test_every_exception_is_still_needed():
    found = {(file, text) for file, _, text in paper_names()} | {(file, None) for file, _, _ in paper_names()}
    stale = [f"{file}: {text!r}" for file, text in EXCEPTIONS if (file, text) not in found]
    assert not stale, "exceptions no longer needed (remove them from EXCEPTIONS):\n" + "\n".join(stale)


def test_the_reader_tells_a_paper_from_an_algorithm_and_a_docstring():
    assert _names_a_paper("dfedsam.thm4.1", "verify") and _names_a_paper("dfedsam.thm4.1", "empirical")
    assert _names_a_paper("dfedsam", "verify") and not _names_a_paper("dfedsam", "empirical")
    assert not _names_a_paper("dfedsam-mgs", "verify") and not _names_a_paper("dfedsamx.y", "verify")
    assert not _names_a_paper("dfedsam.md §7 Ring", "topology") and _names_a_paper("dfedsam", "program") is False
    tree = ast.parse('"""dfedsam."""\ndef f():\n    """dfedsam"""\n    return "dfedsam"\n')
    skip = _docstrings(tree)
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in skip]
    assert literals == ["dfedsam"]


def test_a_built_in_paper_is_one_folder():
    """Each built-in paper has its package with the modules of every pillar, each with a register()."""
    for paper in BUILTIN:
        for part in ("__init__", "theorems", "algorithms", "plan", "claims", "pep"):
            assert (PACKAGE / "papers" / paper / f"{part}.py").is_file(), f"dfltheory/papers/{paper}/{part}.py"


def test_built_in_papers_load_as_a_plugin_does_in_a_fresh_interpreter():
    """The registries load the papers by name when first read: a theorem is read without torch, the listings hold
    every built-in paper, and importing a paper's module first (as a test or a plugin does) changes nothing."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from dfltheory.bounds import PAPERS, get\n"
            "assert get('dfedsam.thm4.1').paper == 'dfedsam' and 'torch' not in sys.modules\n"
            "from dfltheory.papers.dfedpgp import algorithms, claims\n"
            "from dfltheory.empirical.algorithms import ALGORITHMS\n"
            "from dfltheory.verify import claims as C\n"
            "from dfltheory.verify.plans import plans\n"
            "print(list(PAPERS), list(plans()), list(C.PAPERS), 'dfedpgp-pull' in ALGORITHMS.builtin)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("]")[0] == str(list(BUILTIN)).rstrip("]")
    assert done.stdout.count(str(list(BUILTIN))) == 3 and done.stdout.strip().endswith("True"), done.stdout
