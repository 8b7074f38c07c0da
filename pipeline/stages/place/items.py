"""Items scattered over the floor, apart from each other and from spawn and exit."""

from __future__ import annotations

from typing import ClassVar, Union

import numpy as np
from pydantic import Field, field_validator, model_validator

from pipeline.stages.common.count import count_type, draw_count
from pipeline.level.endpoints import endpoint_tile
from pipeline.stages.common.bands import BandStage, in_band, walking_fraction
from pipeline.errors import KeyedError, PipelineError, Rejected
from pipeline.jit import compiled
from pipeline.level import Level, MapObject, check_properties, near_colors, typed_property
from pipeline.grid.bfs import distances, shortest_way
from pipeline.registry import stage


ItemCount = count_type(1_000_000)


@stage("place.items", version=2)
class Items(BandStage):
    """Scatter `count` objects of `type` on walkable tiles, spaced apart. They go on walkable
    tiles but those of the symbol `door`, where an item would block the doorway (or on
    `symbols`, `door` too if they name it), each at least `spacing` tiles (straight-line) from every other item
    and from the map's existing point objects (spawn, exit); `count = [min, max]` draws how many
    per map. Tiles are tried in a random order from the map's seed, so the same seed places the
    same items. Fewer than `count` are placed when the map runs out of room; `items_<type>` says
    how many. With `strict = true` a map with room for fewer is made again from the next seeds
    (as a `filter` does), up to `attempts` times, and then fails, naming the numbers: for a
    game that needs every item. `rooms` keeps them to rooms of those roles or nodes (a
    `layout.graph` level's treasure rooms). With `tile`, exporters write each item as a tile object drawn
    with that tile; `properties` go on every item, typed as written.

    Encounters by difficulty: with `distance_from` (an object type, e.g. "spawn") items keep
    to a `band` of the walking distance from it (fractions of the farthest tile's: [0.6, 1]
    is the far part of the map), and with `rising` they thicken toward the far end, so the
    hard part comes last. `off_path` keeps them that many steps off the shortest way from
    spawn to exit: secrets in side passages.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    may_reject: ClassVar[bool] = True  # with strict

    type: str = Field("item", min_length=1, description="Object type (and name prefix), e.g. \"chest\".")
    count: ItemCount = Field(
        5, description="How many to place, or [min, max]: a number drawn per map from the map's seed."
    )
    spacing: float = Field(3.0, ge=0, le=1000, description="Least distance between items, in tiles.")
    symbols: tuple[str, ...] = Field((), description="Place only on these symbols; empty = every walkable tile but `door`.")
    tile: str = Field("", description="Export each item as a tile object drawn with this tile of the tileset (e.g. \"chest\"); empty: a point.")
    properties: dict[str, Union[bool, int, float, str]] = Field(
        default_factory=dict, description='Typed properties for every item, e.g. {gold = 10, locked = true, glow = "#ffa300"} ("#rrggbb" is a colour).'
    )
    # Both left out of the params when unset, so stages built before they existed keep their keys.
    strict: bool = Field(
        False, exclude_if=lambda strict: not strict,
        description="A map with room for fewer than count items is made again from the next seeds; false: it keeps the items that fit.",
    )
    attempts: int = Field(
        10, ge=1, le=100_000, exclude_if=lambda n: n == 10,
        description="With strict: most times a map is made again before it fails.",
    )
    rooms: tuple[str, ...] = Field(
        (), exclude_if=lambda rooms: not rooms,
        description='Place only in these rooms: roles or node names of the `room` objects (as layout.graph writes them), e.g. ["treasure"]; empty: anywhere.',
    )
    # Encounters by difficulty (with `distance_from` and `band`). Left out of the params when unset, as strict is.
    rising: float = Field(
        0.0, ge=0.0, le=10.0, exclude_if=lambda rising: rising == 0,
        description="With distance_from: items thicken with distance, a tile's chance growing as (distance / farthest) ** rising; 0: evenly.",
    )
    off_path: int = Field(
        0, ge=0, le=100_000, exclude_if=lambda steps: steps == 0,
        description="Place only at least this many steps off the shortest way from spawn to exit (secrets, side rooms); 0: anywhere.",
    )

    @field_validator("properties")
    @classmethod
    def _fits_tiled(cls, value: dict[str, Union[bool, int, float, str]]) -> dict[str, Union[bool, int, float, str]]:
        check_properties(value)
        return value

    @model_validator(mode="after")
    def _attempts_with_strict(self) -> Items:
        if "attempts" in self.model_fields_set and not self.strict:
            raise KeyedError("attempts", "only with strict = true (without it a map keeps the items that fit); remove it or set strict")
        if "rising" in self.model_fields_set and not self.distance_from:
            raise KeyedError("rising", 'only with distance_from (the object distances are measured from, e.g. "spawn")')
        return self

    def warnings(self) -> list[str]:
        return near_colors(self.properties, "properties.")

    def _in_rooms(self, level: Level) -> np.ndarray:
        """The tiles of the rooms named by `rooms` (by role or node), from the `room` layer."""
        layer = level.layers.get("room")
        if layer is None:
            raise PipelineError([f"place.items: rooms: the map has no room layer to find rooms {list(self.rooms)} in (layout.graph writes one)"])
        numbers = [
            o.properties["room"] for o in level.objects
            if o.type == "room" and "room" in o.properties and (o.properties.get("role") in self.rooms or o.properties.get("node") in self.rooms)
        ]
        return np.isin(layer, np.array(numbers, dtype=layer.dtype))

    def _off_path(self, level: Level, walk: np.ndarray) -> np.ndarray:
        """Each tile's steps from the shortest way between the spawn and the exit (-1 where
        it cannot be reached)."""
        h, w = walk.shape
        spawn, goal = endpoint_tile(level, "spawn", "off_path"), endpoint_tile(level, "exit", "off_path")
        way = shortest_way(walk, spawn, goal)
        if way is None:
            raise PipelineError([f"off_path: no walkable way joins the spawn and the exit to measure from (tiles {spawn % w}, {spawn // w} and {goal % w}, {goal // w})"])
        return distances(walk, way).reshape(h, w)  # the way's ends are sources: walkable or not, they count

    def object_tiles(self) -> dict[str, str]:
        return {self.tile: "tile"} if self.tile else {}

    def added_stats(self) -> tuple[str, ...]:
        return (f"items_{self.type}",)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        allowed = self.mask(level, self.symbols, "symbols") if self.symbols else self.walkable(level)
        if self.rooms:
            allowed &= self._in_rooms(level)
        if not self.symbols and any(s.name == "door" for s in level.alphabet):
            allowed &= ~self.mask(level, ("door",), "symbols")
        h, w = allowed.shape
        walk = self.walkable(level)
        if self.off_path:
            allowed &= self._off_path(level, walk) >= self.off_path
        fraction = walking_fraction(level, walk, self.distance_from, "distance_from") if self.distance_from else None
        if fraction is not None:
            allowed &= in_band(fraction, self.band)
        taken = [(int(o.y), int(o.x)) for o in level.objects if o.w == 0 and o.h == 0 and 0 <= o.y < h and 0 <= o.x < w]
        existing = np.array([y * w + x for y, x in taken], dtype=np.int64)
        tiles = np.flatnonzero(allowed.ravel())
        if fraction is not None and self.rising:
            # A random order in which each tile comes early with chance in proportion to its
            # weight (Efraimidis and Spirakis: sort by u ** (1 / weight)).
            weight = np.maximum(fraction.ravel()[tiles], 1e-9) ** self.rising
            order = tiles[np.argsort(-(np.log(rng.random(len(tiles))) / weight), kind="stable")].astype(np.int64)
        else:
            order = rng.permutation(tiles).astype(np.int64)
        # Drawn after the order, so that a fixed count places exactly what it always placed.
        count = draw_count(self.count, rng)
        chosen = scatter(w, h, order, existing, count, self.spacing)
        if self.strict and len(chosen) < count:
            raise Rejected(
                f"placed {len(chosen)} of {count} items of type {self.type!r}: no room for more {self.spacing:g} tiles apart (lower count or spacing,"
                " or make room)",
                self.attempts,
                {f"items_{self.type}": len(chosen)},
            )
        props = {k: typed_property(v) for k, v in self.properties.items()}
        items = [
            MapObject(f"{self.type}_{k + 1}", self.type, c % w + 0.5, c // w + 0.5, properties={**props, "index": k + 1}, tile=self.tile)
            for k, c in enumerate(chosen.tolist())
        ]
        short = [
            f"placed {len(items)} of {count} items of type {self.type!r}: no room for more {self.spacing:g} tiles apart"
            " (lower count or spacing, or set strict = true to make such a map again)"
        ] if len(items) < count else []
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers), objects=list(level.objects) + items,
                     properties={**level.properties, f"items_{self.type}": len(items)}, notes=short)


@compiled
def scatter(w: int, h: int, order: np.ndarray, existing: np.ndarray, count: int, spacing: float) -> np.ndarray:
    """The first `count` tiles of `order` that keep `spacing` from each other and `existing`:
    a blocked-tile grid makes each test O(1) and each placement O(spacing^2)."""
    blocked = np.empty(h * w, dtype=np.bool_)
    blocked[:] = False
    r = int(np.ceil(spacing)) - 1 if spacing > 0 else -1
    limit = spacing * spacing

    def block(c: int) -> None:
        y = c // w
        x = c - y * w
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                ny = y + dy
                nx = x + dx
                if 0 <= ny < h and 0 <= nx < w and dy * dy + dx * dx < limit:
                    blocked[ny * w + nx] = True

    for k in range(existing.shape[0]):
        block(existing[k])
    out = np.empty(min(count, order.shape[0]), dtype=np.int64)
    placed = 0
    for k in range(order.shape[0]):
        if placed == out.shape[0]:
            break
        c = order[k]
        if blocked[c]:
            continue
        out[placed] = c
        placed += 1
        blocked[c] = True
        block(c)
    return out[:placed]
