"""Modified Prim's algorithm: join a random frontier cell to the maze."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.grid.graph import DX, DY, below, neighbours_where


@stage("maze.prim_modified", version=2)
class PrimModified(MazeGenerator):
    """Modified Prim's algorithm: grow the maze by a random frontier cell at each step. Keep the
    cells next to the maze (the name is Walter D. Pullen's); each step pick one at random and
    join it to a random neighbour already in the maze.

    The most dead ends of the catalogue's tree growers (about 36%): a spiky, radial texture.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_prim_modified(w, h, rng)


@compiled
def carve_prim_modified(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    n = w * h
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    state = np.empty(n, dtype=np.int8)  # 0 outside, 1 frontier, 2 in the maze
    state[:] = 0
    frontier = np.empty(n, dtype=np.int64)
    options = np.empty(4, dtype=np.int64)
    size = np.int64(0)  # not a literal: numba would compile `below` once more for 0 as it types the loop
    c = below(rng, n)
    while True:
        state[c] = 2
        x = c % w
        y = c // w
        tiles[2 * y + 1, 2 * x + 1] = 1
        for d in range(4):
            nx = x + DX[d]
            ny = y + DY[d]
            if 0 <= nx < w and 0 <= ny < h and state[ny * w + nx] == 0:
                state[ny * w + nx] = 1
                frontier[size] = ny * w + nx
                size += 1
        if size == 0:
            break
        k = below(rng, size)
        c = frontier[k]
        size -= 1
        frontier[k] = frontier[size]
        x = c % w
        y = c // w
        m = neighbours_where(state, 2, x, y, w, h, options)
        d = options[below(rng, m)]
        tiles[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]] = 1
    return tiles
