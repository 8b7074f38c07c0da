"""An infinite map's layer data, as Tiled stores it: the layer cut into square chunks whose
corners lie on multiples of the chunk size, the empty ones left out (TMX `<chunk>`, JSON
`chunks`). Streaming engines load a big world a chunk at a time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Tiled's own chunk size, which it leaves out of the file; it reads any of at least 4.
DEFAULT_CHUNK = 16
MIN_CHUNK = 4


@dataclass(frozen=True)
class Chunked:
    """A layer's chunks that hold a tile, row by row as Tiled orders them, each (x, y, size x
    size gids); and the bounds of them all (startx, starty, width, height), as Tiled JSON gives
    a chunked layer (a layer without a tile: the first chunk)."""

    chunks: list[tuple[int, int, np.ndarray]]
    bounds: tuple[int, int, int, int]


def chunked(gids: np.ndarray, size: int) -> Chunked:
    h, w = gids.shape
    rows, columns = -(-h // size), -(-w // size)
    if (rows * size, columns * size) == (h, w):
        whole = gids
    else:  # the chunks along the right and bottom edges, filled out with empty cells
        whole = np.zeros((rows * size, columns * size), dtype=gids.dtype)
        whole[:h, :w] = gids
    blocks = whole.reshape(rows, size, columns, size)
    filled = blocks.any(axis=(1, 3))  # one pass over the layer, not one test a chunk
    at = np.nonzero(filled)
    found = [(int(c) * size, int(r) * size, np.ascontiguousarray(blocks[r, :, c, :])) for r, c in zip(*at)]
    if not found:
        return Chunked([], (0, 0, size, size))
    r0, r1, c0, c1 = int(at[0].min()), int(at[0].max()) + 1, int(at[1].min()), int(at[1].max()) + 1
    return Chunked(found, (c0 * size, r0 * size, (c1 - c0) * size, (r1 - r0) * size))
