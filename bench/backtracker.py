"""maze.backtracker speed against the memory floor, measured in the same run.

For each size: the best of several runs of the stage (the numba kernel plus its random draws and
statistics), and the time numpy needs merely to fill a grid of the same shape (the floor no
generator can beat). The ratio is what to watch: it does not depend on how fast this machine is.
"""

from __future__ import annotations


import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import best_of

from pipeline.seeds import rng_for
from pipeline.stages.maze.backtracker import Backtracker

SIZES = (100, 500, 1000)


def main() -> None:
    Backtracker(cells=(8, 8)).run([], rng_for((0, 0, 0)))  # compile (or load the numba cache) first
    table = Table(title="maze.backtracker (best of N runs)")
    for col in ("cells", "tiles", "ms / maze", "ns / cell", "numpy fill ms", "ratio"):
        table.add_column(col, justify="right")
    for n in SIZES:
        repeats = 20 if n <= 500 else 7
        stage = Backtracker(cells=(n, n))
        maze, _ = best_of(lambda: stage.run([], rng_for((0, 1, 2))), repeats)
        shape = (2 * n + 1, 2 * n + 1)
        floor, _ = best_of(lambda: np.ones(shape, dtype=np.uint8), repeats)
        table.add_row(
            f"{n} x {n}",
            f"{shape[0]} x {shape[1]}",
            f"{maze * 1e3:.2f}",
            f"{maze * 1e9 / (n * n):.1f}",
            f"{floor * 1e3:.3f}",
            f"{maze / floor:.0f}x",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
