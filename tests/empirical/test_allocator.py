"""keep_freed_memory: large tensors come from the heap, whose freed memory is reused, instead of mappings that are
returned to the system on free and faulted in again; off by the environment; a bad argument refused."""

import os
import platform
import subprocess
import sys

import pytest

from dfltheory.empirical.allocator import ENV, keep_freed_memory

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

WHERE = """
import sys, torch
from dfltheory.empirical.allocator import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else False
t = torch.empty(64 << 18)  # 64 MiB: above glibc's largest mmap threshold (32 MiB)
p = t.data_ptr()
for line in open("/proc/self/maps"):
    fields = line.split()
    lo, hi = (int(v, 16) for v in fields[0].split("-"))
    if lo <= p < hi:
        print(kept, fields[5] if len(fields) > 5 else "mapping")
"""


def where(mode: str, env=None) -> list[str]:
    """(kept, where a fresh 64 MiB tensor lives: '[heap]' or its own 'mapping') in a new process."""
    return subprocess.run([sys.executable, "-c", WHERE, mode], capture_output=True, text=True, check=True,
                          env=env).stdout.split()


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_large_tensors_come_from_the_heap_once_freed_memory_is_kept():
    """By default glibc maps a 64 MiB block on its own and unmaps it on free, so the next one is faulted in page by
    page (936,652 faults per round of the benchmark's LeNet engine, docs/benchmarks.md); kept, it is heap memory."""
    assert where("default") == ["False", "mapping"]
    assert where("keep") == ["True", "[heap]"]


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's")
def test_the_environment_turns_it_off(monkeypatch):
    assert where("keep", env={**os.environ, ENV: "0"}) == ["False", "mapping"]
    monkeypatch.setenv(ENV, "off")
    assert keep_freed_memory() is False


@pytest.mark.parametrize("trim", [-1, 2**31, 1.5, True, "1"])
def test_a_bad_trim_is_refused(trim):
    with pytest.raises(ValueError, match=r"trim must be an integer number of bytes in \[0, 2\*\*31\)"):
        keep_freed_memory(trim)


@pytest.mark.parametrize("value", ["maybe", "2", ""])
def test_an_unknown_setting_of_the_environment_is_refused(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(ValueError, match=f"{ENV}='{value}' is not understood; set it to 0 .* or 1"):
        keep_freed_memory()
