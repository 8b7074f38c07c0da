"""Hunt-and-kill: a random walk that, when stuck, hunts for a new place to start."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.grid.graph import DX, DY, below, neighbours_where


@stage("maze.hunt_and_kill", version=2)
class HuntAndKill(MazeGenerator):
    """Hunt-and-kill: a random walk that, when stuck, hunts for a new start next to the maze.
    Walk at random into unvisited cells; when the walk is stuck, scan the grid row by row for an
    unvisited cell next to the maze, join it, and walk on from there.

    Like the recursive backtracker it makes long winding passages (about 11% dead ends), but needs
    no stack.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_hunt_and_kill(w, h, rng)


@compiled
def carve_hunt_and_kill(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    n = w * h
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    visited = np.empty(n, dtype=np.bool_)
    visited[:] = False
    unvisited_in_row = np.empty(h, dtype=np.int64)
    unvisited_in_row[:] = w
    options = np.empty(4, dtype=np.int64)
    c = below(rng, n)
    visited[c] = True
    unvisited_in_row[c // w] -= 1
    tiles[2 * (c // w) + 1, 2 * (c % w) + 1] = 1
    remaining = n - 1
    hunt_row = 0  # rows above this one are fully visited
    while remaining > 0:
        x = c % w
        y = c // w
        # np.bool_, not literals: one compile of the helper serves both searches.
        m = neighbours_where(visited, np.bool_(False), x, y, w, h, options)
        if m > 0:  # kill: walk on
            d = options[below(rng, m)]
        else:  # hunt: the first unvisited cell, in reading order, with a visited neighbour
            while unvisited_in_row[hunt_row] == 0:
                hunt_row += 1
            found = False
            for yy in range(hunt_row, h):
                if unvisited_in_row[yy] == 0:
                    continue
                for xx in range(w):
                    if visited[yy * w + xx]:
                        continue
                    m = neighbours_where(visited, np.bool_(True), xx, yy, w, h, options)
                    if m > 0:
                        # Join the found cell to a random visited neighbour; the walk goes on from it.
                        back = options[below(rng, m)]
                        c = yy * w + xx
                        x = xx + DX[back]
                        y = yy + DY[back]
                        d = (back + 2) % 4  # from that neighbour into the found cell
                        found = True
                        break
                if found:
                    break
        nx = x + DX[d]
        ny = y + DY[d]
        c = ny * w + nx
        visited[c] = True
        unvisited_in_row[ny] -= 1
        tiles[2 * ny + 1, 2 * nx + 1] = 1
        tiles[y + ny + 1, x + nx + 1] = 1
        remaining -= 1
    return tiles
