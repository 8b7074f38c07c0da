"""A Tiled map file in a recipe's folder read as a Level, every file it uses read once and
recorded by its digest (the cache key of the stage that read it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipeline.level.art import ArtTileset
from pipeline.fsio import read_regular
from pipeline.level import Level
from pipeline.tiled.as_level.art import keep_art
from pipeline.tiled.as_level.objects import level_objects
from pipeline.tiled.as_level.symbols import to_level
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.files import read_tiled_map
from pipeline.tiled.read.model import tileset_of


@dataclass
class MapFile:
    """A Tiled map read as a Level, for stages that read maps (load.tmx, place.prefabs)."""

    level: Level
    filled: np.ndarray  # (h, w) bool: False where no (chosen) layer has a tile
    files: dict[str, str]  # every file read, relative to the recipe folder -> sha256
    dropped: list[str] = field(default_factory=list)  # properties of types a Level cannot hold (class)
    rotated: list[str] = field(default_factory=list)  # rotated objects, loaded upright with a `rotation` property
    # Tilesets whose tiles are not kept as art (no tilesheet, another tile size, an unreadable
    # image): their cells are drawn with the pack's tile for their symbol.
    not_drawn: list[str] = field(default_factory=list)
    # Every tileset the art uses, tile objects' too (an Art keeps only its cells').
    art_tilesets: list[ArtTileset] = field(default_factory=list)


def read_map_file(recipe_dir: Path, relative: str, layer: str | None = None, empty: str = "wall", symbols: str = "property") -> MapFile:
    """Read the Tiled map `relative` (to `recipe_dir`) and the tilesets it uses, as load.tmx
    does; a problem is a MapFileError, without the file's name (the caller puts it in front)."""
    files = _RecipeFiles(recipe_dir)
    parsed = read_tiled_map(files.read, relative)
    objects, rotated = level_objects(parsed.objects, parsed.tile_width, parsed.tile_height)
    level, filled, chosen = to_level(parsed, objects, layer, empty, symbols)
    tilesets = sorted(parsed.tilesets, key=lambda t: t.firstgid)
    for obj in parsed.objects:
        if obj.gid and tileset_of(tilesets, obj.gid) is None:
            raise MapFileError(f"{obj.where}: its tile gid {obj.gid} is in none of the map's tilesets")
    not_drawn, kept = keep_art(files.read, parsed, tilesets, chosen, level)
    return MapFile(level, filled, files.digests, parsed.dropped, rotated, not_drawn, kept)


class _RecipeFiles:
    """Reads files under the recipe's folder, each as a regular file (a FIFO would hang the
    recipe's loading), keeping every one's digest."""

    def __init__(self, recipe_dir: Path):
        self.recipe_dir = recipe_dir
        self.digests: dict[str, str] = {}

    def read(self, relative: str, what: str) -> bytes:
        path = self.recipe_dir / relative
        try:
            data = read_regular(path)
        except OSError as exc:
            raise MapFileError(f"cannot read {what} {path} ({exc.strerror or exc})") from None
        self.digests[relative] = hashlib.sha256(data).hexdigest()
        return data
