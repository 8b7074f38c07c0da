"""Joining blocks of cells: the doors between rooms (small rooms) or spirals (spiral mazes)."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.grid.graph import below, permutation, union


@compiled
def join_blocks(tiles: np.ndarray, size: int, rng: np.random.Generator) -> None:
    """Cut the cell grid into `size` x `size` blocks and join the blocks into a random spanning
    tree (Kruskal's rule), with one door at a random place along each chosen shared edge."""
    h = (tiles.shape[0] - 1) // 2
    w = (tiles.shape[1] - 1) // 2
    bw = (w + size - 1) // size
    bh = (h + size - 1) // size
    parent = np.arange(bw * bh).astype(np.int32)  # int32 for every graph.union: one compile
    order = permutation(rng, 2 * bw * bh)
    for k in range(order.shape[0]):
        e = order[k]
        b = e // 2
        bx = b % bw
        by = b // bw
        if e % 2 == 0:
            if bx + 1 < bw and union(parent, b, b + 1):
                x = (bx + 1) * size - 1  # last column of the west block
                y = by * size + below(rng, min(size, h - by * size))
                tiles[2 * y + 1, 2 * x + 2] = 1
        elif by + 1 < bh and union(parent, b, b + bw):
            y = (by + 1) * size - 1
            x = bx * size + below(rng, min(size, w - bx * size))
            tiles[2 * y + 2, 2 * x + 1] = 1
