"""Kruskal's algorithm: open walls in random order unless they would close a loop."""

from __future__ import annotations

import numpy as np

from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.stages.maze.graph import join_forest


@stage("maze.kruskal", version=1)
class Kruskal(MazeGenerator):
    """Kruskal's algorithm: take every wall between two cells in random order and open it when the
    cells are not yet connected (union-find).

    The maze grows everywhere at once as many small trees merging: short, even texture with
    about 30% dead ends.
    """

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        tiles = np.zeros((2 * h + 1, 2 * w + 1), dtype=np.uint8)
        tiles[1::2, 1::2] = 1
        join_forest(tiles, np.ones((h, w), dtype=np.bool_), np.arange(w * h, dtype=np.int32), rng.permutation(2 * w * h).astype(np.int32))
        return tiles
