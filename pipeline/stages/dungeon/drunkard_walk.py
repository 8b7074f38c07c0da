"""Caves dug by a random walk."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.level.dungeon_tiles import DUNGEON_ALPHABET, FLOOR, Side
from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.ranges import draw_size, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage
from pipeline.grid.graph import DX, DY, RANGE_62_BITS, below


@stage("dungeon.drunkard_walk", version=1)
class DrunkardWalk(StageParams):
    """Caves dug by a random walk (the drunkard's walk). Start in the middle of a `size` grid of
    wall and step to a random neighbour, digging floor, until `target` of the tiles are floor.
    The walk never digs the outer border. One connected, organic cave.
    """

    adds_stats: ClassVar[tuple[str, ...] | None] = ("floor_pct",)

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("size", self.size))

    size: size_type(Side) = Field((80, 50), description="Map size in tiles, [width, height]; a side may be [min, max], drawn per map (recorded as size_w, size_h).")
    target: float = Field(0.4, gt=0, le=0.9, description="Fraction of the tiles to dig.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        w, h = draw_size(self.size, rng)
        tiles = dig(w, h, int(self.target * (w - 2) * (h - 2)), rng)
        return Level(tiles=tiles, alphabet=DUNGEON_ALPHABET, properties={"floor_pct": round(100 * float((tiles == FLOOR).mean()), 2), **size_record("size", self.size, (w, h))})


@compiled
def dig(w: int, h: int, wanted: int, rng: np.random.Generator) -> np.ndarray:
    tiles = np.empty((h, w), dtype=np.uint8)
    tiles[:] = 0
    y = h // 2
    x = w // 2
    tiles[y, x] = 1
    dug = 1
    bits = np.int64(0)
    left = 0
    while dug < wanted:
        # Two random bits per step from a 62-bit draw (graph.RANGE_62_BITS), as the maze walks
        # draw them.
        if left == 0:
            bits = below(rng, RANGE_62_BITS)
            left = 31
        d = bits & 3
        bits >>= 2
        left -= 1
        ny = y + DY[d]
        nx = x + DX[d]
        if ny < 1 or nx < 1 or ny >= h - 1 or nx >= w - 1:
            continue
        y = ny
        x = nx
        if tiles[y, x] == 0:
            tiles[y, x] = 1
            dug += 1
    return tiles
