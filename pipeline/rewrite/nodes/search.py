"""`search`: plan a whole trajectory to an observed future before moving (MarkovJunior's Search).

A best-first search over grid states. A state is ranked by two estimates of how far it is from
the goal: backward (the sum over cells of the backward potential of the value the cell holds) and
forward (the sum over cells of the fewest steps after which the rules could put a value the cell's
future allows there, from forward potentials of that state), plus `2 * depthCoefficient * depth`;
with a negative `depthCoefficient` the deepest state comes first instead (a depth-first search).
A state either estimate calls impossible is dropped. The first state whose forward estimate is 0
ends the search; the node then replays the path to it, one state per step. `limit` caps the
states kept per attempt, and a capped search is tried up to 20 times, as in the reference.

The children of a state are, for a `one` node, the states one match of one rule makes and, for an
`all` node, the states that applying a maximal set of non-overlapping matches makes (enumerated as
the reference does); both kinds hand each child to the same bookkeeping (`_admit`).
States are dense (cell x + y * mx) and found again through an open-addressing table keyed by an
FNV-1a hash of their bytes, so nothing depends on Python's per-process `hash()`.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.observation import backward_potentials, forward_potentials
from pipeline.rewrite.rule import KEEP

ATTEMPTS_WITH_LIMIT = 20  # tries of a capped search; an uncapped one is tried once
PARENT, DEPTH, BACKWARD, FORWARD = range(4)  # columns of a stored state's bookkeeping
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
def _grow(states: np.ndarray, info: np.ndarray, stored: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Twice the rows for states and their bookkeeping, and a table sized for them."""
    cap = 2 * states.shape[0]
    grown = np.empty((cap, states.shape[1]), dtype=np.uint8)
    grown[:stored] = states[:stored]
    more = np.empty((cap, 4), dtype=np.int64)
    more[:stored] = info[:stored]
    return grown, more, _rehash(grown, stored, 4 * cap)


@compiled
def _admit(
    child: np.ndarray, at: int, states: np.ndarray, info: np.ndarray, table: np.ndarray, stored: int,
    heap_key: np.ndarray, heap_item: np.ndarray, frontier: int, depth_coefficient: float, rng: np.random.Generator,
    future: np.ndarray, bpot: np.ndarray, fpot: np.ndarray, ncolors: int, mx: int, my: int,
    lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray, waves: np.ndarray, outs: np.ndarray,
    queue: np.ndarray, done: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, int, bool]:
    """Offer `child`, a state one step after state `at`, to the search, whichever node kind made it.

    A state seen before only gets the shorter route (and another turn in the frontier); a new one
    is kept if both estimates allow the goal. Returns the (possibly grown) arrays, the states
    stored, the frontier size, and whether the child is the goal (then the last stored state).
    """
    if stored == states.shape[0]:
        states, info, table = _grow(states, info, stored)
    # The child goes in the next free row, which it keeps only if new and possible.
    states[stored] = child
    seen = _find(states, stored, table)
    if seen >= 0:
        if info[at, DEPTH] + 1 < info[seen, DEPTH]:
            info[seen, DEPTH] = info[at, DEPTH] + 1
            info[seen, PARENT] = at
            rank = _rank(info[seen, DEPTH], info[seen, BACKWARD], info[seen, FORWARD], depth_coefficient, rng)
            heap_key, heap_item = _push(heap_key, heap_item, frontier, rank, seen)
            frontier += 1
        return states, info, table, stored, heap_key, heap_item, frontier, False
    b, f = _estimates(states, stored, future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done)
    if b < 0 or f < 0:
        return states, info, table, stored, heap_key, heap_item, frontier, False
    k = stored
    info[k, PARENT] = at
    info[k, DEPTH] = info[at, DEPTH] + 1
    info[k, BACKWARD] = b
    info[k, FORWARD] = f
    table[-seen - 1] = k
    if f == 0:
        return states, info, table, k + 1, heap_key, heap_item, frontier, True
    heap_key, heap_item = _push(heap_key, heap_item, frontier, _rank(info[k, DEPTH], b, f, depth_coefficient, rng), k)
    return states, info, table, k + 1, heap_key, heap_item, frontier + 1, False


# Rows of the work array of an `all` expansion: matches (rule, x, y); the enumeration level that
# hid a match (-1: visible); the stack of covers (matches over the chosen cell) with each level's
# start, next and end in it; the match chosen at each level.
_RULE, _X, _Y, _HIDDEN, _COVER, _START, _NEXT, _END, _CHOSEN = range(9)


@compiled
def _all_work(n: int, lo: int, hi: int) -> np.ndarray:
    """Scratch for enumerating an `all` node's children on a grid of n cells."""
    return np.empty((9, (hi - lo) * n + 1), dtype=np.int64)


