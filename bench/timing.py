"""Timing shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeats: int, budget: float = 0.0) -> tuple[float, Any]:
    """Fastest of at least `repeats` calls (and more while they fit in `budget` seconds), with
    the last call's result. The host is shared: a millisecond kernel needs dozens of tries to
    catch one undisturbed run, so fast cases get a budget rather than a fixed count."""
    low, _, _, out = min_median(fn, repeats, budget)
    return low, out


def min_median(fn: Callable[[], Any], repeats: int, budget: float = 0.0) -> tuple[float, float, int, Any]:
    """(min, median, runs, last result) over at least `repeats` calls of the same work (and more
    while they fit in `budget` seconds, up to 200). The min is the undisturbed run; the median is
    what a run usually costs on this shared host."""
    times: list[float] = []
    out = None
    spent = 0.0
    while len(times) < repeats or (spent < budget and len(times) < 200):
        start = time.perf_counter()
        out = fn()
        took = time.perf_counter() - start
        times.append(took)
        spent += took
    return min(times), statistics.median(times), len(times), out


def ratio(value: float, base: float) -> str:
    """`value / base` as a ratio column: 0.27x, 12x, 4,005x."""
    r = value / base
    return f"{r:.2f}x" if r < 10 else f"{r:,.0f}x"


def met(ok: bool) -> str:
    return "yes" if ok else "no"
