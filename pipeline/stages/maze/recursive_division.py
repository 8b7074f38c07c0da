"""Recursive division: split an open room with a wall, leave one gap, repeat in both halves."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.grid.graph import below
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.recursive_division", version=2)
class RecursiveDivision(MazeGenerator):
    """Recursive division: split open rooms by walls with one gap until rooms are one cell wide.
    Start from one open room, add a wall with a single gap across it, and divide each side the
    same way.

    The only wall adder of the catalogue: long straight walls give a boxy, rectangular texture
    (about 23% dead ends). A room w cells wide and h high is cut by a horizontal wall with
    probability h / (w + h), so long rooms are usually cut across.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_recursive_division(w, h, rng)


@compiled
def carve_recursive_division(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    tiles[1:-1, 1:-1] = 1
    tiles[2:-1:2, 2:-1:2] = 0  # pillars stay wall
    stack = np.empty((2 * w * h + 1, 4), dtype=np.int32)  # regions (x, y, w, h) in cells
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = w
    stack[0, 3] = h
    top = 1
    while top > 0:
        top -= 1
        rx = stack[top, 0]
        ry = stack[top, 1]
        rw = stack[top, 2]
        rh = stack[top, 3]
        if rw < 2 and rh < 2:
            continue
        horizontal = rng.random() * (rw + rh) < rh
        if rw < 2:
            horizontal = True
        elif rh < 2:
            horizontal = False
        if horizontal:
            k = below(rng, rh - 1)  # the wall lies below row ry + k
            gap = rx + below(rng, np.int64(rw))  # int64, as elsewhere: an int32 compiles `below` again
            row = 2 * (ry + k) + 2
            for x in range(rx, rx + rw):
                if x != gap:
                    tiles[row, 2 * x + 1] = 0
            stack[top, 0] = rx
            stack[top, 1] = ry
            stack[top, 2] = rw
            stack[top, 3] = k + 1
            stack[top + 1, 0] = rx
            stack[top + 1, 1] = ry + k + 1
            stack[top + 1, 2] = rw
            stack[top + 1, 3] = rh - k - 1
        else:
            k = below(rng, rw - 1)  # the wall lies right of column rx + k
            gap = ry + below(rng, np.int64(rh))
            col = 2 * (rx + k) + 2
            for y in range(ry, ry + rh):
                if y != gap:
                    tiles[2 * y + 1, col] = 0
            stack[top, 0] = rx
            stack[top, 1] = ry
            stack[top, 2] = k + 1
            stack[top, 3] = rh
            stack[top + 1, 0] = rx + k + 1
            stack[top + 1, 1] = ry
            stack[top + 1, 2] = rw - k - 1
            stack[top + 1, 3] = rh
        top += 2
    return tiles
