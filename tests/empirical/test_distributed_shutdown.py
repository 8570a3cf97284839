"""A rank's process group is gone after ``destroy_process_group`` (dfltheory.empirical.distributed.init's docstring):
no gloo thread of it runs on into interpreter shutdown, where one aborted a rank's exit ("terminate called without
an active exception", SIGABRT)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

# one fresh process (torch._dynamo not imported yet, as in a spawned rank): a gloo group of one rank joined by
# distributed.init, a first torch.func.grad (which imports torch._dynamo and, through it, torch.distributed.nn), a
# barrier, destroy_process_group; then the names of the threads still running
RANK = """
import json, os, sys
import torch
from dfltheory.empirical import distributed as D
fresh = "torch._dynamo" not in sys.modules
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(D.free_port()))
D.init(0, 1)
torch.func.grad(lambda x: (x * x).sum())(torch.ones(2))
torch.distributed.barrier()
torch.distributed.destroy_process_group()
threads = sorted(open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task"))
print(json.dumps({"fresh": fresh, "dynamo": "torch._dynamo" in sys.modules, "threads": threads}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="thread names are read from /proc (Linux)")
def test_destroy_process_group_ends_gloos_threads_after_a_first_grad():
    out = subprocess.run([sys.executable, "-c", RANK], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["fresh"] and seen["dynamo"], seen  # the case of a spawned rank: grad imported torch._dynamo here
    assert seen["threads"], seen  # the names were read
    left = [name for name in seen["threads"] if "gloo" in name or "tcpstore" in name]
    assert left == [], f"threads of the destroyed process group still running: {left}"
