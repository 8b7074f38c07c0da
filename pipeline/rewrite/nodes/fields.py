"""Potential fields and temperature: how `one` and `all` nodes with `<field>`s choose matches.

A field for value c holds, in every cell, the breadth-first distance over `on` cells from the
nearest `to` cell (or, `inversed`, from a `from` cell), -1 where unreachable. A match is scored by
how its writes change the potentials of the values in the written cells (MarkovJunior's
DeltaPointwise): writing c where c's field is -1 is not allowed, and lower totals are better.
With temperature 0 the best-scored match is applied (noise breaks ties); above 0 the choice is
random, biased towards low scores the more, the lower the temperature.

These steps are calls from the interpreter's loop: unlike a plain `one` step, each looks at every
listed match, so the call costs little beside the work.
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.all_node import fit_in_order
from pipeline.rewrite.nodes.matching import window_matches

# Field flags.
RECOMPUTE, ESSENTIAL, INVERSED = 1, 2, 4


@compiled
def compute_potential(
    state: np.ndarray, mx: int, my: int, xb: int, zero: int, on: int, potential: np.ndarray, queue: np.ndarray
) -> bool:
    """Distances from the `zero` cells over the `on` cells (4-neighbour steps) into `potential`;
    False when no cell is a `zero` cell."""
    xmask = (1 << xb) - 1
    stride = 1 << xb
    tail = 0
    for y in range(my):
        for x in range(mx):
            i = (y << xb) + x
            potential[i] = -1
            if (zero >> state[i]) & 1:
                potential[i] = 0
                queue[tail] = i
                tail += 1
    if tail == 0:
        return False
    head = 0
    while head < tail:
        i = queue[head]
        head += 1
        x = i & xmask
        y = i >> xb
        t = potential[i] + 1
        for k in range(4):
            if k == 0:
                if x == 0:
                    continue
                j = i - 1
            elif k == 1:
                if x == mx - 1:
                    continue
                j = i + 1
            elif k == 2:
                if y == 0:
                    continue
                j = i - stride
            else:
                if y == my - 1:
                    continue
                j = i + stride
            if potential[j] == -1 and (on >> state[j]) & 1:
                potential[j] = t
                queue[tail] = j
                tail += 1
    return True


@compiled
def prepare_fields(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    fields: np.ndarray,  # int64[f, 4]: value, zero wave, on wave, flags; sorted by value
    lo: int,
    hi: int,
    first_step: bool,
    potentials: np.ndarray,  # int32[rows, cells]: this node's are row .. row + values - 1
    row: int,
    queue: np.ndarray,
) -> bool:
    """Compute the node's fields that are due (all on its first step since a reset, then those
    with `recompute`). False, and the node fails, when an `essential` field has no zero cell, or
    when fields were computed and none had one."""
    computed = False
    succeeded = False
    for f in range(lo, hi):
        flags = fields[f, 3]
        if first_step or flags & RECOMPUTE:
            ok = compute_potential(state, mx, my, xb, fields[f, 1], fields[f, 2], potentials[row + fields[f, 0]], queue)
            if not ok and flags & ESSENTIAL:
                return False
            computed = True
            succeeded = succeeded or ok
    return succeeded or not computed


@compiled
def score(
    state: np.ndarray, xb: int, w: int, h: int, waves: np.ndarray, outs: np.ndarray, base: int, sx: int, sy: int,
    potentials: np.ndarray, row: int, inversed: int,
) -> tuple[bool, int]:
    """(allowed, score) of writing the rule at `base` at (sx, sy): the change in potential of every
    cell whose value the rule's input does not already allow; `inversed` is a bit set of the
    values whose fields count distance from their `from` cells, which flips their sign."""
    total = 0
    for dy in range(h):
        for dx in range(w):
            k = base + dy * w + dx
            new = outs[k]
            if new == 255 or (waves[k] >> new) & 1:
                continue
            i = ((sy + dy) << xb) + sx + dx
            new_p = potentials[row + new, i]
            if new_p == -1:
                return False, 0
            old = state[i]
            old_p = potentials[row + old, i]
            total += new_p - old_p
            if (inversed >> old) & 1:
                total += 2 * old_p
            if (inversed >> new) & 1:
                total -= 2 * new_p
    return True, total


@compiled
def key(h: int, first: int, temperature: float, u: float) -> float:
    """Larger is chosen first: with temperature, a random key whose odds favour low scores;
    without, the lowest score, ties broken by `u`."""
    if temperature > 0:
        return u ** math.exp((h - first) / temperature)
    return -h + 0.001 * u


@compiled
def choose_one(
    state: np.ndarray,
    xb: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    matches: np.ndarray,
    off: int,
    mc: int,
    listed: np.ndarray,
    rb: int,
    potentials: np.ndarray,
    row: int,
    inversed: int,
    temperature: float,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """(the match to apply or -1, matches still listed). Stale matches are dropped on the way;
    the chosen one stays listed (the next update finds it stale), as in the reference."""
    xmask = (1 << xb) - 1
    rmask = (1 << rb) - 1
    best = -1000.0  # the reference's floor: a key below it is never chosen
    chosen = -1
    first = 0
    scored = False
    k = 0
    while k < mc:
        m = matches[off + k]
        i = m >> rb
        r = m & rmask
        sx = i & xmask
        sy = i >> xb
        if not window_matches(state, xb, waves, roff[r], rw[r], rh[r], sx, sy):
            listed[m] = False
            mc -= 1
            matches[off + k] = matches[off + mc]
            continue
        ok, h = score(state, xb, rw[r], rh[r], waves, outs, roff[r], sx, sy, potentials, row, inversed)
        if ok:
            if not scored:
                first = h
                scored = True
            value = key(h, first, temperature, rng.random())
            if value > best:
                best = value
                chosen = m
        k += 1
    return chosen, mc


@compiled
def go_all_fields(
    state: np.ndarray,
    xb: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    matches: np.ndarray,
    off: int,
    mc: int,
    listed: np.ndarray,
    rb: int,
    potentials: np.ndarray,
    row: int,
    inversed: int,
    temperature: float,
    rng: np.random.Generator,
    written: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
) -> tuple[np.ndarray, int]:
    """An `all` step with fields: the allowed matches in order of their keys (best first), each
    applied unless it would write a cell already written. Matches not allowed are left out of
    the list but stay marked listed, so later updates skip them, as in the reference."""
    xmask = (1 << xb) - 1
    rmask = (1 << rb) - 1
    keys = np.empty(mc, dtype=np.float64)
    which = np.empty(mc, dtype=np.int64)
    nk = 0
    first = 0
    for k in range(mc):
        m = matches[off + k]
        i = m >> rb
        r = m & rmask
        ok, h = score(state, xb, rw[r], rh[r], waves, outs, roff[r], i & xmask, i >> xb, potentials, row, inversed)
        if ok:
            if nk == 0:
                first = h
            keys[nk] = -key(h, first, temperature, rng.random())
            which[nk] = m
            nk += 1
    # Stable: equal keys keep the list's order.
    order = which[:nk][np.argsort(keys[:nk], kind="mergesort")]
    return fit_in_order(state, xb, rw, rh, roff, outs, order, listed, rb, written, changes, nchanges, count)
