"""`map`: draw a new grid, of another scale and with its own values, from the current one.

Every rule is tried at every cell of the old grid (in rule order, then row by row), its input
wrapping around the edges; where it matches, its output is written into the new grid (which
starts all at its first value) at the cell's scaled position, wrapping as well. Outputs may be
larger than the scale (`OddScale` writes 3x3 blocks two cells apart), so overlapping writes land
in that order, the last one winning, as in MarkovJunior's MapNode.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled


def scaled(size: int, num: int, den: int) -> int:
    """The new grid's extent along an axis of `size` cells at scale num/den."""
    return num * size // den


@compiled
def write_rule(
    state: np.ndarray,  # uint8 (my, mx): the old grid
    grid: np.ndarray,  # uint8 (ny, nx): the new grid, written in place
    waves: np.ndarray,  # int64 (ih, iw): input bit sets, old values
    outs: np.ndarray,  # uint8 (oh, ow): output values of the new grid, 255 to keep
    num_x: int,
    den_x: int,
    num_y: int,
    den_y: int,
) -> None:
    my, mx = state.shape
    ny, nx = grid.shape
    ih, iw = waves.shape
    oh, ow = outs.shape
    for y in range(my):
        for x in range(mx):
            fits = True
            for dy in range(ih):
                for dx in range(iw):
                    v = state[(y + dy) % my, (x + dx) % mx]
                    if not (waves[dy, dx] >> v) & 1:
                        fits = False
                        break
                if not fits:
                    break
            if not fits:
                continue
            tx = x * num_x // den_x
            ty = y * num_y // den_y
            for dy in range(oh):
                for dx in range(ow):
                    o = outs[dy, dx]
                    if o != 255:
                        grid[(ty + dy) % ny, (tx + dx) % nx] = o
