"""The ``dfltheory`` entry point as a user's shell sees it."""

import subprocess
import sys


def run_shell(cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)


def test_output_into_a_closed_pipe_stops_quietly():
    """`dfltheory ... | head -1`: the reader may be gone before the output is written (here: always, since
    `true` reads nothing and exits while dfltheory starts)."""
    r = run_shell(f"set -o pipefail; {sys.executable} -m dfltheory bounds list | true")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr


def test_no_command_prints_help_and_fails():
    r = run_shell(f"{sys.executable} -m dfltheory")
    assert r.returncode == 2 and "topology" in r.stdout and "check" in r.stdout


HEAVY = ("torch", "sympy", "cvxpy", "dfltheory.empirical", "dfltheory.pep", "dfltheory.verify", "dfltheory.figures")
#: what cli.main imports before any command runs: the allocator setting (ctypes), not the empirical pillar's torch
MAIN = {"dfltheory.empirical", "dfltheory.empirical.allocator"}


def imported_by(argv: list[str]) -> tuple[int, set[str], str]:
    """(exit code, the modules of HEAVY and below them in sys.modules, stdout) after ``dfltheory.cli.main(argv)`` in
    a fresh process."""
    script = ("import sys\nfrom dfltheory import cli\ntry:\n    code = cli.main(sys.argv[1:])\n"
              "except SystemExit as e:\n    code = e.code\n"
              f"print('\\nHEAVY', code, *[m for m in sys.modules if m.startswith({HEAVY!r}) and "
              f"m.partition('.')[0] in ('dfltheory', *{HEAVY!r})])")
    r = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120)
    last = r.stdout.rstrip().splitlines()[-1].split()
    assert last[0] == "HEAVY", r.stdout + r.stderr
    return int(last[1]), set(last[2:]), r.stdout


def test_the_command_list_imports_no_pillar():
    """`dfltheory --help` and `dfltheory` alone print the command list from cli.COMMANDS: no pillar, nor torch,
    sympy or cvxpy, is imported (it took 3 s and 1 GB when every pillar was: issue 35)."""
    for argv, code in ((["--help"], 0), ([], 2)):
        status, heavy, out = imported_by(argv)
        assert status == code and not heavy, heavy
        assert "topology constants" in out and "certify" in out


def test_a_command_imports_its_own_pillar_alone():
    """`dfltheory topology ...` imports the topology pillar, not torch, sympy, cvxpy or another pillar; `bounds show`
    not torch or cvxpy."""
    code, heavy, out = imported_by(["topology", "ring", "--n", "4"])
    assert code == 0 and "lambda" in out and not heavy - MAIN, heavy - MAIN
    code, heavy, out = imported_by(["bounds", "show", "dfedsam.thm4.1"])
    assert code == 0 and "Theorem 4.1" in out and not heavy & {"torch", "cvxpy"}, heavy


def test_the_command_table_is_what_the_modules_register():
    """cli.COMMANDS (command -> its module and help, read without importing any pillar) in the order, with the
    modules and the help strings that the pillars' register functions give; the command list printed without them
    is the whole parser's."""
    import argparse
    import importlib

    from dfltheory import cli

    registered = {}
    for module in cli.PILLARS:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        registered.update({a.dest: (module, a.help) for a in sub._choices_actions})
    assert list(registered.items()) == list(cli.COMMANDS.items())
    assert cli.build_parser(()).format_help() == cli.build_parser().format_help()
    for name in cli.COMMANDS:  # one command's parser: its module's commands real, the others stubs, the same list
        parser = cli.build_parser((name,))
        assert parser.format_help() == cli.build_parser().format_help()
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        assert sub.choices[name]._actions[1:], f"{name}: a stub, not its module's parser"


def test_ctrl_c_stops_quietly_with_130(monkeypatch, capsys):
    """Ctrl-C in any command: one line and the shell's code for SIGINT, no KeyboardInterrupt traceback."""
    from dfltheory import cli

    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda *args: _with_func(parser(*args), interrupted))
    assert cli.main(["topology", "ring", "--n", "4"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err


def _with_func(parser, func):
    parse = parser.parse_args

    def parse_args(argv=None):
        args = parse(argv)
        args.func = func
        return args

    parser.parse_args = parse_args
    return parser


def test_the_gpu_check_refuses_an_unusable_out_in_one_line(tmp_path):
    """`benchmarks/gpu_check.py --out` naming a file, or a place that cannot be created: one line, exit 2, before any
    step (it was a traceback from mkdir)."""
    import pathlib

    script = pathlib.Path(__file__).parent.parent / "benchmarks" / "gpu_check.py"
    (tmp_path / "f").write_text("")
    for out in (tmp_path / "f", tmp_path / "f" / "below"):
        r = subprocess.run([sys.executable, str(script), "--out", str(out)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 2 and "Traceback" not in r.stderr and "--out" in r.stderr.splitlines()[-1], r.stderr
