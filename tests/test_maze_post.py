"""Post-processing: braid, prune and cut walls keep every open cell reachable and do their job."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assert_all_reachable
from pipeline import registry
from pipeline.seeds import rng_for

SEEDS = st.tuples(st.integers(0, 2**32), st.integers(0, 2**64 - 1), st.integers(0, 2**63 - 1))
GENERATORS = st.sampled_from(["maze.backtracker", "maze.kruskal", "maze.binary_tree", "maze.spiral"])


def maze(name: str, w: int, h: int, seed: tuple[int, int, int]):  # type: ignore[no-untyped-def]
    return registry.kinds()[name](cells=(w, h)).run([], rng_for(seed))


def post(name: str, level, seed: tuple[int, int, int], **params: object):  # type: ignore[no-untyped-def]
    return registry.kinds()[name](**params).run([level], rng_for(seed))


@settings(max_examples=40, deadline=None)
@given(gen=GENERATORS, w=st.integers(2, 25), h=st.integers(2, 25), fraction=st.floats(0, 1), seed=SEEDS)
def test_braid_keeps_everything_reachable_and_removes_dead_ends(gen: str, w: int, h: int, fraction: float, seed: tuple[int, int, int]) -> None:
    before = maze(gen, w, h, seed)
    after = post("post.braid", before, seed, fraction=fraction)
    assert_all_reachable(after.tiles)
    assert (after.tiles[1::2, 1::2] == 1).all()
    assert after.properties["dead_ends"] <= before.properties["dead_ends"]
    if fraction == 1:
        assert after.properties["dead_ends"] == 0


@settings(max_examples=40, deadline=None)
@given(gen=GENERATORS, w=st.integers(1, 25), h=st.integers(1, 25), keep=st.floats(0, 1), passes=st.integers(0, 6), seed=SEEDS)
def test_prune_keeps_the_rest_connected(gen: str, w: int, h: int, keep: float, passes: int, seed: tuple[int, int, int]) -> None:
    before = maze(gen, w, h, seed)
    after = post("post.prune_dead_ends", before, seed, keep=keep, passes=passes)
    assert_all_reachable(after.tiles)
    assert after.properties["cells"] <= before.properties["cells"]
    if keep == 0 and passes == 0 and before.properties["loops"] == 0:
        assert after.properties["cells"] == 1  # a tree pruned to the end is a single cell


def test_one_prune_pass_fills_exactly_the_dead_ends() -> None:
    before = maze("maze.kruskal", 30, 30, (1, 2, 3))
    after = post("post.prune_dead_ends", before, (1, 2, 3), passes=1)
    assert after.properties["cells"] == before.properties["cells"] - before.properties["dead_ends"]


@settings(max_examples=30, deadline=None)
@given(w=st.integers(2, 25), h=st.integers(2, 25), walls=st.integers(0, 50), seed=SEEDS)
def test_cut_walls_adds_exactly_that_many_loops(w: int, h: int, walls: int, seed: tuple[int, int, int]) -> None:
    before = maze("maze.wilson", w, h, seed)
    after = post("post.cut_walls", before, seed, walls=walls, fraction=0.0)
    closed = (w - 1) * h + w * (h - 1) - (w * h - 1)  # inner walls left in a perfect maze
    assert after.properties["loops"] == min(walls, closed)
    assert_all_reachable(after.tiles)


def test_stats_of_a_known_maze() -> None:
    # A 3 x 1 corridor: entrance (0,0), exit (2,0), no loops, two dead ends, one straight cell.
    tiles = np.zeros((3, 7), dtype=np.uint8)
    tiles[1, 1:6] = 1
    from pipeline.stages.maze.stats import maze_stats

    s = maze_stats(tiles)
    assert (s["cells"], s["dead_ends"], s["loops"], s["diameter"], s["solution_pct"], s["straightness"]) == (3, 2, 0, 2, 100.0, 1.0)
    assert (s["entrance"], s["exit"]) == ("0,0", "2,0")


def test_farthest_solution_runs_between_the_ends_of_the_diameter() -> None:
    for i in range(10):
        corners = registry.kinds()["maze.kruskal"](cells=(20, 14)).run([], rng_for((i, 0, 0))).properties
        far = registry.kinds()["maze.kruskal"](cells=(20, 14), solution="farthest").run([], rng_for((i, 0, 0))).properties
        assert far["diameter"] == corners["diameter"]
        assert far["solution_pct"] == round(100 * (far["diameter"] + 1) / 280, 3)
        assert far["solution_pct"] >= corners["solution_pct"]
        assert corners["entrance"] == "0,0" and corners["exit"] == "19,13"
