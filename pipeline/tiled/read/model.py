"""A Tiled map as read, whichever format it came in: its size, tilesets, tile layers (gids as
drawn, flip bits and all), our exporters' data layers and its objects, in Tiled's units (pixels)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from pipeline.tiled.read.layer_data import GID_MASK
from pipeline.tiled.read.properties import Properties


@dataclass
class Tileset:
    """A tileset, embedded or external (then read from its own file)."""

    firstgid: int
    name: str
    tilecount: int | None
    tiles: dict[int, Properties] = field(default_factory=dict)  # local id -> typed properties
    classes: dict[int, str] = field(default_factory=dict)  # local id -> its class (Tiled 1.9+) or type
    # An image collection (a picture per tile, no tilesheet): its tiles are the ids it lists, which
    # may have gaps (tiles deleted) and run past `tilecount`, the number of tiles.
    collection: bool = False
    # The tilesheet: its image relative to the folder the map was read from ("": none), the size
    # the tileset gives it, and the grid it is cut into (all zero without an image).
    image: str = ""
    image_size: tuple[int, int] = (0, 0)
    tile_size: tuple[int, int] = (0, 0)
    margin: int = 0
    spacing: int = 0
    columns: int = 0


# Reads the external tileset `source` (relative to the map's folder, the first argument) with
# its firstgid from the map: the formats' parsers call it, the reader's entry point provides it.
ExternalTileset = Callable[[str, str, int], Tileset]


@dataclass
class TileLayer:
    """A tile layer, groups flattened: its place in the list is its place in the drawing order."""

    name: str
    drawn: np.ndarray  # (h, w) uint32 gids as in the file, flip bits and all
    visible: bool = True

    @property
    def gids(self) -> np.ndarray:
        """The gids with their flip bits cleared: which tile, however it is turned."""
        return self.drawn & np.uint32(GID_MASK)


@dataclass
class DataLayer:
    """A tile layer carrying numbers in its `values` property (pipeline.tiled.values): its
    tiles only picture them, so they are not read."""

    name: str
    values: str  # the property as written: base64, compressed like the layer's data
    compression: str


@dataclass
class TiledObject:
    """An object of an object layer, in pixels as Tiled keeps it."""

    id: int | None
    name: str
    cls: str  # its class (Tiled 1.9+) or type
    box: tuple[float, float, float, float]  # x, y, width, height; a tile object's y is its bottom
    drawn_gid: int  # a tile object's gid as in the file (flip bits and all); 0 for any other
    points: list[tuple[float, float]] | None  # a polygon's or polyline's, from (x, y)
    polyline: bool
    rotation: float  # degrees clockwise about (x, y)
    properties: Properties

    @property
    def gid(self) -> int:
        return self.drawn_gid & GID_MASK

    @property
    def where(self) -> str:
        return f"object {'?' if self.id is None else self.id}"


@dataclass
class TiledMap:
    """An orthogonal map (the only kind read): a finite one, or an infinite one whose chunks lie
    inside its width x height, read as the finite map of that size."""

    width: int
    height: int
    tile_width: int
    tile_height: int
    tilesets: list[Tileset]
    infinite: bool = False  # its layers are in chunks, a layer with no tile in none
    layers: list[TileLayer] = field(default_factory=list)  # bottom first
    data_layers: list[DataLayer] = field(default_factory=list)
    objects: list[TiledObject] = field(default_factory=list)  # of every object layer, in file order
    properties: Properties = field(default_factory=dict)
    # Map and object properties of types a Level cannot hold (class), left out.
    dropped: list[str] = field(default_factory=list)


def tileset_of(tilesets: list[Tileset], gid: int) -> Tileset | None:
    """The tileset holding `gid` (`tilesets` sorted by firstgid), or None: below every firstgid,
    past its tilesheet's last tile, or a tile id its image collection does not have."""
    ts = next((t for t in reversed(tilesets) if t.firstgid <= gid), None)
    if ts is None:
        return None
    if ts.collection:
        return ts if gid - ts.firstgid in ts.tiles else None
    if ts.tilecount is not None and gid - ts.firstgid >= ts.tilecount:
        return None
    return ts

