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


def test_ctrl_c_stops_quietly_with_130(monkeypatch, capsys):
    """Ctrl-C in any command: one line and the shell's code for SIGINT, no KeyboardInterrupt traceback."""
    from dfltheory import cli

    def interrupted(args):
        raise KeyboardInterrupt

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), interrupted))
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
