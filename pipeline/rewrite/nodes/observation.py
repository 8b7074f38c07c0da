"""Observations: a `one` or `all` node told what some cells must become (MarkovJunior's `<observe>`).

`<observe value="G" from="B" to="R"/>` says: every cell holding G now is really a B, and in the end
it must hold R. On the node's first step after a reset the present is rewritten that way and the
future of every cell is set: the `to` set of its observed value, or else just its own value. Then
the node is steered towards that future: potentials counted backwards from it (the fewest rule
applications, run backwards, that turn a cell's value into one its future allows) score matches
exactly as the potentials of fields do (nodes/fields.py), with the node's `temperature`. A `one`
node stops (fails) once every cell is in its future. With `search` the node instead plans a whole
trajectory to the future first (nodes/search.py) and replays it, a state per step.

Potentials here are rows `row + value` of an int32 table whose columns are cells `x + y * stride`:
the run's padded grid (stride 2**xb) for the interpreter, a dense one (stride mx) for the search.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.matching import grow

# Columns of the program's `observes` rows.
VALUE, FROM, TO = 0, 1, 2


@compiled
def lowest_value(wave: int, ncolors: int) -> int:
    """The value an input cell stands for when a rule runs backwards or is checked forwards: its
    lowest value, or -1 for a wildcard (which constrains nothing), as the reference's `binput`."""
    if wave == (1 << ncolors) - 1:
        return -1
    v = 0
    while (wave >> v) & 1 == 0:
        v += 1
    return v


