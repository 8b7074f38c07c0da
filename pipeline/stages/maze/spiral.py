"""Spiral mazes: blocks carved as spirals, joined into one maze."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY, below
from pipeline.stages.maze.nonperfect import NonPerfectGenerator
from pipeline.stages.maze.rooms import join_blocks


@stage("maze.spiral", version=2)
class Spiral(NonPerfectGenerator):
    """Spiral maze: blocks of spiralling passages joined by doors, with loops. The grid is cut
    into blocks of `spiral` x `spiral` cells, each carved as one passage winding from a random
    corner to its centre (clockwise or not, at random); the blocks are joined into a random tree
    by single doors, and `cut_walls` adds loops.
    """

    spiral: int = Field(8, ge=2, le=256, description="Block size in cells: the width of one spiral.")

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        tiles = carve_spirals(w, h, self.spiral, rng)
        join_blocks(tiles, self.spiral, rng)
        return tiles


@compiled
def carve_spirals(w: int, h: int, size: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    tiles[1::2, 1::2] = 1
    visited = np.empty(w * h, dtype=np.bool_)
    visited[:] = False
    for y0 in range(0, h, size):
        for x0 in range(0, w, size):
            x1 = min(x0 + size, w) - 1
            y1 = min(y0 + size, h) - 1
            corner = below(rng, np.int64(4))  # a literal 4 would compile `below` once more
            clockwise = rng.random() < 0.5
            turn = 1 if clockwise else 3
            # Start at a corner heading along an edge, keeping the block's inside on the turn side.
            if corner == 0:
                x, y, d = x0, y0, 1 if clockwise else 2
            elif corner == 1:
                x, y, d = x1, y0, 2 if clockwise else 3
            elif corner == 2:
                x, y, d = x1, y1, 3 if clockwise else 0
            else:
                x, y, d = x0, y1, 0 if clockwise else 1
            visited[y * w + x] = True
            while True:
                moved = False
                for _ in range(2):
                    nx = x + DX[d]
                    ny = y + DY[d]
                    if x0 <= nx <= x1 and y0 <= ny <= y1 and not visited[ny * w + nx]:
                        tiles[y + ny + 1, x + nx + 1] = 1
                        visited[ny * w + nx] = True
                        x = nx
                        y = ny
                        moved = True
                        break
                    d = (d + turn) % 4
                if not moved:
                    break
    return tiles
