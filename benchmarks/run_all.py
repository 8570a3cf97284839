"""Run every benchmark script in this folder, one after the other, with its defaults; then the extra entries below
(the GPU entry says so and reports nothing where no CUDA device exists). A script that exits non-zero (a missed
target, bench_startup.py) does not stop the others; the exit status is 1 if any did."""

import pathlib
import runpy
import sys

EXTRA = {"bench_official.py": [["--device", "cuda"]]}  # script -> further argument lists

here = pathlib.Path(__file__).parent
failed = []
for script in sorted(here.glob("bench_*.py")):
    for args in [[], *EXTRA.get(script.name, [])]:
        print(f"\n=== {' '.join([script.name, *args])}", flush=True)
        sys.argv = [str(script), *args]
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                print(exc.code if isinstance(exc.code, str) else f"exit status {exc.code}", flush=True)
                failed.append(" ".join([script.name, *args]))
if failed:
    print(f"\nfailed: {', '.join(failed)}")
    raise SystemExit(1)
