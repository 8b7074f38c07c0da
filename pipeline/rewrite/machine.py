"""The compiled interpreter: runs a flattened rule program on a grid, MarkovJunior's way.

Everything per step happens in compiled code, because a depth-first maze on a 967 x 967 grid
takes ~466,000 steps and a Python call per step would cost more than the work. Node kinds whose
step does work in proportion to the grid or to the match list (`prl`, `path`, `convolution`,
`convchain`, field-guided choices, an observing node's first step) are modules of their own
under `nodes/`, called from here; the match upkeep and the `one` step are here, in the turn
loop, because theirs do work in proportion to what changed, often a handful of cells, and a call
into another compiled function (its array arguments passed as a hundred words and
reference-counted) took as long: split out, they made the 967 x 967 depth-first maze 1.5-2x
slower (118 ms against 170-236 ms, batched or inlined). For the same reason nothing an observing
node needs is kept in a variable the loop rebinds (that alone cost plain `one` steps 3-15%).
The match lists they keep between turns use `nodes/matching.py`, whose header explains them.
A `map` or `wfc` node makes a new grid: the run stops there (HANDOVER) and program.run goes on.

Control flow mirrors MarkovJunior's interpreter: `current` is the branch that runs each turn; a
branch child that applies becomes `current` and keeps running on later turns until it fails,
when control returns to its parent (which, being a sequence, tries that child once more from a
reset state on its next turn, exactly as the reference does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.grid.graph import below
from pipeline.jit import compiled
from pipeline.rewrite.codes import ALL, CONVCHAIN, CONVOLUTION, MAP, MARKOV, ONE, PATH, PRL, SEQUENCE, WFC
from pipeline.rewrite.nodes.all_node import fit_in_order
from pipeline.rewrite.nodes.convchain_node import SLOT, go_convchain, substrate_store
from pipeline.rewrite.nodes.convolution_node import go_convolution
from pipeline.rewrite.nodes.fields import choose_one, go_all_fields, prepare_fields
from pipeline.rewrite.nodes.matching import agrees_with_rescan, compact_log, grow, rule_bits, scan_rule, window_matches
from pipeline.rewrite.nodes.observation import goal_reached, replay
from pipeline.rewrite.nodes.observe_start import start_observing
from pipeline.rewrite.nodes.path_node import NDX, NDY, go_path
from pipeline.rewrite.nodes.prl_node import go_prl

# Run outcomes. MISMATCH only comes from a `verify` run: an incremental match list disagreed
# with a full rescan. HANDOVER: the run reached a node that makes a new grid (`map`, `wfc`),
# which program.run takes over from.
FINISHED, STEP_LIMIT, MISMATCH, HANDOVER = 0, 1, 2, 3


@compiled
def run_program(
    state: np.ndarray,  # uint8[my << xb]: rows of 2**xb cells, the first mx used; modified in place
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    prog: Any,  # the arrays every program has: program.FlatProgram.arguments()
    # Those of field-guided choices, convolution, convchain and observing nodes, or None when the
    # program has none: numba prunes what a None argument guards, so their kernels compile only
    # where used.
    steering: Any,
    conv: Any,
    chain: Any,
    observe: Any,
    rng: np.random.Generator,
    max_steps: int,
    frame_every: int,  # 0: no recording
    frames: np.ndarray,  # uint8[cap, my << xb]
    compact_at: int,  # log length past which it is compacted (matching.compact_log); tests pass a small one
    # Tests pass bool[(my << xb) * 2**rule_bits(len(rw))] here to compare every match update with a full
    # rescan; None (the normal case) compiles a version without the check at all.
    verify_scratch: np.ndarray | None,
) -> tuple[int, int, int, int, int]:
    """Run until the root branch fails, `max_steps` turns pass, or a `map` or `wfc` node is reached.

    Returns (outcome, turns, frames recorded, frame interval, the node handed over to or -1):
    when the frame buffer fills, every other frame is dropped and the interval doubles, so any
    run fits the cap evenly. Turns are those completed: a handover happens during the next one.
    """
    # Cell i is (i & xmask, i >> xb) and match m is rule m & rmask at cell m >> rb (see
    # nodes/matching.py). Arrays are read out of `prog` once: each read counts a reference.
    (kind, parent, end, child_ptr, children, rule_lo, rule_hi, steps, path_params,
     rw, rh, roff, waves, outs, prob, pair_ptr, pair_rule, pair_x, pair_y,
     field_slot, temperature, future_slot) = prog
    # Read out once, as the others: indexing the tuple at each use costs field-guided steps ~10%.
    if steering is not None:
        field_lo, field_hi, fields, inversed = steering
    else:
        field_lo = field_hi = inversed = np.zeros(0, dtype=np.int64)
        fields = np.zeros((0, 4), dtype=np.int64)
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

    # Path node scratch (the queue also serves fields).
    generation = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    # Potentials of the nodes with fields: ncolors rows each (rows of values without a field
    # stay 0, as the reference's do).
    nslots = 0
    for k in range(nnodes):
        nslots = max(nslots, field_slot[k] + 1)
    store = np.zeros((nslots * ncolors, n if nslots > 0 else 0), dtype=np.int32)
    starts = np.empty(n, dtype=np.int64)
    # Observing nodes: their futures (a row each), whether it is set since the last reset, and
    # a searching node's planned trajectory (rows traj_at .. traj_at + traj_len - 1 of plans[0],
    # a list so that start_observing can grow it without rebinding a variable of this loop).
    nfutures = 0
    for k in range(nnodes):
        nfutures = max(nfutures, future_slot[k] + 1)
    futures = np.zeros((nfutures, n if nfutures > 0 else 0), dtype=np.int64)
    future_set = np.zeros(nnodes, dtype=np.bool_)
    plans = [np.zeros((0, n), dtype=np.uint8)]
    traj_at = np.zeros(nnodes + 1, dtype=np.int64)
    traj_len = np.full(nnodes, -1, dtype=np.int64)
    cand = np.empty(8, dtype=np.int64)
    substrate = np.zeros((0, 0), dtype=np.bool_)  # convchain nodes' cells
    if chain is not None:
        substrate = substrate_store(chain[0], n)

    nframes = 0
    every = frame_every
    current = 0
    turn = 0
    while current >= 0 and turn < max_steps:
        if every > 0 and turn % every == 0:
            if nframes == frames.shape[0]:
                # Loops, not row assignment: see matching.grow.
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
                    future_set[k] = False
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
            applied = False
            # Rule nodes first: theirs are most of the steps taken, and each test costs them.
            if kc == ONE or kc == ALL or kc == PRL:
                if not (steps[c] > 0 and counter[c] >= steps[c]):
                    # Bring the match list up to date (`prl` always scans the whole grid and
                    # applies as it goes, since it never keeps matches).
                    lo = rule_lo[c]
                    hi = rule_hi[c]
                    if kc == PRL:
                        applied, changes, nchanges = go_prl(
                            state, mx, my, xb, lo, hi, rw, rh, roff, waves, outs, prob, changes, nchanges, count, rng, windows, pending
                        )
                        counter[c] += 1  # a step that matched nothing counts too
                    else:
                        off = match_off[c]
                        mc = match_count[c]
                        if observe is not None:
                            if future_slot[c] >= 0 and not future_set[c]:
                                changes, nchanges = start_observing(
                                    c, kc == ALL, state, mx, my, xb, ncolors, observe[2], observe[0], observe[1], futures, future_slot,
                                    future_set, observe[3], store, field_slot, lo, hi, rw, rh, roff, waves, outs, changes, nchanges,
                                    count, rng, plans, traj_at, traj_len,
                                )
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
                                return MISMATCH, turn, nframes, every, -1

                        # The node's potentials are rows row .. row + ncolors - 1 of `store`.
                        guided = field_slot[c] >= 0
                        row = field_slot[c] * ncolors
                        # An observing node whose future is not set now misses an observed value.
                        if (future_slot[c] >= 0 and not future_set[c]) or (guided and steering is not None and not prepare_fields(
                            state, mx, my, xb, fields, field_lo[c], field_hi[c], counter[c] == 0, store, row, queue
                        )):
                            pass  # an observed value or a field's zero is missing: the node fails
                        elif future_slot[c] >= 0 and traj_len[c] >= 0:
                            # A searching node replays its plan, a state a step, and fails after it.
                            if observe is not None and counter[c] < traj_len[c]:
                                changes, nchanges = replay(state, plans[0][traj_at[c] + counter[c]], changes, nchanges, count)
                                counter[c] += 1
                                applied = True
                        elif kc == ONE:
                            chosen = -1
                            reached = False
                            if observe is not None:
                                reached = guided and future_slot[c] >= 0 and goal_reached(state, mx, my, xb, futures[future_slot[c]])
                                if reached:
                                    future_set[c] = False  # the future is reached: the node stops
                            if steering is not None:
                                if guided and not reached:
                                    chosen, mc = choose_one(
                                        state, xb, rw, rh, roff, waves, outs, matches, off, mc, listed, rb,
                                        store, row, inversed[c], temperature[c], rng,
                                    )
                            # Draw uniformly among the listed matches; a stale one is dropped and
                            # the draw repeats, which is uniform over the matches still valid.
                            while not guided and mc > 0:
                                k = below(rng, mc)
                                m = matches[off + k]
                                listed[m] = False
                                mc -= 1
                                matches[off + k] = matches[off + mc]
                                i = m >> rb
                                r = m & rmask
                                if window_matches(state, xb, waves, roff[r], rw[r], rh[r], i & xmask, i >> xb):
                                    chosen = m
                                    break
                            if chosen >= 0:
                                i = chosen >> rb
                                r = chosen & rmask
                                sx = i & xmask
                                sy = i >> xb
                                w = rw[r]
                                h = rh[r]
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
                        elif mc > 0 and guided:
                            if steering is not None:
                                changes, nchanges = go_all_fields(
                                    state, xb, rw, rh, roff, waves, outs, matches, off, mc, listed, rb,
                                    store, row, inversed[c], temperature[c], rng, written, changes, nchanges, count,
                                )
                            mc = 0
                            counter[c] += 1
                            applied = True
                        elif mc > 0:
                            # `all`: every match was valid at the start of the step; apply them in
                            # random order, skipping any that would write a cell already written.
                            for k in range(mc - 1, 0, -1):
                                j = below(rng, k + 1)
                                t = matches[off + k]
                                matches[off + k] = matches[off + j]
                                matches[off + j] = t
                            changes, nchanges = fit_in_order(
                                state, xb, rw, rh, roff, outs, matches[off:off + mc], listed, rb, written, changes, nchanges, count
                            )
                            mc = 0
                            counter[c] += 1
                            applied = True
                        match_count[c] = mc
            elif kc == MARKOV or kc == SEQUENCE:
                b = c
                current = c
                if kc == MARKOV:
                    branch_at[b] = 0
                continue
            elif kc == MAP or kc == WFC:
                return HANDOVER, turn, nframes, every, c
            elif kc == PATH:
                changes = grow(changes, nchanges + n)
                nchanges, applied = go_path(
                    state, mx, my, xb, path_params[c], changes, nchanges, generation, queue, starts, cand, NDX, NDY, rng, count
                )
            elif kc == CONVOLUTION:
                if conv is not None:  # always, for a program with this kind (see `conv`)
                    if not (steps[c] > 0 and counter[c] >= steps[c]):
                        applied, changes, nchanges = go_convolution(
                            state, mx, my, xb, conv[2][c], conv[0][c], conv[1][c], conv[3], conv[4], conv[5],
                            changes, nchanges, count, rng, pending,
                        )
                        counter[c] += 1  # a step that changed nothing counts too, as the reference's
            elif kc == CONVCHAIN:
                if chain is not None:
                    if not (steps[c] > 0 and counter[c] >= steps[c]):
                        changes = grow(changes, nchanges + mx * my)
                        nchanges, applied = go_convchain(
                            state, mx, my, xb, chain[0][c], chain[1], temperature[c], counter[c] == 0,
                            substrate[chain[0][c, SLOT]], changes, nchanges, count, rng,
                        )
                        counter[c] += 1  # a first step that found no cell counts too
            if applied:
                break
            branch_at[b] += 1

        turn += 1
        first = grow(first, turn + 1)
        first[turn] = nchanges
        if nchanges > compact_at:
            nchanges = compact_log(changes, nchanges, first, last_turn, turn, n)
            compact_at = max(compact_at, 2 * nchanges)

    outcome = FINISHED if current < 0 else STEP_LIMIT
    return outcome, turn, nframes, every, -1


