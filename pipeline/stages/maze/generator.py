"""The base every maze generator shares: size, the optional carving mask, statistics options."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.errors import PipelineError
from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.ranges import draw_size, size_record, size_stats, size_type
from pipeline.registry import StageParams
from pipeline.stages.maze.block import FLOOR, WALL, maze_level
from pipeline.grid.graph import join_forest, union
from pipeline.stages.maze.stats import MAZE_STATS, Solution

# 4096 x 4096 cells is a 67 M tile map (~0.5 GB while carving); beyond that, a typo.
MazeSide = Annotated[int, Field(gt=0, le=4096)]


class MazeStage(StageParams):
    """Options every stage that outputs a maze has: how its statistics are measured."""

    adds_stats: ClassVar[tuple[str, ...] | None] = MAZE_STATS

    solution: Solution = Field(
        "corners",
        description="Entrance and exit for the solution statistic: the first and last open cells"
        " (top-left and bottom-right), or the two ends of the longest shortest path.",
    )


class MazeGenerator(MazeStage):
    """Base of the maze generators: `carve` makes a block grid of `cells = [w, h]`.

    With an input Level, the maze takes the input's size and carves only the cells whose input
    tile is one of `carve_on` (with `margin = 1`, only those whose eight neighbouring tiles are
    in the area too, so that a maze carved into the rock around rooms keeps a wall between its
    passages and the rooms): each connected part of that area becomes its own perfect maze,
    parts of its cells (tiles at odd row and column) joined where they are neighbours on the
    maze's grid; parts the area joins only through other tiles stay apart (`regions.connect`
    after the maze joins them).
    The generator carves the whole grid, the cells outside the area are cut away and the pieces
    left are rejoined by Kruskal's rule, so near the area's edges the texture is partly
    Kruskal's (and the uniform generators are no longer exactly uniform there).
    """

    passes_stats: ClassVar[bool] = False  # a maze carved into an input has statistics of its own

    arity: ClassVar[tuple[int, int]] = (0, 1)

    cells: size_type(MazeSide) = Field(
        (20, 20), description="Maze size in cells, [width, height]; a side may be [min, max], drawn per map (recorded as cells_w, cells_h)."
    )
    carve_on: tuple[str, ...] = Field(
        ("floor",), min_length=1, description="With an input Level: carve only cells whose input tile is one of these symbols."
    )
    margin: Literal[0, 1] = Field(
        0, description="With an input Level: 1 carves only cells whose eight neighbouring tiles are in the carve_on area too (a wall kept around what is outside it)."
    )

    def added_stats(self) -> tuple[str, ...]:
        return (*(self.adds_stats or ()), *size_stats("cells", self.cells))

    def carve(self, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
        """A (2h+1) x (2w+1) uint8 grid of WALL and FLOOR."""
        raise NotImplementedError

    def finish(self, tiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A last step after carving (the non-perfect mazes cut walls here)."""
        return tiles

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        if inputs:
            allowed = carving_mask(inputs[0], self.carve_on, self.margin)
            h, w = allowed.shape
            carved = self.carve(w, h, rng)  # before the order is drawn, from the same stream
            # A C-order mask and an int32 order, as rooms_and_mazes passes them: one compile of
            # restrict serves both.
            order = rng.permutation(2 * w * h).astype(np.int32)
            tiles = restrict(carved, np.ascontiguousarray(allowed), order)
        else:
            w, h = draw_size(self.cells, rng)
            tiles = self.carve(w, h, rng)
            level = maze_level(self.finish(tiles, rng), self.solution)
            level.properties.update(size_record("cells", self.cells, (w, h)))
            return level
        return maze_level(self.finish(tiles, rng), self.solution)


def carving_mask(level: Level, symbols: tuple[str, ...], margin: int = 0) -> np.ndarray:
    """Cells (h x w booleans) whose tile in `level` is one of `symbols` (with `margin`, whose
    whole 3 x 3 block of tiles is)."""
    if level.height % 2 == 0 or level.width % 2 == 0 or level.height < 3 or level.width < 3:
        raise PipelineError([f"the input is {level.width} x {level.height} tiles; a maze needs odd sizes (2w+1 x 2h+1)"])
    try:
        wanted = [level.index_of(s) for s in symbols]
    except KeyError as exc:
        raise PipelineError([f"carve_on: {exc.args[0]}"]) from None
    area = np.isin(level.tiles, wanted)
    if not margin:
        return area[1::2, 1::2]
    # A cell (2y+1, 2x+1) keeps its margin when all nine tiles of its block are in the area.
    block = area[:-2, :-2] & area[:-2, 1:-1] & area[:-2, 2:] & area[1:-1, :-2] & area[1:-1, 1:-1]
    block &= area[1:-1, 2:] & area[2:, :-2] & area[2:, 1:-1] & area[2:, 2:]
    return block[::2, ::2]


@compiled
def restrict(tiles: np.ndarray, allowed: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Keep a maze to the allowed cells, then rejoin what the cut split.

    Cells outside `allowed` and the passages into them become wall. The passages left form a
    forest; walls between allowed neighbours in different trees are opened in the random `order`
    (Kruskal's rule), so every connected part of the allowed area ends up a spanning tree.
    """
    h, w = allowed.shape
    out = tiles.copy()
    parent = np.arange(w * h).astype(np.int32)  # int32 for every graph.union: one compile
    for y in range(h):
        for x in range(w):
            if not allowed[y, x]:
                out[2 * y + 1, 2 * x + 1] = WALL
                out[2 * y, 2 * x + 1] = WALL
                out[2 * y + 2, 2 * x + 1] = WALL
                out[2 * y + 1, 2 * x] = WALL
                out[2 * y + 1, 2 * x + 2] = WALL
    for y in range(h):
        for x in range(w):
            c = y * w + x
            if x + 1 < w and out[2 * y + 1, 2 * x + 2] == FLOOR:
                union(parent, c, c + 1)
            if y + 1 < h and out[2 * y + 2, 2 * x + 1] == FLOOR:
                union(parent, c, c + w)
    join_forest(out, allowed, parent, order)
    return out
