"""What hand-drawn art on a Level is: the tilesets it is drawn with, its layers of Tiled gids, and
the symbol each cell was drawn for (pipeline.drawn_art says what the art means and what stages
and the build do with it).

Data alone, apart from pipeline.drawn_art's operations on Levels, so that pipeline.level (a
Level and its tile objects carry art) imports this module and this module imports neither.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

# Tiled's flip bits: horizontal, vertical, diagonal (the last two of the four flag bits; bit 28,
# a hexagonal map's rotation, means nothing on the orthogonal maps load.tmx reads).
FLIP_H = 0x80000000
FLIP_V = 0x40000000
FLIP_D = 0x20000000
FLIPS = FLIP_H | FLIP_V | FLIP_D
GID_MASK = 0x0FFFFFFF


@dataclass(frozen=True)
class ArtTileset:
    """A tileset drawn art uses: a tilesheet image cut into a grid, as Tiled describes it.

    Two are the same tileset when their `key` is: the image's bytes, the grid and the tiles'
    properties all alike, wherever the files lay (two prefabs using one .tsx share it)."""

    key: str  # sha256 of everything below but `source`
    name: str
    source: str  # the image as read, relative to the recipe folder (said in messages)
    image: bytes = field(repr=False)
    image_size: tuple[int, int]  # (width, height) in pixels
    tile_width: int
    tile_height: int
    margin: int
    spacing: int
    columns: int
    tilecount: int
    # The tiles' own properties as Tiled typed them, (tile id, ((name, value), ...)), by id. A
    # value is a pipeline.level PropertyValue, left unnamed here: pipeline.level imports this module.
    tile_properties: tuple[tuple[int, tuple[tuple[str, object], ...]], ...] = ()

    @property
    def extension(self) -> str:
        """The image's file extension (`.png`), kept when it is copied into a pack."""
        match = re.search(r"\.[A-Za-z0-9]{1,5}$", self.source)
        return match.group().lower() if match else ".png"

    def tiles(self) -> np.ndarray:
        """(tilecount, tile_height, tile_width, 4) RGBA pixels of every tile, for previews."""
        return _cut(self.image, self.tile_width, self.tile_height, self.margin, self.spacing, self.columns, self.tilecount)


def art_tileset(name: str, source: str, image: bytes, image_size: tuple[int, int], tile_width: int, tile_height: int, margin: int,
                spacing: int, columns: int, tilecount: int, tile_properties: Mapping[int, Mapping[str, object]]) -> ArtTileset:
    """An ArtTileset with its identity `key` computed."""
    props = tuple((tid, tuple(sorted(p.items()))) for tid, p in sorted(tile_properties.items()) if p)
    digest = hashlib.sha256()
    digest.update(hashlib.sha256(image).digest())
    # repr of a value keeps its type apart (1 vs 1.0 vs "1", a Color vs its string)
    digest.update(repr((name, image_size, tile_width, tile_height, margin, spacing, columns, tilecount,
                        [(tid, [(k, type(v).__name__, v) for k, v in p]) for tid, p in props])).encode("utf-8"))
    made = ArtTileset(digest.hexdigest(), name, source, image, image_size, tile_width, tile_height, margin, spacing, columns, tilecount, props)
    if len(_MADE) >= 256:
        _MADE.clear()
    return _MADE.setdefault(made.key, made)


# The tilesets this process read, by key: where drawn_art.tilesets_of finds the tileset of a tile
# object whose map's art holds no cell of it (pipeline.export, given a Level without its recipe).
_MADE: dict[str, ArtTileset] = {}


def read_tileset(key: str) -> ArtTileset | None:
    """The tileset of this `key` if this process read it (`art_tileset`), else None."""
    return _MADE.get(key)


@dataclass(frozen=True)
class ArtTile:
    """The tile a tile object is drawn with: tile `tile` of the art tileset whose key is
    `tileset`, with Tiled's horizontal and vertical flip bits (`flips`)."""

    tileset: str
    tile: int
    flips: int = 0


@dataclass
class Art:
    """Drawn art over a Level's grid (pipeline.drawn_art's docstring says how it is read)."""

    tilesets: tuple[ArtTileset, ...]
    layers: dict[str, np.ndarray]  # name -> (h, w) uint32 gids with flip bits, 0 = nothing drawn
    drawn_for: np.ndarray  # (h, w) uint8: index into `symbols` of the symbol each cell was drawn for
    symbols: tuple[str, ...]  # symbol names

    def firstgids(self) -> list[int]:
        out, first = [], 1
        for ts in self.tilesets:
            out.append(first)
            first += ts.tilecount
        return out

    @property
    def shape(self) -> tuple[int, int]:
        return self.drawn_for.shape  # type: ignore[return-value]

    def drawn(self) -> np.ndarray:
        """(h, w) bool: cells with art in some layer."""
        out = np.zeros(self.shape, dtype=bool)
        for gids in self.layers.values():
            out |= gids != 0
        return out

    def firstgid_of(self, key: str) -> int | None:
        for first, ts in zip(self.firstgids(), self.tilesets):
            if ts.key == key:
                return first
        return None


_CUT: dict[tuple[str, int], np.ndarray] = {}


def _cut(image: bytes, tw: int, th: int, margin: int, spacing: int, columns: int, count: int) -> np.ndarray:
    key = (hashlib.sha256(image).hexdigest(), tw * 100003 + th)
    if key not in _CUT:
        import io

        from PIL import Image

        if len(_CUT) >= 16:
            _CUT.clear()
        with Image.open(io.BytesIO(image)) as opened:
            pixels = np.asarray(opened.convert("RGBA"))
        out = np.zeros((count, th, tw, 4), dtype=np.uint8)
        for k in range(count):  # per tile, not per cell: a tileset has a few hundred at most
            y = margin + (k // columns) * (th + spacing)
            x = margin + (k % columns) * (tw + spacing)
            piece = pixels[y : y + th, x : x + tw]
            out[k, : piece.shape[0], : piece.shape[1]] = piece
        _CUT[key] = out
    return _CUT[key]

