"""A user's paper through the public path (issue 25): DFedSAM declared again by a plugin gives the built-in numbers
bit for bit (check, train, verify, pep); the example paper runs through every command; bad plugins are named."""

import json
import os
from pathlib import Path

import pytest

from dfltheory import cli, plugins
from dfltheory.testing.registries import isolated
from dfltheory.verify.stats import VERDICTS

HERE = Path(__file__).parent
REDECLARED = str(HERE / "plugins" / "redeclared_dfedsam.py")
EXAMPLE = str(HERE.parent / "examples" / "own_paper.py")
REF = dict(eta=0.001, K=20, T=1000, L=1, rho=0.01, sigma_l=1, sigma_g=1, B=1, lam=0.733333, m=100, Q=4,
           f0_minus_fstar=2.3)


@pytest.fixture
def loaded():
    with isolated():
        plugins.load(REDECLARED)
        yield


def run_cli(capsys, argv) -> tuple[int, str, str]:
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_registries_are_restored_after_a_plugin():
    from dfltheory.bounds import PAPERS
    from dfltheory.empirical.algorithms import ALGORITHMS

    with isolated():
        plugins.load(REDECLARED)
        assert "mysam" in PAPERS and "mysam" in ALGORITHMS
    assert "mysam" not in PAPERS and "mysam" not in ALGORITHMS


def test_check_is_bit_identical(loaded, capsys):
    from dfltheory.bounds import get

    mine, builtin = get("mysam.thm4.1").check(**REF), get("dfedsam.thm4.1").check(**REF)
    assert mine.value == builtin.value and mine.terms == builtin.terms
    assert [v.margin for v in mine.conditions] == [v.margin for v in builtin.conditions]
    args = ["--set", *(f"{k}={v}" for k, v in REF.items()), "--json"]
    outs = [json.loads(run_cli(capsys, ["check", tid, *args])[1]) for tid in ("mysam.thm4.1", "dfedsam.thm4.1")]
    assert outs[0]["value"] == outs[1]["value"] and outs[0]["terms"] == outs[1]["terms"]


def test_train_is_bit_identical(loaded, tmp_path):
    from dfltheory.empirical import runner
    from dfltheory.empirical.rundir import read_records

    base = {"dataset": "synthetic-robust", "n": 4, "rounds": 3, "K": 2, "lr": 0.05, "topology": "ring",
            "progress": False, "rho": 0.01}
    for algo in ("mysam", "dfedsam"):
        runner.run({**base, "algo": algo, "out": tmp_path / algo})
    strip = [{k: v for k, v in r.items()} for r in read_records(tmp_path / "mysam" / "metrics.jsonl")]
    assert strip == read_records(tmp_path / "dfedsam" / "metrics.jsonl")


def test_pep_is_bit_identical(loaded):
    from dfltheory.pep import compare, worst_case

    kw = dict(m=2, K=1, T=4, eta=0.1, sigma_g=1.0, B=2.0, W=[[0.5, 0.5], [0.5, 0.5]])
    mine, builtin = worst_case("mysam-pep", **kw), worst_case("dfedsam-unnormalized", **kw)
    assert mine.value == builtin.value and mine.settings["algorithm"] == "mysam-pep"
    assert compare(mine)["bound"] == compare(builtin)["bound"] is not None


def test_verify_is_bit_identical(loaded, tmp_path):
    from dfltheory.verify.holds import verify

    rows = {}
    for tid in ("mysam.thm4.1", "dfedsam.thm4.1"):
        result = verify([tid], size="quick", out=tmp_path / tid, rates=False)
        rows[tid] = [{k: v for k, v in r.items() if k not in ("theorem", "algo", "paper", "command")}
                     for r in result["verdicts"]]
    assert rows["mysam.thm4.1"] and rows["mysam.thm4.1"] == rows["dfedsam.thm4.1"]


