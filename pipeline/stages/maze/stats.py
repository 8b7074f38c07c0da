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
from pipeline.stages.maze.graph import bfs, flood
from pipeline.jit import compiled

Solution = Literal["corners", "farthest"]


def maze_stats(tiles: np.ndarray, solution: Solution = "corners") -> dict[str, PropertyValue]:
    floor = tiles != 0
    cell_open = floor[1::2, 1::2]
    north = floor[0:-1:2, 1::2] & cell_open
    south = floor[2::2, 1::2] & cell_open
    west = floor[1::2, 0:-1:2] & cell_open
    east = floor[1::2, 2::2] & cell_open
    sides = north.astype(np.int8) + south + west + east
    cells = int(np.count_nonzero(cell_open))
    if cells == 0:
        return {"cells": 0}
    dead_ends = int(np.count_nonzero(sides == 1))
    corridors = sides == 2
    straight = corridors & ((north & south) | (east & west))
    # A passage is an open wall tile between two open cells (east and south ones, counted once).
    passages = int(np.count_nonzero(floor[1::2, 2:-1:2] & cell_open[:, :-1] & cell_open[:, 1:]))
    passages += int(np.count_nonzero(floor[2:-1:2, 1::2] & cell_open[:-1, :] & cell_open[1:, :]))
    flat_open = np.ascontiguousarray(cell_open).reshape(-1)
    components, diameter, path, entrance, exit_ = _walks(np.ascontiguousarray(floor.view(np.uint8)), flat_open, solution == "farthest")
    w = cell_open.shape[1]
    return {
        "cells": cells,
        "dead_ends": dead_ends,
        "dead_end_pct": round(100.0 * dead_ends / cells, 3),
        "solution_pct": round(100.0 * (path + 1) / cells, 3),
        "diameter": int(diameter),
        "loops": passages - cells + int(components),
        "straightness": round(float(np.count_nonzero(straight)) / max(1, int(np.count_nonzero(corridors))), 4),
        "entrance": f"{entrance % w},{entrance // w}",
        "exit": f"{exit_ % w},{exit_ // w}",
    }


@compiled
def _walks(tiles: np.ndarray, open_cells: np.ndarray, farthest: bool) -> tuple[int, int, int, int, int]:
    """(components, diameter, solution steps, entrance cell, exit cell)."""
    n = open_cells.shape[0]
    first = -1
    last = -1
    cells = 0
    for c in range(n):
        if open_cells[c]:
            cells += 1
            if first < 0:
                first = c
            last = c
    dist = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    # Double sweep in the entrance's part: the farthest cell from the entrance, then the farthest
    # from that one. The first sweep also gives the corner-to-corner solution.
    a, reached = bfs(tiles, open_cells, first, dist, queue)
    steps = dist[last]
    b, _ = bfs(tiles, open_cells, a, dist, queue)
    diameter = dist[b]
    # Count the parts the entrance's sweep did not reach (none in a connected maze).
    components = 1
    if reached < cells:
        seen = np.zeros(n, dtype=np.bool_)
        flood(tiles, open_cells, first, seen, queue)
        for c in range(n):
            if open_cells[c] and not seen[c]:
                components += 1
                flood(tiles, open_cells, c, seen, queue)
    if farthest:
        return components, diameter, diameter, a, b
    return components, diameter, steps, first, last
