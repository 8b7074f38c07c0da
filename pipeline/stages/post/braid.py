"""Braiding: remove dead ends by opening a wall, which adds loops."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY, below, permutation
from pipeline.stages.post.maze_input import MazeEdit


@stage("post.braid", version=2)
class Braid(MazeEdit):
    """Braid a maze: open a `fraction` of its dead ends into loops. Visit them in random order
    and open one more wall of each, preferring a wall into another dead end so that one opening
    removes two.

    A fully braided maze (`fraction = 1`) has no dead ends, only loops (except where a dead end
    has no closed wall to another cell, as at the ends of a one-cell-wide maze): harder to solve
    by following walls, and no place for a player to be cornered.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    fraction: float = Field(1.0, ge=0, le=1, description="Fraction of the dead ends to remove.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        grid = self.open_grid(level)
        return self.result(level, braid(grid, self.fraction, rng))


@compiled
def braid(grid: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    out = grid.copy()
    h = (out.shape[0] - 1) // 2
    w = (out.shape[1] - 1) // 2
    ends = np.empty(w * h, dtype=np.int64)
    m = np.int64(0)  # not a literal: numba would compile `permutation` once more for 0
    for y in range(h):
        for x in range(w):
            if out[2 * y + 1, 2 * x + 1] and _sides(out, x, y) == 1:
                ends[m] = y * w + x
                m += 1
    if m == 0:
        return out
    # Loops rather than `ends[:m][order]`: fancy indexing is slow to compile.
    order = permutation(rng, m)
    shuffled = np.empty(m, dtype=np.int64)
    for k in range(m):
        shuffled[k] = ends[order[k]]
    ends = shuffled
    todo = int(round(fraction * m))
    preferred = np.empty(4, dtype=np.int64)
    other = np.empty(4, dtype=np.int64)
    for k in range(todo):
        c = ends[k]
        x = c % w
        y = c // w
        if _sides(out, x, y) != 1:
            continue  # a braid from a neighbouring dead end already opened this one
        p = np.int64(0)  # not literals: numba would compile `below` once more for 0
        q = np.int64(0)
        for d in range(4):
            nx = x + DX[d]
            ny = y + DY[d]
            if 0 <= nx < w and 0 <= ny < h and out[2 * ny + 1, 2 * nx + 1] and not out[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]]:
                if _sides(out, nx, ny) == 1:
                    preferred[p] = d
                    p += 1
                else:
                    other[q] = d
                    q += 1
        if p > 0:
            d = preferred[below(rng, p)]  # the draw of rng.integers(0, p), without compiling it
        elif q > 0:
            d = other[below(rng, q)]
        else:
            continue  # boxed in by walls of the grid or closed cells
        out[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]] = 1
    return out


@compiled
def _sides(grid: np.ndarray, x: int, y: int) -> int:
    return int(grid[2 * y, 2 * x + 1] != 0) + int(grid[2 * y + 2, 2 * x + 1] != 0) + int(grid[2 * y + 1, 2 * x] != 0) + int(grid[2 * y + 1, 2 * x + 2] != 0)
