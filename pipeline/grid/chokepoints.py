"""Chokepoints: the tiles every walk between two tiles must cross.

Along a shortest path from one tile to the other, a tile of the path is a chokepoint unless some
way around it exists. Every way around leaves the path and comes back to it through the walkable
tiles off the path, so the path is cut out of the map and what is left is labelled into its
connected parts: a part that touches the path at the path's steps i and j (i < j) is a way
around every step strictly between them. (Two steps of a shortest path are never side by side
unless they follow each other: that would be a shorter path.) The steps no part spans are the
chokepoints. All of it is whole-array work: one labelling, four neighbour lookups, a running sum.
"""

from __future__ import annotations

import numpy as np

from pipeline.grid.graph import DX, DY


def chokepoints(walk: np.ndarray, path: np.ndarray) -> np.ndarray:
    """The steps of `path` (flat tile indices of a shortest 4-neighbour path over the True tiles
    of `walk`, source first) that every walk from its first tile to its last must cross, as
    indices into `path`, ascending; the two ends are never among them."""
    from scipy import ndimage

    h, w = walk.shape
    k = len(path)
    if k < 3:
        return np.zeros(0, dtype=np.int64)
    rest = walk.copy()
    rest.ravel()[path] = False
    labels, parts = ndimage.label(rest)  # 4-connected: the moves of the path
    first = np.full(parts + 1, k, dtype=np.int64)
    last = np.full(parts + 1, -1, dtype=np.int64)
    ys, xs = path // w, path % w
    steps = np.arange(k, dtype=np.int64)
    for dy, dx in zip(DY.tolist(), DX.tolist()):
        ny, nx = ys + dy, xs + dx
        inside = (ny >= 0) & (ny < h) & (nx >= 0) & (nx < w)
        part = labels[ny[inside], nx[inside]]
        touching = part > 0
        np.minimum.at(first, part[touching], steps[inside][touching])
        np.maximum.at(last, part[touching], steps[inside][touching])
    around = last > first + 1  # a part that spans at least one step
    spans = np.zeros(k + 1, dtype=np.int64)
    np.add.at(spans, first[around] + 1, 1)
    np.add.at(spans, last[around], -1)
    crossed = np.cumsum(spans)[:k] == 0
    crossed[0] = crossed[-1] = False
    return np.flatnonzero(crossed)
