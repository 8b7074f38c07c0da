"""Clean previews (`preview_style = "clean"`): only what the game draws, the tiles and the tile
objects, for store pages and level-select thumbnails; the debug style marks the other objects."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

import pipeline
from conftest import TILESETS


def _pixels(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGBA"))


def _placed() -> pipeline.Level:
    dungeon = pipeline.generate("dungeon.bsp", seed=4, size=(41, 31))
    placed = pipeline.generate("place.spawn_exit", seed=4, inputs=dungeon)
    return pipeline.generate("place.items", seed=4, inputs=placed, type="chest", count=3, tile="chest")


def test_a_clean_preview_draws_the_tiles_and_tile_objects_and_no_marker(tmp_path: Path) -> None:
    level = _placed()
    assert any(o.tile for o in level.objects) and any(not o.tile for o in level.objects)
    tileset = str(TILESETS / "dungeon.toml")
    pipeline.export("export.tmx", level, tmp_path / "clean", tileset=tileset, preview_style="clean")
    pipeline.export("export.tmx", level, tmp_path / "debug", tileset=tileset)
    # What a game draws: the same map with only its tile objects, which no marker goes with.
    tiles_only = replace(level, objects=[o for o in level.objects if o.tile])
    pipeline.export("export.tmx", tiles_only, tmp_path / "tiles_only", tileset=tileset)
    clean = _pixels(tmp_path / "clean" / "previews" / "map.png")
    assert np.array_equal(clean, _pixels(tmp_path / "tiles_only" / "previews" / "map.png"))
    assert not np.array_equal(clean, _pixels(tmp_path / "debug" / "previews" / "map.png"))
    # The map files are the same either way: the style is the pictures' alone.
    assert (tmp_path / "clean" / "map.tmx").read_bytes() == (tmp_path / "debug" / "map.tmx").read_bytes()
