"""`search`: plan a whole trajectory to an observed future before moving (MarkovJunior's Search).

A best-first search over grid states. A state is ranked by two estimates of how far it is from
the goal: backward (the sum over cells of the backward potential of the value the cell holds) and
forward (the sum over cells of the fewest steps after which the rules could put a value the cell's
future allows there, from forward potentials of that state), plus `2 * depthCoefficient * depth`;
with a negative `depthCoefficient` the deepest state comes first instead (a depth-first search).
A state either estimate calls impossible is dropped. The first state whose forward estimate is 0
ends the search; the node then replays the path to it, one state per step. `limit` caps the
states kept per attempt, and a capped search is tried up to 20 times, as in the reference.

Only `one` nodes search here: the children of a state are the states one match of one rule makes.
States are dense (cell x + y * mx) and found again through an open-addressing table keyed by an
FNV-1a hash of their bytes, so nothing depends on Python's per-process `hash()`.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.observation import backward_potentials, forward_potentials

ATTEMPTS_WITH_LIMIT = 20  # tries of a capped search; an uncapped one is tried once
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@compiled
def state_hash(states: np.ndarray, k: int) -> np.uint64:
    """FNV-1a of row k's bytes."""
    h = _FNV_OFFSET
    for i in range(states.shape[1]):
        h = (h ^ np.uint64(states[k, i])) * _FNV_PRIME
    return h


@compiled
def _same(states: np.ndarray, a: int, b: int) -> bool:
    for i in range(states.shape[1]):
        if states[a, i] != states[b, i]:
            return False
    return True


@compiled
def _find(states: np.ndarray, k: int, table: np.ndarray) -> int:
    """Index of the stored state equal to row k, or -(slot + 1) for the free slot it would take."""
    mask = table.shape[0] - 1
    s = np.int64(state_hash(states, k) & np.uint64(mask))
    while table[s] >= 0:
        if table[s] != k and _same(states, table[s], k):
            return table[s]
        s = (s + 1) & mask
    return -(s + 1)


@compiled
def _rehash(states: np.ndarray, count: int, size: int) -> np.ndarray:
    table = np.full(size, -1, dtype=np.int64)
    for k in range(count):
        table[-_find(states, k, table) - 1] = k
    return table


@compiled
def _push(heap_key: np.ndarray, heap_item: np.ndarray, size: int, key: float, item: int) -> tuple[np.ndarray, np.ndarray]:
    """Push onto a binary min-heap of (key, item) with `size` entries; returns the arrays (grown)."""
    if size == heap_key.shape[0]:
        nk = np.empty(2 * size, dtype=np.float64)
        ni = np.empty(2 * size, dtype=np.int64)
        nk[:size] = heap_key
        ni[:size] = heap_item
        heap_key = nk
        heap_item = ni
    j = size
    while j > 0:
        up = (j - 1) // 2
        if heap_key[up] <= key:
            break
        heap_key[j] = heap_key[up]
        heap_item[j] = heap_item[up]
        j = up
    heap_key[j] = key
    heap_item[j] = item
    return heap_key, heap_item


@compiled
def _pop(heap_key: np.ndarray, heap_item: np.ndarray, size: int) -> int:
    """Remove the least key's item from a heap of `size` entries and return it."""
    top = heap_item[0]
    size -= 1
    key = heap_key[size]
    item = heap_item[size]
    j = 0
    while True:
        child = 2 * j + 1
        if child >= size:
            break
        if child + 1 < size and heap_key[child + 1] < heap_key[child]:
            child += 1
        if heap_key[child] >= key:
            break
        heap_key[j] = heap_key[child]
        heap_item[j] = heap_item[child]
        j = child
    heap_key[j] = key
    heap_item[j] = item
    return top


@compiled
def _rank(depth: int, backward: int, forward: int, depth_coefficient: float, rng: np.random.Generator) -> float:
    base = 1000.0 - depth if depth_coefficient < 0 else forward + backward + 2.0 * depth_coefficient * depth
    return base + 0.0001 * rng.random()


@compiled
def _estimates(
    states: np.ndarray, k: int, future: np.ndarray, bpot: np.ndarray, fpot: np.ndarray, ncolors: int, mx: int, my: int,
    lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray, waves: np.ndarray, outs: np.ndarray,
    queue: np.ndarray, done: np.ndarray,
) -> tuple[int, int]:
    """(backward, forward) estimates of row k; -1 for an estimate that finds the goal unreachable."""
    n = states.shape[1]
    backward = 0
    for i in range(n):
        p = bpot[states[k, i], i]
        if p < 0:
            return -1, 0
        backward += p
    forward_potentials(fpot, 0, ncolors, mx, my, mx, states[k], lo, hi, rw, rh, roff, waves, outs, queue, done)
    forward = 0
    for i in range(n):
        best = -1
        for c in range(ncolors):
            p = fpot[c, i]
            if (future[i] >> c) & 1 and p >= 0 and (best < 0 or p < best):
                best = p
        if best < 0:
            return backward, -1
        forward += best
    return backward, forward


