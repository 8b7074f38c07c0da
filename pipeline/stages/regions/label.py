"""Connected-component labeling: which tiles belong together."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.stages.maze.graph import find
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
        if self.symbols:
            table = self.table(level, self.symbols, "symbols")
        else:
            table = self.table(level, self.walls, "walls", invert=True)
        labels, sizes = label_symbols(level.tiles, table[: len(level.alphabet)].astype(bool), self.connectivity == 8)
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
    return label_symbols(mask.view(np.uint8), np.array([False, True]), connectivity == 8)


def label_symbols(tiles: np.ndarray, inside: np.ndarray, eight: bool) -> tuple[np.ndarray, np.ndarray]:
    """Label the connected parts of the tiles t with inside[t] (one bool per symbol): int32
    labels 1..N, largest first (ties in reading order of their first tile), and the sizes."""
    h, w = tiles.shape
    # Whole 64-bit words per row, and at least one blank cell after it so that runs of
    # neighbouring rows never touch in the packed bits.
    padded = (w + 64) // 64 * 64
    # The shorter list of symbols to compare against: the ones inside, or the ones outside.
    on = np.flatnonzero(inside).astype(np.uint8)
    off = np.flatnonzero(~inside).astype(np.uint8)
    equal = len(on) <= len(off)
    bits = _pack_rows(np.ascontiguousarray(tiles).ravel(), on if equal else off, equal, h, w, padded)
    return _label_bits(bits, h, w, padded, eight)


# Index of a word's lowest set bit without numba's intrinsics (importing those loads numba at
# import time): multiplying the isolated bit by a de Bruijn sequence puts a unique 6-bit
# pattern in the top bits.
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_INDEX = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _BIT_INDEX[((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58] = _i


@compiled
def _pack_rows(flat: np.ndarray, symbols: np.ndarray, equal: bool, h: int, w: int, padded: int) -> np.ndarray:
    """One bit per tile, set inside, in rows of `padded` bits. Compares over row slices
    vectorise; a table lookup per tile (a gather) would not, and costs several times more."""
    inside = np.zeros(h * padded, dtype=np.uint8)
    for y in range(h):
        row = flat[y * w : (y + 1) * w]
        out = inside[y * padded : y * padded + w]
        if equal:
            for s in symbols:
                for x in range(w):
                    out[x] |= row[x] == s
        else:
            out[:] = 1
            for s in symbols:
                for x in range(w):
                    out[x] &= row[x] != s
    eights = inside.view(np.uint64)
    bits = np.empty(eights.size // 8, dtype=np.uint64)
    for j in range(bits.size):
        word = np.uint64(0)
        for k in range(8):
            # Gathers the low bit of each of 8 bytes into one byte, first byte lowest.
            byte = (eights[8 * j + k] * np.uint64(0x0102040810204080)) >> np.uint64(56)
            word |= byte << np.uint64(8 * k)
        bits[j] = word
    return bits


@compiled
def _label_bits(bits: np.ndarray, h: int, w: int, padded: int, eight: bool) -> tuple[np.ndarray, np.ndarray]:
    """Connected-component labeling by runs: find every run of set bits (a word at a time),
    join runs of consecutive rows that touch (union-find, the earliest run as root), number
    the components by size, and paint. Work is one pass over the bits plus a few steps per
    run, so long corridors and open caves cost little more than writing the output."""
    # Run boundaries, as positions in the padded rows: wherever a bit differs from the one before.
    edges = np.empty(h * padded + 1, dtype=np.int64)
    m = 0
    carry = np.uint64(0)
    for j in range(bits.size):
        word = bits[j]
        flips = word ^ ((word << np.uint64(1)) | carry)
        carry = word >> np.uint64(63)
        while flips:
            lowest = flips & (~flips + np.uint64(1))
            edges[m] = j * 64 + _BIT_INDEX[(lowest * _DE_BRUIJN) >> np.uint64(58)]
            m += 1
            flips &= flips - np.uint64(1)
    n = m // 2  # run i spans [edges[2i], edges[2i + 1])
    row_first = np.empty(h + 1, dtype=np.int64)
    i = 0
    for y in range(h + 1):
        while i < n and edges[2 * i] < y * padded:
            i += 1
        row_first[y] = i
    reach = 1 if eight else 0
    parent = np.arange(n)
    for y in range(1, h):
        k = row_first[y - 1]
        end = row_first[y]
        for i in range(end, row_first[y + 1]):
            start = edges[2 * i] - padded
            stop = edges[2 * i + 1] - padded
            while k < end and edges[2 * k + 1] + reach <= start:
                k += 1
            j = k
            root = i
            while j < end and edges[2 * j] < stop + reach:
                r = find(parent, j)
                if root == i:
                    root = r
                elif r < root:
                    parent[root] = r
                    root = r
                elif r > root:
                    parent[r] = root
                j += 1
            parent[i] = root
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
        sizes[comp[i]] += edges[2 * i + 1] - edges[2 * i]
    order = np.argsort(-sizes, kind="mergesort")  # stable: equal sizes keep reading order
    rank = np.empty(count, dtype=np.int32)
    for i in range(count):
        rank[order[i]] = i + 1
    # Paint by differences (+label where a run starts, -label where it stops, then a running
    # sum): two writes per run and one pass, where filling run by run pays per short run.
    out = np.zeros(h * w + 1, dtype=np.int32)
    y = 0
    for i in range(n):
        while i >= row_first[y + 1]:
            y += 1
        shift = y * (padded - w)
        r = rank[comp[i]]
        out[edges[2 * i] - shift] += r
        out[edges[2 * i + 1] - shift] -= r
    total = np.int32(0)
    for p in range(h * w):
        total += out[p]
        out[p] = total
    return out[: h * w].reshape(h, w), sizes[order]
