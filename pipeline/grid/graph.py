"""Compiled graph helpers shared by stages on the cells of a block-form maze: directions,
union-find, random draws and shuffles (breadth-first search lives in pipeline.grid.bfs).

Cells are numbered `y * w + x`; in block form cell (x, y) is tile (2y+1, 2x+1) and the tile
between two neighbouring cells is the wall (or passage) joining them.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled, numba_function

# numba's own bounded-integer draws, the ones its `Generator.integers` makes: `below` calls them
# directly (tests/test_maze_catalogue.py checks it against `integers`).
next_uint32 = numba_function("numba.np.random.generator_core", "next_uint32")
bounded_lemire_uint64 = numba_function("numba.np.random.random_methods", "bounded_lemire_uint64")
buffered_bounded_lemire_uint32 = numba_function("numba.np.random.random_methods", "buffered_bounded_lemire_uint32")
random_interval = numba_function("numba.np.random.random_methods", "random_interval")

# The range of a 62-bit draw, as an int64 (a literal argument would have numba compile `below`
# once more, for that value alone). The random walks take a direction from two bits of it, 31
# per draw, kept in registers: they take tens of millions of steps.
RANGE_62_BITS = np.int64(1 << 62)

# Neighbour offsets in the order every kernel uses: north, east, south, west.
DX = np.array([0, 1, 0, -1], dtype=np.int64)
DY = np.array([-1, 0, 1, 0], dtype=np.int64)


@compiled
def neighbours_where(flags: np.ndarray, value: int, x: int, y: int, w: int, h: int, options: np.ndarray) -> int:
    """Write into `options` the directions from cell (x, y) to neighbours whose flag equals
    `value`; returns how many."""
    m = 0
    for d in range(4):
        nx = x + DX[d]
        ny = y + DY[d]
        if 0 <= nx < w and 0 <= ny < h and flags[ny * w + nx] == value:
            options[m] = d
            m += 1
    return m


@compiled
def below(rng: np.random.Generator, n: int) -> int:
    """`below(rng, n)` for n >= 1: the same draw from the same stream, about three times
    faster, since numba's scalar `integers` allocates a one-item array on every call (20 ns; the
    generators draw millions)."""
    r = n - 1
    if r == 0:
        return 0  # no draw, as in numpy
    if r < 0xFFFFFFFF:
        return np.int64(buffered_bounded_lemire_uint32(rng.bit_generator, r))
    if r == 0xFFFFFFFF:
        return np.int64(next_uint32(rng.bit_generator))
    return np.int64(bounded_lemire_uint64(rng.bit_generator, r))


@compiled
def permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """`rng.permutation(n)` inside a kernel: the same permutation from the same stream (numpy's
    and numba's shuffle, with its `random_interval` draws). numba's own method handles arrays of
    any shape and takes 5 s to compile on a first run; this one, for a range, under 1 s."""
    out = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = np.int64(random_interval(rng.bit_generator, i))
        if j != i:
            t = out[i]
            out[i] = out[j]
            out[j] = t
    return out


def random_order(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of 0..n-1 as int32, several times faster than
    `rng.permutation` at millions of items (which is a fifth of Kruskal's time at 1000^2 cells)."""
    return _fisher_yates(rng.random(n))


@compiled
def _fisher_yates(u: np.ndarray) -> np.ndarray:
    # u[i] * (i + 1) picks uniformly among i + 1 slots; a 53-bit float's bias is far below 1e-9.
    n = u.shape[0]
    order = np.arange(n).astype(np.int32)
    for i in range(n - 1, 0, -1):
        j = int(u[i] * (i + 1))
        t = order[i]
        order[i] = order[j]
        order[j] = t
    return order


@compiled
def find(parent: np.ndarray, a: int) -> int:
    while parent[a] != a:
        parent[a] = parent[parent[a]]  # path halving
        a = parent[a]
    return a


@compiled
def union(parent: np.ndarray, a: int, b: int) -> bool:
    """Join the sets of a and b; False if they were already one set."""
    ra = find(parent, a)
    rb = find(parent, b)
    if ra == rb:
        return False
    # Hang the higher-numbered root under the lower: deterministic, and shallow enough with halving.
    if ra < rb:
        parent[rb] = ra
    else:
        parent[ra] = rb
    return True


@compiled
def join_forest(tiles: np.ndarray, allowed: np.ndarray, parent: np.ndarray, order: np.ndarray) -> None:
    """Kruskal's rule: walk the candidate walls in `order` (wall e is east of cell e // 2 when e is
    even, south when odd) and open each that joins two allowed cells in different trees."""
    h, w = allowed.shape
    for k in range(order.shape[0]):
        e = order[k]
        c = e // 2
        x = c % w
        y = c // w
        if not allowed[y, x]:
            continue
        if e % 2 == 0:
            if x + 1 < w and allowed[y, x + 1] and union(parent, c, c + 1):
                tiles[2 * y + 1, 2 * x + 2] = 1
        elif y + 1 < h and allowed[y + 1, x] and union(parent, c, c + w):
            tiles[2 * y + 2, 2 * x + 1] = 1
