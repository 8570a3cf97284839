"""Run every benchmark script in this folder, one after the other, with its defaults; then the extra entries below
(the GPU entry says so and reports nothing where no CUDA device exists)."""

import pathlib
import runpy
import sys

EXTRA = {"bench_official.py": [["--device", "cuda"]]}  # script -> further argument lists

here = pathlib.Path(__file__).parent
for script in sorted(here.glob("bench_*.py")):
    for args in [[], *EXTRA.get(script.name, [])]:
        print(f"\n=== {' '.join([script.name, *args])}", flush=True)
        sys.argv = [str(script), *args]
        runpy.run_path(str(script), run_name="__main__")
