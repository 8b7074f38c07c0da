"""The recursive backtracker makes perfect mazes: spanning trees of the cell grid."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage

from pipeline.seeds import rng_for
from pipeline.stages.maze.backtracker import Backtracker
from pipeline.stages.maze.block import FLOOR, WALL, open_sides


def assert_perfect_maze(tiles: np.ndarray, w: int, h: int) -> None:
    assert tiles.shape == (2 * h + 1, 2 * w + 1)
    assert tiles.dtype == np.uint8
    # Every cell is floor, every pillar (even, even) and the border are wall.
    assert (tiles[1::2, 1::2] == FLOOR).all()
    assert (tiles[0::2, 0::2] == WALL).all()
    assert (tiles[0, :] == WALL).all() and (tiles[-1, :] == WALL).all()
    assert (tiles[:, 0] == WALL).all() and (tiles[:, -1] == WALL).all()
    cells = w * h
    passages = int(np.count_nonzero(tiles == FLOOR)) - cells
    # A connected graph on `cells` nodes with `cells - 1` edges is a tree: no loops.
    assert passages == cells - 1
    _, components = ndimage.label(tiles == FLOOR)
    assert components == 1
    if cells > 1:
        assert (open_sides(tiles) >= 1).all()


@settings(max_examples=60, deadline=None)
@given(
    w=st.integers(1, 40),
    h=st.integers(1, 40),
    seed=st.tuples(st.integers(0, 2**32), st.integers(0, 2**64 - 1), st.integers(0, 2**63 - 1)),
)
def test_backtracker_is_a_spanning_tree(w: int, h: int, seed: tuple[int, int, int]) -> None:
    level = Backtracker(cells=(w, h)).run([], rng_for(seed))
    assert_perfect_maze(level.tiles, w, h)
    assert level.properties["cells"] == w * h


def test_same_seed_same_maze_other_seed_other_maze() -> None:
    stage = Backtracker(cells=(30, 20))
    a = stage.run([], rng_for((0, 1, 2))).tiles
    b = stage.run([], rng_for((0, 1, 2))).tiles
    c = stage.run([], rng_for((1, 1, 2))).tiles
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_backtracker_has_its_signature_few_dead_ends() -> None:
    # Walter D. Pullen's table: the recursive backtracker leaves about 10% dead ends. 40 mazes of
    # 30 x 30 cells put the mean within a fraction of a point; 7..13% rejects other algorithms
    # (binary tree ~25%, Prim ~30%).
    pct = [Backtracker(cells=(30, 30)).run([], rng_for((i, 0, 1))).properties["dead_end_pct"] for i in range(40)]
    assert 7.0 < float(np.mean(pct)) < 13.0