@compiled
def search_once(
    present: np.ndarray,  # uint8[mx * my]
    future: np.ndarray,  # int64[mx * my]
    mx: int,
    my: int,
    ncolors: int,
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    limit: int,
    depth_coefficient: float,
    rng: np.random.Generator,
) -> tuple[bool, np.ndarray]:
    """One best-first search; (found, the states after each step, the goal last)."""
    n = mx * my
    bpot = np.empty((ncolors, n), dtype=np.int32)
    fpot = np.empty((ncolors, n), dtype=np.int32)
    queue = np.empty(ncolors * n, dtype=np.int64)
    done = np.empty((hi - lo, n), dtype=np.bool_)
    backward_potentials(bpot, 0, ncolors, mx, my, mx, future, lo, hi, rw, rh, roff, waves, outs, queue, done)

    cap = 1024
    states = np.empty((cap, n), dtype=np.uint8)
    parent = np.empty(cap, dtype=np.int64)
    depth = np.empty(cap, dtype=np.int64)
    estimate = np.empty((cap, 2), dtype=np.int64)  # backward, forward
    states[0] = present
    backward, forward = _estimates(states, 0, future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done)
    if backward < 0 or forward < 0:
        return False, np.empty((0, n), dtype=np.uint8)
    if backward == 0:
        return True, np.empty((0, n), dtype=np.uint8)
    parent[0] = -1
    depth[0] = 0
    estimate[0, 0] = backward
    estimate[0, 1] = forward
    stored = 1
    table = _rehash(states, stored, 4 * cap)
    heap_key = np.empty(64, dtype=np.float64)
    heap_item = np.empty(64, dtype=np.int64)
    heap_key, heap_item = _push(heap_key, heap_item, 0, _rank(0, backward, forward, depth_coefficient, rng), 0)
    frontier = 1

    while frontier > 0 and (limit < 0 or stored < limit):
        at = _pop(heap_key, heap_item, frontier)
        frontier -= 1
        for r in range(lo, hi):
            w = rw[r]
            h = rh[r]
            base = roff[r]
            for y in range(my - h + 1):
                for x in range(mx - w + 1):
                    fits = True
                    for q in range(w * h):
                        if (waves[base + q] >> states[at, x + q % w + (y + q // w) * mx]) & 1 == 0:
                            fits = False
                            break
                    if not fits:
                        continue
                    if stored == cap:
                        cap *= 2
                        grown = np.empty((cap, n), dtype=np.uint8)
                        grown[:stored] = states[:stored]
                        states = grown
                        p2 = np.empty(cap, dtype=np.int64)
                        p2[:stored] = parent[:stored]
                        parent = p2
                        d2 = np.empty(cap, dtype=np.int64)
                        d2[:stored] = depth[:stored]
                        depth = d2
                        e2 = np.empty((cap, 2), dtype=np.int64)
                        e2[:stored] = estimate[:stored]
                        estimate = e2
                        table = _rehash(states, stored, 4 * cap)
                    # The child is built in the next free row and kept only if new and possible.
                    states[stored] = states[at]
                    for q in range(w * h):
                        o = outs[base + q]
                        if o != 255:
                            states[stored, x + q % w + (y + q // w) * mx] = o
                    seen = _find(states, stored, table)
                    if seen >= 0:
                        if depth[at] + 1 < depth[seen]:
                            depth[seen] = depth[at] + 1
                            parent[seen] = at
                            rank = _rank(depth[seen], estimate[seen, 0], estimate[seen, 1], depth_coefficient, rng)
                            heap_key, heap_item = _push(heap_key, heap_item, frontier, rank, seen)
                            frontier += 1
                        continue
                    b, f = _estimates(states, stored, future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done)
                    if b < 0 or f < 0:
                        continue
                    k = stored
                    parent[k] = at
                    depth[k] = depth[at] + 1
                    estimate[k, 0] = b
                    estimate[k, 1] = f
                    table[-seen - 1] = k
                    stored += 1
                    if f == 0:
                        path = np.empty((depth[k], n), dtype=np.uint8)
                        j = k
                        while parent[j] >= 0:
                            path[depth[j] - 1] = states[j]
                            j = parent[j]
                        return True, path
                    heap_key, heap_item = _push(heap_key, heap_item, frontier, _rank(depth[k], b, f, depth_coefficient, rng), k)
                    frontier += 1
    return False, np.empty((0, n), dtype=np.uint8)


@compiled
def plan(
    state: np.ndarray,  # the run's padded grid
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    future: np.ndarray,  # padded like state
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    limit: int,
    depth_coefficient: float,
    rng: np.random.Generator,
    store: np.ndarray,  # uint8[rows, cells]: trajectories, a padded grid per row
    used: int,
) -> tuple[np.ndarray, int, int]:
    """Search for a trajectory from the grid to its future and append it to `store` after row
    `used`; returns (store, first row, length), length -1 when every attempt failed."""
    n = mx * my
    present = np.empty(n, dtype=np.uint8)
    dense_future = np.empty(n, dtype=np.int64)
    for y in range(my):
        for x in range(mx):
            present[x + y * mx] = state[(y << xb) + x]
            dense_future[x + y * mx] = future[(y << xb) + x]
    attempts = 1 if limit < 0 else ATTEMPTS_WITH_LIMIT
    for _ in range(attempts):
        found, path = search_once(present, dense_future, mx, my, ncolors, lo, hi, rw, rh, roff, waves, outs, limit, depth_coefficient, rng)
        if not found:
            continue
        steps = path.shape[0]
        if used + steps > store.shape[0]:
            grown = np.zeros((max(2 * store.shape[0], used + steps), state.shape[0]), dtype=np.uint8)
            grown[:used] = store[:used]
            store = grown
        for s in range(steps):
            for y in range(my):
                for x in range(mx):
                    store[used + s, (y << xb) + x] = path[s, x + y * mx]
        return store, used, steps
    return store, used, -1
