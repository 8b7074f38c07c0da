"""Binary tree: every cell opens one of two walls."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from pipeline.registry import stage
from pipeline.stages.maze.generator import MazeGenerator


@stage("maze.binary_tree", version=2)
class BinaryTree(MazeGenerator):
    """Binary tree: each cell opens the wall toward one of the two directions of `bias`, at random.

    The simplest perfect maze, with a strong texture: the two edges of the bias corner are
    unbroken corridors and every path runs diagonally toward that corner (about 25% dead ends).
    Fully vectorised: no per-cell loop at all.
    """

    bias: Literal["NE", "NW", "SE", "SW"] = Field("NE", description="The corner every passage leads toward.")

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        tiles = np.zeros((2 * h + 1, 2 * w + 1), dtype=np.uint8)
        tiles[1::2, 1::2] = 1
        dy = -1 if self.bias[0] == "N" else 1
        dx = 1 if self.bias[1] == "E" else -1
        ys, xs = np.mgrid[0:h, 0:w]
        can_v = (ys + dy >= 0) & (ys + dy < h)
        can_h = (xs + dx >= 0) & (xs + dx < w)
        vertical = np.where(can_v & can_h, rng.random((h, w)) < 0.5, can_v)
        horizontal = can_h & ~vertical
        tiles[2 * ys[vertical] + 1 + dy, 2 * xs[vertical] + 1] = 1
        tiles[2 * ys[horizontal] + 1, 2 * xs[horizontal] + 1 + dx] = 1
        return tiles
