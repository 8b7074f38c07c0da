"""`path`: draw a shortest path from a `from` cell to a `to` cell over `on` cells, as
MarkovJunior's path node does."""

from __future__ import annotations

import math

import numpy as np

from pipeline.grid.graph import below
from pipeline.jit import compiled

# Flags of a path node.
INERTIA, LONGEST, EDGES = 1, 2, 4

# Steps of a path node: the four edge neighbours, then the four diagonal ones.
NDX = np.array([-1, 1, 0, 0, -1, -1, 1, 1], dtype=np.int64)
NDY = np.array([0, 0, -1, 1, -1, 1, -1, 1], dtype=np.int64)


@compiled
def go_path(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    params: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    generation: np.ndarray,
    queue: np.ndarray,
    starts: np.ndarray,
    cand: np.ndarray,
    ndx: np.ndarray,
    ndy: np.ndarray,
    rng: np.random.Generator,
    count: np.ndarray,
) -> tuple[int, bool]:
    """MarkovJunior's `path`: breadth-first distances from the `to` cells over `on` cells, then
    draw a shortest path from the nearest (or farthest, `longest`) `from` cell in `color`,
    going straight where it can with `inertia`. Fails when no `from` cell reaches a `to` cell."""
    start_wave, finish_wave, substrate, color, flags = params[0], params[1], params[2], params[3], params[4]
    ndirs = 8 if flags & EDGES else 4
    n = my << xb
    xmask = (1 << xb) - 1
    head = 0
    tail = 0
    nstarts = 0
    for i in range(n):
        generation[i] = -1
        if i & xmask >= mx:
            continue
        v = state[i]
        if (start_wave >> v) & 1:
            starts[nstarts] = i
            nstarts += 1
        if (finish_wave >> v) & 1:
            generation[i] = 0
            queue[tail] = i
            tail += 1
    if nstarts == 0 or tail == 0:
        return nchanges, False
    while head < tail:
        i = queue[head]
        head += 1
        x = i & xmask
        y = i >> xb
        for d in range(ndirs):
            nx = x + ndx[d]
            ny = y + ndy[d]
            if nx < 0 or ny < 0 or nx >= mx or ny >= my:
                continue
            j = (ny << xb) + nx
            v = state[j]
            if generation[j] == -1 and ((substrate >> v) & 1 or (start_wave >> v) & 1):
                generation[j] = generation[i] + 1
                if (substrate >> v) & 1:
                    queue[tail] = j
                    tail += 1
    # The pen starts at the nearest reached `from` cell (ties broken by a little noise).
    best = -1
    best_key = 0.0
    for s in range(nstarts):
        g = generation[starts[s]]
        if g <= 0:
            continue
        key = g + 0.1 * rng.random()
        if flags & LONGEST:
            key = -key
        if best < 0 or key < best_key:
            best = starts[s]
            best_key = key
    if best < 0:
        return nchanges, False
    pen = best
    dx = 0
    dy = 0
    while True:
        x = pen & xmask
        y = pen >> xb
        g = generation[pen]
        m = np.int64(0)  # not a literal: numba would compile `below` once more for 0
        for d in range(ndirs):
            nx = x + ndx[d]
            ny = y + ndy[d]
            if 0 <= nx < mx and 0 <= ny < my and generation[(ny << xb) + nx] == g - 1:
                cand[m] = d
                m += 1
        d = -1
        if flags & INERTIA and (dx != 0 or dy != 0):
            if ndirs == 4:
                for k in range(m):
                    if ndx[cand[k]] == dx and ndy[cand[k]] == dy:
                        d = cand[k]
            else:
                # With diagonals, the step closest in angle to the last one (a little noise
                # breaks ties).
                best_score = -4.0
                for k in range(m):
                    cx = ndx[cand[k]]
                    cy = ndy[cand[k]]
                    score = (cx * dx + cy * dy) / math.sqrt((cx * cx + cy * cy) * (dx * dx + dy * dy)) + 0.1 * rng.random()
                    if score > best_score:
                        best_score = score
                        d = cand[k]
        if d < 0:
            d = cand[below(rng, m)]
        dx = ndx[d]
        dy = ndy[d]
        chosen = ((y + dy) << xb) + x + dx
        pen = chosen
        if generation[pen] == 0:
            break
        count[state[pen]] -= 1
        count[color] += 1
        state[pen] = color
        changes[nchanges] = pen
        nchanges += 1
    return nchanges, True
