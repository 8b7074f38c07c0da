"""Rooms as map objects: rectangles a game can use for encounters, loot and lighting."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.level import Level, MapObject
from pipeline.registry import stage
from pipeline.stages.regions.label import label_regions
from pipeline.stages.common.walkable import WalkableStage


@stage("place.rooms", version=1)
class Rooms(WalkableStage):
    """Mark every room of the map as a `room` rectangle object. Each rectangle is the room's
    bounding box, with `room` (its number), `region` (the walkable region it belongs to, largest
    region first) and `area` (tiles).

    Rooms come from the map's `room` layer where a generator wrote one (BSP, rooms and mazes);
    otherwise they are found: the walkable tiles inside some `min_size` x `min_size` open
    square, in connected groups, so corridors (narrower than `min_size`) are left out.
    Replaces any `room` objects the map had. Sets `rooms`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("rooms",)

    min_size: int = Field(3, ge=2, le=64, description="Without a room layer: narrowest part of a room, in tiles.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        from scipy import ndimage

        level = inputs[0]
        walk = self.walkable(level)
        regions, _ = label_regions(walk)
        if "room" in level.layers:
            rooms = level.layers["room"].astype(np.int64)
        else:
            square = np.ones((self.min_size, self.min_size), dtype=bool)
            inside = ndimage.binary_opening(walk, structure=square)
            rooms, _ = label_regions(inside)
        objects = []
        count = int(rooms.max(initial=0))
        if count:
            boxes = ndimage.find_objects(rooms, max_label=count)
            areas = np.bincount(rooms.ravel(), minlength=count + 1)
            for number, box in enumerate(boxes, start=1):
                if box is None:
                    continue
                ys, xs = box
                inside = rooms[box] == number
                region = int(regions[box][inside][0])
                objects.append(
                    MapObject(f"room_{number}", "room", xs.start, ys.start, xs.stop - xs.start, ys.stop - ys.start,
                              {"room": number, "region": region, "area": int(areas[number])})
                )
        kept = [o for o in level.objects if o.type != "room"]
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers), objects=kept + objects,
                     properties={**level.properties, "rooms": len(objects)})
