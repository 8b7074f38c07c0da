"""Connectivity: join every walkable region with the shortest corridors, or keep the largest."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.grid.graph import DX, DY, union
from pipeline.stages.regions.label import label_regions
from pipeline.stages.common.walkable import WalkableStage


@stage("regions.connect", version=1)
class Connect(WalkableStage):
    """Make the walkable area one region. `mode = "connect"` digs corridors (of the `floor`
    symbol) through walls: every region grows outwards at once, each place where two growths
    meet is a candidate corridor, and the shortest candidates that join new regions are dug, as
    in Kruskal's algorithm, so the corridors are a minimum spanning tree of the regions. The
    outer border is never dug. `mode = "largest"` instead fills every region but the largest
    with the first of `walls`. Sets `regions_joined` and `tiles_dug`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("regions_joined", "tiles_dug")

    mode: Literal["connect", "largest"] = Field("connect", description="Dig corridors, or keep only the largest region.")
    floor: str = Field("floor", description="Symbol written where a corridor is dug.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        labels, sizes = label_regions(self.walkable(level))
        tiles = level.tiles.copy()
        dug = 0
        if self.mode == "largest":
            tiles[labels > 1] = self.indices(level, self.walls[:1], "walls")[0]
        elif len(sizes) > 1:
            carve = join_regions(labels, len(sizes))
            tiles[carve] = self.indices(level, (self.floor,), "floor")[0]
            dug = int(carve.sum())
        return Level(
            tiles=tiles,
            alphabet=level.alphabet,
            layers=dict(level.layers),
            objects=list(level.objects),
            properties={**level.properties, "regions_joined": max(len(sizes) - 1, 0) if self.mode == "connect" else 0, "tiles_dug": dug},
        )


@compiled
def join_regions(labels: np.ndarray, count: int) -> np.ndarray:
    """Tiles to dig so that regions 1..count become one: a multi-source breadth-first search
    from every region at once through the interior, then Kruskal over where growths meet."""
    h, w = labels.shape
    n = h * w
    flat = labels.ravel()
    dist = np.empty(n, dtype=np.int64)
    dist[:] = -1
    owner = np.empty(n, dtype=np.int64)
    owner[:] = 0
    parent = np.empty(n, dtype=np.int64)
    parent[:] = -1
    queue = np.empty(n, dtype=np.int64)
    tail = 0
    for i in range(n):
        if flat[i] > 0:
            dist[i] = 0
            owner[i] = flat[i]
            queue[tail] = i
            tail += 1
    # Meetings: (cost, from tile, to tile); every adjacent pair meets at most twice.
    cost = np.empty(2 * n, dtype=np.int64)
    side_a = np.empty(2 * n, dtype=np.int64)
    side_b = np.empty(2 * n, dtype=np.int64)
    meetings = 0
    head = 0
    while head < tail:
        c = queue[head]
        head += 1
        y = c // w
        x = c - y * w
        for d in range(4):
            ny = y + DY[d]
            nx = x + DX[d]
            if ny < 1 or nx < 1 or ny >= h - 1 or nx >= w - 1:
                continue
            m = ny * w + nx
            if dist[m] < 0:
                dist[m] = dist[c] + 1
                owner[m] = owner[c]
                parent[m] = c
                queue[tail] = m
                tail += 1
            elif owner[m] != owner[c] and owner[m] > 0 and c < m:
                cost[meetings] = dist[c] + dist[m]
                side_a[meetings] = c
                side_b[meetings] = m
                meetings += 1
    # Cheapest meetings first; ties by discovery order. A counting sort on the cost (stable, and
    # costs are at most twice the map's area): linear, and np.argsort inside a kernel took numba
    # a second to compile on a first run.
    top = np.int64(0)
    for e in range(meetings):
        top = max(top, cost[e])
    start = np.empty(top + 2, dtype=np.int64)
    start[:] = 0
    for e in range(meetings):
        start[cost[e] + 1] += 1
    for c in range(top + 1):
        start[c + 1] += start[c]
    order = np.empty(meetings, dtype=np.int64)
    for e in range(meetings):
        order[start[cost[e]]] = e
        start[cost[e]] += 1
    root = np.arange(count + 1).astype(np.int32)  # int32 for every graph.union: one compile
    carve = np.empty(n, dtype=np.bool_)
    carve[:] = False
    joined = 0
    for k in range(meetings):
        if joined == count - 1:
            break
        e = order[k]
        if not union(root, owner[side_a[e]], owner[side_b[e]]):
            continue
        joined += 1
        for t in (side_a[e], side_b[e]):
            while t >= 0 and flat[t] == 0:
                carve[t] = True
                t = parent[t]
    return carve.reshape(h, w)
