"""Wilson's algorithm: loop-erased random walks into a growing tree."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY, RANGE_62_BITS, below
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.wilson", version=2)
class Wilson(MazeGenerator):
    """Wilson's algorithm: add loop-erased random walks to the maze until it fills the grid.
    From each cell not yet in the maze, walk at random until the walk hits the maze, erase the
    loops it made, and add the path.

    Samples spanning trees uniformly like Aldous-Broder (about 29% dead ends, no bias), usually
    much faster: its first walks are long, later ones short.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_wilson(w, h, rng)


@compiled
def carve_wilson(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    n = w * h
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    in_tree = np.empty(n, dtype=np.bool_)
    in_tree[:] = False
    step_dir = np.empty(n, dtype=np.int8)  # the last direction the walk left each cell by
    step_dir[:] = 0
    root = below(rng, n)
    in_tree[root] = True
    tiles[2 * (root // w) + 1, 2 * (root % w) + 1] = 1
    bits = 0
    left = 0
    for start in range(n):
        if in_tree[start]:
            continue
        # Walk until the tree is hit; overwriting each cell's exit direction erases the loops.
        x = start % w
        y = start // w
        while not in_tree[y * w + x]:
            # Two random bits per step (graph.RANGE_62_BITS), kept in registers: the walks take
            # tens of millions of steps and a helper's memory round trip shows.
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
            step_dir[y * w + x] = d
            x = nx
            y = ny
        # Follow the loop-erased path from the start and add it to the tree.
        x = start % w
        y = start // w
        while not in_tree[y * w + x]:
            c = y * w + x
            in_tree[c] = True
            tiles[2 * y + 1, 2 * x + 1] = 1
            d = step_dir[c]
            tiles[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]] = 1
            x += DX[d]
            y += DY[d]
    return tiles
