"""Bob Nystrom's rooms and mazes: rooms first, a maze in the space between, doors to join them."""

from __future__ import annotations

from typing import Annotated, ClassVar, cast

import numpy as np
from pydantic import Field, field_validator, model_validator

from pipeline import registry
from pipeline.level.dungeon_tiles import DOOR, DUNGEON_ALPHABET, FLOOR, WALL
from pipeline.errors import KeyedError
from pipeline.jit import compiled
from pipeline.level import Level, MapObject
from pipeline.ranges import SizeRange, as_written, draw_size, least, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage
from pipeline.stages.maze.generator import MazeGenerator, restrict
from pipeline.grid.graph import DX, DY, random_order, union
from pipeline.stages.regions.label import label_regions

# The corridors are a maze of (side - 1) / 2 cells a side, and maze generators stop at 4096.
MazedSide = Annotated[int, Field(ge=5, le=2 * 4096 + 1)]

GROWING_TREE = "maze.growing_tree"
NO_MAZE = "none"


@stage("dungeon.rooms_and_mazes", version=2)
class RoomsAndMazes(StageParams):
    """Rooms joined by maze corridors (Bob Nystrom, "Rooms and Mazes", 2014). Try
    `room_attempts` random rooms (odd sizes in `room_size`, at odd positions, so they line up
    with maze cells) and keep those that overlap no other; fill the rest with a maze (`maze`,
    any generator of the catalogue; the growing tree by default, where `winding` is the share of
    steps that continue from the newest cell; a non-perfect generator also cuts its loops;
    "none": rooms alone); open one door between every two regions along a random spanning tree,
    plus each other possible door with `extra_connector_chance` (loops); then, with
    `remove_dead_ends`, fill every dead end until none is left.

    Doors are their own symbol (`door`). Rooms are `room` rectangle objects and a `room` layer.
    """

    adds_stats: ClassVar[tuple[str, ...] | None] = ("rooms", "doors", "floor_pct")

    size: size_type(MazedSide) = Field(
        (81, 51), description="Map size in tiles, [width, height]; both odd. A side may be [min, max] (both odd): an odd size drawn per map (recorded as size_w, size_h)."
    )
    room_attempts: int = Field(200, ge=0, le=1_000_000, description="Random rooms tried.")
    room_size: tuple[int, int] = Field((3, 11), description="Smallest and largest room side, in tiles (odd).")
    maze: str = Field(GROWING_TREE, description='Maze generator for the corridors; "none": rooms alone (to compose with a maze of your own).')
    winding: float = Field(
        0.6, ge=0, le=1, description="With maze.growing_tree only: share of newest-cell steps (long winding corridors)."
    )
    extra_connector_chance: float = Field(0.05, ge=0, le=1, description="Chance that a connector beyond the spanning tree becomes a door.")
    remove_dead_ends: bool = Field(True, description="Fill dead ends until none is left.")

    @field_validator("size")
    @classmethod
    def _odd(cls, value: SizeRange) -> SizeRange:
        if any(end % 2 == 0 for side in value for end in ((side,) if isinstance(side, int) else side)):
            raise ValueError(f"must be odd, each side and each end of a [min, max] side, so rooms and maze cells line up (got {as_written(value)})")
        return value

    @field_validator("room_size")
    @classmethod
    def _room_size(cls, value: tuple[int, int]) -> tuple[int, int]:
        lo, hi = value
        if lo < 1 or lo > hi or lo % 2 == 0 or hi % 2 == 0:
            raise ValueError(f"must be two odd numbers, smallest first (got {list(value)})")
        return value

    @field_validator("maze")
    @classmethod
    def _maze(cls, value: str) -> str:
        if value == NO_MAZE:
            return value
        found = registry.lookup(value)
        if found is None or not issubclass(found, MazeGenerator):
            mazes = ", ".join(k for k, c in registry.kinds().items() if issubclass(c, MazeGenerator))
            raise ValueError(f"{value!r} is not a maze generator ({mazes}, or \"none\")")
        return value

    @model_validator(mode="after")
    def _fits(self) -> RoomsAndMazes:
        if self.room_size[1] > min(least(side) for side in self.size) - 2:
            raise KeyedError("room_size", f"rooms up to {self.room_size[1]} tiles need every side of size to be at least {self.room_size[1] + 2} (size = {as_written(self.size)})")
        # Other generators have no such knob: a winding that changed nothing would mislead.
        if "winding" in self.model_fields_set and self.maze != GROWING_TREE:
            raise KeyedError("winding", f"only with maze = {GROWING_TREE!r} (this stage uses {self.maze!r}); remove it")
        return self

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("size", self.size))

    def generator(self, size: tuple[int, int] | None = None) -> MazeGenerator:
        """The corridor maze's generator, with this stage's options (for a map `size` tiles big;
        by default the smallest the stage makes)."""
        w, h = size or (least(self.size[0]), least(self.size[1]))
        params: dict[str, object] = {"cells": ((w - 1) // 2, (h - 1) // 2)}
        if self.maze == GROWING_TREE:
            newest = round(self.winding * 100)
            params["selection"] = ",".join(f"{k}:{v}" for k, v in (("newest", newest), ("random", 100 - newest)) if v)
        return cast(MazeGenerator, registry.get(self.maze)(**params))

    def embeds(self) -> list[StageParams]:
        return [] if self.maze == NO_MAZE else [self.generator()]

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        w, h = draw_size(self.size, rng, step=2)
        tiles = np.zeros((h, w), dtype=np.uint8)
        rooms = self._place_rooms(w, h, rng)
        room_layer = np.zeros((h, w), dtype=np.int32)
        for number, (x, y, rw, rh) in enumerate(rooms, start=1):
            tiles[y : y + rh, x : x + rw] = FLOOR
            room_layer[y : y + rh, x : x + rw] = number
        # The maze: a maze of the whole cell grid, cut to the cells outside rooms.
        cw, ch = (w - 1) // 2, (h - 1) // 2
        free = tiles[1::2, 1::2] == WALL
        if self.maze != NO_MAZE:
            generator = self.generator((w, h))
            maze = restrict(generator.carve(cw, ch, rng), free, random_order(2 * cw * ch, rng))
            # Its own last step (a non-perfect maze's loops), on the corridors alone.
            maze = generator.finish(maze, rng)
            tiles[maze == FLOOR] = FLOOR
        open_doors(tiles, rng, self.extra_connector_chance)
        if self.remove_dead_ends:
            fill_dead_ends(tiles)
        objects = [MapObject(f"room_{n}", "room", x, y, rw, rh, {"room": n, "area": rw * rh}) for n, (x, y, rw, rh) in enumerate(rooms, start=1)]
        return Level(
            tiles=tiles,
            alphabet=DUNGEON_ALPHABET,
            layers={"room": room_layer},
            objects=objects,
            properties={"rooms": len(rooms), "doors": int((tiles == DOOR).sum()), "floor_pct": round(100 * float((tiles != WALL).mean()), 2),
                        **size_record("size", self.size, (w, h))},
        )

    def _place_rooms(self, w: int, h: int, rng: np.random.Generator) -> list[tuple[int, int, int, int]]:
        lo, hi = self.room_size
        taken = np.zeros((h, w), dtype=np.bool_)
        rooms = []
        sides = rng.integers(lo // 2, hi // 2 + 1, size=(self.room_attempts, 2)) * 2 + 1
        for rw, rh in sides:
            rw, rh = int(min(rw, w - 2)), int(min(rh, h - 2))
            x = int(rng.integers(0, (w - rw) // 2)) * 2 + 1
            y = int(rng.integers(0, (h - rh) // 2)) * 2 + 1
            # A room may not touch another: one wall tile between them at least.
            if taken[y - 1 : y + rh + 1, x - 1 : x + rw + 1].any():
                continue
            taken[y : y + rh, x : x + rw] = True
            rooms.append((x, y, rw, rh))
        return rooms


def open_doors(tiles: np.ndarray, rng: np.random.Generator, extra: float) -> None:
    """Turn connectors (walls between two different regions) into doors: a random spanning tree
    of the regions, plus each other connector with probability `extra`."""
    labels, sizes = label_regions(tiles != WALL)
    h, w = tiles.shape
    inner = tiles[1:-1, 1:-1] == WALL
    # A connector has floor on two opposite sides, in different regions.
    lr = inner & (labels[1:-1, :-2] > 0) & (labels[1:-1, 2:] > 0) & (labels[1:-1, :-2] != labels[1:-1, 2:])
    ud = inner & (labels[:-2, 1:-1] > 0) & (labels[2:, 1:-1] > 0) & (labels[:-2, 1:-1] != labels[2:, 1:-1])
    ys, xs = np.nonzero(lr | ud)
    ys, xs = ys + 1, xs + 1
    order = rng.permutation(len(ys))
    chance = rng.random(len(ys))
    _choose_doors(tiles, labels, ys[order], xs[order], chance, extra, len(sizes))


@compiled
def _choose_doors(tiles: np.ndarray, labels: np.ndarray, ys: np.ndarray, xs: np.ndarray, chance: np.ndarray, extra: float, count: int) -> None:
    root = np.arange(count + 1).astype(np.int32)  # int32 for every graph.union: one compile
    for k in range(ys.shape[0]):
        y = ys[k]
        x = xs[k]
        if labels[y, x - 1] > 0 and labels[y, x + 1] > 0 and labels[y, x - 1] != labels[y, x + 1]:
            a, b = labels[y, x - 1], labels[y, x + 1]
        else:
            a, b = labels[y - 1, x], labels[y + 1, x]
        if union(root, np.int64(a), np.int64(b)):  # int64, as every other caller: one compile
            tiles[y, x] = 2  # DOOR
        elif chance[k] < extra:
            # A second door between regions already joined: a loop, unless it would sit right
            # beside a door (two side by side read as a wide opening, not a door).
            near = False
            for d in range(4):
                if tiles[y + DY[d], x + DX[d]] == 2:
                    near = True
            if not near:
                tiles[y, x] = 2


@compiled
def fill_dead_ends(tiles: np.ndarray) -> None:
    """Wall up every open tile with at most one open neighbour, repeatedly, in linear time."""
    h, w = tiles.shape
    degree = np.empty((h, w), dtype=np.int64)
    degree[:] = 0
    stack = np.empty(h * w, dtype=np.int64)
    top = 0
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            if tiles[y, x] != 0:
                for d in range(4):
                    if tiles[y + DY[d], x + DX[d]] != 0:
                        degree[y, x] += 1
                if degree[y, x] <= 1:
                    stack[top] = y * w + x
                    top += 1
    while top > 0:
        top -= 1
        c = stack[top]
        y = c // w
        x = c - y * w
        if tiles[y, x] == 0:
            continue
        tiles[y, x] = 0
        for d in range(4):
            ny = y + DY[d]
            nx = x + DX[d]
            if tiles[ny, nx] != 0:
                degree[ny, nx] -= 1
                if degree[ny, nx] == 1:
                    stack[top] = ny * w + nx
                    top += 1