@compiled
def _list_matches(
    state: np.ndarray, mx: int, my: int, lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray,
    waves: np.ndarray, work: np.ndarray, amounts: np.ndarray, cursor: np.ndarray,
) -> int:
    """List every match in the dense `state`, cell by cell and by rule within a cell as the
    reference does (the order children come in, hence the search's ties), count the matches over
    each cell in `amounts`, and start the enumeration; returns the number of matches."""
    amounts[:] = 0
    found = 0
    for y in range(my):
        for x in range(mx):
            for r in range(lo, hi):
                w = rw[r]
                h = rh[r]
                if x + w > mx or y + h > my:
                    continue
                fits = True
                for q in range(w * h):
                    if (waves[roff[r] + q] >> state[x + q % w + (y + q // w) * mx]) & 1 == 0:
                        fits = False
                        break
                if not fits:
                    continue
                work[_RULE, found] = r
                work[_X, found] = x
                work[_Y, found] = y
                work[_HIDDEN, found] = -1
                found += 1
                for dy in range(h):
                    for dx in range(w):
                        amounts[x + dx + (y + dy) * mx] += 1
    cursor[0] = 0  # level
    cursor[1] = 1  # entering the level (else resuming its choices)
    cursor[2] = 0  # top of the cover stack
    return found


@compiled
def _mark(work: np.ndarray, amounts: np.ndarray, l: int, level: int, mx: int, rw: np.ndarray, rh: np.ndarray) -> None:
    """Hide match l at `level`, or show it again with level -1, keeping `amounts` in step."""
    work[_HIDDEN, l] = level
    r = work[_RULE, l]
    step = 1 if level < 0 else -1
    for dy in range(rh[r]):
        for dx in range(rw[r]):
            amounts[work[_X, l] + dx + (work[_Y, l] + dy) * mx] += step


@compiled
def _next_leaf(work: np.ndarray, amounts: np.ndarray, matches: int, cursor: np.ndarray, mx: int, rw: np.ndarray, rh: np.ndarray) -> int:
    """Advance the enumeration of maximal sets of non-overlapping matches to its next set and
    return its size (the set is work[_CHOSEN, :size]), or -1 when every set was given.

    The reference's recursion, run on an explicit stack: take the cell the most visible matches
    cover (the first such), branch on each visible match over it, and hide every visible match
    overlapping the one taken; a level where nothing is visible is a leaf. Not every maximal set
    is reached this way (one whose matches all avoid the cell taken is not), as in the reference.
    """
    level = cursor[0]
    entering = cursor[1] == 1
    top = cursor[2]
    while level >= 0:
        if entering:
            cell = -1
            most = 0
            for i in range(amounts.shape[0]):
                if amounts[i] > most:
                    most = amounts[i]
                    cell = i
            if cell < 0:
                cursor[0] = level - 1
                cursor[1] = 0
                cursor[2] = top
                return level
            cx = cell % mx
            cy = cell // mx
            work[_START, level] = top
            for l in range(matches):
                r = work[_RULE, l]
                if (work[_HIDDEN, l] < 0 and work[_X, l] <= cx < work[_X, l] + rw[r] and work[_Y, l] <= cy < work[_Y, l] + rh[r]):
                    work[_COVER, top] = l
                    top += 1
            work[_NEXT, level] = work[_START, level]
            work[_END, level] = top
            entering = False
        if work[_NEXT, level] > work[_START, level]:
            for l in range(matches):  # undo this level's previous choice
                if work[_HIDDEN, l] == level:
                    _mark(work, amounts, l, -1, mx, rw, rh)
        if work[_NEXT, level] == work[_END, level]:
            top = work[_START, level]
            level -= 1
            continue
        chosen = work[_COVER, work[_NEXT, level]]
        work[_NEXT, level] += 1
        work[_CHOSEN, level] = chosen
        r0 = work[_RULE, chosen]
        x0 = work[_X, chosen]
        y0 = work[_Y, chosen]
        for l in range(matches):
            if work[_HIDDEN, l] >= 0:
                continue
            r = work[_RULE, l]
            x = work[_X, l]
            y = work[_Y, l]
            if x < x0 + rw[r0] and x0 < x + rw[r] and y < y0 + rh[r0] and y0 < y + rh[r]:
                _mark(work, amounts, l, level, mx, rw, rh)  # the chosen match among them
        level += 1
        entering = True
    cursor[0] = -1
    return -1


@compiled
def _apply_leaf(child: np.ndarray, parent: np.ndarray, work: np.ndarray, size: int, mx: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray, outs: np.ndarray) -> None:
    """child = parent with the chosen matches applied. The reference writes `*` output cells too
    (as 0xff); like every node here, a `*` (KEEP) leaves its cell unchanged."""
    child[:] = parent
    for s in range(size):
        l = work[_CHOSEN, s]
        r = work[_RULE, l]
        w = rw[r]
        for q in range(w * rh[r]):
            o = outs[roff[r] + q]
            if o != KEEP:
                child[work[_X, l] + q % w + (work[_Y, l] + q // w) * mx] = o


@compiled
def all_children(
    state: np.ndarray, mx: int, my: int, lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray,
    waves: np.ndarray, outs: np.ndarray,
) -> np.ndarray:
    """The states an `all` node's search steps to from the dense `state` (cell x + y * mx), one a
    row in the order the search meets them, repeats included."""
    n = mx * my
    work = _all_work(n, lo, hi)
    amounts = np.empty(n, dtype=np.int64)
    cursor = np.empty(3, dtype=np.int64)
    matches = _list_matches(state, mx, my, lo, hi, rw, rh, roff, waves, work, amounts, cursor)
    out = np.empty((4, n), dtype=np.uint8)
    count = 0
    while True:
        size = _next_leaf(work, amounts, matches, cursor, mx, rw, rh)
        if size < 0:
            return out[:count]
        if count == out.shape[0]:
            grown = np.empty((2 * count, n), dtype=np.uint8)
            grown[:count] = out
            out = grown
        _apply_leaf(out[count], state, work, size, mx, rw, rh, roff, outs)
        count += 1


@compiled
def _trajectory(states: np.ndarray, info: np.ndarray, k: int) -> np.ndarray:
    """The states from the root's child to state k."""
    path = np.empty((info[k, DEPTH], states.shape[1]), dtype=np.uint8)
    j = k
    while info[j, PARENT] >= 0:
        path[info[j, DEPTH] - 1] = states[j]
        j = info[j, PARENT]
    return path


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
    all_at_once: bool,
    limit: int,
    depth_coefficient: float,
    rng: np.random.Generator,
) -> tuple[bool, np.ndarray]:
    """One best-first search; (found, the states after each step, the goal last). A step applies
    one match, or with `all_at_once` a maximal set of non-overlapping matches."""
    n = mx * my
    bpot = np.empty((ncolors, n), dtype=np.int32)
    fpot = np.empty((ncolors, n), dtype=np.int32)
    queue = np.empty(ncolors * n, dtype=np.int64)
    done = np.empty((hi - lo, n), dtype=np.bool_)
    backward_potentials(bpot, 0, ncolors, mx, my, mx, future, lo, hi, rw, rh, roff, waves, outs, queue, done)

    cap = 1024
    states = np.empty((cap, n), dtype=np.uint8)
    info = np.empty((cap, 4), dtype=np.int64)
    states[0] = present
    backward, forward = _estimates(states, 0, future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done)
    if backward < 0 or forward < 0:
        return False, np.empty((0, n), dtype=np.uint8)
    if backward == 0:
        return True, np.empty((0, n), dtype=np.uint8)
    info[0, PARENT] = -1
    info[0, DEPTH] = 0
    info[0, BACKWARD] = backward
    info[0, FORWARD] = forward
    stored = 1
    table = _rehash(states, stored, 4 * cap)
    heap_key = np.empty(64, dtype=np.float64)
    heap_item = np.empty(64, dtype=np.int64)
    heap_key, heap_item = _push(heap_key, heap_item, 0, _rank(0, backward, forward, depth_coefficient, rng), 0)
    frontier = 1
    parent = np.empty(n, dtype=np.uint8)  # the expanded state, apart from `states`, which may grow
    child = np.empty(n, dtype=np.uint8)
    work = _all_work(n, lo, hi)
    amounts = np.empty(n, dtype=np.int64)
    cursor = np.empty(3, dtype=np.int64)

    while frontier > 0 and (limit < 0 or stored < limit):
        at = _pop(heap_key, heap_item, frontier)
        frontier -= 1
        parent[:] = states[at]
        if all_at_once:
            matches = _list_matches(parent, mx, my, lo, hi, rw, rh, roff, waves, work, amounts, cursor)
            while True:
                size = _next_leaf(work, amounts, matches, cursor, mx, rw, rh)
                if size < 0:
                    break
                _apply_leaf(child, parent, work, size, mx, rw, rh, roff, outs)
                states, info, table, stored, heap_key, heap_item, frontier, goal = _admit(
                    child, at, states, info, table, stored, heap_key, heap_item, frontier, depth_coefficient, rng,
                    future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done,
                )
                if goal:
                    return True, _trajectory(states, info, stored - 1)
        else:
            for r in range(lo, hi):
                w = rw[r]
                h = rh[r]
                base = roff[r]
                for y in range(my - h + 1):
                    for x in range(mx - w + 1):
                        fits = True
                        for q in range(w * h):
                            if (waves[base + q] >> parent[x + q % w + (y + q // w) * mx]) & 1 == 0:
                                fits = False
                                break
                        if not fits:
                            continue
                        child[:] = parent
                        for q in range(w * h):
                            o = outs[base + q]
                            if o != KEEP:
                                child[x + q % w + (y + q // w) * mx] = o
                        states, info, table, stored, heap_key, heap_item, frontier, goal = _admit(
                            child, at, states, info, table, stored, heap_key, heap_item, frontier, depth_coefficient, rng,
                            future, bpot, fpot, ncolors, mx, my, lo, hi, rw, rh, roff, waves, outs, queue, done,
                        )
                        if goal:
                            return True, _trajectory(states, info, stored - 1)
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
    all_at_once: bool,  # an `all` node: a step applies a maximal set of non-overlapping matches
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
        found, path = search_once(present, dense_future, mx, my, ncolors, lo, hi, rw, rh, roff, waves, outs, all_at_once, limit, depth_coefficient, rng)
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
