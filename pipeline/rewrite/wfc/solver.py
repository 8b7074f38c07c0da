"""The wave of a wfc node, compiled: for every node of the wave (a cell of the old grid) the
patterns (or tiles) it may still take, collapsed one observation at a time.

An observation picks the unobserved node of least entropy (Shannon's over the weights with
`shannon`, else the number of patterns left), ties broken at random, and keeps one of its
patterns drawn by weight; propagation then bans every pattern left without a compatible
neighbour (AC-4: `compat[i, t, d]` counts the patterns of the neighbour at -d that t agrees with).

Like MarkovJunior, the solver first applies the start bans and propagates once (a contradiction
there fails the node), then tries up to `tries` runs from that start; the first run that ends
with every node observed is the result. Two differences make every result valid where the
reference could return a broken one: a run fails as soon as any node has no pattern left (the
reference checks node 0 only), and a pattern with no compatible pattern at all on a side where
the wave has a neighbour is banned at the start (the reference never bans it, having nothing
to count down).
"""

from __future__ import annotations

import numpy as np

from pipeline.grid.graph import below
from pipeline.jit import compiled

OK, CONTRADICTORY_START, NO_GOOD_SEED = 0, 1, 2
_DX = np.array([1, 0, -1, 0], dtype=np.int64)
_DY = np.array([0, 1, 0, -1], dtype=np.int64)
_TIE = 1e-6  # entropies closer than this count as equal, like the reference's noise


@compiled
def _ban(i, t, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top):
    wave[i, t] = False
    compat[i, t, :] = 0
    stack[top, 0] = i
    stack[top, 1] = t
    count[i] -= 1
    if shannon:
        s = sw[i]
        ent[i] += swlw[i] / s - np.log(s) if s > 0 else 0.0
        sw[i] -= weights[t]
        swlw[i] -= wlw[t]
        s = sw[i]
        ent[i] -= swlw[i] / s - np.log(s) if s > 0 else 0.0
    return top + 1


@compiled
def _propagate(mx, my, n, periodic, prop_ptr, prop_data, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top):
    """Empty the stack of banned (node, pattern) pairs; False at the first empty node."""
    while top > 0:
        top -= 1
        i1 = stack[top, 0]
        t1 = stack[top, 1]
        if count[i1] == 0:
            return False
        x1 = i1 % mx
        y1 = i1 // mx
        for d in range(4):
            x2 = x1 + _DX[d]
            y2 = y1 + _DY[d]
            if periodic:
                x2 = (x2 + mx) % mx
                y2 = (y2 + my) % my
            elif x2 < 0 or y2 < 0 or x2 + n > mx or y2 + n > my:
                continue
            i2 = x2 + y2 * mx
            for k in range(prop_ptr[d, t1], prop_ptr[d, t1 + 1]):
                t2 = prop_data[k]
                compat[i2, t2, d] -= 1
                if compat[i2, t2, d] == 0:
                    top = _ban(i2, t2, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top)
                    if count[i2] == 0:
                        return False
    return True


@compiled
def _next_node(mx, my, n, periodic, count, ent, shannon, rng):
    """The unobserved node of least entropy, uniformly among ties; -1 when all are observed."""
    best = 1e300
    for y in range(my):
        for x in range(mx):
            if not periodic and (x + n > mx or y + n > my):
                continue
            i = x + y * mx
            if count[i] > 1:
                e = ent[i] if shannon else float(count[i])
                if e < best:
                    best = e
    if best == 1e300:
        return -1
    ties = 0
    for y in range(my):
        for x in range(mx):
            if not periodic and (x + n > mx or y + n > my):
                continue
            i = x + y * mx
            if count[i] > 1 and (ent[i] if shannon else float(count[i])) <= best + _TIE:
                ties += 1
    pick = below(rng, ties)
    for y in range(my):
        for x in range(mx):
            if not periodic and (x + n > mx or y + n > my):
                continue
            i = x + y * mx
            if count[i] > 1 and (ent[i] if shannon else float(count[i])) <= best + _TIE:
                if pick == 0:
                    return i
                pick -= 1
    return -1


