"""Blob maps and the flood-it solvers, against a brute-force search over real board states."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pipeline.level import Level
from pipeline.seeds import rng_for
from pipeline.stages.dungeon.blob_map import BlobMap, blob_alphabet
from pipeline.stages.puzzle.flood_it import Board, FloodIt


def paint(board: tuple[tuple[int, ...], ...], colour: int) -> tuple[tuple[int, ...], ...]:
    grid = [list(row) for row in board]
    old = grid[0][0]
    stack, seen = [(0, 0)], {(0, 0)}
    while stack:
        y, x = stack.pop()
        grid[y][x] = colour
        for ny, nx in ((y - 1, x), (y + 1, x), (y, x - 1), (y, x + 1)):
            if 0 <= ny < len(grid) and 0 <= nx < len(grid[0]) and (ny, nx) not in seen and board[ny][nx] == old:
                seen.add((ny, nx))
                stack.append((ny, nx))
    return tuple(tuple(row) for row in grid)


def brute_force_moves(tiles: np.ndarray) -> int:
    start = tuple(tuple(int(v) for v in row) for row in tiles)
    colours = sorted({v for row in start for v in row})
    seen = {start: 0}
    queue = deque([start])
    while queue:
        board = queue.popleft()
        if len({v for row in board for v in row}) == 1:
            return seen[board]
        for c in colours:
            if c != board[0][0]:
                nxt = paint(board, c)
                if nxt not in seen:
                    seen[nxt] = seen[board] + 1
                    queue.append(nxt)
    raise AssertionError("unreachable")


boards = arrays(np.uint8, st.tuples(st.integers(1, 4), st.integers(1, 5)), elements=st.integers(0, 3))


@settings(max_examples=150, deadline=None)
@given(boards)
def test_optimal_matches_brute_force_and_greedy_is_never_better(tiles: np.ndarray) -> None:
    board = Board.from_tiles(tiles)
    best = brute_force_moves(tiles)
    greedy = board.greedy_moves()  # finishes: it returns
    assert board.optimal_moves(greedy, 10**6) == best <= greedy


def test_the_stage_records_the_difficulty() -> None:
    blobs = BlobMap(size=(10, 10), colors=4, dispersion=0.3).run([], rng_for((7,)))
    props = FloodIt().run([blobs], rng_for((8,))).properties
    assert props["difficulty"] == props["moves_optimal"] <= props["moves_greedy"]
    too_big = FloodIt(optimal_max_patches=0).run([blobs], rng_for((8,))).properties
    assert "moves_optimal" not in too_big and too_big["difficulty"] == too_big["moves_greedy"]


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(2, 30), st.integers(2, 12), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_blob_maps_fill_the_board_with_every_colour(w: int, h: int, colors: int, dispersion: float, seed: int) -> None:
    out = BlobMap(size=(w, h), colors=colors, dispersion=dispersion).run([], rng_for((seed,)))
    assert out.tiles.shape == (h, w)
    assert out.tiles.max() < colors and len(out.alphabet) == colors
    if w * h >= colors:
        assert len(np.unique(out.tiles)) == colors


def test_dispersion_fragments_the_board() -> None:
    def patches(d: float) -> float:
        return float(np.mean([Board.from_tiles(BlobMap(size=(20, 20), dispersion=d).run([], rng_for((s,))).tiles).count for s in range(5)]))

    assert patches(0.0) < patches(0.4) < patches(1.0)


def test_greedy_on_a_known_board() -> None:
    tiles = np.array([[0, 1, 2], [1, 1, 2], [2, 2, 2]], dtype=np.uint8)
    level = Level(tiles=tiles, alphabet=blob_alphabet(3))
    props = FloodIt().run([level], rng_for((0,))).properties
    assert props["moves_greedy"] == props["moves_optimal"] == 2


FILTERED = """\
[pack]
name = "hard"
seed = 9
maps = 6

[stage.board]
use = "dungeon.blob_map"
size = [8, 8]
colors = 4
dispersion = 0.6

[stage.rated]
use = "puzzle.flood_it"
input = "board"

[stage.keep]
use = "filter"
input = "rated"
where = "{where}"
attempts = {attempts}

[stage.png]
use = "export.png"
input = "keep"
"""


def test_filter_makes_rejected_maps_again_reproducibly(tmp_path: Path) -> None:
    import json

    from conftest import pcg, tree_digests, write_recipe

    write_recipe(tmp_path, "hard", FILTERED.format(where="difficulty >= 7 and patches > 10", attempts=200))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    manifest = json.loads((tmp_path / "exports" / "hard" / "manifest.json").read_text())
    assert all(m["stats"]["difficulty"] >= 7 and m["stats"]["patches"] > 10 for m in manifest["maps"])
    attempts = [m.get("attempt", 0) for m in manifest["maps"]]
    assert any(attempts), "the test should make some map again"
    for m in manifest["maps"]:
        assert all(len(s["seed"]) == (4 if m.get("attempt") else 3) for s in m["stages"].values())
    assert "Nothing to do" in pcg("build", "recipes", cwd=tmp_path).stdout
    assert "OK" in pcg("verify", "exports/hard", cwd=tmp_path).stdout
    # The same pack from scratch with two workers: byte for byte.
    first = tree_digests(tmp_path / "exports")
    pcg("build", "recipes", "-q", "-j", "2", "--force", "--out", "again", "--cache", ".cache2", cwd=tmp_path)
    again = tree_digests(tmp_path / "again")
    assert again == first


def test_a_filter_nothing_passes_fails_the_map_clearly(tmp_path: Path) -> None:
    from conftest import pcg, write_recipe

    write_recipe(tmp_path, "hard", FILTERED.format(where="difficulty > 1000", attempts=3))
    result = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "keep" in result.stderr and "no attempt of 3 passed" in result.stderr


@pytest.mark.parametrize(
    ("where", "expected"),
    [("difficulty >=", "cannot read"), ("difficulty + 1 > 3", "is not a property name or a constant"), ("difficulty", "write comparisons")],
)
def test_filter_rejects_unreadable_tests(where: str, expected: str) -> None:
    from pipeline.stages.filter import Filter

    with pytest.raises(ValueError, match=expected):
        Filter(where=where)


def test_order_by_lists_the_maps_in_order_in_levels_json(tmp_path: Path) -> None:
    import json

    from conftest import pcg, write_recipe

    recipe = FILTERED.format(where="difficulty >= 1", attempts=1).replace('maps = 6\n', 'maps = 6\norder_by = "-difficulty"\n')
    write_recipe(tmp_path, "hard", recipe)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    index = json.loads((tmp_path / "exports" / "hard" / "levels.json").read_text())
    manifest = json.loads((tmp_path / "exports" / "hard" / "manifest.json").read_text())
    difficulty = {m["index"]: m["stats"]["difficulty"] for m in manifest["maps"]}
    order = [level["map"] for level in index["levels"]]
    assert sorted(order) == list(range(6))
    assert order == sorted(range(6), key=lambda i: (-difficulty[i], i))
    assert all(level["difficulty"] == difficulty[level["map"]] for level in index["levels"])
    assert index["levels"][0]["files"] == [f"colour_maps/{index['levels'][0]['stem']}.png"]
    # Without order_by the index goes.
    write_recipe(tmp_path, "hard", recipe.replace('order_by = "-difficulty"\n', ""))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert not (tmp_path / "exports" / "hard" / "levels.json").exists()
