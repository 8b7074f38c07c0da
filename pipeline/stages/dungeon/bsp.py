"""Binary space partition dungeons: rooms in the leaves of a random split tree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, cast

import numpy as np
from pydantic import Field, model_validator

from pipeline.level.dungeon_tiles import DUNGEON_ALPHABET, FLOOR, Side
from pipeline.level import Level, MapObject
from pipeline.ranges import draw_size, least, size_record, size_stats, size_type
from pipeline.registry import StageParams, stage

Room = tuple[int, int, int, int]  # x, y, w, h


@dataclass
class _Node:
    x: int
    y: int
    w: int
    h: int
    left: _Node | None = None
    right: _Node | None = None
    room: Room | None = None


@stage("dungeon.bsp", version=1)
class Bsp(StageParams):
    """Rooms and corridors from a binary space partition. Split the map in two (across its
    longer side, at a random fraction between `split_min` and `split_max`) and each part again,
    until a part is smaller than twice `min_leaf` (or, with probability, once it is under
    `max_leaf`). Each leaf gets a random room at least `padding` tiles inside it; sibling
    subtrees are joined by a corridor between a room of each, `"L"`-shaped or `"straight"` where
    the rooms face each other.

    Rooms never overlap. Every room is also a `room` rectangle object and a `room` layer
    (room number per tile, 0 elsewhere).
    """

    adds_stats: ClassVar[tuple[str, ...] | None] = ("rooms", "floor_pct")

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("size", self.size))

    size: size_type(Side) = Field((80, 50), description="Map size in tiles, [width, height]; a side may be [min, max], drawn per map (recorded as size_w, size_h).")
    min_leaf: int = Field(8, ge=4, le=1024, description="Smallest partition side, in tiles.")
    max_leaf: int = Field(20, ge=4, le=4096, description="Partitions larger than this are always split.")
    split_min: float = Field(0.35, gt=0, lt=1, description="Smallest split fraction.")
    split_max: float = Field(0.65, gt=0, lt=1, description="Largest split fraction.")
    padding: int = Field(1, ge=1, le=16, description="Wall tiles between a room and its partition's edge.")
    min_room: int = Field(3, ge=1, le=1024, description="Smallest room side, in tiles.")
    corridor: Literal["L", "straight"] = Field("L", description="Corridor shape between sibling subtrees.")

    @model_validator(mode="after")
    def _consistent(self) -> Bsp:
        if self.split_min > self.split_max:
            raise ValueError(f"split_min ({self.split_min}) is above split_max ({self.split_max})")
        if self.max_leaf < self.min_leaf:
            raise ValueError(f"max_leaf ({self.max_leaf}) is below min_leaf ({self.min_leaf})")
        if min(least(side) for side in self.size) < self.min_leaf:
            raise ValueError(f"size {list(self.size)} can be smaller than min_leaf = {self.min_leaf}")
        if self.min_room + 2 * self.padding > self.min_leaf:
            raise ValueError(f"a room of min_room + 2 * padding = {self.min_room + 2 * self.padding} tiles does not fit in min_leaf = {self.min_leaf}")
        return self

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        w, h = draw_size(self.size, rng)
        tiles = np.zeros((h, w), dtype=np.uint8)
        rooms_layer = np.zeros((h, w), dtype=np.int32)
        root = _Node(0, 0, w, h)
        leaves: list[_Node] = []
        self._split(root, rng, leaves)
        objects = []
        for number, leaf in enumerate(leaves, start=1):
            rx, ry, rw, rh = self._room(leaf, rng)
            leaf.room = (rx, ry, rw, rh)
            tiles[ry : ry + rh, rx : rx + rw] = FLOOR
            rooms_layer[ry : ry + rh, rx : rx + rw] = number
            objects.append(MapObject(f"room_{number}", "room", rx, ry, rw, rh, {"room": number, "area": rw * rh}))
        self._join(root, tiles, rng)
        return Level(
            tiles=tiles,
            alphabet=DUNGEON_ALPHABET,
            layers={"room": rooms_layer},
            objects=objects,
            properties={"rooms": len(leaves), "floor_pct": round(100 * float((tiles == FLOOR).mean()), 2), **size_record("size", self.size, (w, h))},
        )

    def _split(self, node: _Node, rng: np.random.Generator, leaves: list[_Node]) -> None:
        # Split across the longer side; a part too small to split stays a leaf, and one under
        # max_leaf on both sides stays a leaf half of the time, for rooms of varied sizes.
        horizontal = node.h > node.w if node.h != node.w else bool(rng.random() < 0.5)
        span = node.h if horizontal else node.w
        small = node.w <= self.max_leaf and node.h <= self.max_leaf
        if span < 2 * self.min_leaf or (small and rng.random() < 0.5):
            leaves.append(node)
            return
        lo = max(self.min_leaf, int(np.ceil(span * self.split_min)))
        hi = min(span - self.min_leaf, int(span * self.split_max))
        if lo > hi:
            lo, hi = self.min_leaf, span - self.min_leaf
        cut = int(rng.integers(lo, hi + 1))
        if horizontal:
            node.left, node.right = _Node(node.x, node.y, node.w, cut), _Node(node.x, node.y + cut, node.w, node.h - cut)
        else:
            node.left, node.right = _Node(node.x, node.y, cut, node.h), _Node(node.x + cut, node.y, node.w - cut, node.h)
        self._split(node.left, rng, leaves)
        self._split(node.right, rng, leaves)

    def _room(self, leaf: _Node, rng: np.random.Generator) -> tuple[int, int, int, int]:
        p = self.padding
        rw = int(rng.integers(self.min_room, leaf.w - 2 * p + 1))
        rh = int(rng.integers(self.min_room, leaf.h - 2 * p + 1))
        rx = leaf.x + p + int(rng.integers(0, leaf.w - 2 * p - rw + 1))
        ry = leaf.y + p + int(rng.integers(0, leaf.h - 2 * p - rh + 1))
        return rx, ry, rw, rh

    def _join(self, node: _Node, tiles: np.ndarray, rng: np.random.Generator) -> _Node:
        """Join the two subtrees under `node`; returns a leaf whose room stands for the subtree."""
        if node.left is None or node.right is None:
            return node
        a = self._join(node.left, tiles, rng)
        b = self._join(node.right, tiles, rng)
        # Every leaf the recursion returns was given a room.
        _corridor(tiles, cast(Room, a.room), cast(Room, b.room), self.corridor, rng)
        return a if rng.random() < 0.5 else b


def _corridor(tiles: np.ndarray, a: tuple[int, int, int, int], b: tuple[int, int, int, int], shape: str, rng: np.random.Generator) -> None:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    # Rooms facing each other (overlapping columns or rows) get a straight corridor.
    if shape == "straight":
        lo, hi = max(ax, bx), min(ax + aw, bx + bw)
        if lo < hi:
            x = int(rng.integers(lo, hi))
            tiles[min(ay, by) : max(ay + ah, by + bh), x] = FLOOR
            return
        lo, hi = max(ay, by), min(ay + ah, by + bh)
        if lo < hi:
            y = int(rng.integers(lo, hi))
            tiles[y, min(ax, bx) : max(ax + aw, bx + bw)] = FLOOR
            return
    x1, y1 = int(rng.integers(ax, ax + aw)), int(rng.integers(ay, ay + ah))
    x2, y2 = int(rng.integers(bx, bx + bw)), int(rng.integers(by, by + bh))
    if rng.random() < 0.5:
        tiles[y1, min(x1, x2) : max(x1, x2) + 1] = FLOOR
        tiles[min(y1, y2) : max(y1, y2) + 1, x2] = FLOOR
    else:
        tiles[min(y1, y2) : max(y1, y2) + 1, x1] = FLOOR
        tiles[y2, min(x1, x2) : max(x1, x2) + 1] = FLOOR