def test_the_example_paper_through_every_command(capsys, tmp_path):
    with isolated():
        code, out, _ = run_cli(capsys, ["--plugin", EXAMPLE, "bounds", "list"])
        assert code == 0 and "minisgd.thm1" in out
        code, out, _ = run_cli(capsys, ["check", "minisgd.thm1", "--plugin", EXAMPLE, "--set", "eta=0.1", "L=1",
                                        "T=100", "sigma_l=1", "m=8", "f0_minus_fstar=1", "--json"])
        assert code == 0 and json.loads(out)["value"] == pytest.approx(2 / (0.1 * 100) + 0.1 / 8)
        code, out, _ = run_cli(capsys, ["--plugin", EXAMPLE, "train", "--algo", "dfedavg-normalized", "--dataset",
                                        "synthetic-robust", "--n", "4", "--rounds", "2", "--no-progress", "--out",
                                        str(tmp_path / "run")])
        assert code == 0 and out.startswith("completed: dfedavg-normalized 2 rounds")
        code, out, _ = run_cli(capsys, ["--plugin", EXAMPLE, "pep", "minisgd-dpsgd", "--m", "2", "--K", "1",
                                        "--T", "5", "--eta", "0.5", "--lambda", "0"])
        assert code == 0 and "minisgd.thm1 at sigma_l = 0" in out and "ratio bound / worst case" in out
        code, out, _ = run_cli(capsys, ["--plugin", EXAMPLE, "verify", "minisgd", "--size", "quick", "--no-rates",
                                        "--out", str(tmp_path / "verify"), "--json"])
        verdicts = json.loads(out)["verdicts"]
        assert code in (0, 1) and {v["theorem"] for v in verdicts} == {"minisgd.thm1"}
        assert all(v["trivial"] is not None for v in verdicts)  # every verdict states the trivial level
        code, out, _ = run_cli(capsys, ["--plugin", EXAMPLE, "claims", "minisgd", "--size", "quick", "--out",
                                        str(tmp_path / "claims"), "--json"])
        claims = json.loads(out)["claims"]
        assert code == 0 and [c["id"] for c in claims] == ["minisgd.normalized"]
        assert claims[0]["verdict"] in VERDICTS and claims[0]["verdict"] != "not testable here"


