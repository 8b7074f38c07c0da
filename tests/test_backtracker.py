"""The recursive backtracker makes perfect mazes: spanning trees of the cell grid."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assert_perfect_maze
from pipeline.seeds import rng_for
from pipeline.stages.maze.backtracker import Backtracker


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
