"""The overlapping model: the NxN patterns of a sample image and which may overlap which.

As in MarkovJunior, the sample's colours are numbered by first appearance (reading rows top to
bottom), colour k being the wfc node's value k. Patterns are counted at the positions (x, y)
with x < MX and y < MY of the OUTPUT grid (MX - N + 1 and MY - N + 1 without `periodicInput`),
reading the sample modulo its size: the reference does so, which repeats the sample's patterns
when the grid is larger than it and leaves part of the sample unread when it is smaller. So a
model's patterns and weights depend on the grid's size and are built when the node runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from pipeline.rewrite import symmetry
from pipeline.rewrite.pixels import ImageError, decode, number_colours

# Directions of the wave's neighbours, shared with the solver: right, down, left, up.
DX = (1, 0, -1, 0)
DY = (0, 1, 0, -1)


def read_sample(data: bytes) -> np.ndarray:
    """A sample image as colour ordinals (h, w) uint8: 0 for the first colour met, and so on."""
    index, first = number_colours(decode(data))
    if len(first) > 255:
        raise ImageError(f"has {len(first)} colours (at most 255)")
    return index.astype(np.uint8)


@dataclass(frozen=True, eq=False)
class OverlapModel:
    """What an overlapping `wfc` node reads at load time; `patterns` builds the rest per grid size."""

    sample: np.ndarray  # (h, w) uint8 colour ordinals
    colours: int  # distinct colours in the sample
    n: int
    group: str  # symmetry group of the patterns
    periodic_input: bool

    def patterns(self, mx: int, my: int) -> Patterns:
        """Patterns, weights and propagator for an output grid of mx x my cells (cached)."""
        return _patterns(self, mx, my)


class Patterns:
    """P patterns of N x N values with their weights, and for each direction d and pattern t the
    patterns that may lie next to it there: `prop_data[prop_ptr[d, t]:prop_ptr[d, t + 1]]`."""

    def __init__(self, patterns: np.ndarray, weights: np.ndarray):
        self.patterns = patterns  # (P, N, N) uint8, [t, y, x]
        self.weights = weights  # (P,) float64
        self.prop_ptr, self.prop_data = overlap_propagator(patterns)


@functools.lru_cache(maxsize=32)
def _patterns(model: OverlapModel, mx: int, my: int) -> Patterns:
    n = model.n
    sample = model.sample
    sh, sw = sample.shape
    xmax, ymax = (mx, my) if model.periodic_input else (mx - n + 1, my - n + 1)
    if xmax <= 0 or ymax <= 0:
        return Patterns(np.zeros((0, n, n), dtype=np.uint8), np.zeros(0))
    ys = (np.arange(ymax)[:, None, None, None] + np.arange(n)[None, None, :, None]) % sh
    xs = (np.arange(xmax)[None, :, None, None] + np.arange(n)[None, None, None, :]) % sw
    windows = sample[ys, xs].reshape(ymax * xmax, n, n)  # in the reference's (y, x) order
    images = symmetry.orientations(windows, lambda p: np.rot90(p, 1, axes=(1, 2)), lambda p: p[:, :, ::-1])
    keep = [im for im, wanted in zip(images, symmetry.SUBGROUPS[model.group]) if wanted]
    # Occurrences in the reference's order (position, then orientation), so patterns are
    # numbered by first occurrence; equal orientations of one window each count, as there.
    stacked = np.stack(keep, axis=1).reshape(-1, n * n)
    _, first, counts = np.unique(stacked, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    patterns = np.ascontiguousarray(stacked[first[order]].reshape(-1, n, n))
    return Patterns(patterns, counts[order].astype(np.float64))


def overlap_propagator(patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each direction d and pattern t, the patterns t2 that agree with t where t2, shifted by
    (DX[d], DY[d]), overlaps it; as CSR arrays (prop_ptr (4, P + 1), prop_data)."""
    p, n, _ = patterns.shape
    ptr = np.zeros((4, p + 1), dtype=np.int64)
    data: list[np.ndarray] = []
    total = 0
    for d in range(4):
        dx, dy = DX[d], DY[d]
        ptr[d, 0] = total
        # The part of t that t2 covers, and the same cells in t2's own coordinates.
        a = patterns[:, max(dy, 0) : n + min(dy, 0), max(dx, 0) : n + min(dx, 0)].reshape(p, -1)
        b = patterns[:, max(-dy, 0) : n + min(-dy, 0), max(-dx, 0) : n + min(-dx, 0)].reshape(p, -1)
        agree = (a[:, None, :] == b[None, :, :]).all(axis=2)  # [t, t2]
        for t in range(p):
            found = np.flatnonzero(agree[t])
            data.append(found)
            total += len(found)
            ptr[d, t + 1] = total
    return ptr, np.concatenate(data).astype(np.int64) if total else np.zeros(1, dtype=np.int64)
