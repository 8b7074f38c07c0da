"""Aldous-Broder: a random walk that keeps every first entrance into a cell."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY, RANGE_62_BITS, below
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.aldous_broder", version=2)
class AldousBroder(MazeGenerator):
    """Aldous-Broder: wander at random; the first time the walk enters a cell, keep that passage.

    Samples spanning trees uniformly (every perfect maze equally likely), so it has no bias:
    about 29% dead ends. The walk must cover every cell, which takes super-linear time on big
    grids (cover time ~ n log^2 n): prefer `maze.wilson` for the same distribution, faster.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_aldous_broder(w, h, rng)


@compiled
def carve_aldous_broder(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    visited = np.empty(w * h, dtype=np.bool_)
    visited[:] = False
    c = below(rng, w * h)
    visited[c] = True
    tiles[2 * (c // w) + 1, 2 * (c % w) + 1] = 1
    remaining = w * h - 1
    x = c % w
    y = c // w
    bits = 0
    left = 0
    while remaining > 0:
        # Two random bits per step from a 62-bit draw (graph.RANGE_62_BITS), kept in registers:
        # the walk takes ~n log^2 n steps, and a helper's memory round trip doubles its time. A
        # step off the grid is simply redrawn.
        if left == 0:
            bits = below(rng, RANGE_62_BITS)
            left = 31
        d = bits & 3
        bits >>= 2
        left -= 1
        nx = x + DX[d]
        ny = y + DY[d]
        if nx < 0 or ny < 0 or nx >= w or ny >= h:
            continue
        n = ny * w + nx
        if not visited[n]:
            visited[n] = True
            tiles[2 * ny + 1, 2 * nx + 1] = 1
            tiles[y + ny + 1, x + nx + 1] = 1
            remaining -= 1
        x = nx
        y = ny
    return tiles
