"""Sidewinder: runs along each row, each run opening one passage north."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.grid.graph import below
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.sidewinder", version=2)
class Sidewinder(MazeGenerator):
    """Sidewinder: carve runs of cells east-west, each opening one passage north. The top row is
    one open corridor; every other row is cut into random runs of cells joined east-west, and
    each run opens one passage north from a random cell of it.

    About 27% dead ends, with a vertical texture and an unbroken top corridor; solving it from the
    bottom up is easy, since no dead end points north.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_sidewinder(w, h, rng)


@compiled
def carve_sidewinder(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    tiles[1::2, 1::2] = 1
    tiles[1, 1:-1] = 1  # the top row is one corridor
    for y in range(1, h):
        run_start = 0
        for x in range(w):
            if x == w - 1 or rng.random() < 0.5:
                # Close the run: one passage north from a random cell of it.
                up = run_start + below(rng, x - run_start + 1)
                tiles[2 * y, 2 * up + 1] = 1
                run_start = x + 1
            else:
                tiles[2 * y + 1, 2 * x + 2] = 1
    return tiles
