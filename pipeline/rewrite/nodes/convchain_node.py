"""`convchain`: MarkovJunior's ConvChain node, a Metropolis sampler of two-colour textures.

On its first step the node paints every `on` cell black or white at random and remembers those
cells (its substrate); each later step is one sweep of as many random cell draws as the grid has
cells, where a drawn substrate cell flips colour with the Metropolis probability of the flip:
the product, over the (2n-1)^2 windows of n x n cells that contain it, of the sample's weight
of the window after the flip over its weight before, raised to 1 / temperature. Windows wrap
around the grid's edges, as the sample's do when its patterns are counted.

The pattern weights are counted once, when the program loads (`pattern_weights`); the sweep
reads them as one float array per node (see program.flatten).
"""

from __future__ import annotations

import numpy as np

from pipeline.grid.graph import below
from pipeline.jit import compiled
from pipeline.rewrite import symmetry
from pipeline.rewrite.pixels import decode

# Columns of a node's row of `FlatProgram.cc_params`.
ON, BLACK, WHITE, N, WEIGHTS_AT, SLOT = 0, 1, 2, 3, 4, 5
NPARAMS = 6
MAX_N = 4  # 2**(n * n) weights: 65,536 at n = 4, 33 million (256 MB) at n = 5


def read_sample(data: bytes) -> np.ndarray:
    """A sample image as a bool array (h, w): True where the pixel is opaque white, as the
    reference reads it (every other colour is black). Raises ImageError if it is not an image."""
    return np.all(decode(data) == 255, axis=2)


def pattern_weights(sample: np.ndarray, n: int, group: str) -> np.ndarray:
    """float64[2**(n*n)]: how often each n x n pattern occurs in `sample` (wrapping around its
    edges), each occurrence counted once per orientation that `group` allows (so a pattern
    symmetric under some of them counts several times, as in the reference); patterns that never
    occur weigh 0.1, so that no flip has probability 0 or divides by 0.

    Pattern bit dy * n + dx is the cell (dx, dy) of the window, set when it is white."""
    h, w = sample.shape
    ys = (np.arange(h)[:, None] + np.arange(n)[None, :]) % h  # (h, n)
    xs = (np.arange(w)[:, None] + np.arange(n)[None, :]) % w  # (w, n)
    windows = sample[ys[:, None, :, None], xs[None, :, None, :]].reshape(h * w, n, n)  # [k, dy, dx]
    bits = (1 << np.arange(n * n, dtype=np.int64)).reshape(n, n)

    def rotate(p: np.ndarray) -> np.ndarray:
        return np.rot90(p, axes=(1, 2))

    def mirror(p: np.ndarray) -> np.ndarray:
        return p[:, :, ::-1]

    weights = np.zeros(1 << (n * n), dtype=np.float64)
    for image, wanted in zip(symmetry.orientations(windows, rotate, mirror), symmetry.SUBGROUPS[group]):
        if wanted:
            index = (image.astype(np.int64) * bits).sum(axis=(1, 2))
            weights += np.bincount(index, minlength=weights.size)
    weights[weights <= 0] = 0.1
    return weights


@compiled
def substrate_store(params: np.ndarray, ncells: int) -> np.ndarray:
    """One row of `ncells` flags per convchain node (rows by the nodes' SLOT)."""
    rows = 0
    for k in range(params.shape[0]):
        rows = max(rows, params[k, SLOT] + 1)
    return np.zeros((rows, ncells if rows > 0 else 0), dtype=np.bool_)


@compiled
def go_convchain(
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    params: np.ndarray,  # the node's row of cc_params
    weights: np.ndarray,  # every node's weights; this one's from params[WEIGHTS_AT]
    temperature: float,
    first: bool,  # the node's first step since its last reset
    substrate: np.ndarray,  # bool per cell: the node's row of the substrate store
    changes: np.ndarray,  # room for mx * my more entries
    nchanges: int,
    count: np.ndarray,
    rng: np.random.Generator,
) -> tuple[int, bool]:
    """One step; returns (changes' new count, applied). The first step fails when no cell is
    `on`; a sweep always applies, even when it flips nothing (or has no substrate at all)."""
    on = params[ON]
    black = params[BLACK]
    white = params[WHITE]
    n = params[N]
    base = params[WEIGHTS_AT]
    if first:
        # The substrate is exactly this step's `on` cells: rewriting the whole row also clears
        # what an earlier run of the node (before a reset) left in it.
        found = False
        for y in range(my):
            for x in range(mx):
                i = (y << xb) + x
                here = state[i] == on
                substrate[i] = here
                if here:
                    found = True
                    v = black if below(rng, 2) == 0 else white
                    if v != on:
                        count[on] -= 1
                        count[v] += 1
                        state[i] = v
                        changes[nchanges] = i
                        nchanges += 1
        return nchanges, found

    cells = mx * my
    for _ in range(cells):
        r = below(rng, cells)
        x = r % mx
        y = r // mx
        i = (y << xb) + x
        if not substrate[i]:
            continue
        # The ratio of the probabilities of the grid with the cell flipped and as it is: only
        # the windows holding the cell differ.
        q = 1.0
        for sy in range(y - n + 1, y + n):
            for sx in range(x - n + 1, x + n):
                index = 0
                flip = 0
                for dy in range(n):
                    yy = (sy + dy) % my
                    row = yy << xb
                    for dx in range(n):
                        xx = (sx + dx) % mx
                        bit = 1 << (dy * n + dx)
                        if state[row + xx] == white:
                            index |= bit
                        # On a grid narrower than the window the cell recurs; the reference
                        # flips its last occurrence only.
                        if xx == x and yy == y:
                            flip = bit
                q *= weights[base + (index ^ flip)] / weights[base + index]
        if q < 1.0:
            if temperature <= 0.0:
                continue  # q ** (1 / 0) is 0: only improving flips are taken
            if temperature != 1.0:
                q = q ** (1.0 / temperature)
            if not q > rng.random():
                continue
        old = state[i]
        v = white if old == black else black
        count[old] -= 1
        count[v] += 1
        state[i] = v
        changes[nchanges] = i
        nchanges += 1
    return nchanges, True
