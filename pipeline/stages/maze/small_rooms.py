"""Connected small rooms: open rooms of a few cells, joined by single doors."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from pipeline.registry import stage
from pipeline.stages.maze.nonperfect import NonPerfectGenerator
from pipeline.stages.maze.rooms import join_blocks


@stage("maze.small_rooms", version=2)
class SmallRooms(NonPerfectGenerator):
    """Connected small rooms: a grid of open rooms joined by doors, with loops. The grid is
    tiled with open rooms of `room` x `room` cells, the rooms are joined by one door each into a
    random tree, and then `cut_walls` adds loops.

    Reads as a warren of chambers rather than corridors; every cell is reachable.
    """

    room: int = Field(3, ge=1, le=64, description="Room size in cells.")

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        tiles = np.zeros((2 * h + 1, 2 * w + 1), dtype=np.uint8)
        tiles[1::2, 1::2] = 1
        xs = np.arange(w - 1)
        ys = np.arange(h - 1)
        # Walls inside a room are open: those not on a room boundary.
        tiles[1::2, 2 * xs[(xs + 1) % self.room != 0] + 2] = 1
        tiles[2 * ys[(ys + 1) % self.room != 0] + 2, 1::2] = 1
        join_blocks(tiles, self.room, rng)
        return tiles
