"""Benchmark of the command line's start: a command imports only the module that registers it (issue 35 item 4),
against the old start that imported every pillar, measured in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5] [--clock cpu|wall]

Rows, each a fresh ``python -m dfltheory ...`` process: ``--help`` (the command list, no pillar imported),
``topology ring --n 100`` and ``bounds show dfedsam.thm4.1`` (one pillar each), and the baseline, the old start: a
process that imports every module of the old ``PILLARS`` list, builds the whole parser from their ``register``
functions and prints its ``--help``. The processes run in turns (one of each case per turn, after one untimed turn
that warms the file cache), ``--repeat`` turns; each row gives the median wall-clock time, the median CPU time
(user + system of that process alone) and the peak memory, and the ratio of each time to the baseline's.

Targets: ``--help`` under 0.5 s, ``topology`` and ``bounds show`` under 1.5 s, judged on ``--clock`` (default cpu: the
process's own time, which is its wall time on an idle machine; on a shared one the wall time also counts the other
jobs' share of the cores, so the load average is printed). The exit status is 1 where a target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

#: the modules the command line imported at every start before issue 35 (cli.PILLARS then)
OLD_PILLARS = ("dfltheory.topology.commands", "dfltheory.bounds.commands", "dfltheory.empirical.commands",
               "dfltheory.figures.commands", "dfltheory.figures.verification", "dfltheory.figures.claims",
               "dfltheory.verify.commands", "dfltheory.pep.commands", "dfltheory.empirical.data_commands")
OLD_START = ("import argparse, importlib\n"
             "parser = argparse.ArgumentParser(prog='dfltheory')\n"
             "sub = parser.add_subparsers(dest='command', metavar='COMMAND')\n"
             f"for name in {OLD_PILLARS!r}:\n"
             "    importlib.import_module(name).register(sub)\n"
             "parser.parse_args(['--help'])\n")
DFLTHEORY = [sys.executable, "-m", "dfltheory"]
#: (row, command line, target in seconds or None)
CASES = (("baseline: every pillar, --help", [sys.executable, "-c", OLD_START], None),
         ("dfltheory --help", [*DFLTHEORY, "--help"], 0.5),
         ("dfltheory topology ring --n 100", [*DFLTHEORY, "topology", "ring", "--n", "100"], 1.5),
         ("dfltheory bounds show dfedsam.thm4.1", [*DFLTHEORY, "bounds", "show", "dfedsam.thm4.1"], 1.5))


def measure(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak memory in MB) of one process running ``argv``, its output discarded; a
    process that fails is an error naming it."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # this process's own resources, not every child's
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv[1:])} failed ({proc.returncode}): {err.read().decode().strip()}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed processes per case (the median is shown)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="the time the targets are judged on")
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; median of {args.repeat} processes")
    runs = {name: [] for name, _, _ in CASES}
    for turn in range(args.repeat + 1):  # turn 0 warms the file cache, untimed
        for name, command, _ in CASES:
            result = measure(command)
            if turn:
                runs[name].append(result)
    medians = {name: [statistics.median(r[i] for r in rows) for i in range(3)] for name, rows in runs.items()}
    base_wall, base_cpu, _ = medians[CASES[0][0]]
    head = ("command", "wall s", "wall / base", "cpu s", "cpu / base", "peak MB", "target s", "met")
    rows, missed = [], []
    for name, _, target in CASES:
        wall, cpu, peak = medians[name]
        judged = cpu if args.clock == "cpu" else wall
        met = "-" if target is None else "yes" if judged < target else "NO"
        if met == "NO":
            missed.append(f"{name}: {judged:.2f} s ({args.clock}) >= {target} s")
        rows.append((name, f"{wall:.3f}", f"{wall / base_wall:.2f}", f"{cpu:.3f}", f"{cpu / base_cpu:.2f}",
                     f"{peak:.0f}", "-" if target is None else f"< {target} ({args.clock})", met))
    widths = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    for j, r in enumerate([head] + rows):
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if j == 0:
            print("  ".join("-" * w for w in widths))
    for line in missed:
        print(f"target missed: {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
