"""Running a verification's jobs in worker processes: in order and waited for (:func:`pool_map`), or started at
once and collected later (:class:`Background`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence


class Background:
    """[fn(*a) for a in args] started at once in ``workers`` processes and collected later (:meth:`results`), so
    that the longest runs of a verification train beside its other stages instead of after them (issue 33 item 4:
    DFedPGP's informative run alone is ~180,000 rounds). With one worker nothing runs until :meth:`results`, which
    is then :func:`pool_map`."""

    def __init__(self, fn: Callable, args: Sequence[tuple], workers: int):
        self.fn, self.args, self.workers, self.start = fn, list(args), workers, time.perf_counter()
        self.pool = self.futures = None
        if workers > 1 and len(self.args) > 1:
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=min(workers, len(self.args)))
            self.futures = [self.pool.submit(fn, *a) for a in self.args]

    def results(self, progress: Callable | None = None) -> list:
        """The results in order; ``progress(done, total, eta_seconds)`` as :func:`pool_map` (the runs already ended
        counted at once)."""
        if self.futures is None:
            return pool_map(self.fn, self.args, self.workers, progress)
        from concurrent.futures import as_completed

        total = len(self.futures)
        try:
            for n, _ in enumerate(as_completed(self.futures), 1):
                if progress:
                    progress(n, total, (time.perf_counter() - self.start) / n * (total - n))
            return [f.result() for f in self.futures]
        finally:
            self.close()

    def close(self) -> None:
        """Stop: the runs not started are cancelled (a run in training ends in its worker, which releases its cache
        entry's lock)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def pool_map(fn: Callable, args: Sequence[tuple], workers: int, progress: Callable | None = None) -> list:
    """[fn(*a) for a in args] in order, in ``workers`` processes where there are more than one (and more than one
    call); ``progress(done, total, eta_seconds)`` before the first and after each call that ends."""
    start = time.perf_counter()

    def tick(done):
        if progress:
            progress(done, len(args), (time.perf_counter() - start) / max(done, 1) * (len(args) - done))

    tick(0)
    if workers < 2 or len(args) < 2:
        out = []
        for a in args:
            out.append(fn(*a))
            tick(len(out))
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(workers, len(args))) as pool:
        futures = [pool.submit(fn, *a) for a in args]
        for n, _ in enumerate(as_completed(futures), 1):
            tick(n)
        return [f.result() for f in futures]
