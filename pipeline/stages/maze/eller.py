"""Eller's algorithm: a perfect maze one row at a time."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.grid.graph import below, find, union


@stage("maze.eller", version=2)
class Eller(MazeGenerator):
    """Eller's algorithm: carve the maze row by row, remembering only the current row. Keep
    which cells of that row are already connected; join neighbours at random, send at least one
    passage down from every set, and close all sets on the last row.

    Needs memory for one row only, so it can stream mazes of unlimited height; about 28% dead
    ends with a slight horizontal texture.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_eller(w, h, rng)


@compiled
def carve_eller(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    tiles[1::2, 1::2] = 1
    # Union-find over cells: a row's sets, carried down by its passages. int32, as every caller
    # of graph.union passes it: one compile of union serves them all.
    parent = np.arange(w * h).astype(np.int32)
    members = np.empty(w * h, dtype=np.int64)
    members[:] = 0
    skip = np.empty(w * h, dtype=np.int64)
    skip[:] = 0
    has_down = np.empty(w * h, dtype=np.bool_)
    has_down[:] = False
    down = np.empty(w, dtype=np.bool_)
    down[:] = False
    for y in range(h):
        base = y * w
        last = y == h - 1
        for x in range(w - 1):
            if find(parent, base + x) != find(parent, base + x + 1) and (last or rng.random() < 0.5):
                union(parent, base + x, base + x + 1)
                tiles[2 * y + 1, 2 * x + 2] = 1
        if last:
            break
        # Each cell goes down with probability 1/2; a set that sent no passage down then sends
        # one from a member chosen uniformly, so no set is cut off.
        for x in range(w):
            r = find(parent, base + x)
            members[r] = 0
            has_down[r] = False
            skip[r] = -1
        for x in range(w):
            r = find(parent, base + x)
            members[r] += 1
            down[x] = rng.random() < 0.5
            if down[x]:
                has_down[r] = True
        for x in range(w):
            r = find(parent, base + x)
            if not has_down[r] and skip[r] < 0:
                skip[r] = below(rng, members[r])
        for x in range(w):
            r = find(parent, base + x)
            if not has_down[r]:
                down[x] = skip[r] == 0
                skip[r] -= 1
        for x in range(w):
            if down[x]:
                union(parent, base + x, base + w + x)
                tiles[2 * y + 2, 2 * x + 1] = 1
    return tiles
