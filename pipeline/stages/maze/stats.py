"""Maze statistics, written into every maze Level's properties (and so into manifests and TMX).

- `cells`: open cells; `dead_ends` and `dead_end_pct`: open cells with exactly one way out;
- `solution_pct`: cells on the shortest path from entrance to exit, as a percentage of cells;
  the entrance and exit are the first and last open cells in reading order (`corners`, the
  top-left and bottom-right of a full maze) or the two ends of the longest shortest path
  (`farthest`);
- `diameter`: the longest shortest path in steps, by a double breadth-first sweep (exact on
  perfect mazes, a lower bound where there are loops);
- `loops`: passages - cells + components, the number of independent cycles (0 for perfect mazes);
- `straightness`: of the corridor cells (exactly two ways out), the fraction that go straight on.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipeline.level import PropertyValue
from pipeline.grid.graph import bfs
from pipeline.jit import compiled

Solution = Literal["corners", "farthest"]


# What maze_stats returns, for the stages that add them (`adds_stats`).
MAZE_STATS = ("cells", "dead_ends", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness", "entrance", "exit")


def maze_stats(tiles: np.ndarray, solution: Solution = "corners") -> dict[str, PropertyValue]:
    floor = tiles != 0
    cell_open = floor[1::2, 1::2]
    north = floor[0:-1:2, 1::2] & cell_open
    south = floor[2::2, 1::2] & cell_open
    west = floor[1::2, 0:-1:2] & cell_open
    east = floor[1::2, 2::2] & cell_open
    sides = north.astype(np.int8) + south + west + east
    cells = int(np.count_nonzero(cell_open))
    dead_ends = int(np.count_nonzero(sides == 1))
    corridors = sides == 2
    straight = corridors & ((north & south) | (east & west))
    # A passage is an open wall tile between two open cells (east and south ones, counted once).
    passages = int(np.count_nonzero(floor[1::2, 2:-1:2] & cell_open[:, :-1] & cell_open[:, 1:]))
    passages += int(np.count_nonzero(floor[2:-1:2, 1::2] & cell_open[:-1, :] & cell_open[1:, :]))
    flat_open = np.ascontiguousarray(cell_open).reshape(-1)
    components, diameter, path, entrance, exit_ = (
        _walks(np.ascontiguousarray(floor.view(np.uint8)), flat_open, solution == "farthest") if cells else (0, 0, -1, -1, -1)
    )
    w = cell_open.shape[1]
    # Every key is always present, so a stage's stats never mix with stale ones from its input.
    return {
        "cells": cells,
        "dead_ends": dead_ends,
        "dead_end_pct": round(100.0 * dead_ends / cells, 3) if cells else 0.0,
        "solution_pct": round(100.0 * (path + 1) / cells, 3) if cells else 0.0,
        "diameter": int(diameter),
        "loops": passages - cells + int(components),
        "straightness": round(float(np.count_nonzero(straight)) / max(1, int(np.count_nonzero(corridors))), 4),
        "entrance": f"{entrance % w},{entrance // w}" if cells else "",
        "exit": f"{exit_ % w},{exit_ // w}" if cells else "",
    }


@compiled
def _walks(tiles: np.ndarray, open_cells: np.ndarray, farthest: bool) -> tuple[int, int, int, int, int]:
    """(parts, diameter, solution steps, entrance cell, exit cell).

    Each connected part gets a double sweep (the farthest cell from any cell, then the farthest
    from that one); the diameter is the largest over the parts. `corners`: the entrance is the
    first open cell in reading order and the exit the last one in the same part.
    """
    n = open_cells.shape[0]
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    parts = 0
    diameter = -1
    far_a = -1
    far_b = -1
    entrance = -1
    exit_ = -1
    steps = -1
    for c in range(n):
        if not open_cells[c] or seen[c]:
            continue
        parts += 1
        a, count = bfs(tiles, open_cells, c, dist, queue)
        if entrance < 0:
            entrance = c  # the first open cell starts the first part
            exit_ = c
            for k in range(count):
                exit_ = max(exit_, queue[k])
            steps = dist[exit_]
        for k in range(count):
            seen[queue[k]] = True
            dist[queue[k]] = -1
        b, count = bfs(tiles, open_cells, a, dist, queue)
        if dist[b] > diameter:
            diameter = dist[b]
            far_a = a
            far_b = b
        for k in range(count):
            dist[queue[k]] = -1
    if farthest:
        return parts, diameter, diameter, far_a, far_b
    return parts, diameter, steps, entrance, exit_
