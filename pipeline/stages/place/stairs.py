"""Stairs joining the maps of a pack into the floors of one dungeon."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.errors import PipelineError
from pipeline.grid.bfs import distances, trace_back
from pipeline.level import Level, MapObject
from pipeline.registry import Floor, stage
from pipeline.stages.regions.label import label_regions
from pipeline.stages.common.walkable import WalkableStage

# Mixed into the seed of the stairs between two floors: their tile is the pack's, not a map's.
_STAIRS_STREAM = 0x57A125


@stage("place.stairs", version=2)
class Stairs(WalkableStage):
    """Join the pack's maps as the floors of one dungeon, with stairs between them.

    In the pack's order, map i's stairs down and map i+1's stairs up stand on the same tile, so
    a game walks down from one onto the other.

    The tile of the stairs between floors i and i+1 is drawn from the pack seed and i alone
    (a fraction of the map's width and height, `margin` away from the edges; the left half for
    even i and the right for odd, so a floor's two stairs differ), so both maps find it
    without seeing each other, pinned or re-rolled maps included; maps of one size get one tile
    (with sizes drawn from ranges they would not line up). Where the tile is wall, the shortest
    corridor of `floor` is dug from it to the map's largest walkable region: run it before
    `place.lock_key`, which then locks the map as dug (a map with locked doors is refused).
    Each stairs is a `stairs` point with `direction` ("up" or "down"), `to_map` (the other
    map's file name without extension) and `to_object` (the other stairs' name); the first map
    has no stairs up and the last none down. The map gets `floor` (its index), `floors` and
    `stairs_dug` (tiles dug)."""

    arity: ClassVar[tuple[int, int]] = (1, 1)
    reads_floor: ClassVar[bool] = True
    adds_stats: ClassVar[tuple[str, ...] | None] = ("floor", "floors", "stairs_dug")

    floor: str = Field("floor", min_length=1, description="The symbol a corridor to the stairs is dug with.")
    margin: float = Field(0.15, ge=0.0, lt=0.5, description="Least distance of the stairs from the map's edges, as a fraction of its width and height.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        raise PipelineError(["place.stairs joins the maps of a pack: it runs in a build (pcg build), where each map knows its floor"])

    def run_on_floor(self, inputs: list[Level], rng: np.random.Generator, floor: Floor) -> Level:
        level = inputs[0]
        if any(o.type == "door" and o.properties.get("lock") for o in level.objects):
            # A corridor dug to the stairs could lead round a locked door, and the proof that
            # the door gates the exit would no longer hold.
            raise PipelineError(["the map has locked doors already: put place.stairs before place.lock_key (and layout.graph's locks), which then lock the map as dug"])
        dig = level.index_of(self.floor) if self.floor in [s.name for s in level.alphabet] else None
        if dig is None:
            raise PipelineError([f"floor: the map has no symbol {self.floor!r} to dig with ({', '.join(s.name for s in level.alphabet)})"])
        h, w = level.tiles.shape
        stairs = []
        if floor.above is not None:
            stairs.append(("up", self._tile(floor.pack_seed, floor.index - 1, w, h), floor.above, "stairs_down"))
        if floor.below is not None:
            stairs.append(("down", self._tile(floor.pack_seed, floor.index, w, h), floor.below, "stairs_up"))
        tiles = level.tiles.copy()
        dug = 0
        for _, tile, _, _ in stairs:
            dug += _dig_to(tiles, self.table(level, self.walls, "walls", invert=True).view(np.bool_)[tiles], tile, dig)
        objects = [o for o in level.objects if o.type != "stairs"]
        for direction, tile, other, other_object in stairs:
            props = {"direction": direction, "to_map": other, "to_object": other_object}
            objects.append(MapObject(f"stairs_{direction}", "stairs", tile % w + 0.5, tile // w + 0.5, properties=props, ref=f"stairs:{direction}"))
        return Level(
            tiles=tiles,
            alphabet=level.alphabet,
            layers=dict(level.layers),
            objects=objects,
            properties={**level.properties, "floor": floor.index, "floors": floor.maps, "stairs_dug": dug},
        )

    def _tile(self, pack_seed: int, between: int, w: int, h: int) -> int:
        """The tile of the stairs between floors `between` and `between + 1`: in the left half
        of the map's width for even `between`, the right half for odd, so that a floor's stairs
        up and down (of consecutive `between`) never share a tile."""
        fx, fy = np.random.default_rng([pack_seed, between, _STAIRS_STREAM]).random(2)
        lo = self.margin
        half = (1 - 2 * lo) / 2
        x = min(w - 1, int((lo + (between % 2 + fx) * half) * w))
        y = min(h - 1, int((lo + fy * (1 - 2 * lo)) * h))
        return y * w + x


def _dig_to(tiles: np.ndarray, walk: np.ndarray, tile: int, dig: int) -> int:
    """Dig (in place) the shortest corridor from `tile` to the largest walkable region, unless
    the tile is in it; returns the tiles dug."""
    labels, sizes = label_regions(walk)
    if not len(sizes):
        tiles.ravel()[tile] = dig
        return 1
    main = labels.ravel() == 1
    if main[tile]:
        return 0
    dist = distances(np.ones_like(walk), np.flatnonzero(main))
    way = trace_back(dist, tile, *walk.shape)
    flat = tiles.ravel()
    cut = way[~walk.ravel()[way]]
    flat[cut] = dig
    return int(len(cut))
