"""Caves grown by a cellular automaton from random noise."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.level.dungeon_tiles import DUNGEON_ALPHABET, FLOOR, WALL, Side
from pipeline.level import Level
from pipeline.ranges import draw_size, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage
from pipeline.stages.regions.connect import join_regions
from pipeline.stages.regions.label import label_regions


@stage("dungeon.cellular_caves", version=1)
class CellularCaves(StageParams):
    """Caves grown by a cellular automaton. Fill a `size` grid with walls at random (`fill`),
    then smooth it `iterations` times with the birth/survival rule: a floor tile becomes wall
    when at least `birth` of its 8 neighbours are walls, a wall stays wall when at least
    `survival` are (the map's edge counts as wall). The default 5/4 is the classic "4-5 rule".
    Then `keep = "largest"` fills every cave but the largest, or `keep = "connect"` digs the
    shortest tunnels joining them all.
    """

    adds_stats: ClassVar[tuple[str, ...] | None] = ("floor_pct", "caves")

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("size", self.size))

    size: size_type(Side) = Field((80, 50), description="Map size in tiles, [width, height]; a side may be [min, max], drawn per map (recorded as size_w, size_h).")
    fill: float = Field(0.45, ge=0, le=1, description="Chance that a tile starts as wall.")
    birth: int = Field(5, ge=0, le=9, description="Wall neighbours that turn a floor tile into wall.")
    survival: int = Field(4, ge=0, le=9, description="Wall neighbours that keep a wall a wall.")
    iterations: int = Field(5, ge=0, le=100, description="Smoothing passes.")
    keep: Literal["largest", "connect"] = Field("connect", description="Keep the largest cave, or tunnel between all caves.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        w, h = draw_size(self.size, rng)
        wall = rng.random((h, w)) < self.fill
        for _ in range(self.iterations):
            padded = np.pad(wall, 1, constant_values=True).astype(np.int8)
            around = sum(padded[1 + dy : h + 1 + dy, 1 + dx : w + 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
            wall = np.where(wall, around >= self.survival, around >= self.birth)
        wall[0, :] = wall[-1, :] = wall[:, 0] = wall[:, -1] = True
        labels, sizes = label_regions(~wall)
        if self.keep == "largest":
            wall |= labels > 1
        elif len(sizes) > 1:
            wall &= ~join_regions(labels, len(sizes))
        tiles = np.where(wall, WALL, FLOOR).astype(np.uint8)
        return Level(tiles=tiles, alphabet=DUNGEON_ALPHABET, properties={"floor_pct": round(100 * float((tiles == FLOOR).mean()), 2), "caves": len(sizes), **size_record("size", self.size, (w, h))})
