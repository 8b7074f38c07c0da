"""Connected-component labeling: which tiles belong together."""

from __future__ import annotations

from functools import partial
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.threads import in_parallel, spare_cores
from pipeline.stages.common.walkable import WalkableStage


@stage("regions.label", version=1)
class Label(WalkableStage):
    """Label the connected regions of the chosen symbols into a `region` layer. Regions are
    flood-filled (4- or 8-connected) and numbered 1..N by size, largest first (ties in reading
    order of their first tile); 0 elsewhere. Sets `regions` (N), `region_largest` and
    `region_sizes` (sizes, largest first, comma-separated) in the map's properties.

    `symbols` names what to label; by default every symbol but `walls`. With `by_symbol = true`
    a region holds one symbol: the blobs of a blob map, each colour's patches apart (there the
    walls a map lacks are skipped, so a blob map needs no `walls`).
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("regions", "region_largest", "region_sizes")

    symbols: tuple[str, ...] = Field((), description="Symbols to label; empty = every symbol but `walls`.")
    connectivity: Literal[4, 8] = Field(4, description="4: regions join through edges; 8: through corners too.")
    by_symbol: bool = Field(
        False,
        # Left out of the params when off, so stages built before it existed keep their keys.
        exclude_if=lambda on: not on,
        description="Regions of one symbol each: tiles of different symbols never join (a blob map's blobs); the walls a map lacks are skipped.",
    )
    layer: str = Field("region", min_length=1, description="Name of the label layer.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        if self.symbols:
            table = self.table(level, self.symbols, "symbols")
        elif self.by_symbol:
            # A blob map has no walls: its colours are what is labelled, each apart.
            names = {s.name for s in level.alphabet} | {s.char for s in level.alphabet}
            table = self.table(level, tuple(w for w in self.walls if w in names), "walls", invert=True)
        else:
            table = self.table(level, self.walls, "walls", invert=True)
        inside = table[: len(level.alphabet)].astype(bool)
        label = label_by_symbol if self.by_symbol else label_symbols
        labels, sizes = label(level.tiles, inside, self.connectivity == 8)
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


def label_by_symbol(tiles: np.ndarray, inside: np.ndarray, eight: bool) -> tuple[np.ndarray, np.ndarray]:
    """As `label_symbols`, but tiles join only tiles of their own symbol: each symbol's parts
    are labelled apart, then all are numbered together, largest first (ties in reading order of
    their first tile)."""
    labels = np.zeros(tiles.shape, dtype=np.int32)
    sizes, firsts = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    present = np.bincount(tiles.ravel(), minlength=len(inside))[: len(inside)] > 0
    count = 0
    for symbol in np.flatnonzero(inside & present):
        one = np.zeros(len(inside), dtype=bool)
        one[symbol] = True
        own, own_sizes = label_symbols(tiles, one, eight)
        flat = own.ravel()
        at = np.flatnonzero(flat)
        first = np.full(len(own_sizes) + 1, flat.size, dtype=np.int64)
        np.minimum.at(first, flat[at], at)
        labels.ravel()[at] = flat[at] + count
        sizes.append(own_sizes.astype(np.int64))
        firsts.append(first[1:])
        count += len(own_sizes)
    size, first = np.concatenate(sizes), np.concatenate(firsts)
    order = np.lexsort((first, -size))
    rank = np.zeros(count + 1, dtype=np.int32)
    rank[order + 1] = np.arange(1, count + 1, dtype=np.int32)
    return rank[labels], size[order]


def label_symbols(tiles: np.ndarray, inside: np.ndarray, eight: bool) -> tuple[np.ndarray, np.ndarray]:
    """Label the connected parts of the tiles t with inside[t] (one bool per symbol): int32
    labels 1..N, largest first (ties in reading order of their first tile), and the sizes."""
    h, w = tiles.shape
    # Whole 64-bit words per row, and at least one blank cell after it, so a row's last run
    # always ends inside the row.
    words = w // 64 + 1
    # The shorter list of symbols to compare against: the ones inside, or the ones outside.
    on = np.flatnonzero(inside).astype(np.uint8)
    off = np.flatnonzero(~inside).astype(np.uint8)
    equal = len(on) <= len(off)
    # Always read-only (a level's tiles are; a fresh mask is not): numba compiles a kernel once
    # per argument type, and read-only is a type of its own.
    flat = np.ascontiguousarray(tiles).ravel()
    flat.flags.writeable = False
    symbols = on if equal else off
    bits = np.empty(h * words, dtype=np.uint64)
    edges = np.empty(h * (w + 1) + 1, dtype=np.uint32)
    row_first = np.empty(h + 1, dtype=np.uint64)
    parent = np.empty(h * ((w + 1) // 2) + 1, dtype=np.uint32)
    cuts = _bands(h, w)
    spans = list(zip(cuts, cuts[1:]))
    scan = partial(_find_runs, flat, symbols, equal, w, words, eight)
    ends = in_parallel([partial(scan, y0, y1, bits, edges, row_first, parent) for y0, y1 in spans])
    _join_bands(edges, row_first, parent, np.array(cuts, dtype=np.int64), np.array(ends, dtype=np.uint64), w, eight)
    roots, sizes = _number(edges, row_first, parent)
    # Components of RANK_BY_COUNT tiles or more are few: a stable argsort here in numpy, where a
    # sort inside the kernel took numba 1.5 s to compile on a first run.
    big = np.flatnonzero(sizes >= RANK_BY_COUNT)
    big = big[np.argsort(-sizes[big], kind="stable")]
    rank, ordered = _rank_by_size(sizes, big)
    label = np.empty(int(row_first[-1]), dtype=np.int32)  # by run; only the roots' are read
    label[roots] = rank
    # One thread paints: split in two, waking the second thread cost more than its half saved.
    out = _paint(bits, edges, row_first, parent, label, h, w, words)
    return out.reshape(h, w), ordered


# Each band has at least this many tiles: waking a thread costs some 0.1 ms on a busy host,
# so smaller bands would gain nothing.
BAND_TILES = 1 << 18


def _bands(h: int, w: int) -> list[int]:
    """Row cuts between the bands labelled side by side, one per spare core."""
    bands = max(1, min(spare_cores(), h * w // BAND_TILES, h))
    return [h * b // bands for b in range(bands + 1)]


# Index of a word's lowest set bit without numba's intrinsics (importing those loads numba at
# import time): multiplying the isolated bit by a de Bruijn sequence puts a unique 6-bit
# pattern in the top bits.
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_INDEX = np.zeros(64, dtype=np.uint32)
for _i in range(64):
    _BIT_INDEX[((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58] = _i

# The run loops index with unsigned integers (and so add, never subtract, the 8-connectivity
# reach): numba guards every signed index against Python's negative indexing, and those
# guards cost the join a third of its time. Mixing signed and unsigned would turn the
# arithmetic into floats, so run and edge indices are uint64 throughout.
_0, _1, _2, _64 = np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(64)


@compiled
def _find_runs(
    flat: np.ndarray,
    symbols: np.ndarray,
    equal: bool,
    w: int,
    words: int,
    eight: bool,
    y0: int,
    y1: int,
    bits: np.ndarray,
    edges: np.ndarray,
    row_first: np.ndarray,
    parent: np.ndarray,
) -> np.uint64:
    """Rows y0..y1, row by row: one bit per tile (set inside), the runs of set bits, and
    union-find over the runs joined to the touching runs of the row above (the earliest run as
    root, so parent[i] <= i). Run i spans edges[2i]..edges[2i + 1] (x, end excluded) in its
    row; the runs of row y are row_first[y]..row_first[y + 1]. The band's runs are numbered
    from y0 times the most a row can hold, so bands never share a number; returns the number
    after its last run. Rows are packed while still in cache."""
    reach = np.uint32(1 if eight else 0)
    row = np.empty(words * 64, dtype=np.uint8)
    row[:] = 0
    lanes = row.view(np.uint64)
    m = _2 * np.uint64(y0 * ((w + 1) // 2))
    for y in range(y0, y1):
        tiles = flat[y * w : (y + 1) * w]
        # Compares over whole rows vectorise; a table lookup per tile (a gather) would not.
        if equal:
            row[:w] = 0
            for s in symbols:
                for x in range(w):
                    row[x] |= tiles[x] == s
        else:
            row[:w] = 1
            for s in symbols:
                for x in range(w):
                    row[x] &= tiles[x] != s
        here = m >> _1
        row_first[y] = here
        carry = _0
        for j in range(words):
            word = _0
            for k in range(8):
                # Gathers the low bit of each of 8 bytes into one byte, first byte lowest.
                byte = (lanes[8 * j + k] * np.uint64(0x0102040810204080)) >> np.uint64(56)
                word |= byte << np.uint64(8 * k)
            bits[y * words + j] = word
            # Run boundaries: wherever a bit differs from the one before.
            flips = word ^ ((word << _1) | carry)
            carry = word >> np.uint64(63)
            x0 = np.uint32(64 * j)
            while flips:
                lowest = flips & (~flips + _1)
                edges[m] = x0 + _BIT_INDEX[(lowest * _DE_BRUIJN) >> np.uint64(58)]
                m += _1
                flips &= flips - _1
        end = m >> _1
        if y == y0:
            for i in range(here, end):
                parent[i] = np.uint32(i)
            continue
        # Walk this row's runs and the row above's together; k is the first run above that
        # may still touch.
        k = row_first[y - 1]
        for i in range(here, end):
            start = edges[_2 * i]
            stop = edges[_2 * i + _1] + reach
            while k < here and edges[_2 * k + _1] + reach <= start:
                k += _1
            if k < here and edges[_2 * k] < stop:
                root = _root(parent, k)
                j = k + _1
                while j < here and edges[_2 * j] < stop:
                    r = _root(parent, j)
                    if r != root:
                        parent[max(r, root)] = min(r, root)
                        root = min(r, root)
                    j += _1
                parent[i] = np.uint32(root)
                k = j - _1  # the last run that touched may touch the next run too
            else:
                parent[i] = np.uint32(i)
    return m >> _1


@compiled
def _join_bands(
    edges: np.ndarray,
    row_first: np.ndarray,
    parent: np.ndarray,
    cuts: np.ndarray,
    ends: np.ndarray,
    w: int,
    eight: bool,
) -> None:
    """Close the gaps between the bands' run numbers (so runs are numbered 0..n in reading
    order, as one band would have), then join each band's first row to the row above it."""
    reach = np.uint32(1 if eight else 0)
    h = cuts[-1]
    n = ends[0]
    for b in range(1, ends.size):
        base = np.uint64(cuts[b] * ((w + 1) // 2))
        delta = base - n
        for i in range(base, ends[b]):
            edges[_2 * (i - delta)] = edges[_2 * i]
            edges[_2 * (i - delta) + _1] = edges[_2 * i + _1]
            parent[i - delta] = parent[i] - np.uint32(delta)
        for y in range(cuts[b], cuts[b + 1]):
            row_first[y] -= delta
        n = ends[b] - delta
        y = cuts[b]
        above, here = row_first[y - 1], row_first[y]
        end = row_first[y + 1] if y + 1 < cuts[b + 1] else n
        k = above
        for i in range(here, end):
            start = edges[_2 * i]
            stop = edges[_2 * i + _1] + reach
            while k < here and edges[_2 * k + _1] + reach <= start:
                k += _1
            j = k
            while j < here and edges[_2 * j] < stop:
                a, c = _root(parent, j), _root(parent, i)
                parent[max(a, c)] = min(a, c)
                j += _1
            if j > k:
                k = j - _1  # the last run that touched may touch the next run too
    row_first[h] = n


@compiled
def _root(parent: np.ndarray, a: np.uint64) -> np.uint64:
    """The root of a (unsigned throughout, see above), halving the path on the way."""
    while np.uint64(parent[a]) != a:
        parent[a] = parent[np.uint64(parent[a])]
        a = np.uint64(parent[a])
    return a


@compiled
def _number(edges: np.ndarray, row_first: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Point every run straight at its root: the roots (runs, in order) and each one's tiles."""
    n = row_first[-1]
    # Sizes as int64, as every other kernel allocates: each (size type, dtype) pair of np.empty
    # is a compile of its own.
    runs = np.int64(n)
    area = np.empty(runs + 1, dtype=np.int64)  # tiles under each root
    area[:] = 0
    roots = np.empty(runs, dtype=np.uint64)
    count = _0
    # Consecutive runs mostly share a root: summing them in a register, not through memory,
    # spares a store-to-load chain per run.
    last, tiles = n, np.int64(0)
    for i in range(n):
        # parent[i] <= i, so in this order every parent already points at its root.
        root = np.uint64(parent[np.uint64(parent[i])])
        parent[i] = root
        if root == i:
            roots[count] = i
            count += _1
        if root != last:
            area[last] += tiles
            last, tiles = root, np.int64(0)
        tiles += edges[_2 * i + _1] - edges[_2 * i]
    area[last] += tiles
    sizes = np.empty(np.int64(count), dtype=np.int64)
    for c in range(count):
        sizes[c] = area[roots[c]]
    return roots[:count], sizes


# Sizes below this are ranked by a counting sort.
RANK_BY_COUNT = 1024


@compiled
def _rank_by_size(sizes: np.ndarray, big: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each component's 1-based rank by size, largest first, ties by index; and the sizes in
    rank order. `big` is the components of RANK_BY_COUNT tiles or more, already in rank order;
    the small ones, which busy maps have by the thousand (a comparison sort of those cost more
    than the labeling), are ranked here by a counting sort."""
    limit = RANK_BY_COUNT
    count = sizes.size
    per_size = np.empty(limit, dtype=np.int64)
    per_size[:] = 0
    for c in range(count):
        if sizes[c] < limit:
            per_size[sizes[c]] += 1
    large = big.shape[0]
    rank = np.empty(count, dtype=np.int32)
    ordered = np.empty(count, dtype=np.int64)
    for k in range(large):
        rank[big[k]] = k + 1
        ordered[k] = sizes[big[k]]
    slot = np.empty(limit, dtype=np.int64)  # next rank slot of each small size
    taken = large
    for s in range(limit - 1, -1, -1):
        slot[s] = taken
        taken += per_size[s]
    for c in range(count):
        s = sizes[c]
        if s < limit:
            rank[c] = slot[s] + 1
            ordered[slot[s]] = s
            slot[s] += 1
    return rank, ordered


@compiled
def _paint(
    bits: np.ndarray,
    edges: np.ndarray,
    row_first: np.ndarray,
    root: np.ndarray,
    label: np.ndarray,
    h: int,
    w: int,
    words: int,
) -> np.ndarray:
    """The label grid (run i's label is label[root[i]]), a row at a time. A row whose runs all
    have one root (every row of a connected map) is its bits times that label, which
    vectorises; any other row is painted by differences: +label where a run starts, -label
    where it ends, then a running sum."""
    out = np.empty(h * w, dtype=np.int32)
    for y in range(h):
        here, end = row_first[y], row_first[y + 1]
        first = label[np.uint64(root[here])] if end > here else np.int32(0)
        uniform = True
        if end > here:
            top = root[here]
            for i in range(here + _1, end):
                uniform &= root[i] == top
        row = out[y * w : (y + 1) * w]
        if uniform:
            # Whole words take a fixed 64 steps, which vectorise without a remainder loop.
            at = np.uint64(y * w)
            whole = w // 64
            for j in range(whole):
                word = bits[y * words + j]
                for c in range(_64):
                    out[at + c] = np.int32((word >> c) & _1) * first
                at += _64
            word = bits[y * words + whole]
            for c in range(np.uint64(w - 64 * whole)):
                out[at + c] = np.int32((word >> c) & _1) * first
            continue
        row[:] = 0
        for i in range(here, end):
            run = label[np.uint64(root[i])]
            row[np.uint64(edges[_2 * i])] += run
            if edges[_2 * i + _1] < w:
                row[np.uint64(edges[_2 * i + _1])] -= run
        total = np.int32(0)
        for x in range(w):
            total += row[x]
            row[x] = total
    return out
