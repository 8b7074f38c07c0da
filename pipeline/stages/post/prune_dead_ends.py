"""Pruning: fill dead ends, shortening branches (sparsifying the maze)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY
from pipeline.stages.post.braid import _sides
from pipeline.stages.post.maze_input import MazeEdit


@stage("post.prune_dead_ends", version=2)
class PruneDeadEnds(MazeEdit):
    """Fill dead ends with wall, pass after pass. Each pass fills every dead end (except a
    `keep` fraction, chosen at random), which may make its neighbour a new dead end for the next
    pass.

    `passes = 1` trims one cell off every branch; `passes = 0` repeats until no dead end is left
    (with `keep = 0`, a perfect maze shrinks to a single cell, and a braided one to its loops).
    Filling a dead end never disconnects anything: every open cell stays reachable.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    keep: float = Field(0.0, ge=0, le=1, description="Fraction of the dead ends left open in each pass.")
    passes: int = Field(1, ge=0, description="Passes to run; 0 repeats until no dead end is left.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        return self.result(level, prune(self.open_grid(level), self.keep, self.passes, rng))


@compiled
def prune(grid: np.ndarray, keep: float, passes: int, rng: np.random.Generator) -> np.ndarray:
    out = grid.copy()
    h = (out.shape[0] - 1) // 2
    w = (out.shape[1] - 1) // 2
    current = np.empty(w * h, dtype=np.int64)
    following = np.empty(w * h, dtype=np.int64)
    kept = np.empty(w * h, dtype=np.bool_)
    kept[:] = False
    m = 0
    open_cells = 0
    for y in range(h):
        for x in range(w):
            if out[2 * y + 1, 2 * x + 1]:
                open_cells += 1
                if _sides(out, x, y) == 1:
                    current[m] = y * w + x
                    m += 1
    done = 0
    while m > 0 and (passes == 0 or done < passes):
        done += 1
        f = 0
        for k in range(m):
            c = current[k]
            x = c % w
            y = c // w
            if kept[c] or _sides(out, x, y) != 1 or open_cells <= 1:
                continue
            if rng.random() < keep:
                kept[c] = True
                continue
            # Fill the cell and its one opening; the neighbour it led to may become a dead end.
            out[2 * y + 1, 2 * x + 1] = 0
            open_cells -= 1
            for d in range(4):
                if out[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]]:
                    out[2 * y + 1 + DY[d], 2 * x + 1 + DX[d]] = 0
                    nx = x + DX[d]
                    ny = y + DY[d]
                    if _sides(out, nx, ny) == 1:
                        following[f] = ny * w + nx
                        f += 1
        current, following = following, current
        m = f
    return out