@compiled
def _snapshot(wave, count, weights, row):
    """Each node's pattern as a recording shows it mid-collapse: the one left, or the heaviest
    of those left (-1 where none is)."""
    for i in range(wave.shape[0]):
        best = -1
        for t in range(wave.shape[1]):
            if wave[i, t] and (best < 0 or weights[t] > weights[best]):
                best = t
                if count[i] == 1:
                    break
        row[i] = best


@compiled
def solve(mx, my, n, periodic, prop_ptr, prop_data, weights, allowed, shannon, tries, rng, chosen, frames):
    """Collapse a wave of mx x my nodes. `allowed[i, t]`: pattern t may start at node i.
    On OK, `chosen[i]` is node i's pattern (-1 outside the wave of a non-periodic grid).
    `frames` (int64[cap, mx * my], cap 0 for none) receives snapshots of the successful run,
    one every `every` observations, the interval doubling whenever the buffer fills.
    Returns (status, observations of the successful run, frames kept, every)."""
    length = mx * my
    p = weights.shape[0]
    wlw = weights * np.log(weights)
    total_w = weights.sum()
    total_wlw = wlw.sum()
    wave = np.ones((length, p), dtype=np.bool_)
    compat = np.empty((length, p, 4), dtype=np.int32)
    count = np.full(length, p, dtype=np.int32)
    sw = np.full(length, total_w)
    swlw = np.full(length, total_wlw)
    ent = np.full(length, np.log(total_w) - total_wlw / total_w)
    stack = np.empty((length * p, 2), dtype=np.int64)
    for t in range(p):
        for d in range(4):
            opposite = (d + 2) % 4
            compat[:, t, d] = prop_ptr[opposite, t + 1] - prop_ptr[opposite, t]
    top = 0
    for y in range(my):
        for x in range(mx):
            i = x + y * mx
            for t in range(p):
                if not wave[i, t]:
                    continue
                banned = not allowed[i, t]
                for d in range(4):
                    # The neighbour this side of t counts its support from.
                    xs = x - _DX[d]
                    ys = y - _DY[d]
                    inside = periodic or (xs >= 0 and ys >= 0 and xs + n <= mx and ys + n <= my)
                    if inside and compat[i, t, d] == 0:
                        banned = True
                if banned:
                    top = _ban(i, t, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top)
    for i in range(length):
        if count[i] == 0:
            return CONTRADICTORY_START, 0, 0, 1
    if not _propagate(mx, my, n, periodic, prop_ptr, prop_data, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top):
        return CONTRADICTORY_START, 0, 0, 1
    cap = frames.shape[0]
    start = (wave.copy(), compat.copy(), count.copy(), sw.copy(), swlw.copy(), ent.copy())
    for _ in range(tries):
        wave[:] = start[0]
        compat[:] = start[1]
        count[:] = start[2]
        sw[:] = start[3]
        swlw[:] = start[4]
        ent[:] = start[5]
        observations = 0
        nframes = 0
        every = 1
        while True:
            if cap > 0 and observations % every == 0:
                if nframes == cap:
                    for f in range(cap // 2):
                        frames[f, :] = frames[2 * f, :]
                    nframes = cap // 2
                    every *= 2
                if observations % every == 0:
                    _snapshot(wave, count, weights, frames[nframes])
                    nframes += 1
            node = _next_node(mx, my, n, periodic, count, ent, shannon, rng)
            if node < 0:
                for i in range(length):
                    chosen[i] = -1
                    if count[i] == 1:
                        for t in range(p):
                            if wave[i, t]:
                                chosen[i] = t
                return OK, observations, nframes, every
            threshold = 0.0
            for t in range(p):
                if wave[node, t]:
                    threshold += weights[t]
            threshold *= rng.random()
            keep = -1
            partial = 0.0
            for t in range(p):
                if wave[node, t]:
                    keep = t
                    partial += weights[t]
                    if partial >= threshold:
                        break
            top = 0
            for t in range(p):
                if wave[node, t] and t != keep:
                    top = _ban(node, t, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top)
            observations += 1
            if not _propagate(mx, my, n, periodic, prop_ptr, prop_data, wave, compat, count, sw, swlw, ent, weights, wlw, shannon, stack, top):
                break
    return NO_GOOD_SEED, 0, 0, 1
