"""Every maze generator at 1000 x 1000 cells against the memory floor, measured in the same run.

`carve` is the generator alone (what the 0.3 s target is about); `stats` is the statistics pass
every maze stage adds (dead ends, two breadth-first sweeps). Best of 3 runs after a warm-up call
that compiles (or loads from numba's cache) every kernel.
"""

from __future__ import annotations


import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import best_of

from pipeline import registry
from pipeline.seeds import rng_for
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.stages.maze.stats import maze_stats

N = 1000
TARGET_S = 0.3


def main() -> None:
    shape = (2 * N + 1, 2 * N + 1)
    floor, _ = best_of(lambda: np.ones(shape, dtype=np.uint8), 7)
    table = Table(title=f"maze generators at {N} x {N} cells (numpy fill of the grid: {floor * 1e3:.3f} ms)")
    for col in ("kind", "carve ms", "ns / cell", "x numpy fill", f"< {TARGET_S} s", "stats ms"):
        table.add_column(col, justify="right")
    for kind, cls in registry.kinds().items():
        if not issubclass(cls, MazeGenerator):
            continue
        stage = cls(cells=(N, N))
        stage.carve(8, 8, rng_for((0,)))  # compile
        carve, tiles = best_of(lambda: stage.carve(N, N, rng_for((1,))), 3 if kind != "maze.aldous_broder" else 1)
        maze_stats(tiles)  # compile
        stats, _ = best_of(lambda: maze_stats(tiles), 3)
        table.add_row(
            kind,
            f"{carve * 1e3:.1f}",
            f"{carve * 1e9 / (N * N):.0f}",
            f"{carve / floor:.0f}x",
            "yes" if carve < TARGET_S else "no",
            f"{stats * 1e3:.1f}",
        )
    Console().print(table)
