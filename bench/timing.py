"""Timing shared by the benchmarks."""

from __future__ import annotations

import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeats: int, budget: float = 0.0) -> tuple[float, Any]:
    """Fastest of at least `repeats` calls (and more while they fit in `budget` seconds), with
    the last call's result. The host is shared: a millisecond kernel needs dozens of tries to
    catch one undisturbed run, so fast cases get a budget rather than a fixed count."""
    best, out = float("inf"), None
    spent, runs = 0.0, 0
    while runs < repeats or (spent < budget and runs < 200):
        start = time.perf_counter()
        out = fn()
        took = time.perf_counter() - start
        best = min(best, took)
        spent += took
        runs += 1
    return best, out