@pytest.mark.parametrize("source, says", [
    ("from dfltheory.bounds import COMMON, Theorem, Source, register_paper\nimport sympy as sp\n"
     "x = sp.Symbol('x')\n"
     "register_paper('bad', 'Bad', [Theorem(id='bad.t', paper='bad', kind='theorem', title='t', quantity='q',\n"
     "    terms={'a': x}, variables=(COMMON['eta'],), source=Source('s', 'l'))])\n",
     r"\(line 4\): bad.t: symbols \['x'\] are used but not declared in variables"),
    ("from dfltheory.bounds import get, register_paper\nfrom dataclasses import replace\n"
     "register_paper('dfedsam2', 'x', [replace(get('dfedsam.thm4.1'), paper='dfedsam2', id='dfedsam.thm4.1')])\n",
     "theorem 'dfedsam.thm4.1' must have paper='dfedsam2' and an id starting with 'dfedsam2.'"),
    ("from dfltheory.bounds import get, register_paper\nfrom dataclasses import replace\n"
     "t = replace(get('dfedsam.thm4.1'), paper='twice', id='twice.t', parent=None)\n"
     "register_paper('twice', 'x', [t, t])\n", "duplicate theorem id 'twice.t'"),
    ("from dfltheory.bounds import get, register_paper\nregister_paper('dfedsam', 'x', [get('dfedsam.thm4.1')])\n",
     "paper 'dfedsam' is already registered"),
    ("from dfltheory.empirical.algorithms import register_algorithm\n"
     "register_algorithm('broken', lambda: None)\n", "algorithm 'broken': its factory fails with its default"),
    ("from dfltheory.empirical.algorithms import register_algorithm\n"
     "register_algorithm('dfedsam', lambda hp: None)\n", "algorithm 'dfedsam' is already registered"),
    ("from dfltheory.verify.plans import PaperPlan, Target, register_plan\n"
     "register_plan(PaperPlan('dfedsam', 'synthetic-robust', 'eta', K=1, symbols={}, topologies=(),\n"
     "    targets=(Target('dfedsam.thm4.1', 'nope', 'min', main=True),)))\n",
     "paper 'dfedsam' already has a verification plan"),
    ("from dfltheory.verify.claims import Arm, Claim, register_claims\n"
     "register_claims('dfedsam', [], base={'decay': 1.0}, rounds=10)\n", "paper 'dfedsam' already has claims"),
    # a built-in paper's claims are fixed (plugins.Registry), as its algorithms and theorems are
    ("from dfltheory.verify.claims import CLAIMS\n\nCLAIMS['dfedsam.table1'] = CLAIMS['dfedsam.K']\n",
     r"\(line 3\): the built-in claim 'dfedsam.table1' cannot be replaced by a plugin; register yours under a new name"),
    ("from dfltheory.verify.claims import PAPER_BASE\nPAPER_BASE.pop('dfedsam')\n",
     r"\(line 2\): the built-in paper's claims base options 'dfedsam' cannot be removed"),
    ("from dfltheory.verify.claims import PAPERS\nPAPERS['dfedcata'] = ()\n",
     r"\(line 2\): the built-in paper with claims 'dfedcata' cannot be replaced"),
    ("raise RuntimeError('my own bug')\n", r"\(line 1\): RuntimeError: my own bug; fix the plugin"),
    ("x = (\n", "SyntaxError"),
    # issue 32 item 5: a plugin that exits at import exited 0 doing nothing
    ("import sys\n\nsys.exit(0)\n",
     r"\(line 3\): the plugin exits when imported \(sys.exit\(0\)\); .* remove the exit"),
    ("raise SystemExit('bye')\n", r"\(line 1\): the plugin exits when imported \(sys.exit\('bye'\)\)"),
    # issue 32 item 5: reassigning a built-in registration trained DFedAvg under DFedSAM's name
    ("from dfltheory.empirical.algorithms import ALGORITHMS, dfedavg\n\nALGORITHMS['dfedsam'] = dfedavg\n",
     r"\(line 3\): the built-in algorithm 'dfedsam' cannot be replaced by a plugin; register yours under a new name"),
    ("from dfltheory.empirical.algorithms import ALGORITHMS\nALGORITHMS.pop('dfedsam')\n",
     r"\(line 2\): the built-in algorithm 'dfedsam' cannot be removed"),
    ("from dfltheory.empirical.algorithms import ALGORITHMS, dfedavg\nx = 1\n"
     "dict.__setitem__(ALGORITHMS, 'dfedsam', dfedavg)\n",
     r"\(line 3\): the plugin changed the built-in algorithm 'dfedsam'"),
    ("from dfltheory.bounds import PAPERS\nPAPERS.update({'dfedcata': 'mine'})\n",
     r"\(line 2\): the built-in paper 'dfedcata' cannot be replaced"),
    ("from dfltheory.bounds import catalog, get\nfrom dataclasses import replace\nt = get('dfedsam.thm4.1')\n"
     "catalog()['dfedsam.thm4.1'] = replace(t, title='mine')\n", r"\(line 4\): the built-in theorem 'dfedsam.thm4.1'"),
    # issue 32 item 5: the error named importlib's or numpy's line, not the plugin's
    ("import importlib\n\nimportlib.import_module('no_such_helper_module_here')\n",
     r"\(line 3\): ModuleNotFoundError: No module named 'no_such_helper_module_here'"),
    ("import numpy as np\n\n\nnp.linalg.inv(np.zeros((2, 3)))\n", r"\(line 4\): LinAlgError: "),
])
def test_a_bad_plugin_is_one_line_naming_the_file_and_the_problem(tmp_path, capsys, source, says):
    import re

    path = tmp_path / "bad_plugin.py"
    path.write_text(source)
    with isolated():
        code, _, err = run_cli(capsys, ["--plugin", str(path), "bounds", "list"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"dfltheory: error: --plugin {path}") and re.search(says, err), err


def test_a_refused_plugin_leaves_the_built_in_registrations_as_they_were(tmp_path, capsys):
    from dfltheory.bounds import PAPERS, get
    from dfltheory.empirical import algorithms as A
    from dfltheory.papers.dfedsam import algorithms as dfedsam

    path = tmp_path / "evil.py"
    path.write_text("from dfltheory.empirical.algorithms import ALGORITHMS, dfedavg\nALGORITHMS['mine'] = dfedavg\n"
                    "ALGORITHMS['dfedsam'] = dfedavg\n")
    with isolated():
        assert run_cli(capsys, ["--plugin", str(path), "bounds", "list"])[0] == 2
        assert A.ALGORITHMS["dfedsam"] is dfedsam.dfedsam and A.make("dfedsam").name == "dfedsam"
    assert "mine" not in A.ALGORITHMS and PAPERS["dfedsam"] and get("dfedsam.thm4.1").paper == "dfedsam"


def test_a_built_in_paper_is_fixed_before_the_catalog_is_first_read(tmp_path):
    """In a fresh process the plugin runs before anything reads the catalog: PAPERS is fixed from the start."""
    import subprocess
    import sys

    path = tmp_path / "papers.py"
    path.write_text("from dfltheory.bounds import PAPERS\nPAPERS.update({'dfedcata': 'mine'})\n")
    done = subprocess.run([sys.executable, "-m", "dfltheory.cli", "--plugin", str(path), "bounds", "list"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "(line 2): the built-in paper 'dfedcata' cannot be replaced" in done.stderr


def test_one_plugin_under_several_spellings_is_loaded_once(tmp_path, monkeypatch, capsys):
    """Issue 32 item 5: a relative and an absolute path, a symbolic link and the module name are one plugin (its
    second import registered its algorithm again: 'already registered')."""
    import sys

    package = tmp_path / "mods"
    package.mkdir()
    (package / "once_plugin.py").write_text(
        "from dataclasses import replace\nfrom dfltheory.empirical.algorithms import dfedavg, register_algorithm\n"
        "register_algorithm('once', lambda hp: replace(dfedavg(hp), name='once'))\n")
    (tmp_path / "link.py").symlink_to(package / "once_plugin.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(package))
    spellings = ["mods/once_plugin.py", str(package / "once_plugin.py"), "link.py", "./mods/../mods/once_plugin.py",
                 "once_plugin"]
    for order in (spellings, spellings[::-1]):
        sys.modules.pop("once_plugin", None)
        with isolated():
            argv = [a for spec in order for a in ("--plugin", spec)]
            code, out, err = run_cli(capsys, [*argv, "bounds", "list"])
            assert code == 0, err
            assert len(os.environ[plugins.ENV].split(os.pathsep)) == 1
    sys.modules.pop("once_plugin", None)


def test_a_plugin_that_is_not_there_is_named(capsys):
    for spec, says in [("/nowhere/p.py", "no such file"), ("no_such_module_here", "no such file or module")]:
        code, _, err = run_cli(capsys, ["bounds", "list", "--plugin", spec])
        assert code == 2 and f"--plugin {spec}: {says}" in err
    code, _, err = run_cli(capsys, ["bounds", "list", "--plugin"])
    assert code == 2 and "--plugin needs a value" in err


def test_an_installed_package_is_loaded_from_its_entry_point(monkeypatch, capsys):
    """The entry-point group 'dfltheory.papers': every command loads the plugins installed packages declare."""
    import importlib.metadata

    class EntryPoint:
        name, value = "minisgd", EXAMPLE

        def load(self):
            return plugins.load(EXAMPLE)

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [EntryPoint()] if group == plugins.GROUP
                        else [])
    with isolated():
        code, out, _ = run_cli(capsys, ["bounds", "list"])
        assert code == 0 and "minisgd.thm1" in out


def test_a_spawned_worker_loads_the_plugins_its_parent_loaded(monkeypatch):
    """train --nproc spawns its ranks: they load the plugins named in DFLTHEORY_PLUGINS (set by loading)."""
    from dfltheory.bounds import PAPERS

    with isolated():
        plugins.load(EXAMPLE)
        inherited = os.environ[plugins.ENV]
    assert EXAMPLE in inherited.split(os.pathsep) and "minisgd" not in PAPERS
    monkeypatch.setenv(plugins.ENV, inherited)
    with isolated():
        plugins.load_inherited()  # what a fresh rank does first (empirical.distributed.worker)
        assert "minisgd" in PAPERS


def _thm(**change):
    from dataclasses import replace

    from dfltheory.bounds import get

    return replace(get("dfedsam.thm4.1"), **{"paper": "pp", "id": "pp.t", "parent": None, "variant_of": None,
                                             **change})


def _register_paper(*args, **kw):
    from dfltheory.bounds import register_paper

    return lambda: register_paper(*args, **kw)


def _algorithm(factory, name="zz", **kw):
    from dfltheory.empirical.algorithms import register_algorithm

    return lambda: register_algorithm(name, factory, **kw)


def _cases():
    """Issue 32 item 5: the register_* functions probed with None, wrong types and missing fields raised internal
    TypeErrors and AttributeErrors (or accepted the value); each is now a ValueError naming the field and the fix."""
    import sympy as sp

    from dfltheory.bounds import COMMON, Condition, Source
    from dfltheory.empirical import communication as C
    from dfltheory.empirical import rules as R
    from dfltheory.empirical.algorithms import Algorithm

    eta = COMMON["eta"].symbol
    return [
        (lambda: _register_paper("pp", None, [_thm()])(), "title=None must be a non-empty string"),
        (lambda: _register_paper("pp", "t", None)(), r"theorems is None \(NoneType\); give a list of Theorems"),
        (lambda: _register_paper("pp", "t", _thm())(), r"theorems is .* \(Theorem\); give a list of Theorems"),
        (lambda: _register_paper("pp", "t", [_thm()], experiments=None)(), "experiments is None"),
        (lambda: _register_paper("pp", "t", [_thm()], experiments=[1])(), "experiment 1 .* must be an Experiment"),
        (lambda: _register_paper("pp", "t", [_thm()], sigma_g_form=[])(), "sigma_g_form .* is not one of"),
        (lambda: _register_paper("pp", "t", [_thm()], origin=None)(), "origin=None must be a string"),
        (lambda: _register_paper("pp", "t", [_thm(id=None)])(), "a theorem's id must be a string"),
        (lambda: _thm(variables=None), "pp.t: variables must be a tuple of Var"),
        (lambda: _thm(conditions=None), "pp.t: conditions must be a tuple of Condition"),
        (lambda: _thm(conditions=(1,)), "pp.t: conditions must be a tuple of Condition"),
        (lambda: _thm(terms={"a": "x y"}), "pp.t: terms must be|is not a sympy expression"),
        (lambda: _thm(terms={"a": object()}), "pp.t: a = .* is not a sympy expression"),
        (lambda: _thm(source=None), "pp.t: source=None must be a dfltheory.bounds.Source"),
        (lambda: _thm(title=None), "pp.t: title=None must be a string"),
        (lambda: Source(None, None), "Source seed=None must be a string"),
        (lambda: Source("", ""), "a Source names the paper"),
        (lambda: Condition(1, "eta <= 1"), "is not an inequality"),
        (lambda: _register_paper("pp", "t", [_thm(conditions=(Condition(sp.Eq(eta, 1), "eta = 1"),))])(),
         "condition 'eta = 1' is not an inequality"),
        (lambda: Condition(sp.LessThan(eta, 1, evaluate=False), None), "text=None must be the paper's wording"),
        (lambda: Condition(sp.LessThan(eta, 1, evaluate=False), "eta <= 1", source="p"), "source='p' must be"),
        (_algorithm(lambda hp: None, origin=None), "origin=None must be a string"),
        (_algorithm(lambda hp: Algorithm("zz", None, C.gossip())), "its local rule is NoneType"),
        (_algorithm(lambda hp: Algorithm("zz", R.sgd(), "gossip")), "its communication rule str"),
        (_algorithm(lambda hp: Algorithm("zz", R.sgd(), C.gossip(), K=0)), "K=0 must be a number of local steps"),
        (_algorithm(lambda hp: Algorithm("zz", R.sgd(), C.gossip(), participation=None)), "participation=None"),
    ]


@pytest.mark.parametrize("case", range(len(_cases())))
def test_the_register_functions_refuse_bad_arguments_with_a_value_error(case):
    import re

    call, says = _cases()[case]
    with isolated():
        with pytest.raises(ValueError) as err:
            call()
    assert re.search(says, str(err.value)) and "\n" not in str(err.value), str(err.value)


def test_the_extending_guide_example_runs_as_written(capsys):
    """docs/extending.md's Python block: a paper's condition and a derived one (origin, why), checked and solved with
    and without the derived ones, and a verification plan, as the text around it says."""
    import re

    from dfltheory.bounds import get
    from dfltheory.verify.instances import resolve_targets

    text = (HERE.parent / "docs" / "extending.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    with isolated():
        exec(compile(block, "docs/extending.md", "exec"), {})
        thm = get("sgdrate.thm1")
        assert [(c.origin, bool(c.why)) for c in thm.conditions] == [("paper", False), ("derived", True)]
        assert [t.theorem for t in resolve_targets(["sgdrate"])["sgdrate"]] == ["sgdrate.thm1"]
        assert thm.selected_conditions("paper") == thm.conditions[:1]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("0.2125") and "('1 - L eta/2 >= 1/2', 'derived', True)" in out[0]
    assert out[1] == "eta in (0, 0.5] | eta in (0, 0.5]" and "eta in (0, 0.5] | eta in (0, 0.5]" in text
    with pytest.raises(KeyError):
        get("sgdrate.thm1")  # gone with the block


def test_a_failed_built_in_load_leaves_no_partial_registry_and_fails_the_same_way_again():
    """plugins.load_once: a built-in load that fails after registering some entries (the baseline programs, then a
    paper's module raises) removes them, so the next read fails with the same error, not 'already registered'."""
    import subprocess
    import sys

    code = ("import dfltheory.plugins as P, dfltheory.program as G\n"
            "def boom(part):\n    raise ImportError('planted: ' + part)\n"
            "G.load_builtin = boom\n"
            "errors = []\n"
            "for _ in range(2):\n"
            "    try:\n        len(G.PROGRAMS)\n"
            "    except ImportError as err:\n        errors.append(str(err))\n"
            "print(errors, len(dict.keys(G.PROGRAMS)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['planted: programs', 'planted: programs'] 0"
