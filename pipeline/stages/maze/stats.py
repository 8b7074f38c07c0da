"""Maze statistics, written into every maze Level's properties (and so into manifests and TMX).

- `cells`: open cells; `dead_ends` and `dead_end_pct`: open cells with exactly one way out;
- `solution_pct`: cells on the shortest path from entrance to exit, as a percentage of cells;
  the entrance and exit are the first and last open cells in reading order (`corners`, the
  top-left and bottom-right of a full maze) or the two ends of the longest shortest path
  (`farthest`);
- `entrance` and `exit`: those two cells, as the tile each is ("x,y", tiles from the map's
  top-left: cell (cx, cy) is tile (2cx + 1, 2cy + 1)), the unit of every other position a map
  file holds;
- `diameter`: the longest shortest path in steps, by a double breadth-first sweep (exact on
  perfect mazes, a lower bound where there are loops);
- `loops`: passages - cells + components, the number of independent cycles (0 for perfect mazes);
- `straightness`: of the corridor cells (exactly two ways out), the fraction that go straight on.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipeline.level import PropertyValue
from pipeline.jit import compiled
from pipeline.level.tile_record import tile_record

Solution = Literal["corners", "farthest"]


# What maze_stats returns, for the stages that add them (`adds_stats`).
MAZE_STATS = ("cells", "dead_ends", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness", "entrance", "exit")


def maze_stats(tiles: np.ndarray, solution: Solution = "corners") -> dict[str, PropertyValue]:
    w = (tiles.shape[1] - 1) // 2
    cells, dead_ends, corridors, straight, passages, components, diameter, path, entrance, exit_ = _measure(
        tiles, solution == "farthest"
    )
    # Every key is always present, so a stage's stats never mix with stale ones from its input.
    return {
        "cells": int(cells),
        "dead_ends": int(dead_ends),
        "dead_end_pct": round(100.0 * dead_ends / cells, 3) if cells else 0.0,
        "solution_pct": round(100.0 * (path + 1) / cells, 3) if cells else 0.0,
        "diameter": int(diameter) if cells else 0,
        "loops": int(passages - cells + components),
        "straightness": round(float(straight) / max(1, int(corridors)), 4),
        "entrance": tile_record(2 * (entrance % w) + 1, 2 * (entrance // w) + 1) if cells else "",
        "exit": tile_record(2 * (exit_ % w) + 1, 2 * (exit_ // w) + 1) if cells else "",
    }


# Bits of a cell's byte in `_measure`'s `ways`: the passages to open neighbouring cells (north,
# east, south, west: the order of graph.DX/DY, so sweeps queue cells in the order they always
# did), whether the cell is open; bits FIRST and SECOND mark the cells each of a part's two
# sweeps has reached.
_OPEN = 16
FIRST, SECOND = np.int64(5), np.int64(6)  # not int literals: one compile of _sweep serves both


@compiled
def _measure(tiles: np.ndarray, farthest: bool) -> tuple[int, int, int, int, int, int, int, int, int, int]:
    """(cells, dead ends, corridors, straight corridors, passages, parts, diameter, solution
    steps, entrance cell, exit cell).

    One pass over the tiles counts everything local and keeps a byte per cell (its passages and
    marks), so the sweeps touch 1 MB at 1000^2 cells instead of five tiles over three rows and a
    distance array. Each connected part gets a double sweep (the farthest cell from any cell,
    then the farthest from that one); the diameter is the largest over the parts. `corners`: the
    entrance is the first open cell in reading order and the exit the last one in the same part.
    """
    h = (tiles.shape[0] - 1) // 2
    w = (tiles.shape[1] - 1) // 2
    n = h * w
    # Cell c's byte is ways[c + pad]: a row of zeros either side lets the sweeps read the north
    # and south neighbours of any cell without a bounds test.
    pad = w + 1
    ways = np.empty(n + 2 * pad, dtype=np.uint8)
    ways[:] = 0
    cells = 0
    dead_ends = 0
    corridors = 0
    straight = 0
    passages = 0
    # Arithmetic instead of branches on the tiles: a maze's walls are coin flips to the branch
    # predictor. A missing neighbour row or column reads the cell's own, masked by `has_*`.
    for y in range(h):
        r = 2 * y + 1
        up = r - 2 if y > 0 else r
        down = r + 2 if y + 1 < h else r
        has_up = 1 if y > 0 else 0
        has_down = 1 if y + 1 < h else 0
        base = pad + y * w
        for x in range(w):
            col = 2 * x + 1
            left = col - 2 if x > 0 else col
            right = col + 2 if x + 1 < w else col
            here = int(tiles[r, col] != 0)
            # The sides count openings in the border too (an exit carved by another stage);
            # passages need an open cell on the other side.
            north = int(tiles[r - 1, col] != 0)
            south = int(tiles[r + 1, col] != 0)
            west = int(tiles[r, col - 1] != 0)
            east = int(tiles[r, col + 1] != 0)
            sides = north + south + west + east
            to_north = north & has_up & int(tiles[up, col] != 0)
            to_south = south & has_down & int(tiles[down, col] != 0)
            to_west = west & (1 if x > 0 else 0) & int(tiles[r, left] != 0)
            to_east = east & (1 if x + 1 < w else 0) & int(tiles[r, right] != 0)
            corridor = here & int(sides == 2)
            cells += here
            dead_ends += here & int(sides == 1)
            corridors += corridor
            straight += corridor & ((north & south) | (east & west))
            passages += here * (to_east + to_south)
            ways[base + x] = here * (_OPEN | to_north | to_east << 1 | to_south << 2 | to_west << 3)
    queue = np.empty(n + 1, dtype=np.int32)  # + 1: a sweep writes one slot past its last cell
    parts = 0
    diameter = -1
    far_a = -1
    far_b = -1
    entrance = -1
    exit_ = -1
    steps = -1
    for p in range(pad, pad + n):
        if ways[p] & (_OPEN | 1 << FIRST) != _OPEN:
            continue
        parts += 1
        a, _, last, last_dist = _sweep(ways, w, p, FIRST, queue)
        if entrance < 0:
            entrance = p - pad  # the first open cell starts the first part
            exit_ = last - pad
            steps = last_dist
        b, length, _, _ = _sweep(ways, w, a, SECOND, queue)
        if length > diameter:
            diameter = length
            far_a = a - pad
            far_b = b - pad
    if farthest:
        steps, entrance, exit_ = diameter, far_a, far_b
    return cells, dead_ends, corridors, straight, passages, parts, diameter, steps, entrance, exit_


@compiled
def _sweep(ways: np.ndarray, w: int, start: int, bit: int, queue: np.ndarray) -> tuple[int, int, int, int]:
    """A breadth-first sweep from `start`, setting `bit` on every cell it reaches: (the farthest
    cell, the first queued at the largest distance; that distance; the highest-numbered cell
    reached; its distance).

    Level by level, so distances come from the level count instead of a per-cell array; a cell's
    mark in `ways` is the visited test, read from the same byte as its passages. Every neighbour
    is written to the queue and the tail moves on only when it was new: branches on a maze's
    random passages mispredict about half the time, and this way there are none.
    """
    ways[start] |= np.uint8(1 << bit)
    queue[0] = start
    head = 0
    tail = 1
    level_end = 1
    d = 0
    far = start
    top = start
    top_dist = 0
    while True:
        p = queue[head]
        head += 1
        if p > top:
            top = p
            top_dist = d
        bits = np.int32(ways[p])
        q = p - w
        new = bits & ~(np.int32(ways[q]) >> bit) & 1
        ways[q] |= np.uint8(new << bit)
        queue[tail] = q
        tail += new
        q = p + 1
        new = (bits >> 1) & ~(np.int32(ways[q]) >> bit) & 1
        ways[q] |= np.uint8(new << bit)
        queue[tail] = q
        tail += new
        q = p + w
        new = (bits >> 2) & ~(np.int32(ways[q]) >> bit) & 1
        ways[q] |= np.uint8(new << bit)
        queue[tail] = q
        tail += new
        q = p - 1
        new = (bits >> 3) & ~(np.int32(ways[q]) >> bit) & 1
        ways[q] |= np.uint8(new << bit)
        queue[tail] = q
        tail += new
        if head == level_end:
            if tail == level_end:
                return far, d, top, top_dist
            d += 1
            far = queue[head]
            level_end = tail