@compiled
def propagate(
    pot: np.ndarray,  # int32[rows, cells]; -1 unreachable, the seeds already 0
    row: int,
    ncolors: int,
    mx: int,
    my: int,
    stride: int,
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    backwards: bool,
    queue: np.ndarray,  # int64[ncolors * cells]
    done: np.ndarray,  # bool[hi - lo, cells]: windows already applied
) -> None:
    """Breadth first from the 0 entries: a rule window whose required values are all reached
    by time t reaches its other side's values at t + 1. Forwards it requires its input and
    reaches its output; backwards the reverse. Each window is applied once, when it first can."""
    ncells = pot.shape[1]
    done[:, :] = False
    # For each value, the (rule, position) pairs it triggers from the side we come from: the
    # same test inside the loop would be repeated for every cell reached.
    npos = 0
    for r in range(lo, hi):
        npos += rw[r] * rh[r]
    trig_ptr = np.zeros(ncolors + 1, dtype=np.int64)
    trig_r = np.empty(max(npos * ncolors, 1), dtype=np.int64)
    trig_p = np.empty(max(npos * ncolors, 1), dtype=np.int64)
    m = 0
    for v in range(ncolors):
        for r in range(lo, hi):
            for p in range(rw[r] * rh[r]):
                o = outs[roff[r] + p]
                if (o == 255 or o == v) if backwards else (waves[roff[r] + p] >> v) & 1 == 1:
                    trig_r[m] = r
                    trig_p[m] = p
                    m += 1
        trig_ptr[v + 1] = m
    tail = 0
    for c in range(ncolors):
        for y in range(my):
            for x in range(mx):
                if pot[row + c, x + y * stride] == 0:
                    queue[tail] = c * ncells + x + y * stride
                    tail += 1
    head = 0
    while head < tail:
        e = queue[head]
        head += 1
        v = e // ncells
        i = e - v * ncells
        x = i % stride
        y = i // stride
        t = pot[row + v, i]
        for s in range(trig_ptr[v], trig_ptr[v + 1]):
            r = trig_r[s]
            p = trig_p[s]
            w = rw[r]
            h = rh[r]
            base = roff[r]
            sx = x - p % w
            sy = y - p // w
            if sx < 0 or sy < 0 or sx + w > mx or sy + h > my:
                continue
            si = sx + sy * stride
            if done[r - lo, si]:
                continue
            ready = True
            for q in range(w * h):
                need = outs[base + q] if backwards else lowest_value(waves[base + q], ncolors)
                if need == 255 or need < 0:
                    continue
                cur = pot[row + need, si + (q // w) * stride + q % w]
                if cur == -1 or cur > t:
                    ready = False
                    break
            if not ready:
                continue
            done[r - lo, si] = True
            for q in range(w * h):
                got = lowest_value(waves[base + q], ncolors) if backwards else outs[base + q]
                if got == 255 or got < 0:
                    continue
                j = si + (q // w) * stride + q % w
                if pot[row + got, j] == -1:
                    pot[row + got, j] = t + 1
                    queue[tail] = got * ncells + j
                    tail += 1


@compiled
def backward_potentials(
    pot: np.ndarray, row: int, ncolors: int, mx: int, my: int, stride: int, future: np.ndarray,
    lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray, waves: np.ndarray, outs: np.ndarray,
    queue: np.ndarray, done: np.ndarray,
) -> None:
    """For each value and cell, the fewest steps (by the rules' reach, ignoring conflicts) from
    that value there to a state in the `future` (bit sets per cell); -1 when none leads there."""
    for c in range(ncolors):
        for y in range(my):
            for x in range(mx):
                i = x + y * stride
                pot[row + c, i] = 0 if (future[i] >> c) & 1 else -1
    propagate(pot, row, ncolors, mx, my, stride, lo, hi, rw, rh, roff, waves, outs, True, queue, done)


@compiled
def forward_potentials(
    pot: np.ndarray, row: int, ncolors: int, mx: int, my: int, stride: int, state: np.ndarray,
    lo: int, hi: int, rw: np.ndarray, rh: np.ndarray, roff: np.ndarray, waves: np.ndarray, outs: np.ndarray,
    queue: np.ndarray, done: np.ndarray,
) -> None:
    """For each value and cell, the fewest steps from `state` after which the rules could have
    put that value there; -1 when they never can."""
    for c in range(ncolors):
        for y in range(my):
            for x in range(mx):
                i = x + y * stride
                pot[row + c, i] = 0 if state[i] == c else -1
    propagate(pot, row, ncolors, mx, my, stride, lo, hi, rw, rh, roff, waves, outs, False, queue, done)


@compiled
def set_present(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    observes: np.ndarray,  # int64[o, 3]: value, from value, to wave
    olo: int,
    ohi: int,
    future: np.ndarray,  # int64[cells]: filled here
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
) -> tuple[bool, np.ndarray, int]:
    """Rewrite every observed cell to its `from` value and set every cell's future. False when an
    observed value is on no cell (the node fails; the rewrite has happened all the same, as in
    the reference). Rewritten cells are logged as changes, so that match lists see them."""
    obs_from = np.full(ncolors, -1, dtype=np.int64)
    obs_to = np.zeros(ncolors, dtype=np.int64)
    seen = np.ones(ncolors, dtype=np.bool_)
    for k in range(olo, ohi):
        v = observes[k, VALUE]
        obs_from[v] = observes[k, FROM]
        obs_to[v] = observes[k, TO]
        seen[v] = False
    changes = grow(changes, nchanges + mx * my)
    for y in range(my):
        for x in range(mx):
            i = (y << xb) + x
            v = state[i]
            seen[v] = True
            if obs_from[v] < 0:
                future[i] = 1 << v
                continue
            future[i] = obs_to[v]
            f = obs_from[v]
            if f != v:
                state[i] = f
                count[v] -= 1
                count[f] += 1
                changes[nchanges] = i
                nchanges += 1
    ok = True
    for c in range(ncolors):
        ok = ok and seen[c]
    return ok, changes, nchanges


@compiled
def goal_reached(state: np.ndarray, mx: int, my: int, xb: int, future: np.ndarray) -> bool:
    """Does every cell hold a value its future allows?"""
    for y in range(my):
        for x in range(mx):
            i = (y << xb) + x
            if (future[i] >> state[i]) & 1 == 0:
                return False
    return True


@compiled
def start_observation(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    observes: np.ndarray,
    olo: int,
    ohi: int,
    future: np.ndarray,
    guided: bool,
    pot: np.ndarray,
    row: int,
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
) -> tuple[bool, np.ndarray, int]:
    """A node's first step with observations since a reset: set the present and the future and,
    for a `guided` node (one that does not search), the backward potentials its choices follow.
    False when an observed value is missing from the grid."""
    ok, changes, nchanges = set_present(state, mx, my, xb, ncolors, observes, olo, ohi, future, changes, nchanges, count)
    if ok and guided:
        n = state.shape[0]
        queue = np.empty(ncolors * n, dtype=np.int64)
        done = np.empty((hi - lo, n), dtype=np.bool_)
        backward_potentials(pot, row, ncolors, mx, my, 1 << xb, future, lo, hi, rw, rh, roff, waves, outs, queue, done)
    return ok, changes, nchanges


@compiled
def replay(
    state: np.ndarray, target: np.ndarray, changes: np.ndarray, nchanges: int, count: np.ndarray
) -> tuple[np.ndarray, int]:
    """Make the grid `target` (a state of a planned trajectory), logging the cells that change."""
    changes = grow(changes, nchanges + state.shape[0])
    for i in range(state.shape[0]):
        v = target[i]
        if state[i] != v:
            count[state[i]] -= 1
            count[v] += 1
            state[i] = v
            changes[nchanges] = i
            nchanges += 1
    return changes, nchanges
