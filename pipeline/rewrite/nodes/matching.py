"""Where a node's rules match: the window test and the whole-grid scan, for the match lists that
`one` and `all` nodes keep between turns (MarkovJunior's scheme; their upkeep is in the
interpreter's loop, machine.py, for speed).

Every change to the grid is appended to `changes`, and `first[t]` is where turn t's changes
begin. A node keeps its matches between turns and, when it runs again, looks only at the windows
around the cells changed since the turn it last matched. For a node and a cell value, the
program's `pair_*` arrays list the (rule, pattern position) pairs that accept the value, so the
windows to test are found without scanning. Matches that went stale stay listed until they are
drawn (and dropped then), so a step costs time in proportion to what changed. A node's first scan
(and its first after a reset) covers the whole grid, anchored on the rule cell whose values are
rarest.

A match m is rule `m & rmask` at cell `m >> rb`, and cell i is (i & xmask, i >> xb): with power of
two strides the hot loops decode them with shifts and masks, never a division.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled


@compiled
def window_matches(state: np.ndarray, xb: int, waves: np.ndarray, off: int, w: int, h: int, sx: int, sy: int) -> bool:
    """Does the rule whose input waves start at `off` (w x h, row-major) match at (sx, sy)?"""
    for dy in range(h):
        row = ((sy + dy) << xb) + sx
        base = off + dy * w
        for dx in range(w):
            if (waves[base + dx] >> state[row + dx]) & 1 == 0:
                return False
    return True


@compiled
def rule_bits(nrules: int) -> int:
    """Bits that number `nrules` rules."""
    bits = 0
    while (1 << bits) < nrules:
        bits += 1
    return bits


@compiled
def scan_rule(
    state: np.ndarray, mx: int, my: int, xb: int, waves: np.ndarray, off: int, w: int, h: int, count: np.ndarray, found: np.ndarray
) -> int:
    """Every window of the whole grid where the rule at `off` matches, written into `found` as
    cells (y << xb) + x in reading order; returns how many.

    Only windows whose anchor cell fits are tested: the anchor is the rule's input cell that the
    fewest grid cells could fill, so each window is tested once, and few when the anchor's
    values are rare (a lone origin cell, the head of a maze walker)."""
    # The anchor, found inline: a helper of its own was one more compile on a first build.
    a = -1
    best_total = 0
    for k in range(w * h):
        wave = waves[off + k]
        total = 0
        for c in range(count.shape[0]):
            if (wave >> c) & 1:
                total += count[c]
        if total == 0:
            return 0  # an input cell accepts no value the grid has: the rule cannot match
        if a < 0 or total < best_total:
            a = k
            best_total = total
    if a < 0:
        return 0
    ax = a % w
    ay = a // w
    aw = waves[off + a]
    k = 0
    for sy in range(my - h + 1):
        row = (sy + ay) << xb
        for sx in range(mx - w + 1):
            if (aw >> state[row + sx + ax]) & 1 and window_matches(state, xb, waves, off, w, h, sx, sy):
                found[k] = (sy << xb) + sx
                k += 1
    return k


@compiled
def grow(a: np.ndarray, needed: int) -> np.ndarray:
    """`a` (int64) with room for `needed` items."""
    if needed <= a.shape[0]:
        return a
    size = a.shape[0] * 2
    while size < needed:
        size *= 2
    b = np.empty(size, dtype=np.int64)
    # A loop, not `b[:n] = a`: array-to-slice assignment brings numba's shape-mismatch error
    # message (str() of tuples), which took over a second to compile on a first run.
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@compiled
def agrees_with_rescan(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    listed: np.ndarray,
    matches: np.ndarray,
    off: int,
    mc: int,
    rb: int,
    valid: np.ndarray,
) -> bool:
    """Are the listed matches (of rules lo .. hi - 1) that still match exactly the matches a scan
    of every window finds? (Listed ones that no longer match are allowed: they are dropped when drawn.)"""
    valid[:] = False
    for k in range(off, off + mc):
        m = matches[k]
        if not listed[m]:
            return False
        i = m >> rb
        r = m & ((1 << rb) - 1)
        if window_matches(state, xb, waves, roff[r], rw[r], rh[r], i & ((1 << xb) - 1), i >> xb):
            if valid[m]:
                return False  # listed twice
            valid[m] = True
    for r in range(lo, hi):
        for sy in range(my - rh[r] + 1):
            for sx in range(mx - rw[r] + 1):
                if window_matches(state, xb, waves, roff[r], rw[r], rh[r], sx, sy) != valid[(((sy << xb) + sx) << rb) + r]:
                    return False
    return True


@compiled
def compact_log(changes: np.ndarray, nchanges: int, first: np.ndarray, last_turn: np.ndarray, turn: int, n: int) -> int:
    """Shrink the change log to what the nodes will still read; returns its new length.

    A run that never settles (a `prl` or a convolution churning for ever) grows the log by up to
    a grid a turn, for the whole run: gigabytes on a small grid. Each node will scan from the
    start of the turn it last matched (and a node matching this turn from now): the log before
    the earliest of those goes, and between two of them each cell is kept once, where it first
    appears. A scan looks at the windows around a changed cell on the grid as it is, so a later
    mention of a cell already seen in the same scan finds nothing the first did not: every
    node's match list, and so the run, is what it would have been."""
    nodes = last_turn.shape[0]
    old = np.empty(nodes + 1, dtype=np.int64)  # where each node's scan starts; -1: a full rescan
    for c in range(nodes):
        old[c] = first[last_turn[c]] if last_turn[c] >= 0 else -1
    old[nodes] = first[turn]
    # The distinct starts in order (an insertion sort: a handful of nodes).
    starts = np.empty(nodes + 1, dtype=np.int64)
    u = 0
    for c in range(nodes + 1):
        s = old[c]
        if s < 0:
            continue
        k = 0
        while k < u and starts[k] < s:
            k += 1
        if k < u and starts[k] == s:
            continue
        for m in range(u, k, -1):
            starts[m] = starts[m - 1]
        starts[k] = s
        u += 1
    seen = np.empty(n, dtype=np.int64)
    seen[:] = -1
    moved = np.empty(u, dtype=np.int64)
    w = 0
    for j in range(u):
        moved[j] = w
        hi = starts[j + 1] if j + 1 < u else nchanges
        for p in range(starts[j], hi):
            i = changes[p]
            if seen[i] != j:
                seen[i] = j
                changes[w] = i
                w += 1
    for c in range(nodes + 1):
        if old[c] < 0:
            continue
        k = 0
        while starts[k] != old[c]:
            k += 1
        first[last_turn[c] if c < nodes else turn] = moved[k]
    return w
