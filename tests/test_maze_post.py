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


def grid_from(rows: list[str]) -> np.ndarray:
    """A block-form grid from text: '#' wall, '.' open."""
    return np.array([[0 if ch == "#" else 1 for ch in row] for row in rows], dtype=np.uint8)


def test_stats_of_known_mazes() -> None:
    from pipeline.stages.maze.stats import maze_stats

    corridor = maze_stats(grid_from(["#######", "#.....#", "#######"]))
    assert (corridor["cells"], corridor["dead_ends"], corridor["loops"], corridor["diameter"]) == (3, 2, 0, 2)
    assert (corridor["solution_pct"], corridor["straightness"], corridor["entrance"], corridor["exit"]) == (100.0, 1.0, "1,1", "5,1")
    ring = maze_stats(grid_from(["#####", "#...#", "#.#.#", "#...#", "#####"]))  # 2 x 2 cells, one loop
    assert (ring["cells"], ring["dead_ends"], ring["loops"], ring["diameter"], ring["straightness"]) == (4, 0, 1, 2, 0.0)
    # A hook through 4 cells: (0,0) -> (1,0) -> (1,1) -> (0,1). The exit corner (1,1) is 3 cells in.
    bend = maze_stats(grid_from(["#####", "#...#", "###.#", "#...#", "#####"]))
    assert (bend["dead_ends"], bend["diameter"], bend["straightness"], bend["solution_pct"]) == (2, 3, 0.0, 75.0)
    # Two parts: a 3-cell corridor and, apart from it, a 1-cell room; the exit stays in the
    # entrance's part, the diameter is the larger part's, and loops count the parts.
    parts = maze_stats(grid_from(["#########", "#.....#.#", "#########"]))
    assert (parts["cells"], parts["loops"], parts["diameter"], parts["exit"], parts["solution_pct"]) == (4, 0, 2, "5,1", 75.0)
    single = maze_stats(grid_from(["###", "#.#", "###"]))
    assert (single["cells"], single["diameter"], single["solution_pct"], single["dead_ends"]) == (1, 0, 100.0, 0)
    empty = maze_stats(grid_from(["###", "###", "###"]))
    assert empty["cells"] == 0 and empty["diameter"] == 0 and empty["entrance"] == ""
    # Entrance and exit are tiles, as every position in a map file: open tiles, not wall.
    hook = grid_from(["#####", "#.#.#", "#.#.#", "#...#", "#####"])
    ends = maze_stats(hook)
    assert (ends["entrance"], ends["exit"]) == ("1,1", "3,3")
    for name in ("entrance", "exit"):
        x, y = (int(v) for v in str(ends[name]).split(","))
        assert hook[y, x] == 1


def true_diameter(tiles: np.ndarray) -> int:
    """All-pairs shortest paths (scipy) over the open cells: the exact longest one."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    h, w = (tiles.shape[0] - 1) // 2, (tiles.shape[1] - 1) // 2
    idx = np.arange(w * h).reshape(h, w)
    east = (tiles[1::2, 2:-1:2] == 1) & (tiles[1::2, 1:-2:2] == 1) & (tiles[1::2, 3::2] == 1)
    south = (tiles[2:-1:2, 1::2] == 1) & (tiles[1:-2:2, 1::2] == 1) & (tiles[3::2, 1::2] == 1)
    a = np.concatenate([idx[:, :-1][east], idx[:-1, :][south]])
    b = np.concatenate([idx[:, 1:][east], idx[1:, :][south]])
    graph = coo_matrix((np.ones(a.size), (a, b)), shape=(w * h, w * h)).tocsr()
    d = shortest_path(graph, directed=False, unweighted=True)
    return int(d[np.isfinite(d)].max())


@settings(max_examples=30, deadline=None)
@given(gen=GENERATORS, w=st.integers(1, 12), h=st.integers(1, 12), seed=SEEDS)
def test_diameter_is_exact_on_perfect_mazes_and_a_lower_bound_with_loops(gen: str, w: int, h: int, seed: tuple[int, int, int]) -> None:
    level = maze(gen, w, h, seed)
    far = registry.kinds()[gen](cells=(w, h), solution="farthest").run([], rng_for(seed)).properties
    exact = true_diameter(level.tiles)
    if level.properties["loops"] == 0:
        assert level.properties["diameter"] == exact
    else:
        assert level.properties["diameter"] <= exact
    assert far["solution_pct"] == round(100 * (far["diameter"] + 1) / level.properties["cells"], 3)


def test_farthest_solution_runs_between_the_ends_of_the_diameter() -> None:
    for i in range(10):
        corners = registry.kinds()["maze.kruskal"](cells=(20, 14)).run([], rng_for((i, 0, 0))).properties
        far = registry.kinds()["maze.kruskal"](cells=(20, 14), solution="farthest").run([], rng_for((i, 0, 0))).properties
        assert far["diameter"] == corners["diameter"]
        assert far["solution_pct"] == round(100 * (far["diameter"] + 1) / 280, 3)
        assert far["solution_pct"] >= corners["solution_pct"]
        assert corners["entrance"] == "1,1" and corners["exit"] == "39,27"


def test_edits_leave_openings_in_the_border_alone() -> None:
    from pipeline.level import Level
    from pipeline.stages.maze.block import MAZE_ALPHABET

    # A corridor of 3 cells whose east end opens through the border (an exit another stage made).
    tiles = grid_from(["#######", "#......", "#######"])
    level = Level(tiles=tiles, alphabet=MAZE_ALPHABET)
    for name, params in (("post.prune_dead_ends", {"passes": 0}), ("post.braid", {}), ("post.cut_walls", {"walls": 3})):
        out = registry.kinds()[name](**params).run([level], rng_for((0,))).tiles
        assert out[1, -1] == 1 and (out[0] == 0).all() and (out[-1] == 0).all(), name
