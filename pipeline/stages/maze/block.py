"""Block-form mazes: cell (x, y) is tile (2y+1, 2x+1); the tile between two cells is their wall."""

from __future__ import annotations

import numpy as np

from pipeline.level import Level, PropertyValue, Symbol
from pipeline.stages.maze.stats import Solution, maze_stats

WALL, FLOOR = 0, 1
MAZE_ALPHABET = (
    Symbol("B", "wall", "#000000"),
    Symbol("W", "floor", "#fff1e8"),
)


def maze_level(tiles: np.ndarray, solution: Solution = "corners", **properties: PropertyValue) -> Level:
    """Wrap a carved block grid as a Level with its maze statistics."""
    return Level(tiles=tiles, alphabet=MAZE_ALPHABET, properties={**maze_stats(tiles, solution), **properties})


def open_sides(tiles: np.ndarray) -> np.ndarray:
    """For each cell, how many of its four walls are open (vectorised)."""
    open_ = tiles != WALL
    count = np.zeros((tiles.shape[0] // 2, tiles.shape[1] // 2), dtype=np.int8)
    count += open_[0:-1:2, 1::2]  # north
    count += open_[2::2, 1::2]  # south
    count += open_[1::2, 0:-1:2]  # west
    count += open_[1::2, 2::2]  # east
    return count
