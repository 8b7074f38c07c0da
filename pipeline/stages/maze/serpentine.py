"""Serpentine mazes: passages running back and forth across the grid."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from pipeline.registry import stage
from pipeline.stages.maze.nonperfect import NonPerfectGenerator


@stage("maze.serpentine", version=2)
class Serpentine(NonPerfectGenerator):
    """Serpentine (boustrophedon) maze: one passage switching back row by row, with shortcuts.
    The passage runs the full width of each row (or height of each column) and turns at
    alternate ends into the next, then `cut_walls` opens random walls between neighbouring
    passages, giving shortcuts across the switchbacks.
    """

    direction: Literal["horizontal", "vertical"] = Field("horizontal", description="Which way the long passages run.")

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        if self.direction == "vertical":
            return np.ascontiguousarray(self._rows(h, w, rng).T)
        return self._rows(w, h, rng)

    @staticmethod
    def _rows(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        tiles = np.zeros((2 * h + 1, 2 * w + 1), dtype=np.uint8)
        tiles[1::2, 1:-1] = 1  # every row one passage
        first = int(rng.integers(2))  # the side of the first turn
        for y in range(h - 1):  # one turn per row, not per cell
            x = w - 1 if (y + first) % 2 == 0 else 0
            tiles[2 * y + 2, 2 * x + 1] = 1
        return tiles
