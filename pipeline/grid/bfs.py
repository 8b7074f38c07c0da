"""Compiled breadth-first searches on tile grids (4-neighbour moves between walkable tiles)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.jit import compiled, uncompiled
from pipeline.grid.graph import DX, DY


@compiled
def bfs(walk: np.ndarray, sources: np.ndarray, dist: np.ndarray, queue: np.ndarray) -> tuple[int, int]:
    """Distances from the `sources` (flat indices) over walkable tiles, into `dist` (-1 where
    unreached; every entry must be -1 on entry). Returns (the farthest tile, first found at the
    largest distance, and how many tiles were reached: they are queue[:count])."""
    h, w = walk.shape
    flat = walk.ravel()
    tail = 0
    for k in range(sources.shape[0]):
        s = sources[k]
        if dist[s] < 0:
            dist[s] = 0
            queue[tail] = s
            tail += 1
    head = 0
    far = queue[0] if tail > 0 else -1
    while head < tail:
        c = queue[head]
        head += 1
        if dist[c] > dist[far]:
            far = c
        y = c // w
        x = c - y * w
        for d in range(4):
            ny = y + DY[d]
            nx = x + DX[d]
            if ny < 0 or nx < 0 or ny >= h or nx >= w:
                continue
            n = ny * w + nx
            if dist[n] < 0 and flat[n]:
                dist[n] = dist[c] + 1
                queue[tail] = n
                tail += 1
    return far, tail


@compiled
def diameter_ends(walk: np.ndarray, start: int, budget: int) -> tuple[int, int, int, bool]:
    """The two ends and length of a longest shortest path in the walkable component of `start`,
    and whether that is proven exact.

    By iFUB (Crescenzi et al., "On computing the diameter of real-world undirected graphs",
    2013): from a central tile u (the middle of a double-sweep path), take tiles in decreasing
    distance from u; once the best eccentricity found is at least twice the current distance,
    no farther pair can exist. Mazes and corridors stop after a few searches; wide open caves
    can need one per tile on their rim, so after `budget` searches the best pair found so far
    is returned as not proven (it is never shorter than the double sweep's).
    """
    n = walk.size
    dist = np.empty(n, dtype=np.int64)
    dist[:] = -1
    queue = np.empty(n, dtype=np.int64)
    a, count = bfs(walk, np.array([start]), dist, queue)
    for k in range(count):
        dist[queue[k]] = -1
    b, count = bfs(walk, np.array([a]), dist, queue)
    best_a, best_b, best = a, b, dist[b]
    # Walk back from b to the path's middle.
    steps = best // 2
    cur = b
    w = walk.shape[1]
    h = walk.shape[0]
    while steps > 0:
        y = cur // w
        x = cur - y * w
        for d in range(4):
            ny = y + DY[d]
            nx = x + DX[d]
            if 0 <= ny < h and 0 <= nx < w and dist[ny * w + nx] == dist[cur] - 1:
                cur = ny * w + nx
                break
        steps -= 1
    for k in range(count):
        dist[queue[k]] = -1
    u = cur
    far, count = bfs(walk, np.array([u]), dist, queue)
    order = queue[:count].copy()  # by increasing distance from u
    level_of = np.empty(count, dtype=np.int64)
    for k in range(count):
        level_of[k] = dist[order[k]]
    for k in range(count):
        dist[order[k]] = -1
    ecc_u = level_of[count - 1]
    if ecc_u > best:
        best, best_a, best_b = ecc_u, u, order[count - 1]
    scratch = np.empty(n, dtype=np.int64)
    k = count - 1
    searches = 3
    while k >= 0:
        level = level_of[k]
        if best >= 2 * level:
            return best_a, best_b, best, True
        # Every tile at this distance from u: its eccentricity.
        while k >= 0 and level_of[k] == level:
            if searches >= budget:
                return best_a, best_b, best, False
            searches += 1
            t = order[k]
            f, c = bfs(walk, np.array([t]), dist, scratch)
            if dist[f] > best:
                best, best_a, best_b = dist[f], t, f
            for j in range(c):
                dist[scratch[j]] = -1
            k -= 1
    return best_a, best_b, best, True


@compiled
def trace_back(dist: np.ndarray, goal: int, h: int, w: int) -> np.ndarray:
    """Flat indices of a shortest path from the search's source to `goal`, source first: from
    the goal, always the first neighbour (in DY/DX order) one step nearer, so the same map
    always gives the same path."""
    steps = np.empty(dist[goal] + 1, dtype=np.int64)
    cur = goal
    for k in range(dist[goal], -1, -1):
        steps[k] = cur
        if k == 0:
            break
        y = cur // w
        x = cur - y * w
        for d in range(4):
            ny = y + DY[d]
            nx = x + DX[d]
            if 0 <= ny < h and 0 <= nx < w and dist[ny * w + nx] == k - 1:
                cur = ny * w + nx
                break
    return steps


def distances(walk: np.ndarray, sources: Sequence[int] | np.ndarray, small: bool = False) -> np.ndarray:
    """Flat distances from the `sources` (flat indices) over the True tiles of `walk`, -1 where
    unreached: `bfs` with its buffers made here. `small`: `bfs`'s own Python code, run without
    numba (`jit.uncompiled`): for a few small maps in a process that has not loaded numba, which
    takes longer to load than they take to search."""
    search = uncompiled(bfs) if small else bfs
    dist = np.full(walk.size, -1, dtype=np.int64)
    search(walk, np.asarray(sources, dtype=np.int64), dist, np.empty(walk.size, dtype=np.int64))
    return dist


def shortest_way(walk: np.ndarray, start: int, goal: int, small: bool = False) -> np.ndarray | None:
    """Flat tiles of a shortest way from `start` to `goal` over the True tiles of `walk`, start
    first (`trace_back`'s); the two ends count as walkable where they stand (an object stands
    where it is). None when no way joins them. `small`: as `distances`'."""
    walk = walk.copy()
    walk.ravel()[[start, goal]] = True
    dist = distances(walk, [start], small)
    if dist[goal] < 0:
        return None
    return (uncompiled(trace_back) if small else trace_back)(dist, goal, *walk.shape)
