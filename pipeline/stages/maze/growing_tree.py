"""Growing tree: grow from a list of active cells, picking which one to grow by a rule."""

from __future__ import annotations

import re

import numpy as np
from pydantic import Field, field_validator

from pipeline.jit import compiled
from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.grid.graph import DX, DY, below, neighbours_where

METHODS = ("newest", "random", "oldest", "middle")
_TERM = re.compile(r"^\s*(newest|random|oldest|middle)\s*(?::\s*(\d+(?:\.\d+)?)\s*)?$")


def parse_selection(text: str) -> np.ndarray:
    """`"newest:75,random:25"` -> weights for (newest, random, oldest, middle), summing to 1."""
    weights = np.zeros(len(METHODS))
    for term in text.split(","):
        match = _TERM.match(term)
        if not match:
            raise ValueError(f"must be methods from {', '.join(METHODS)} with optional weights, e.g. \"newest:75,random:25\"")
        weights[METHODS.index(match.group(1))] += float(match.group(2) or 1)
    if weights.sum() <= 0:
        raise ValueError("needs a positive weight")
    return weights / weights.sum()


@stage("maze.growing_tree", version=2)
class GrowingTree(MazeGenerator):
    """Growing tree: grow the maze from a list of active cells, picked by `selection`. Each step
    take one, carve to a random unvisited neighbour (adding it to the list) or, if it has none,
    drop it.

    `newest` is the recursive backtracker (long rivers, ~10% dead ends), `random` behaves like
    Prim's (short branches, ~30%), `oldest` grows in waves from the start, `middle` in between.
    Mix them with weights: `"newest:75,random:25"` gives long corridors with some branching.
    """

    selection: str = Field("newest", description='Which active cell grows: newest, random, oldest, middle, or a weighted mix such as "newest:75,random:25".')

    @field_validator("selection")
    @classmethod
    def _valid(cls, value: str) -> str:
        parse_selection(value)
        return value

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        return carve_growing_tree(w, h, parse_selection(self.selection), rng)


@compiled
def _fenwick_add(tree: np.ndarray, i: int, delta: int) -> None:
    i += 1
    while i < tree.shape[0]:
        tree[i] += delta
        i += i & -i


@compiled
def _fenwick_select(tree: np.ndarray, k: int, top_bit: int) -> int:
    """Position of the k-th (0-based) active slot."""
    pos = 0
    bit = top_bit
    while bit > 0:
        nxt = pos + bit
        if nxt < tree.shape[0] and tree[nxt] <= k:
            pos = nxt
            k -= tree[nxt]
        bit >>= 1
    return pos


@compiled
def carve_growing_tree(w: int, h: int, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    # Active cells sit in slots in the order they were added, chained in a doubly linked list
    # (newest = tail, oldest = head, removal in O(1)). When `random` or `middle` can be chosen,
    # a Fenwick tree over the slots also finds the k-th active one in O(log n).
    n = w * h
    tiles = np.empty((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[:] = 0
    visited = np.empty(n, dtype=np.bool_)
    visited[:] = False
    slot_cell = np.empty(n, dtype=np.int32)
    prev = np.empty(n, dtype=np.int32)
    nxt = np.empty(n, dtype=np.int32)
    by_rank = weights[1] > 0 or weights[3] > 0
    # The method drawn for u in [0, 1); rounding can leave the running sum a hair under 1, so the
    # last method with a weight takes whatever is past it.
    last = 0
    for i in range(4):
        if weights[i] > 0:
            last = i
    tree = np.empty(n + 1 if by_rank else 1, dtype=np.int32)
    tree[:] = 0
    top_bit = 1
    while top_bit * 2 <= n:
        top_bit *= 2
    options = np.empty(4, dtype=np.int64)
    start = below(rng, n)
    visited[start] = True
    tiles[2 * (start // w) + 1, 2 * (start % w) + 1] = 1
    slot_cell[0] = start
    prev[0] = -1
    nxt[0] = -1
    head = 0
    tail = 0
    # int64 arguments and counters, never literals: numba compiles a helper once per literal
    # value it is passed (even one it only sees while typing the loop).
    one = np.int64(1)
    if by_rank:
        _fenwick_add(tree, np.int64(0), one)
    used = one
    active = one
    while active > 0:
        u = rng.random()
        method = last
        total = 0.0
        for i in range(4):
            total += weights[i]
            if weights[i] > 0 and u < total:
                method = i
                break
        if method == 0:
            slot = tail
        elif method == 1:
            slot = _fenwick_select(tree, below(rng, active), top_bit)
        elif method == 2:
            slot = head
        else:
            slot = _fenwick_select(tree, active // 2, top_bit)
        c = slot_cell[slot]
        x = c % w
        y = c // w
        m = neighbours_where(visited, np.bool_(False), x, y, w, h, options)
        if m == 0:  # no way on: the cell leaves the active list
            if by_rank:
                _fenwick_add(tree, slot, -one)
            p = prev[slot]
            q = nxt[slot]
            if p >= 0:
                nxt[p] = q
            else:
                head = q
            if q >= 0:
                prev[q] = p
            else:
                tail = p
            active -= 1
            continue
        d = options[below(rng, m)]
        nx = x + DX[d]
        ny = y + DY[d]
        nc = ny * w + nx
        visited[nc] = True
        tiles[2 * ny + 1, 2 * nx + 1] = 1
        tiles[y + ny + 1, x + nx + 1] = 1
        slot_cell[used] = nc
        prev[used] = tail
        nxt[used] = -1
        if tail >= 0:
            nxt[tail] = used
        else:
            head = used
        tail = used
        if by_rank:
            _fenwick_add(tree, used, one)
        used += 1
        active += 1
    return tiles
