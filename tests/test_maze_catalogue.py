"""The maze catalogue: structure (property tests), statistical signatures, uniformity, bias."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage, stats

from conftest import assert_all_reachable, assert_perfect_maze
from pipeline import registry
from pipeline.level import Level
from pipeline.seeds import rng_for
from pipeline.stages.maze.block import MAZE_ALPHABET
from pipeline.stages.maze.generator import MazeGenerator
from pipeline.stages.maze.nonperfect import NonPerfectGenerator

# The catalogue is the registry: a new generator is in these tests by being registered.
GENERATORS = {k: c for k, c in registry.kinds().items() if issubclass(c, MazeGenerator) and not k.startswith("test.")}
NON_PERFECT = sorted(k for k, c in GENERATORS.items() if issubclass(c, NonPerfectGenerator))
PERFECT = sorted(k for k in GENERATORS if k not in NON_PERFECT)
SEEDS = st.tuples(st.integers(0, 2**32), st.integers(0, 2**64 - 1), st.integers(0, 2**63 - 1))


def kind(name: str, **params: object):  # type: ignore[no-untyped-def]
    return registry.kinds()[name](**params)


def test_the_whole_catalogue_is_registered() -> None:
    """The catalogue this product promises, found in the registry as generators."""
    catalogue = {
        "maze.aldous_broder", "maze.backtracker", "maze.binary_tree", "maze.eller", "maze.growing_tree",
        "maze.hunt_and_kill", "maze.kruskal", "maze.prim_modified", "maze.prim_simplified", "maze.prim_true",
        "maze.recursive_division", "maze.sidewinder", "maze.wilson",
    }
    assert catalogue <= set(PERFECT)
    assert {"maze.serpentine", "maze.small_rooms", "maze.spiral"} <= set(NON_PERFECT)


# Parameters that change how a generator works, drawn by the property tests.
OPTIONS: dict[str, st.SearchStrategy] = {
    "maze.binary_tree": st.fixed_dictionaries({"bias": st.sampled_from(["NE", "NW", "SE", "SW"])}),
    "maze.growing_tree": st.fixed_dictionaries(
        {"selection": st.sampled_from(["newest", "random", "oldest", "middle", "newest:75,random:25", "oldest:1,middle:2,random:3"])}
    ),
    "maze.serpentine": st.fixed_dictionaries({"direction": st.sampled_from(["horizontal", "vertical"])}),
    "maze.small_rooms": st.fixed_dictionaries({"room": st.integers(1, 7)}),
    "maze.spiral": st.fixed_dictionaries({"spiral": st.integers(2, 12)}),
}


@pytest.mark.parametrize("name", PERFECT)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), w=st.integers(1, 24), h=st.integers(1, 24), seed=SEEDS)
def test_perfect_generators_make_spanning_trees(name: str, data: st.DataObject, w: int, h: int, seed: tuple[int, int, int]) -> None:
    options = data.draw(OPTIONS.get(name, st.just({})))
    level = kind(name, cells=(w, h), **options).run([], rng_for(seed))
    assert_perfect_maze(level.tiles, w, h)
    assert level.properties["loops"] == 0 and level.properties["cells"] == w * h


@pytest.mark.parametrize("name", NON_PERFECT)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), w=st.integers(1, 30), h=st.integers(1, 30), cut=st.floats(0, 1), seed=SEEDS)
def test_non_perfect_generators_reach_every_cell(name: str, data: st.DataObject, w: int, h: int, cut: float, seed: tuple[int, int, int]) -> None:
    options = data.draw(OPTIONS.get(name, st.just({})))
    level = kind(name, cells=(w, h), cut_walls=cut, **options).run([], rng_for(seed))
    assert (level.tiles[1::2, 1::2] == 1).all()
    assert_all_reachable(level.tiles)


def mask_level(allowed: np.ndarray) -> Level:
    h, w = allowed.shape
    tiles = np.zeros((2 * h + 1, 2 * w + 1), dtype=np.uint8)
    tiles[1::2, 1::2] = allowed
    return Level(tiles=tiles, alphabet=MAZE_ALPHABET)


@pytest.mark.parametrize("name", PERFECT + NON_PERFECT)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), seed=SEEDS)
def test_an_input_mask_limits_carving_to_a_maze_per_region(name: str, data: st.DataObject, seed: tuple[int, int, int]) -> None:
    h, w = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12))
    allowed = np.array(data.draw(st.lists(st.booleans(), min_size=w * h, max_size=w * h)), dtype=bool).reshape(h, w)
    tiles = kind(name, cells=(3, 3)).run([mask_level(allowed)], rng_for(seed)).tiles
    assert tiles.shape == (2 * h + 1, 2 * w + 1)
    assert np.array_equal(tiles[1::2, 1::2] == 1, allowed)  # carved exactly the allowed cells
    _, count = ndimage.label(allowed)
    _, carved_count = ndimage.label(tiles == 1)
    assert carved_count == count  # each allowed region is connected, and none are joined
    if name in PERFECT:
        # passages = cells - regions, with every region connected: a spanning tree per region.
        assert int((tiles == 1).sum()) - int(allowed.sum()) == int(allowed.sum()) - count


# Walter D. Pullen, "Think Labyrinth: Maze Algorithms", http://www.astrolog.org/labyrnth/algrithm.htm,
# table of perfect-maze creation algorithms, "Dead End" column (approximate % of cells that are
# dead ends in an orthogonal 2D maze): Recursive Backtracker 10, Hunt and Kill 11, Recursive
# Division 23, Binary Tree 25, Sidewinder 27, Eller's 28, Wilson's 29, Aldous-Broder 29,
# Kruskal's 30, Prim's (true) 30, Prim's (simplified) 32, Prim's (modified) 36, Growing Tree 10
# (always newest) to 49. For the uniform spanning tree (Wilson, Aldous-Broder) the infinite-grid
# value is exact: (8/pi^2)(1 - 2/pi) = 29.45% (Manna, Dhar & Majumdar, Phys. Rev. A 46, R4471, 1992).
PUBLISHED_DEAD_END_PCT = {
    "maze.backtracker": 10,
    "maze.hunt_and_kill": 11,
    "maze.recursive_division": 23,
    "maze.binary_tree": 25,
    "maze.sidewinder": 27,
    "maze.eller": 28,
    "maze.wilson": 29,
    "maze.aldous_broder": 29,
    "maze.kruskal": 30,
    "maze.prim_true": 30,
    "maze.prim_simplified": 32,
    "maze.prim_modified": 36,
    "maze.growing_tree": 10,
}
# 60 mazes of 40 x 40 cells: the standard error of a mean is 0.1-0.2 points (measured spread of
# one maze's dead-end % is 0.8-1.3 points), so 1.5 points covers the table's rounding to whole
# percents and the border effect of a finite grid, while still telling apart neighbours of the
# table that differ by 2 or more (binary tree 25 vs sidewinder 27 vs Kruskal 30 vs Prim 36).
TOLERANCE = 1.5


@pytest.mark.parametrize("name", sorted(PUBLISHED_DEAD_END_PCT))
def test_dead_end_percentage_matches_the_published_signature(name: str) -> None:
    stage = kind(name, cells=(40, 40))
    pct = np.array([stage.run([], rng_for((i, 7, 2026))).properties["dead_end_pct"] for i in range(60)])
    assert abs(pct.mean() - PUBLISHED_DEAD_END_PCT[name]) < TOLERANCE, f"mean {pct.mean():.2f} sd {pct.std():.2f}"


def growing_tree_pct(selection: str) -> float:
    stage = kind("maze.growing_tree", cells=(40, 40), selection=selection)
    return float(np.mean([stage.run([], rng_for((i, 3, 1))).properties["dead_end_pct"] for i in range(30)]))


def test_growing_tree_selection_moves_between_backtracker_and_prim() -> None:
    # (the dead-end table above covers "newest"; here the other selections and a mix)
    newest, mixed, random = growing_tree_pct("newest"), growing_tree_pct("newest:50,random:50"), growing_tree_pct("random")
    assert abs(newest - 10) < TOLERANCE  # newest is the recursive backtracker
    assert 24 < random < 31  # random selection: short Prim-like branches (measured 27.5%)
    assert newest + 3 < mixed < random - 3


def tree_id(tiles: np.ndarray) -> int:
    """The spanning tree of a 3 x 3 maze as a bitmask of its 12 inner walls."""
    walls = np.concatenate([tiles[1::2, 2:-1:2].reshape(-1), tiles[2:-1:2, 1::2].reshape(-1)])
    return int(np.dot(walls.astype(np.int64), 1 << np.arange(walls.size)))


def tree_counts(name: str, samples: int) -> np.ndarray:
    stage = kind(name, cells=(3, 3))
    rng = rng_for((0, 0, 99))
    ids, counts = np.unique([tree_id(stage.carve(3, 3, rng)) for _ in range(samples)], return_counts=True)
    assert len(ids) <= 192  # the 3 x 3 grid has exactly 192 spanning trees
    return np.concatenate([counts, np.zeros(192 - len(ids), dtype=np.int64)])


@pytest.mark.parametrize("name", ["maze.aldous_broder", "maze.wilson"])
def test_uniform_generators_pass_a_chi_square_test_on_3x3(name: str) -> None:
    # 30 expected per tree keeps the chi-square approximation sound; alpha = 0.001.
    counts = tree_counts(name, 192 * 30)
    assert stats.chisquare(counts).pvalue > 0.001


def test_the_chi_square_test_rejects_the_binary_tree() -> None:
    counts = tree_counts("maze.binary_tree", 192 * 30)
    assert np.count_nonzero(counts) == 16  # 4 free cells, two choices each
    assert stats.chisquare(counts).pvalue < 1e-12


@pytest.mark.parametrize("bias", ["NE", "NW", "SE", "SW"])
def test_binary_tree_leaves_its_two_bias_edges_unbroken(bias: str) -> None:
    for i in range(20):
        t = kind("maze.binary_tree", cells=(15, 11), bias=bias).run([], rng_for((i, 0, 0))).tiles
        row = t[1] if bias[0] == "N" else t[-2]
        col = t[:, -2] if bias[1] == "E" else t[:, 1]
        assert (row[1:-1] == 1).all() and (col[1:-1] == 1).all()


def test_sidewinder_top_row_is_one_corridor_and_every_run_opens_north_once() -> None:
    for i in range(20):
        t = kind("maze.sidewinder", cells=(15, 11)).run([], rng_for((i, 0, 0))).tiles
        assert (t[1, 1:-1] == 1).all()
        for y in range(1, 11):
            east = t[2 * y + 1, 2:-1:2] == 1  # open walls between x and x + 1
            north = t[2 * y, 1::2] == 1
            runs = np.concatenate([[0], np.cumsum(~east)])  # run id of every cell of the row
            assert (np.bincount(runs, weights=north) == 1).all()


def test_below_draws_what_integers_draws() -> None:
    """graph.below stands in for `rng.integers(0, n)` in the generators' kernels (it calls numba's
    bounded draws directly): the same values from the same stream, for every size of bound, so a
    numba upgrade that changes those internals fails here rather than silently in mazes."""
    import numba

    from pipeline.grid.graph import below

    # Compiling a kernel that calls it swaps the module's lazy `below` for its dispatcher.
    fast = below.materialize() if hasattr(below, "materialize") else below

    @numba.njit
    def draws(rng, bounds, fast_path):  # type: ignore[no-untyped-def]
        out = np.empty(bounds.size, dtype=np.int64)
        for i in range(bounds.size):
            out[i] = fast(rng, bounds[i]) if fast_path else rng.integers(0, bounds[i])
            if i % 7 == 0:  # interleave another kind of draw, as the kernels do
                out[i] += int(rng.random() * 1000)
        return out

    bounds = np.array([1, 2, 3, 4, 5, 1000, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**33, 2**62, 7 * 10**9])
    bounds = np.random.default_rng(0).choice(bounds, 20_000)
    assert np.array_equal(draws(rng_for((1,)), bounds, True), draws(rng_for((1,)), bounds, False))


def test_the_kernels_permutation_is_numpys() -> None:
    """graph.permutation stands in for `rng.permutation(n)` in kernels (numba's takes seconds to
    compile on a first run): the same permutation, leaving the stream where numpy leaves it."""
    from pipeline.grid.graph import permutation

    for n in (0, 1, 2, 3, 10, 1000, 100_003):
        ours, theirs = rng_for((n,)), rng_for((n,))
        assert np.array_equal(permutation(ours, n), theirs.permutation(n)), n
        assert ours.integers(0, 2**40) == theirs.integers(0, 2**40), n
