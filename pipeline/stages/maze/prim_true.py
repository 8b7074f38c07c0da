"""True Prim's algorithm: the minimum spanning tree of random wall weights."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.grid.graph import DX, DY


@stage("maze.prim_true", version=3)
class PrimTrue(MazeGenerator):
    """True Prim's algorithm: a minimum spanning tree over random wall weights. Give every wall
    a random weight and grow the tree from one cell, always opening the lightest wall on the
    frontier (the name is Walter D. Pullen's).

    Short branches everywhere, about 30% dead ends: the same mazes as Kruskal's with the same
    weights, grown from one point instead of everywhere at once.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_prim_true(w, h, rng.integers(0, 1 << WEIGHT_BITS, 2 * w * h), rng.integers(0, w * h))


# A heap entry packs (weight << CELL_BITS) | cell into one int64, so ordering entries compares
# weights with ties broken by cell id, and sifting moves one word instead of a key and a value.
# 25 bits hold every cell of the largest maze (4096^2); 38 weight bits make ties vanishingly rare.
CELL_BITS = 25
WEIGHT_BITS = 38


@compiled
def carve_prim_true(w: int, h: int, weights: np.ndarray, start: int) -> np.ndarray:
    # Wall e: east of cell e // 2 when e is even, south of it when odd. The frontier is a 4-ary
    # min-heap of cells keyed by their lightest wall into the tree (decrease-key through `pos`),
    # not of walls: it stays the size of the frontier (~15% of the cells at 1000^2) instead of
    # filling up with walls made stale by later visits, which made it five times larger.
    n = w * h
    mask = (1 << CELL_BITS) - 1
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    tiles[1::2, 1::2] = 1
    state = np.empty(n, dtype=np.int8)  # 0 unseen, 1 on the frontier, 2 in the tree
    state[:] = 0
    pos = np.empty(n, dtype=np.int32)
    via = np.empty(n, dtype=np.int8)  # direction from a frontier cell to its lightest tree wall
    heap = np.empty(n + 1, dtype=np.int64)
    size = 0
    c = start
    for _ in range(n - 1):
        state[c] = 2
        x = c % w
        y = c // w
        for d in range(4):
            nx = x + DX[d]
            ny = y + DY[d]
            if nx < 0 or ny < 0 or nx >= w or ny >= h:
                continue
            m = ny * w + nx
            if state[m] == 2:
                continue
            # A wall's id belongs to its west or north cell.
            if d == 1:
                e = 2 * c
            elif d == 2:
                e = 2 * c + 1
            elif d == 3:
                e = 2 * (c - 1)
            else:
                e = 2 * (c - w) + 1
            key = (weights[e] << CELL_BITS) | m
            if state[m] == 0:
                state[m] = 1
                i = size
                size += 1
            else:
                i = pos[m]
                if heap[i] <= key:
                    continue
            via[m] = (d + 2) & 3
            while i > 0:  # sift up
                p = (i - 1) >> 2
                above = heap[p]
                if above <= key:
                    break
                heap[i] = above
                pos[above & mask] = i
                i = p
            heap[i] = key
            pos[m] = i
        c = heap[0] & mask
        size -= 1
        last = heap[size]
        i = 0
        while True:  # sift the last entry down from the root
            first = 4 * i + 1
            if first >= size:
                break
            if first + 3 < size:
                # Four children: pick the least with selects, not branches (which of four random
                # keys is least is a coin toss to the branch predictor). Keys are unique (each
                # holds its cell), so this is the first least, as the loop below finds it.
                k0 = heap[first]
                k1 = heap[first + 1]
                k2 = heap[first + 2]
                k3 = heap[first + 3]
                a = first if k0 < k1 else first + 1
                ka = k0 if k0 < k1 else k1
                b = first + 2 if k2 < k3 else first + 3
                kb = k2 if k2 < k3 else k3
                child = a if ka < kb else b
                smallest = ka if ka < kb else kb
            else:
                child = first
                smallest = heap[first]
                for k in range(first + 1, size):
                    if heap[k] < smallest:
                        smallest = heap[k]
                        child = k
            if last <= smallest:
                break
            heap[i] = smallest
            pos[smallest & mask] = i
            i = child
        heap[i] = last
        pos[last & mask] = i
        d = via[c]
        tiles[2 * (c // w) + 1 + DY[d], 2 * (c % w) + 1 + DX[d]] = 1
    return tiles
