"""Keep freed CPU memory in the process, so that the engine's fresh tensors do not fault their pages in again.

Every local step allocates tensors of the client state's size, (m, d), and the activations of m minibatches. glibc
serves an allocation above its mmap threshold (128 KiB to 32 MiB, adjusted on the fly) with a fresh ``mmap`` and
returns it to the system on ``free``; the next allocation of the same size then takes one page fault per 4 KiB page,
each zeroing the page. Measured with ``resource.getrusage`` (minor faults) over ten rounds of the benchmark's
DFedCata engine (``benchmarks/bench_official.py``): the code's LeNet at m = 20 took 936,652 faults per round
(uncompiled; 542,042 compiled), the MLP at m = 100 compiled 1,576; with :func:`keep_freed_memory` 2,555, 1,568 and
0; the seconds are in docs/benchmarks.md ("Freed memory kept").

:func:`keep_freed_memory` sets two glibc options for the whole process: no allocation is served by ``mmap``
(``M_MMAP_MAX = 0``: memory comes from the heap, and glibc falls back to ``mmap`` only where the heap cannot grow),
and up to ``trim`` bytes of free memory stay at the heap's top instead of going back to the system
(``M_TRIM_THRESHOLD``). The process's resident memory then stays near its peak. The arithmetic is unchanged.
``dfltheory`` commands call it at start; a library user calls it once, or not at all. The environment variable
``DFLTHEORY_KEEP_FREED_MEMORY=0`` turns it off for the commands (1, the default, keeps it on; any other value is
refused). Elsewhere than glibc (macOS, musl, Windows) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's <malloc.h>
ENV = "DFLTHEORY_KEEP_FREED_MEMORY"
ON, OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def keep_freed_memory(trim: int = 1 << 30) -> bool:
    """Serve allocations from the heap and keep up to ``trim`` bytes (default 1 GiB) of freed memory for reuse
    (module docstring). Returns True where glibc took both settings, False where it is not glibc or
    ``DFLTHEORY_KEEP_FREED_MEMORY=0`` is set."""
    if not isinstance(trim, int) or isinstance(trim, bool) or not 0 <= trim < 2**31:
        raise ValueError(f"trim must be an integer number of bytes in [0, 2**31), got {trim!r}")
    setting = os.environ.get(ENV, "1").strip().lower()
    if setting not in ON + OFF:
        raise ValueError(f"{ENV}={os.environ[ENV]!r} is not understood; set it to 0 (glibc's default: freed memory "
                         "back to the system) or 1 (kept for reuse, the default)")
    if setting in OFF:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, trim))
