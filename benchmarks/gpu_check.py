"""The one prepared device check (issue 23, item 5): everything a lent GPU should show, in one script of at most
about 8 minutes, one JSON file, progress as it goes, and every step on its own (a step that fails is recorded and
the next one runs).

    python benchmarks/gpu_check.py [--out gpu-check] [--device cuda] [--budget 480] [--only STEP ...]

Steps (each with a share of the time budget; a step that runs past its share is stopped and recorded):

1. ``equivalence``: every algorithm, float64, 3 rounds on digits, m = 8: the largest |CUDA - CPU| of the states.
2. ``resume``: a dfedsam run on CUDA cut at round 6 and resumed to 10 against an uninterrupted one (bit-identical
   expected), and a CPU checkpoint resumed on CUDA (to float64 rounding).
3. ``recipes``: every recipe for 2 rounds on stand-in data (``fake=true``): seconds per round, peak memory, the
   client chunk used.
4. ``official``: ``bench_official.py --device cuda`` (the resnet18-100 rows against the authors' code and the
   ceiling), where the authors' code is present.
5. ``claims``: ``dfltheory claims dfedsam --size gpu --device cuda`` (one paper at the papers' m = 100).
6. ``verify``: ``dfltheory verify dfedsam --size quick --device cuda``.

Where no CUDA device exists it says so, writes the JSON with ``"device": null`` and exits 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("equivalence", "resume", "recipes", "official", "claims", "verify")
SHARE = {"equivalence": 0.08, "resume": 0.04, "recipes": 0.3, "official": 0.2, "claims": 0.3, "verify": 0.08}


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


def equivalence(device: str, seconds: float) -> dict:
    import torch

    from dfltheory.empirical import algorithms as A
    from dfltheory.empirical.runner import build

    extra = {"dfedsgpsm-s": {"topology": "neighbour-selection", "topology_params": "k=2", "weights": "push-sum"},
             "dfedpgp": {"model": "mlp", "weights": "push-sum", "topology": "random",
                         "topology_params": "k=2,direction=in"},
             "dfedpgp-pull": {"model": "mlp", "weights": "uniform", "topology": "random",
                              "topology_params": "k=2,direction=in"},
             "dfedsgpsm": {"weights": "push-sum"}, "sgp": {"weights": "push-sum"}}
    out, start = {}, time.perf_counter()
    torch.set_default_dtype(torch.float64)
    try:
        for name in A.names():
            if time.perf_counter() - start > seconds:
                out[name] = "not run: the step's time share is spent"
                continue
            cfg = {"algo": name, "dataset": "digits", "n": 8, "K": 2, "batch_size": 8, "lr": 0.05, "seed": 0,
                   "topology": "ring", "weights": "metropolis", "participation": 0.5, **extra.get(name, {})}
            states = []
            for dev in ("cpu", device):
                engine, _ = build({**cfg, "device": dev})
                for _ in range(3):
                    engine.round()
                states.append(engine.state["x"].detach().cpu())
            out[name] = float((states[0] - states[1]).abs().max())
            say(f"  {name}: max |CUDA - CPU| = {out[name]:.2e}")
    finally:
        torch.set_default_dtype(torch.float32)
    return out


def resume(device: str, seconds: float) -> dict:
    from dfltheory.empirical.runner import run

    base = {"algo": "dfedsam", "dataset": "digits", "n": 8, "K": 2, "batch_size": 8, "lr": 0.05, "seed": 0,
            "topology": "ring", "weights": "metropolis", "progress": False, "checkpoint_every": 2}
    with tempfile.TemporaryDirectory() as tmp:
        whole = run({**base, "device": device, "rounds": 10, "out": f"{tmp}/whole"})
        run({**base, "device": device, "rounds": 6, "out": f"{tmp}/cut"})
        resumed = run({**base, "device": device, "rounds": 10, "out": f"{tmp}/cut"}, resume=True)
        run({**base, "device": "cpu", "rounds": 6, "out": f"{tmp}/cpu"})
        across = run({**base, "device": device, "rounds": 10, "out": f"{tmp}/cpu"}, resume=True)
    return {"cuda_resume_equal": resumed["last"] == whole["last"],
            "cpu_to_cuda_train_loss_difference": abs(across["last"]["train_loss"] - whole["last"]["train_loss"])}


def recipes(device: str, seconds: float) -> dict:
    import torch

    from dfltheory.empirical.recipes import NAMES
    from dfltheory.empirical.runner import build

    out, start = {}, time.perf_counter()
    for name in NAMES:
        if time.perf_counter() - start > seconds:
            out[name] = "not run: the step's time share is spent"
            continue
        try:
            torch.cuda.reset_peak_memory_stats()
            engine, _ = build({"recipe": name, "device": device, "data_params": {"fake": True}})
            engine.round()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            engine.round()
            torch.cuda.synchronize()
            out[name] = {"seconds_per_round": time.perf_counter() - t0,
                         "peak_gib": torch.cuda.max_memory_allocated() / 2**30, "client_chunk": engine.client_chunk}
        except Exception as err:  # noqa: BLE001 - recorded, the next recipe runs
            out[name] = f"{type(err).__name__}: {err}"[:300]
        say(f"  {name}: {out[name]}")
    return out


def _command(args: list[str], seconds: float) -> dict:
    t0 = time.perf_counter()
    try:
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=max(5.0, seconds))
        return {"rc": done.returncode, "seconds": time.perf_counter() - t0, "tail": (done.stdout + done.stderr)[-3000:]}
    except subprocess.TimeoutExpired as err:
        return {"rc": None, "seconds": time.perf_counter() - t0, "timed_out": True,
                "tail": ((err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes)
                         else (err.stdout or ""))[-3000:]}


def official(device: str, seconds: float) -> dict:
    return _command([sys.executable, "benchmarks/bench_official.py", "--device", device], seconds)


def claims(device: str, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return _command([sys.executable, "-m", "dfltheory", "claims", "dfedsam", "--size", "gpu", "--device", device,
                         "--out", tmp], seconds)


def verify(device: str, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return _command([sys.executable, "-m", "dfltheory", "verify", "dfedsam", "--size", "quick", "--device", device,
                         "--out", tmp], seconds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpu-check", help="directory for gpu-check.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for all steps together")
    ap.add_argument("--only", nargs="*", choices=STEPS, default=list(STEPS))
    args = ap.parse_args()
    if not 0 < args.budget < float("inf"):  # NaN fails too
        ap.error(f"--budget must be a positive number of seconds, got {args.budget}")
    from dfltheory.paths import output_dir

    try:  # a file of that name, a file on the way or an unwritable place: one line, before any step runs
        out = output_dir(args.out, "--out")
    except ValueError as err:
        ap.error(str(err))
    import torch

    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "torch": torch.__version__, "steps": {}}
    if not torch.cuda.is_available():
        say("no CUDA device here: nothing to check (exit 0)")
        result["device"] = None
        (out / "gpu-check.json").write_text(json.dumps(result, indent=1) + "\n")
        return 0
    result["device"] = torch.cuda.get_device_name(0)
    say(f"device {result['device']}, torch {torch.__version__}, budget {args.budget:.0f} s")
    for name in args.only:
        share = SHARE[name] * args.budget
        say(f"{name} (up to {share:.0f} s) ...")
        t0 = time.perf_counter()
        try:
            result["steps"][name] = {"result": globals()[name](args.device, share)}
        except Exception:  # noqa: BLE001 - recorded, the next step runs
            result["steps"][name] = {"error": traceback.format_exc()[-3000:]}
        result["steps"][name]["seconds"] = time.perf_counter() - t0
        say(f"{name}: done in {result['steps'][name]['seconds']:.0f} s")
        (out / "gpu-check.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    say(f"written {out / 'gpu-check.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
