"""A pack's diversity: each map's distance to its nearest neighbour, by tiles and by the way from
spawn to exit, from the library and through `pcg stats`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.diversity import diversity, nearest, path_distances, tile_distances
from pipeline.level import Level, MapObject
from pipeline.stages.maze.block import MAZE_ALPHABET
from tests.conftest import pcg, recipe_text, write_recipe


def open_room(h: int, w: int, spawn: tuple[int, int], exit_: tuple[int, int]) -> Level:
    tiles = np.ones((h, w), dtype=np.uint8)
    objects = [MapObject("spawn", "spawn", spawn[0] + 0.5, spawn[1] + 0.5), MapObject("exit", "exit", exit_[0] + 0.5, exit_[1] + 0.5)]
    return Level(tiles=tiles, alphabet=MAZE_ALPHABET, objects=objects)


def test_tile_distance_is_the_share_of_differing_tiles_by_symbol_name() -> None:
    a = open_room(4, 5, (0, 0), (4, 3))
    b = open_room(4, 5, (0, 0), (4, 3))
    b.tiles[0, :] = 0  # 5 of 20 tiles become wall
    # The same symbols in another order of the alphabet: compared by name, not by index.
    c = Level(tiles=1 - b.tiles, alphabet=(MAZE_ALPHABET[1], MAZE_ALPHABET[0]), objects=b.objects)
    d = tile_distances([a, b, c])
    assert d[0, 1] == pytest.approx(5 / 20) and d[1, 2] == pytest.approx(0.0) and d[0, 0] == 0.0
    # A smaller map: the tiles it does not cover count as different.
    small = Level(tiles=np.ones((4, 4), dtype=np.uint8), alphabet=MAZE_ALPHABET)
    assert tile_distances([a, small])[0, 1] == pytest.approx(4 / 20)


def test_path_distance_compares_the_ways_from_spawn_to_exit() -> None:
    straight = open_room(3, 9, (0, 1), (8, 1))
    same = open_room(3, 9, (0, 1), (8, 1))
    same.tiles[0, 3] = 0  # off the way: the way is as it was
    other = open_room(3, 9, (0, 0), (8, 0))  # along the top row: a way sharing no tile with the first
    d = path_distances([straight, same, other])
    assert d is not None
    assert d[0, 1] == pytest.approx(0.0) and d[0, 2] == pytest.approx(1.0)
    assert path_distances([straight, Level(tiles=straight.tiles, alphabet=MAZE_ALPHABET)]) is None  # no spawn: no path measure


def test_nearest_and_the_share_of_distinct_maps() -> None:
    a = open_room(4, 5, (0, 0), (4, 3))
    twin = open_room(4, 5, (0, 0), (4, 3))
    far = Level(tiles=np.zeros((4, 5), dtype=np.uint8), alphabet=MAZE_ALPHABET, objects=a.objects)
    spreads = {s.measure: s for s in diversity([a, twin, far], threshold=0.5)}
    assert spreads["tiles"].nearest == (0.0, 0.0, 1.0)
    assert spreads["tiles"].distinct == pytest.approx(1 / 3)
    assert nearest(np.array([[0.0, 0.3], [0.3, 0.0]])).tolist() == [0.3, 0.3]


def test_pcg_stats_prints_the_packs_diversity_and_json_carries_it(tmp_path: Path) -> None:
    write_recipe(tmp_path, "twins", """
[pack]
name = "twins"
seed = 3
maps = 4

[stage.maze]
use = "maze.backtracker"
cells = [8, 8]

[stage.placed]
use = "place.spawn_exit"
input = "maze"

