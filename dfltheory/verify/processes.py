"""Running a verification's jobs in worker processes: in order and waited for (:func:`pool_map`), or started at
once and collected later (:class:`Background`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence


class Background:
    """[fn(*a) for a in args] started at once in ``workers`` processes and collected later (:meth:`results`), so
    that the longest runs of a verification train beside its other stages instead of after them (issue 33 item 4:
    DFedPGP's informative run alone is ~180,000 rounds), in ``workers`` processes of their own (the stages' pools
    have theirs: each process trains on one thread, and the cores share them). With one worker nothing runs until
    :meth:`results`, which is then :func:`pool_map`. :meth:`close` before the results (an error in another stage)
    stops the runs in training too."""

    def __init__(self, fn: Callable, args: Sequence[tuple], workers: int):
        self.fn, self.args, self.workers, self.start = fn, list(args), workers, time.perf_counter()
        self.pool = self.futures = None
        self.collected = False
        if workers > 1 and self.args:  # one long run alone gains as much: it trains beside the other stages
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
            if progress:
                progress(0, total, 0.0)
            for n, _ in enumerate(as_completed(self.futures), 1):
                if progress:
                    progress(n, total, (time.perf_counter() - self.start) / n * (total - n))
            out = [f.result() for f in self.futures]
            self.collected = True
            return out
        finally:
            self.close()

    def close(self) -> None:
        """Stop the pool: after :meth:`results`, its idle workers; before (another stage failed), the runs not
        started are cancelled and the runs in training are terminated (their cache entries' locks are ``flock``s,
        which the kernel releases with the process; a cut run resumes from its last checkpoint)."""
        if self.pool is None:
            return
        if not self.collected:
            for process in list((self.pool._processes or {}).values()):
                process.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = None


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
