"""Open random walls between open cells: loops in a perfect maze."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.level import Level
from pipeline.registry import stage
from pipeline.stages.post.maze_input import MazeEdit


def closed_walls(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tile coordinates (rows, cols) of every closed wall between two open cells."""
    cell_open = grid[1::2, 1::2] != 0
    east = (grid[1::2, 2:-1:2] == 0) & cell_open[:, :-1] & cell_open[:, 1:]
    south = (grid[2:-1:2, 1::2] == 0) & cell_open[:-1, :] & cell_open[1:, :]
    ey, ex = np.nonzero(east)
    sy, sx = np.nonzero(south)
    return np.concatenate([2 * ey + 1, 2 * sy + 2]), np.concatenate([2 * ex + 2, 2 * sx + 1])


def open_random_walls(grid: np.ndarray, walls: int, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Open `walls` plus `fraction` of the closed walls between open cells, chosen uniformly."""
    rows, cols = closed_walls(grid)
    count = min(rows.shape[0], walls + int(round(fraction * rows.shape[0])))
    out = grid.copy()
    if count:
        pick = rng.choice(rows.shape[0], size=count, replace=False)
        out[rows[pick], cols[pick]] = 1
    return out


@stage("post.cut_walls", version=2)
class CutWalls(MazeEdit):
    """Open random walls between two open cells: each one adds a loop (a second way round).

    Give a number of `walls`, a `fraction` of the closed walls, or both (they add up).
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    walls: int = Field(0, ge=0, description="How many walls to open.")
    fraction: float = Field(0.05, ge=0, le=1, description="Fraction of the closed walls between open cells to open.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        return self.result(level, open_random_walls(self.open_grid(level), self.walls, self.fraction, rng))
