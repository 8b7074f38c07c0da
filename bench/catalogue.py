"""Every maze generator at 1000 x 1000 cells against a baseline measured in the same run.

`carve` is the generator alone (what the 0.15 s target of issue 15 is about; Aldous-Broder's
cover-time walk is exempt); `stats` is the statistics pass every maze stage adds (target
0.05 s). Each is timed over several runs after a warm-up call that compiles (or loads from
numba's cache) every kernel; the host is shared, so the table shows the min (the undisturbed
run) and the median (what a run usually costs). The ratio divides the min by the numpy fill of
the same grid, timed in the same run, so it compares across machines and loads where raw
milliseconds do not.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy as np
from rich.console import Console
from rich.table import Table

from pipeline import registry
from pipeline.seeds import rng_for
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.stages.maze.stats import maze_stats

N = 1000
CARVE_TARGET_S = 0.15
STATS_TARGET_S = 0.05
REPEATS = 5
# Aldous-Broder takes seconds at this size: fewer runs, but still more than one.
SLOW_REPEATS = {"maze.aldous_broder": 3}
EXEMPT = {"maze.aldous_broder"}


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """(min, median) seconds over `repeats` calls, and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), out


def main() -> None:
    shape = (2 * N + 1, 2 * N + 1)
    floor, _, _ = timed(lambda: np.ones(shape, dtype=np.uint8), 51)
    table = Table(title=f"maze generators at {N} x {N} cells (baseline, numpy fill of the grid: {floor * 1e3:.3f} ms)")
    for col in ("kind", "carve min ms", "carve median ms", "ns / cell", "x baseline", f"carve < {CARVE_TARGET_S} s",
                "stats min ms", "stats median ms", f"stats < {STATS_TARGET_S} s"):
        table.add_column(col, justify="right")
    for kind, cls in registry.kinds().items():
        if not issubclass(cls, MazeGenerator):
            continue
        stage = cls(cells=(N, N))
        stage.carve(8, 8, rng_for((0,)))  # compile
        carve, carve_median, tiles = timed(lambda: stage.carve(N, N, rng_for((1,))), SLOW_REPEATS.get(kind, REPEATS))
        maze_stats(tiles)  # compile
        stats, stats_median, _ = timed(lambda: maze_stats(tiles), REPEATS)
        table.add_row(
            kind,
            f"{carve * 1e3:.1f}",
            f"{carve_median * 1e3:.1f}",
            f"{carve * 1e9 / (N * N):.0f}",
            f"{carve / floor:.0f}x",
            "exempt" if kind in EXEMPT else "yes" if carve <= CARVE_TARGET_S else "no",
            f"{stats * 1e3:.1f}",
            f"{stats_median * 1e3:.1f}",
            "yes" if stats <= STATS_TARGET_S else "no",
        )
    Console(width=160).print(table)  # wide enough for the kind names when piped


if __name__ == "__main__":
    main()
