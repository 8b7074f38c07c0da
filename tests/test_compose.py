"""Fan-in: `compose.overlay` paints one Level onto another; a maze carved into the rock around
rooms (`carve_on = ["wall"]`, `margin = 1`) composes with them into one connected dungeon."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage

from conftest import RECIPES, TILESETS, pcg
from pipeline.building.cache import LevelCache
from pipeline.errors import PipelineError
from pipeline.level import Level, MapObject, Symbol
from pipeline.registry import get
from pipeline.seeds import rng_for
from pipeline.stages.maze.block import MAZE_ALPHABET

DUNGEON = (Symbol("#", "wall", "#000000"), Symbol(".", "floor", "#ffffff"), Symbol("B", "door", "#ab5236"))


def overlay(base: Level, top: Level, **params: object) -> Level:
    return get("compose.overlay").model_validate(params).run([base, top], rng_for((0,)))


def test_overlay_paints_all_but_the_tops_fill_and_merges_symbols_by_name() -> None:
    base = Level(np.array([[0, 1, 0], [1, 1, 0]], dtype=np.uint8), MAZE_ALPHABET, objects=[MapObject("a", "x", 0, 0)])
    top = Level(
        np.array([[2, 0, 1], [0, 0, 2]], dtype=np.uint8), DUNGEON, layers={"room": np.ones((2, 3), np.int32)},
        objects=[MapObject("b", "y", 1, 1)], properties={"rooms": 1},
    )
    out = overlay(base, top)
    assert [s.name for s in out.alphabet] == ["wall", "floor", "door"]
    # Door's char "B" is the base's wall char: it gets a spare one, so chars stay unique.
    assert out.alphabet[2].char != "B" and len({s.char for s in out.alphabet}) == 3
    assert out.tiles.tolist() == [[2, 1, 1], [1, 1, 2]]
    assert [o.name for o in out.objects] == ["a", "b"] and "room" in out.layers
    assert out.properties["overlay_tiles"] == 3 and out.properties["rooms"] == 1


def test_overlay_where_and_symbols_limit_what_is_painted() -> None:
    base = Level(np.array([[0, 1, 0, 1]], dtype=np.uint8), MAZE_ALPHABET)
    top = Level(np.array([[1, 1, 2, 2]], dtype=np.uint8), DUNGEON)
    assert overlay(base, top, where=["wall"]).tiles.tolist() == [[1, 1, 2, 1]]
    assert overlay(base, top, symbols=["door"]).tiles.tolist() == [[0, 1, 2, 2]]
    with pytest.raises(PipelineError, match="symbols: no symbol 'lava'"):
        overlay(base, top, symbols=["lava"])
    with pytest.raises(PipelineError, match="overlay needs one size"):
        overlay(base, Level(np.zeros((2, 2), np.uint8), DUNGEON))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["maze.backtracker", "maze.kruskal", "maze.wilson"]))
def test_a_maze_in_the_rock_keeps_a_wall_around_the_rooms_and_is_a_spanning_tree_per_part(seed: int, kind: str) -> None:
    rooms = get("dungeon.rooms_and_mazes")(size=(31, 23), maze="none", room_attempts=30, room_size=(3, 7)).run([], rng_for((seed,)))
    maze = get(kind)(carve_on=("wall",), margin=1).run([rooms], rng_for((seed, 1)))
    passages = maze.tiles == 1
    outside = rooms.tiles != 0
    # No passage tile touches (8 ways) anything outside the rock.
    near = ndimage.binary_dilation(outside, structure=np.ones((3, 3), bool))
    assert not (passages & near).any()
    # One perfect maze per connected part of the allowed cells: passages = cells - parts.
    cells = passages[1::2, 1::2]
    _, parts = ndimage.label(cells)
    assert int(passages.sum()) - int(cells.sum()) == int(cells.sum()) - parts
    _, carved_parts = ndimage.label(passages)
    assert carved_parts == parts


def test_the_classic_dungeon_example_is_one_connected_area_with_its_rooms(tmp_path: Path) -> None:
    shutil.copytree(TILESETS, tmp_path / "tilesets")
    (tmp_path / "recipes").mkdir()
    shutil.copy(RECIPES / "classic_dungeon.toml", tmp_path / "recipes")
    pcg("build", "recipes", "-q", cwd=tmp_path)
    manifest = json.loads((tmp_path / "exports" / "classic_dungeon" / "manifest.json").read_text())
    cache = LevelCache(tmp_path / ".pcg-cache")
    for entry in manifest["maps"]:
        rooms = cache.load(entry["stages"]["rooms"]["key"])
        final = cache.load(entry["stages"]["placed"]["key"])
        assert rooms is not None and final is not None
        walk = final.tiles != final.index_of("wall")
        assert ndimage.label(walk)[1] == 1  # one connected walkable area
        room_floor = rooms.tiles == rooms.index_of("floor")
        assert (final.tiles[room_floor] == final.index_of("floor")).all()  # every room is still there
        assert final.properties["overlay_tiles"] > 0 and entry["stats"]
