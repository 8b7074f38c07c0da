"""`all`: apply a maximal set of matches whose written cells do not overlap, in one step."""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.matching import grow


@compiled
def fit_in_order(
    state: np.ndarray,
    xb: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    outs: np.ndarray,
    order: np.ndarray,  # the step's matches, in the order they are tried
    listed: np.ndarray,
    rb: int,
    written: np.ndarray,  # bool per cell, all False between steps
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
) -> tuple[np.ndarray, int]:
    """Apply each match of `order` (all valid when the step began) unless it would write a cell
    already written this step; returns (changes, their count). Every written cell is logged as a
    change, even one rewritten to its own value, so that a skipped match is looked at again on
    the node's next update. One call a step: the step's work is in proportion to its matches."""
    xmask = (1 << xb) - 1
    rmask = (1 << rb) - 1
    start = nchanges
    for k in range(order.shape[0]):
        m = order[k]
        listed[m] = False
        i = m >> rb
        r = m & rmask
        sx = i & xmask
        sy = i >> xb
        w = rw[r]
        h = rh[r]
        base = roff[r]
        free = True
        for dy in range(h):
            for dx in range(w):
                if outs[base + dy * w + dx] != 255 and written[((sy + dy) << xb) + sx + dx]:
                    free = False
        if not free:
            continue
        changes = grow(changes, nchanges + w * h)
        for dy in range(h):
            for dx in range(w):
                o = outs[base + dy * w + dx]
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
    return changes, nchanges
