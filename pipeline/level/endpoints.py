"""Where a map starts and ends: the tile of its first object of a type (a spawn, an exit), or
what a maze records in their place. Placement stages, diversity and playability all ask."""

from __future__ import annotations

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.level.tile_record import read_tile_record

# What stands in for an endpoint type the map has no object of: the tiles a maze's statistics
# record as its entrance and exit (mazes carry no objects).
_MAZE_STAND_INS = {"spawn": "entrance", "exit": "exit"}


def endpoint_tile(level: Level, kind: str, key: str) -> int:
    """Flat index of the tile of the map's first object of type `kind` (the middle tile of a
    rectangle); `key` names the parameter that asked for it in the message when there is none."""
    h, w = level.tiles.shape
    for obj in level.objects:
        if obj.type == kind and not obj.points:
            x, y = int(obj.x + obj.w / 2), int(obj.y + obj.h / 2)
            if not (0 <= x < w and 0 <= y < h):
                raise PipelineError([f"{key}: the {kind} object {obj.name!r} at ({obj.x}, {obj.y}) is outside the {w} x {h} map"])
            return y * w + x
    stand_in = _MAZE_STAND_INS.get(kind)
    tile = read_tile_record(level.properties.get(stand_in, "")) if stand_in else None
    if tile is not None:
        x, y = tile
        if 0 <= x < w and 0 <= y < h:
            return y * w + x
    types = ", ".join(sorted({o.type for o in level.objects})) or "none"
    raise PipelineError([f"{key}: the map has no object of type {kind!r} (it has: {types}); place one first (place.spawn_exit, place.items)"])
