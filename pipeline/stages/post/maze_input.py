"""What post-processing stages share: reading a maze Level and writing the edited one back."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.stages.maze.generator import MazeStage
from pipeline.stages.maze.stats import maze_stats


class MazeEdit(MazeStage):
    """Base of stages that edit a block-form maze: `wall` tiles block, every other symbol is open."""

    wall: str = Field("wall", description="The symbol that blocks; every other symbol is open.")
    floor: str = Field("floor", description="The symbol written where a wall is opened.")

    def open_grid(self, level: Level) -> np.ndarray:
        """The maze as a uint8 grid: 1 open, 0 wall."""
        if level.height % 2 == 0 or level.width % 2 == 0 or level.height < 3 or level.width < 3:
            raise PipelineError([f"the input is {level.width} x {level.height} tiles; a block-form maze has odd sizes (2w+1 x 2h+1)"])
        try:
            grid = (level.tiles != level.index_of(self.wall)).astype(np.uint8)
        except KeyError as exc:
            raise PipelineError([f"wall: {exc.args[0]}"]) from None
        # The border is never a passage between two cells; openings in it (an exit carved by
        # another stage) are kept as they are by `result` and ignored by the edit.
        grid[0, :] = grid[-1, :] = 0
        grid[:, 0] = grid[:, -1] = 0
        return grid

    def result(self, level: Level, grid: np.ndarray) -> Level:
        """The input Level with `grid` applied (opened tiles become `floor`, closed ones `wall`)."""
        try:
            wall, floor = level.index_of(self.wall), level.index_of(self.floor)
        except KeyError as exc:
            raise PipelineError([f"floor: {exc.args[0]}"]) from None
        tiles = level.tiles.copy()
        inner = tiles[1:-1, 1:-1]  # a view: edits land in `tiles`, the border stays as it was
        was_open = inner != wall
        inner[(grid[1:-1, 1:-1] != 0) & ~was_open] = floor
        inner[(grid[1:-1, 1:-1] == 0) & was_open] = wall
        # Per-tile layers describe the old layout; stats are measured again.
        return Level(tiles=tiles, alphabet=level.alphabet, objects=list(level.objects),
                     properties={**level.properties, **maze_stats(grid, self.solution)})
