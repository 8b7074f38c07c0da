"""Blob maps: patches of colour for paint-bucket (flood-it) puzzles."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field, PositiveInt

from pipeline.jit import compiled
from pipeline.level import Level, Symbol
from pipeline.ranges import draw_size, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage
from pipeline.grid.graph import DX, DY, below

# Twelve colours that stay distinct side by side (and for most colour-blind players, in the
# first six), named for the tileset.
PALETTE = (
    ("red", "#e6194b"), ("green", "#3cb44b"), ("yellow", "#ffe119"), ("blue", "#4363d8"),
    ("orange", "#f58231"), ("purple", "#911eb4"), ("cyan", "#42d4f4"), ("magenta", "#f032e6"),
    ("lime", "#bfef45"), ("pink", "#fabed4"), ("teal", "#469990"), ("brown", "#9a6324"),
)


def blob_alphabet(colors: int) -> tuple[Symbol, ...]:
    return tuple(Symbol(chr(ord("a") + i), name, color) for i, (name, color) in enumerate(PALETTE[:colors]))


@stage("dungeon.blob_map", version=1)
class BlobMap(StageParams):
    """The board of the paint-bucket game: `colors` colours in blobs. Seeds are scattered at
    random, each with a random colour, and grow by random steps into free neighbours until the
    board is full. `dispersion` sets how many seeds: 0 gives about one blob per colour, 1 one
    per tile (every tile its own random colour), so higher is more fragmented and harder.
    """

    adds_stats: ClassVar[tuple[str, ...] | None] = ("colors", "blob_seeds")

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("size", self.size))

    size: size_type(PositiveInt) = Field((14, 14), description="Board size in tiles, [width, height]; a side may be [min, max], drawn per map (recorded as size_w, size_h).")
    colors: int = Field(6, ge=2, le=len(PALETTE), description="Number of colours.")
    dispersion: float = Field(0.3, ge=0, le=1, description="0: a few large blobs; 1: every tile on its own.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        w, h = draw_size(self.size, rng)
        n = w * h
        seeds = min(n, max(self.colors, int(round(self.colors + self.dispersion ** 2 * (n - self.colors)))))
        cells = rng.choice(n, size=seeds, replace=False)
        colours = rng.integers(0, self.colors, size=seeds)
        shown = min(seeds, self.colors)
        colours[:shown] = np.arange(shown)  # every colour appears, if the board has room
        board = grow_blobs(w, h, cells.astype(np.int64), colours.astype(np.uint8), rng)
        return Level(tiles=board, alphabet=blob_alphabet(self.colors), properties={"colors": self.colors, "blob_seeds": seeds, **size_record("size", self.size, (w, h))})


@compiled
def grow_blobs(w: int, h: int, cells: np.ndarray, colours: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Grow every seed into free tiles: each step a random (tile, direction) from the frontier."""
    n = w * h
    board = np.empty(n, dtype=np.uint8)
    board[:] = 255
    frontier = np.empty(4 * n + 4 * cells.shape[0], dtype=np.int64)
    size = np.int64(0)  # not a literal: numba would compile `below` once more for 0
    for k in range(cells.shape[0]):
        board[cells[k]] = colours[k]
        for d in range(4):
            frontier[size] = cells[k] * 4 + d
            size += 1
    while size > 0:
        k = below(rng, size)  # the draw of rng.integers(0, size), without compiling it
        e = frontier[k]
        size -= 1
        frontier[k] = frontier[size]
        c = e // 4
        d = e - 4 * c
        y = c // w + DY[d]
        x = c % w + DX[d]
        if x < 0 or y < 0 or x >= w or y >= h:
            continue
        m = y * w + x
        if board[m] != 255:
            continue
        board[m] = board[c]
        for d2 in range(4):
            frontier[size] = m * 4 + d2
            size += 1
    return board.reshape(h, w)
