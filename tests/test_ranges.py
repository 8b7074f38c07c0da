"""Ranges: `cells = [[5, 9], [4, 8]]`, `size = [[20, 30], 16]`, drawn per map and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pipeline
from conftest import pcg, tree_digests, write_recipe
from pipeline.errors import RecipeError
from pipeline.ranges import draw, draw_size
from pipeline.recipe.load import load_recipe
from pipeline.seeds import rng_for

RECIPE = """\
[pack]
name = "ranged"
seed = 7
maps = 8

[stage.maze]
use = "maze.backtracker"
cells = {cells}

[stage.cave]
use = "dungeon.drunkard_walk"
size = [[20, 30], 16]

[stage.maze_png]
use = "export.png"
input = "maze"
scale = 1
dir = "mazes"

[stage.cave_png]
use = "export.png"
input = "cave"
scale = 1
dir = "caves"
"""


def build(project: Path, cells: str = "[[5, 9], [4, 8]]", out: str = "exports") -> dict:
    path = write_recipe(project, "ranged", RECIPE.format(cells=cells))
    result = pipeline.build(path, jobs=1, out=out)
    assert result.ok, result.failures
    return json.loads((project / out / "ranged" / "manifest.json").read_text())


def png_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def test_sizes_are_drawn_per_map_within_bounds_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = build(tmp_path)
    maze = [(m["stages"]["maze"]["stats"]["cells_w"], m["stages"]["maze"]["stats"]["cells_h"]) for m in manifest["maps"]]
    cave = [(m["stages"]["cave"]["stats"]["size_w"], m["stages"]["cave"]["stats"]["size_h"]) for m in manifest["maps"]]
    assert all(5 <= w <= 9 and 4 <= h <= 8 for w, h in maze) and len(set(maze)) > 1
    assert all(20 <= w <= 30 and h == 16 for w, h in cave) and len({w for w, _ in cave}) > 1
    for m, (w, h), (cw, ch) in zip(manifest["maps"], maze, cave):
        # The maps really are that size: a maze of w x h cells is (2w+1) x (2h+1) tiles.
        pack = tmp_path / "exports" / "ranged"
        assert png_size(pack / m["stages"]["maze_png"]["files"][0]) == (2 * w + 1, 2 * h + 1)
        assert png_size(pack / m["stages"]["cave_png"]["files"][0]) == (cw, ch)


def test_drawn_sizes_are_deterministic_and_in_pcg_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    build(tmp_path)
    build(tmp_path, out="again")
    assert tree_digests(tmp_path / "again" / "ranged") == tree_digests(tmp_path / "exports" / "ranged")
    stats = pcg("stats", "recipes/ranged.toml", "--format", "csv", cwd=tmp_path).stdout
    assert "maze,maze.backtracker,cells_w," in stats and "cave,dungeon.drunkard_walk,size_w," in stats


def test_a_fixed_size_records_nothing_and_draws_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = build(tmp_path, cells="[6, 5]")
    assert all("cells_w" not in m["stages"]["maze"]["stats"] for m in manifest["maps"])
    rng, untouched = rng_for((1, 2, 3)), rng_for((1, 2, 3))
    assert draw_size((6, 5), rng) == (6, 5) and rng.random() == untouched.random()
    assert draw((4, 4), rng_for((1,))) == 4


def test_a_range_draws_every_value_it_allows() -> None:
    rng = rng_for((5,))
    seen = {draw((2, 5), rng) for _ in range(200)}
    assert seen == {2, 3, 4, 5}
    assert isinstance(draw((2, 5), rng), int) and not isinstance(draw((2, 5), rng), np.integer)


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        ("[[9, 5], 4]", "stage.maze.cells.0: must be [min, max] with min <= max (got [9, 5])"),
        ("[9, [4, 6, 8]]", "stage.maze.cells.1: must be a whole number or [min, max] (got [4, 6, 8])"),
        ('[9, "4-8"]', "stage.maze.cells.1: must be a whole number or [min, max] (got '4-8')"),
        ("[[0, 5], 4]", "stage.maze.cells.0: min must be > 0 (got 0)"),
        ("[[5, 5000], 4]", "stage.maze.cells.0: max must be <= 4096 (got 5000)"),
    ],
)
def test_a_bad_range_is_one_error_naming_file_stage_and_key(tmp_path: Path, cells: str, expected: str) -> None:
    path = tmp_path / "recipes" / "ranged.toml"
    write_recipe(tmp_path, "ranged", RECIPE.format(cells=cells))
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    assert caught.value.problems == [f"{path}: {expected}"]


def test_rooms_and_mazes_draws_odd_sizes_and_rewrite_draws_its_grid(tmp_path: Path) -> None:
    from pipeline.stages.dungeon.rooms_and_mazes import RoomsAndMazes
    from pipeline.stages.rewrite import Rewrite

    dungeon = RoomsAndMazes.model_validate({"size": ((21, 31), 21), "room_attempts": 20})
    widths = set()
    for i in range(12):
        level = dungeon.run([], rng_for((i, 1)))
        h, w = level.tiles.shape
        assert w % 2 == 1 and 21 <= w <= 31 and h == 21
        assert (level.properties["size_w"], level.properties["size_h"]) == (w, h)
        widths.add(w)
    assert len(widths) > 1
    grow = Rewrite.model_validate({"size": (8, (5, 9)), "values": "BW", "origin": True, "program": {"markov": [{"one": "WB=WW"}]}})
    level = grow.run([], rng_for((3,)))
    assert level.tiles.shape == (level.properties["size_h"], 8) and 5 <= level.properties["size_h"] <= 9
    assert "size_h" in grow.added_stats() and "size_h" not in Rewrite.model_validate({"size": (8, 9), "values": "BW", "program": {"markov": [{"one": "WB=WW"}]}}).added_stats()
