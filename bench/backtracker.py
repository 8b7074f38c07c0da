"""maze.backtracker speed against the memory floor, measured in the same run.

For each size: the min and median of several runs of the stage on one fixed seed (the numba
kernel plus its random draws and statistics; 20 runs up to 500², 7 at 1000²), and the time numpy
needs merely to fill a grid of the same shape, measured in the same run (the floor no generator
can beat). The ratio (min over the floor's min) is what to watch: it does not depend on how fast
this machine is.
"""

from __future__ import annotations


import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import min_median, ratio

from pipeline.seeds import rng_for
from pipeline.stages.maze.backtracker import Backtracker

SIZES = (100, 500, 1000)


def main() -> None:
    Backtracker(cells=(8, 8)).run([], rng_for((0, 0, 0)))  # compile (or load the numba cache) first
    table = Table(title="maze.backtracker (same seed every run; baseline: numpy fill, same run)")
    for col in ("cells", "tiles", "runs", "min ms", "median ms", "ns / cell", "numpy fill ms", "x numpy fill"):
        table.add_column(col, justify="right")
    for n in SIZES:
        repeats = 20 if n <= 500 else 7
        stage = Backtracker(cells=(n, n))
        maze, median, runs, _ = min_median(lambda: stage.run([], rng_for((0, 1, 2))), repeats)
        shape = (2 * n + 1, 2 * n + 1)
        floor, _, _, _ = min_median(lambda: np.ones(shape, dtype=np.uint8), repeats, budget=0.05)
        table.add_row(
            f"{n} x {n}",
            f"{shape[0]} x {shape[1]}",
            str(runs),
            f"{maze * 1e3:.2f}",
            f"{median * 1e3:.2f}",
            f"{maze * 1e9 / (n * n):.1f}",
            f"{floor * 1e3:.3f}",
            ratio(maze, floor),
        )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
