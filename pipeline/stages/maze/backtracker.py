"""Recursive backtracker (depth-first search), MarkovJunior's `RBB=GGR` maze."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.block import FLOOR
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.backtracker", version=3)
class Backtracker(MazeGenerator):
    """Recursive backtracker: a random depth-first walk that backs up at dead ends.

    Gives long, winding corridors with few dead ends (about 10% of cells) and a low branching
    factor: the classic "river" maze. Output is a perfect maze (a spanning tree of the cells) in
    block form: `cells = [w, h]` becomes a (2h+1) x (2w+1) tile grid of `wall` and `floor`.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        start = int(rng.integers(w * h))
        # One uniform draw per carve step: the walk carves exactly w*h - 1 passages.
        choices = rng.random(w * h - 1)
        return carve_backtracker(w, h, start, choices)


@compiled
def carve_backtracker(w: int, h: int, start: int, choices: np.ndarray) -> np.ndarray:
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    visited = np.empty(w * h, dtype=np.bool_)
    visited[:] = False
    stack = np.empty(w * h, dtype=np.int64)
    options = np.empty(4, dtype=np.int64)
    top = 0
    stack[0] = start
    visited[start] = True
    tiles[2 * (start // w) + 1, 2 * (start % w) + 1] = FLOOR
    step = 0
    while top >= 0:
        cell = stack[top]
        x = cell % w
        y = cell // w
        n = 0
        if y > 0 and not visited[cell - w]:
            options[n] = cell - w
            n += 1
        if x < w - 1 and not visited[cell + 1]:
            options[n] = cell + 1
            n += 1
        if y < h - 1 and not visited[cell + w]:
            options[n] = cell + w
            n += 1
        if x > 0 and not visited[cell - 1]:
            options[n] = cell - 1
            n += 1
        if n == 0:
            top -= 1
            continue
        nxt = options[int(choices[step] * n)]
        step += 1
        nx = nxt % w
        ny = nxt // w
        tiles[y + ny + 1, x + nx + 1] = FLOOR  # the wall between the two cells
        tiles[2 * ny + 1, 2 * nx + 1] = FLOOR
        visited[nxt] = True
        top += 1
        stack[top] = nxt
    return tiles
