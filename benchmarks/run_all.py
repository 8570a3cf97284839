"""Run every benchmark script in this folder, one after the other."""

import pathlib
import runpy
import sys

for script in sorted(pathlib.Path(__file__).parent.glob("bench_*.py")):
    print(f"\n=== {script.name}", flush=True)
    sys.argv = [str(script)]
    runpy.run_path(str(script), run_name="__main__")
