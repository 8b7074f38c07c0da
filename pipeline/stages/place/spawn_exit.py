"""Spawn and exit points: as far apart as the map allows, or at chosen corners."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.errors import PipelineError
from pipeline.level import Level, MapObject
from pipeline.registry import stage
from pipeline.grid.bfs import bfs, diameter_ends
from pipeline.stages.regions.label import label_regions
from pipeline.level.tile_record import read_tile_record, tile_record
from pipeline.stages.common.walkable import WalkableStage

Corner = Literal["top_left", "top_right", "bottom_left", "bottom_right"]


@stage("place.spawn_exit", version=2)
class SpawnExit(WalkableStage):
    """Place a `spawn` and an `exit` point object on walkable tiles of the largest region.

    `at = "diameter"`: at the two ends of a longest shortest path (by iFUB), so the player
    crosses as much of the map as it has. Mazes and corridors are solved exactly in a few
    searches; wide caves may need more than `searches`, and then get the farthest pair found
    (`path_exact = false` in the map's properties). `at = "corners"`: on the walkable tiles
    nearest (straight-line) to `spawn_corner` and `exit_corner`. Both objects get
    `path_length` (steps between them); the map gets `path_length` too. A maze's `entrance`
    and `exit` properties, where the map has them, become the spawn's and the exit's tiles
    ("x,y"), so that the map names one entrance and one exit.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    # entrance and exit only where the input has them (a maze's), set to the objects' tiles.
    adds_stats: ClassVar[tuple[str, ...] | None] = ("path_length", "path_exact", "entrance", "exit")

    at: Literal["diameter", "corners"] = Field("diameter", description="Where to put them.")
    searches: int = Field(16, ge=3, le=100_000, description="With at = \"diameter\": most breadth-first searches spent proving the pair is the farthest.")
    spawn_corner: Corner = Field("top_left", description="With at = \"corners\": the spawn's corner.")
    exit_corner: Corner = Field("bottom_right", description="With at = \"corners\": the exit's corner.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        walk = self.walkable(level)
        labels, sizes = label_regions(walk)
        if not len(sizes):
            raise PipelineError(["the map has no walkable tile (see walls)"])
        main = labels == 1
        h, w = main.shape
        if self.at == "diameter":
            start = int(np.flatnonzero(main.ravel())[0])
            a, b, length, exact = diameter_ends(main, start, self.searches)
        else:
            a, b = _nearest(main, self.spawn_corner), _nearest(main, self.exit_corner)
            dist = np.full(h * w, -1, dtype=np.int64)
            bfs(main, np.array([a], dtype=np.int64), dist, np.empty(h * w, dtype=np.int64))
            length = dist[b]
            exact = True
        points = [
            MapObject("spawn", "spawn", a % w + 0.5, a // w + 0.5, properties={"path_length": int(length)}),
            MapObject("exit", "exit", b % w + 0.5, b // w + 0.5, properties={"path_length": int(length)}),
        ]
        kept = [o for o in level.objects if o.name not in ("spawn", "exit")]
        # A maze's record of its own ends would name another entrance and exit than the objects.
        ends = {name: tile_record(c % w, c // w) for name, c in (("entrance", a), ("exit", b)) if read_tile_record(level.properties.get(name)) is not None}
        return Level(
            tiles=level.tiles,
            alphabet=level.alphabet,
            layers=dict(level.layers),
            objects=kept + points,
            properties={**level.properties, **ends, "path_length": int(length), "path_exact": bool(exact)},
        )


def _nearest(mask: np.ndarray, corner: Corner) -> int:
    h, w = mask.shape
    cy = 0 if corner.startswith("top") else h - 1
    cx = 0 if corner.endswith("left") else w - 1
    ys, xs = np.nonzero(mask)
    d2 = (ys - cy) ** 2 + (xs - cx) ** 2
    k = int(np.argmin(d2))  # first in reading order among the nearest
    return int(ys[k] * w + xs[k])
