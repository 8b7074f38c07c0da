"""Connected-component labeling: which tiles belong together."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.stages.maze.graph import find, union
from pipeline.stages.regions.walkable import WalkableStage


@stage("regions.label", version=1)
class Label(WalkableStage):
    """Label the connected regions of the chosen symbols (flood fill, 4- or 8-connected) into a
    `region` layer: 0 elsewhere, 1..N by size, largest first (ties in reading order of their
    first tile). Sets `regions` (N), `region_largest` and `region_sizes` (sizes, largest first,
    comma-separated) in the map's properties.

    `symbols` names what to label; by default every symbol but `walls`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    symbols: tuple[str, ...] = Field((), description="Symbols to label; empty = every symbol but `walls`.")
    connectivity: Literal[4, 8] = Field(4, description="4: regions join through edges; 8: through corners too.")
    layer: str = Field("region", min_length=1, description="Name of the label layer.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        # Straight from the tiles through a symbol table: no mask array in between.
        if self.symbols:
            table = self.table(level, self.symbols, "symbols")
        else:
            table = self.table(level, self.walls, "walls", invert=True)
        h, w = level.tiles.shape
        labels, sizes = label_runs(np.ascontiguousarray(level.tiles).ravel(), table, h, w, self.connectivity == 8)
        props = {
            "regions": len(sizes),
            "region_largest": int(sizes[0]) if len(sizes) else 0,
            "region_sizes": ",".join(str(int(s)) for s in sizes),
        }
        return Level(
            tiles=level.tiles,
            alphabet=level.alphabet,
            layers={**level.layers, self.layer: labels},
            objects=list(level.objects),
            properties={**level.properties, **props},
        )


def label_regions(mask: np.ndarray, connectivity: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """int32 labels 1..N of the connected parts of `mask`, numbered largest first (ties in
    reading order of their first tile), and the sizes."""
    h, w = mask.shape
    flat = np.ascontiguousarray(mask).view(np.uint8).ravel()
    return label_runs(flat, _IDENTITY, h, w, connectivity == 8)


_IDENTITY = np.array([0, 1], dtype=np.uint8)


@compiled
def label_runs(flat: np.ndarray, lut: np.ndarray, h: int, w: int, eight: bool) -> tuple[np.ndarray, np.ndarray]:
    """Connected-component labeling by runs: find each row's runs of tiles t with lut[t] != 0,
    join runs of consecutive rows that touch (union-find, the earlier run as root), then
    number the components by size and paint the runs. Work is one pass over the tiles plus
    one step per run, so long corridors and open caves cost little more than a memory scan."""
    cap = (h * w + 1) // 2 + h
    start = np.empty(cap, dtype=np.int64)
    stop = np.empty(cap, dtype=np.int64)
    row_first = np.empty(h + 1, dtype=np.int64)
    n = 0
    for y in range(h):
        row_first[y] = n
        base = y * w
        inside = 0
        for x in range(w):
            v = 1 if lut[flat[base + x]] != 0 else 0
            if v != inside:
                if v:
                    start[n] = x
                else:
                    stop[n] = x
                    n += 1
                inside = v
        if inside:
            stop[n] = w
            n += 1
    row_first[h] = n
    reach = 1 if eight else 0
    parent = np.arange(n)
    for y in range(1, h):
        k = row_first[y - 1]
        end = row_first[y]
        for i in range(row_first[y], row_first[y + 1]):
            while k < end and stop[k] + reach <= start[i]:
                k += 1
            j = k
            while j < end and start[j] < stop[i] + reach:
                union(parent, j, i)
                j += 1
            if j > k:
                k = j - 1  # the last overlapping run may touch the next run too
    comp = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        r = find(parent, i)
        if r == i:
            comp[i] = count
            count += 1
        else:
            comp[i] = comp[r]
    sizes = np.zeros(count, dtype=np.int64)
    for i in range(n):
        sizes[comp[i]] += stop[i] - start[i]
    order = np.argsort(-sizes, kind="mergesort")  # stable: equal sizes keep reading order
    rank = np.empty(count, dtype=np.int32)
    for i in range(count):
        rank[order[i]] = i + 1
    out = np.zeros(h * w, dtype=np.int32)
    for y in range(h):
        base = y * w
        for i in range(row_first[y], row_first[y + 1]):
            out[base + start[i] : base + stop[i]] = rank[comp[i]]
    return out.reshape(h, w), sizes[order]
