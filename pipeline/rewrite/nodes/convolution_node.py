"""`convolution`: one step of a cellular automaton, MarkovJunior's way.

Every cell is rewritten from the grid as it was before the step (the new values wait in
`pending` until all cells are decided), by the first of the node's rules that fires for it: the
rule's input is the cell's value, its output differs, a draw passes its `p`, and, for a rule with
`values`, the number of neighbours holding those values is one of its `sums`. Neighbours are the
8 around a cell (Moore) or the 4 beside it (VonNeumann); a periodic grid wraps around its edges,
otherwise cells beyond the edge count nothing. The step applies when some cell changed.

The draw for `p` comes before the neighbour count and is made only when the rule could change
the cell, as in the reference, so a rule whose count does not fire still used its draw.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.matching import grow

# Node flags (FlatProgram.conv_flags).
MOORE, PERIODIC = 1, 2
NEIGHBORHOODS = ("Moore", "VonNeumann")  # the reference's 2D kernels (NoCorners is 3D only)
# The reference keeps a rule's sums in a table of 28 (enough for 3D's 26 neighbours).
MAX_SUM = 27


def parse_sums(text: str) -> tuple[int, ...]:
    """The neighbour counts that fire a rule, from `"5..8"`, `"3"` or `"0,1,4..8"` (comma-separated
    numbers and inclusive ranges), in increasing order."""
    found: set[int] = set()
    for part in text.split(","):
        bounds = part.split("..") if "." in part else [part]
        if len(bounds) > 2 or not all(b.strip().isascii() and b.strip().isdigit() for b in bounds):
            raise ValueError(f"sum={text!r}: {part.strip()!r} is neither a number nor a range such as 5..8")
        lo, hi = int(bounds[0]), int(bounds[-1])
        if lo > hi:
            raise ValueError(f"sum={text!r}: the range {part.strip()!r} is empty")
        if lo < 0 or hi > MAX_SUM:
            raise ValueError(f"sum={text!r}: counts go from 0 to {MAX_SUM}")
        found.update(range(lo, hi + 1))
    return tuple(sorted(found))


def sum_mask(sums: tuple[int, ...]) -> int:
    """The bit set of `sums`, as the compiled step tests them."""
    mask = 0
    for s in sums:
        mask |= 1 << s
    return mask


@compiled
def go_convolution(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    flags: int,
    lo: int,
    hi: int,
    conv_rules: np.ndarray,
    conv_counts: np.ndarray,
    conv_p: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
    rng: np.random.Generator,
    pending: np.ndarray,  # uint8 per cell: the step's new values
) -> tuple[bool, np.ndarray, int]:
    """One step of rules lo .. hi - 1; returns (some cell changed, changes, their count)."""
    moore = (flags & MOORE) != 0
    periodic = (flags & PERIODIC) != 0
    start = nchanges
    for y in range(my):
        for x in range(mx):
            i = (y << xb) + x
            v = state[i]
            for r in range(lo, hi):
                out = conv_rules[r, 1]
                if conv_rules[r, 0] != v or out == v:
                    continue
                if conv_p[r] < 1.0 and not rng.random() < conv_p[r]:
                    continue
                if conv_rules[r, 3] != 0:
                    total = 0
                    for dy in range(-1, 2):
                        ny = y + dy
                        if ny < 0 or ny >= my:
                            if not periodic:
                                continue
                            ny = ny + my if ny < 0 else ny - my
                        for dx in range(-1, 2):
                            if (dx == 0 and dy == 0) or (not moore and dx != 0 and dy != 0):
                                continue
                            nx = x + dx
                            if nx < 0 or nx >= mx:
                                if not periodic:
                                    continue
                                nx = nx + mx if nx < 0 else nx - mx
                            total += conv_counts[r, state[(ny << xb) + nx]]
                    if total > MAX_SUM or (conv_rules[r, 2] >> total) & 1 == 0:
                        continue
                pending[i] = out
                if nchanges == changes.shape[0]:
                    changes = grow(changes, nchanges + 1)
                changes[nchanges] = i
                nchanges += 1
                break
    for j in range(start, nchanges):
        i = changes[j]
        count[state[i]] -= 1
        count[pending[i]] += 1
        state[i] = pending[i]
    return nchanges > start, changes, nchanges
