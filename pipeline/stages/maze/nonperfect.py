"""The base of the non-perfect mazes: a patterned layout, then random walls cut for loops."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from pipeline.stages.maze.generator import MazeGenerator
from pipeline.registry import StageParams
from pipeline.stages.post.cut_walls import CutWalls, open_random_walls


class NonPerfectGenerator(MazeGenerator):
    """`carve` lays out the pattern (connected, every cell reachable); `cut_walls` of the closed
    walls between cells are then opened at random, as the classic catalogue does."""

    cut_walls: float = Field(0.05, ge=0, le=1, description="Fraction of the closed walls between cells opened after carving (loops).")

    def embeds(self) -> list[StageParams]:
        # The loops are post.cut_walls' work: a change there changes these mazes too.
        return [CutWalls(fraction=self.cut_walls)]

    def finish(self, tiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return open_random_walls(tiles, 0, self.cut_walls, rng)
