"""The compiled interpreter: runs a flattened rule program on a grid, MarkovJunior's way.

Everything per step happens here, in one numba function, because a depth-first maze on a
967 x 967 grid takes ~466,000 steps and a Python call per step would cost more than the work.

Incremental matching (MarkovJunior's scheme): every change to the grid is appended to `changes`,
and `first[t]` is where turn t's changes begin. A `one` or `all` node keeps its matches between
turns and, when it runs again, looks only at the windows around the cells changed since the turn
it last matched. For a node and a cell value, `pair` lists the (rule, pattern position) pairs
that accept the value, so the windows to test are found without scanning. Matches that went
stale stay listed until they are drawn (and dropped then), so a step costs time in proportion
to what changed. A node's first scan (and its first after a reset) covers the whole grid,
anchored on the rule cell whose values are rarest.

Control flow mirrors MarkovJunior's interpreter: `current` is the branch that runs each turn; a
branch child that applies becomes `current` and keeps running on later turns until it fails,
when control returns to its parent (which, being a sequence, tries that child once more from a
reset state on its next turn, exactly as the reference does).
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.grid.graph import below
from pipeline.jit import compiled

ONE, ALL, PRL, MARKOV, SEQUENCE, PATH = 0, 1, 2, 3, 4, 5

# Run outcomes. MISMATCH only comes from a `verify` run: an incremental match list disagreed
# with a full rescan.
FINISHED, STEP_LIMIT, MISMATCH = 0, 1, 2

# Path node flags.
INERTIA, LONGEST, EDGES = 1, 2, 4

# Steps of a path node: the four edge neighbours, then the four diagonal ones.
NDX = np.array([-1, 1, 0, 0, -1, -1, 1, 1], dtype=np.int64)
NDY = np.array([0, 0, -1, 1, -1, 1, -1, 1], dtype=np.int64)


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
def run_program(
    state: np.ndarray,  # uint8[my << xb]: rows of 2**xb cells, the first mx used; modified in place
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    # nodes, in preorder: node k's subtree is k .. end[k] - 1
    kind: np.ndarray,
    parent: np.ndarray,
    end: np.ndarray,
    child_ptr: np.ndarray,  # children of k: children[child_ptr[k]:child_ptr[k + 1]]
    children: np.ndarray,
    rule_lo: np.ndarray,  # rules of node k: rule_lo[k] .. rule_hi[k] - 1
    rule_hi: np.ndarray,
    steps: np.ndarray,  # 0: unlimited
    path_params: np.ndarray,  # int64[k, 5]: from wave, to wave, on wave, colour, flags
    # rules
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,  # into waves / outs
    waves: np.ndarray,  # int64 bit set of accepted values per input cell
    outs: np.ndarray,  # uint8 value per output cell, 255 = leave
    prob: np.ndarray,
    pair_ptr: np.ndarray,  # node k, value c: (rule, position) pairs pair_ptr[k * ncolors + c] ..
    pair_rule: np.ndarray,
    pair_x: np.ndarray,
    pair_y: np.ndarray,
    rng: np.random.Generator,
    max_steps: int,
    frame_every: int,  # 0: no recording
    frames: np.ndarray,  # uint8[cap, my << xb]
    # Tests pass bool[(my << xb) * 2**rule_bits(len(rw))] here to compare every match update with a full
    # rescan; None (the normal case) compiles a version without the check at all.
    verify_scratch: np.ndarray | None,
) -> tuple[int, int, int, int]:
    """Run until the root branch fails or `max_steps` turns pass.

    Returns (outcome, turns, frames recorded, frame interval): when the frame buffer fills,
    every other frame is dropped and the interval doubles, so any run fits the cap evenly.
    """
    # Cell i is (i & xmask, i >> xb) and match m is rule m & rmask at cell m >> rb: with power
    # of two strides the hot loops decode them with shifts and masks, never a division.
    n = my << xb
    xmask = (1 << xb) - 1
    nrules = rw.shape[0]
    rb = rule_bits(nrules)
    rmask = (1 << rb) - 1
    nnodes = kind.shape[0]

    # Per-node run state.
    branch_at = np.empty(nnodes, dtype=np.int64)  # a branch's current child
    branch_at[:] = 0
    counter = np.empty(nnodes, dtype=np.int64)  # successful applications (for `steps`)
    counter[:] = 0
    last_turn = np.empty(nnodes, dtype=np.int64)  # turn of the last match scan; -1: rescan all
    last_turn[:] = -1
    match_count = np.empty(nnodes, dtype=np.int64)
    match_count[:] = 0
    match_off = np.empty(nnodes, dtype=np.int64)
    match_off[:] = 0
    pool = 0
    for k in range(nnodes):
        if kind[k] == ONE or kind[k] == ALL:
            match_off[k] = pool
            pool += (rule_hi[k] - rule_lo[k]) * mx * my
    # `listed[m]` says whether match m is in its node's list (a cell's rules are adjacent).
    matches = np.empty(max(pool, 1), dtype=np.int64)
    listed = np.empty(n << rb, dtype=np.bool_)
    listed[:] = False
    written = np.empty(n, dtype=np.bool_)  # cells an `all` step has written
    written[:] = False
    windows = np.empty(mx * my, dtype=np.int64)  # a full scan's matches of one rule
    pending = np.empty(n, dtype=np.uint8)  # a `prl` step's new values

    # Cells per value, for choosing each full scan's anchor.
    count = np.empty(ncolors, dtype=np.int64)
    count[:] = 0
    for y in range(my):
        for x in range(mx):
            count[state[(y << xb) + x]] += 1

    # Room for a typical run up front (pages are only touched as used): growing by doubling
    # copies these arrays, which for a million-cell maze costs more than a percent of the run.
    changes = np.empty(max(1024, 4 * mx * my), dtype=np.int64)
    # int64 from the start: a literal 0 would have numba compile go_path once for the literal
    # too, while it types the loop (a second compile of a big function, never called).
    nchanges = np.int64(0)
    first = np.empty(max(1024, min(max_steps + 1, mx * my)), dtype=np.int64)
    first[0] = 0

    # Path node scratch.
    generation = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    starts = np.empty(n, dtype=np.int64)
    cand = np.empty(8, dtype=np.int64)

    nframes = 0
    every = frame_every
    current = 0
    turn = 0
    while current >= 0 and turn < max_steps:
        if every > 0 and turn % every == 0:
            if nframes == frames.shape[0]:
                # Loops, not row assignment: see grow.
                for f in range(nframes // 2):
                    for i in range(n):
                        frames[f, i] = frames[2 * f, i]
                nframes //= 2
                every *= 2
            if turn % every == 0:
                for i in range(n):
                    frames[nframes, i] = state[i]
                nframes += 1

        # One turn: run `current`, descending into branch children as MarkovJunior's Branch.Go:
        # a branch child becomes `current` as it is entered, and stays so if something in it
        # applies; a branch that fails hands `current` back to its parent.
        start = current
        b = current
        if kind[b] == MARKOV:
            branch_at[b] = 0
        while True:
            nchild = child_ptr[b + 1] - child_ptr[b]
            if branch_at[b] >= nchild:
                # The branch fails: reset its subtree, hand control to its parent.
                for k in range(b, end[b]):
                    branch_at[k] = 0
                    counter[k] = 0
                    last_turn[k] = -1
                    for i in range(match_off[k], match_off[k] + match_count[k]):
                        listed[matches[i]] = False
                    match_count[k] = 0
                current = parent[b]
                if b == start:
                    break
                b = current
                branch_at[b] += 1
                continue
            c = children[child_ptr[b] + branch_at[b]]
            kc = kind[c]
            if kc == MARKOV or kc == SEQUENCE:
                b = c
                current = c
                if kc == MARKOV:
                    branch_at[b] = 0
                continue

            applied = False
            if kc == PATH:
                changes = grow(changes, nchanges + n)
                nchanges, applied = go_path(
                    state, mx, my, xb, path_params[c], changes, nchanges, generation, queue, starts, cand, NDX, NDY, rng, count
                )
            elif not (steps[c] > 0 and counter[c] >= steps[c]):
                # Bring the match list up to date (`prl` always scans the whole grid and
                # applies as it goes, since it never keeps matches).
                lo = rule_lo[c]
                hi = rule_hi[c]
                if kc == PRL:
                    found = 0
                    for r in range(lo, hi):
                        w = rw[r]
                        h = rh[r]
                        for f in range(scan_rule(state, mx, my, xb, waves, roff[r], w, h, count, windows)):
                            if rng.random() > prob[r]:
                                continue
                            found += 1
                            sx = windows[f] & xmask
                            sy = windows[f] >> xb
                            changes = grow(changes, nchanges + w * h)
                            for dy in range(h):
                                for dx in range(w):
                                    o = outs[roff[r] + dy * w + dx]
                                    i = ((sy + dy) << xb) + sx + dx
                                    if o != 255 and o != state[i]:
                                        pending[i] = o
                                        changes[nchanges] = i
                                        nchanges += 1
                    for j in range(first[turn], nchanges):
                        i = changes[j]
                        count[state[i]] -= 1
                        count[pending[i]] += 1
                        state[i] = pending[i]
                    counter[c] += 1
                    applied = found > 0
                else:
                    off = match_off[c]
                    mc = match_count[c]
                    if last_turn[c] >= 0:
                        for j in range(first[last_turn[c]], nchanges):
                            i = changes[j]
                            x = i & xmask
                            y = i >> xb
                            v = state[i]
                            for s in range(pair_ptr[c * ncolors + v], pair_ptr[c * ncolors + v + 1]):
                                r = pair_rule[s]
                                w = rw[r]
                                h = rh[r]
                                sx = x - pair_x[s]
                                sy = y - pair_y[s]
                                if sx < 0 or sy < 0 or sx + w > mx or sy + h > my:
                                    continue
                                m = (((sy << xb) + sx) << rb) + r
                                if window_matches(state, xb, waves, roff[r], w, h, sx, sy) and not listed[m]:
                                    listed[m] = True
                                    matches[off + mc] = m
                                    mc += 1
                    else:
                        mc = 0
                        for r in range(lo, hi):
                            for f in range(scan_rule(state, mx, my, xb, waves, roff[r], rw[r], rh[r], count, windows)):
                                m = (windows[f] << rb) + r
                                listed[m] = True
                                matches[off + mc] = m
                                mc += 1
                    last_turn[c] = turn
                    if verify_scratch is not None:
                        if not agrees_with_rescan(state, mx, my, xb, lo, hi, rw, rh, roff, waves, listed, matches, off, mc, rb, verify_scratch):
                            return MISMATCH, turn, nframes, every

                    if kc == ONE:
                        # Draw uniformly among the listed matches; a stale one is dropped and
                        # the draw repeats, which is uniform over the matches still valid.
                        while mc > 0:
                            k = below(rng, mc)
                            m = matches[off + k]
                            listed[m] = False
                            mc -= 1
                            matches[off + k] = matches[off + mc]
                            i = m >> rb
                            r = m & rmask
                            sx = i & xmask
                            sy = i >> xb
                            w = rw[r]
                            h = rh[r]
                            if window_matches(state, xb, waves, roff[r], w, h, sx, sy):
                                changes = grow(changes, nchanges + w * h)
                                for dy in range(h):
                                    for dx in range(w):
                                        o = outs[roff[r] + dy * w + dx]
                                        i = ((sy + dy) << xb) + sx + dx
                                        if o != 255 and o != state[i]:
                                            count[state[i]] -= 1
                                            count[o] += 1
                                            state[i] = o
                                            changes[nchanges] = i
                                            nchanges += 1
                                counter[c] += 1
                                applied = True
                                break
                    elif mc > 0:
                        # `all`: every match was valid at the start of the step; apply them in
                        # random order, skipping any that would write a cell already written.
                        for k in range(mc - 1, 0, -1):
                            j = below(rng, k + 1)
                            t = matches[off + k]
                            matches[off + k] = matches[off + j]
                            matches[off + j] = t
                        start = nchanges
                        for k in range(mc):
                            m = matches[off + k]
                            listed[m] = False
                            i = m >> rb
                            r = m & rmask
                            sx = i & xmask
                            sy = i >> xb
                            w = rw[r]
                            h = rh[r]
                            free = True
                            for dy in range(h):
                                for dx in range(w):
                                    if outs[roff[r] + dy * w + dx] != 255 and written[((sy + dy) << xb) + sx + dx]:
                                        free = False
                            if not free:
                                continue
                            changes = grow(changes, nchanges + w * h)
                            for dy in range(h):
                                for dx in range(w):
                                    o = outs[roff[r] + dy * w + dx]
                                    if o != 255:
                                        i = ((sy + dy) << xb) + sx + dx
                                        written[i] = True
                                        count[state[i]] -= 1
                                        count[o] += 1
                                        state[i] = o
                                        changes[nchanges] = i
                                        nchanges += 1
                        for j in range(start, nchanges):
                            written[changes[j]] = False
                        mc = 0
                        counter[c] += 1
                        applied = True
                    match_count[c] = mc
            if applied:
                break
            branch_at[b] += 1

        turn += 1
        first = grow(first, turn + 1)
        first[turn] = nchanges

    outcome = FINISHED if current < 0 else STEP_LIMIT
    return outcome, turn, nframes, every


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
    """Are the node's listed matches that still match exactly the matches a scan of every
    window finds? (Listed ones that no longer match are allowed: they are dropped when drawn.)"""
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
