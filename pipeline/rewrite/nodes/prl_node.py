"""`prl`: apply every match at once, each with its rule's probability `p`. It keeps no match list:
every step scans the whole grid, since it rewrites everywhere anyway."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.matching import grow, scan_rule


@compiled
def go_prl(
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
    outs: np.ndarray,
    prob: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
    rng: np.random.Generator,
    windows: np.ndarray,
    pending: np.ndarray,  # uint8 per cell: the step's new values
) -> tuple[bool, np.ndarray, int]:
    """One step; returns (applied, changes, their count). Matches are found on the grid as it
    was before the step, so overlapping ones all apply (the later one's value wins)."""
    xmask = (1 << xb) - 1
    start = nchanges
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
    for j in range(start, nchanges):
        i = changes[j]
        count[state[i]] -= 1
        count[pending[i]] += 1
        state[i] = pending[i]
    return found > 0, changes, nchanges