[stage.tmx]
use = "export.tmx"
input = "placed"
""")
    table = pcg("stats", "recipes/twins.toml", cwd=tmp_path).stdout
    assert "diversity" in table and "tiles" in table and "path" in table
    doc = json.loads(pcg("stats", "recipes/twins.toml", "--format", "json", cwd=tmp_path).stdout)
    placed = next(s for s in doc["stages"] if s["stage"] == "placed")
    tiles = placed["diversity"]["tiles"]
    assert len(tiles["nearest"]) == 4 and tiles["threshold"] == 0.1
    assert tiles["min"] <= tiles["median"] <= tiles["max"] and 0 < tiles["distinct"] <= 1
    assert placed["playability"] == {"solvable": 1.0, "maps": 4}
    assert "placed: 4 of 4 maps can be finished" in table


def test_the_build_records_the_measures_in_the_manifest_and_the_contact_sheet(tmp_path: Path) -> None:
    """A build measures its pack in a worker and records it; `pcg stats` then reads the manifest,
    so the measures outlive the build cache; the contact sheet's second line shows them."""
    from PIL import Image

    from pipeline.building.contact_sheet import measures_line
    from pipeline.building.manifest import Manifest
    from pipeline.recipe.load import load_recipe

    text = """
[pack]
name = "measured"
seed = 5
maps = 5

[stage.maze]
use = "maze.backtracker"
cells = [6, 6]

[stage.placed]
use = "place.spawn_exit"
input = "maze"

[stage.tmx]
use = "export.tmx"
input = "placed"
"""
    write_recipe(tmp_path, "measured", text)
    pcg("build", "recipes", "-j", "2", "-q", cwd=tmp_path)
    pack = tmp_path / "exports" / "measured"
    manifest = json.loads((pack / "manifest.json").read_text())
    before = json.loads(pcg("stats", "measured", "--format", "json", cwd=tmp_path).stdout)
    placed = next(s for s in before["stages"] if s["stage"] == "placed")
    assert manifest["measures"]["placed"] == {"diversity": placed["diversity"], "playability": placed["playability"]}
    assert placed["playability"] == {"solvable": 1.0, "maps": 5} and len(placed["diversity"]["tiles"]["nearest"]) == 5
    pcg("clean", cwd=tmp_path)  # the cache goes; the manifest still has them
    assert json.loads(pcg("stats", "measured", "--format", "json", cwd=tmp_path).stdout) == before
    # Another threshold than the one recorded: measured from the cache, which is gone.
    out = pcg("stats", "measured", "--threshold", "0.5", cwd=tmp_path).stdout
    assert "is no longer in the build cache" in out
    line = measures_line(load_recipe(tmp_path / "recipes" / "measured.toml"), Manifest.from_json(manifest))  # type: ignore[arg-type]
    tiles = manifest["measures"]["placed"]["diversity"]["tiles"]
    assert line is not None and line.startswith(f"tiles: nearest map {tiles['min']:.3f}-{tiles['max']:.3f}") and line.endswith("5 of 5 can be finished")
    with Image.open(pack / "contact_sheet.png") as sheet:
        assert sheet.height > 20 + 8 + 12 * 2  # title, measures, a row


def test_a_measure_that_breaks_is_a_warning_and_the_pack_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import pipeline.building.measures
    from pipeline.commands.app import app

    write_recipe(tmp_path, "small", recipe_text(maps=3))
    monkeypatch.chdir(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a stage's odd Level")

    monkeypatch.setattr(pipeline.building.measures, "measure_pack", broken)
    result = CliRunner().invoke(app, ["build", "recipes", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "the pack's diversity and playability were not measured (ValueError: a stage's odd Level)" in result.output
    manifest = json.loads((tmp_path / "exports" / "small" / "manifest.json").read_text())
    assert len(manifest["maps"]) == 3 and "measures" not in manifest


def test_a_level_the_cache_lost_is_made_again_for_the_measures_only_from_its_own_recipe(tmp_path: Path) -> None:
    """Maps a --map build left on an earlier recipe are not made again with this one's stages
    under their keys (that would store wrong Levels in the cache): they leave the measures out."""
    import shutil

    write_recipe(tmp_path, "small", recipe_text(maps=4, cells=(8, 8)))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    write_recipe(tmp_path, "small", recipe_text(maps=4, cells=(9, 9)))
    pcg("build", "recipes", "--map", "0", "-q", cwd=tmp_path)
    shutil.rmtree(tmp_path / ".pcg-cache")
    pcg("build", "recipes", "--map", "2", "-q", cwd=tmp_path)
    write_recipe(tmp_path, "small", recipe_text(maps=4, cells=(8, 8)))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    write_recipe(tmp_path, "small", recipe_text(maps=4, cells=(8, 8)).replace("tile_size = 8", "tile_size = 16"))
    pcg("build", "recipes", "-q", cwd=tmp_path)  # every map exported again, from the Levels in the cache
    tmx = (tmp_path / "exports" / "small" / "map_001.tmx").read_text()
    assert 'width="17" height="17"' in tmx


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 14), st.integers(1, 14), st.integers(0, 2**32 - 1), st.floats(0.3, 0.9))
def test_the_uncompiled_search_finds_the_compiled_searchs_way(h: int, w: int, seed: int, open_share: float) -> None:
    """A small pack's measures search without numba: the same distances, and the same way traced."""
    from pipeline.grid.bfs import distances, shortest_way

    rng = np.random.default_rng(seed)
    walk = rng.random((h, w)) < open_share
    start, goal = (int(x) for x in rng.integers(0, h * w, 2))
    assert (distances(walk, [start], small=True) == distances(walk, [start])).all()
    compiled, small = shortest_way(walk, start, goal), shortest_way(walk, start, goal, small=True)
    assert (compiled is None) == (small is None)
    if compiled is not None:
        assert compiled.tolist() == small.tolist()


def test_the_uncompiled_search_runs_after_a_compiled_caller_swapped_the_kernel_in() -> None:
    """A compiled caller of `bfs` (the diameter search) puts numba's dispatcher in its module's
    place: the search without numba still finds its Python code there."""
    from pipeline.grid.bfs import diameter_ends, distances

    walk = np.ones((4, 6), dtype=bool)
    diameter_ends(walk, 0, 10)
    assert (distances(walk, [0], small=True) == distances(walk, [0])).all()
