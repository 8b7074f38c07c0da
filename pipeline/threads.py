"""Run independent compiled calls on the cores a build leaves idle.

Kernels are compiled with the GIL released, so threads run them side by side. Only the main
process does this: the worker processes of `pcg build -j N` (and Dask's) already keep every
core busy, and more threads there would only take turns.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

_pool: tuple[int, ThreadPoolExecutor] | None = None


def spare_cores() -> int:
    """Cores this process may use at once: all of them in the main process, 1 in a worker."""
    if multiprocessing.parent_process() is not None:
        return 1
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def in_parallel(calls: list[Callable[[], Any]]) -> list[Any]:
    """Each call's result, in order: the first runs here, the rest on pool threads."""
    if len(calls) <= 1:
        return [call() for call in calls]
    futures = [_threads().submit(call) for call in calls[1:]]
    first = calls[0]()
    return [first, *(f.result() for f in futures)]


def shared_out(calls: list[Callable[[], Any]]) -> list[Any]:
    """Each call's result, in order, the calls shared out over every spare core, each core
    taking the next as it finishes one: for many calls, where `in_parallel` (one thread a call,
    all but the first on the pool's threads) would leave this one idle. Call it from the main
    thread, never from a call on the pool (it would wait on helpers queued behind itself). A call
    that raises here raises to the caller at once, while the pool's threads finish the others."""
    if len(calls) <= 1 or spare_cores() <= 1:
        return [call() for call in calls]
    results: list[Any] = [None] * len(calls)
    taken = itertools.count()  # next() on it is one step under the GIL: no call is taken twice

    def work() -> None:
        while (k := next(taken)) < len(calls):
            results[k] = calls[k]()

    helpers = [_threads().submit(work) for _ in range(spare_cores() - 1)]
    work()
    for helper in helpers:
        helper.result()
    return results


def _threads() -> ThreadPoolExecutor:
    # One pool per process: a pool inherited through fork has no threads behind it.
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        threads = ThreadPoolExecutor(max_workers=max(1, spare_cores() - 1), thread_name_prefix="pcg-kernel")
        _pool = (os.getpid(), threads)
    return _pool[1]
