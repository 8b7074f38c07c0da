"""The `load.tmx` stage: a hand-made Tiled map (TMX or Tiled JSON) as a Level.

The map is read, parsed and checked when the recipe loads, not when the stage runs: a problem
with the file is then one line of the recipe's errors, and the stage carries the parsed map to
any worker (a Dask worker needs no file system), with the content's digests in its cache key.

The map is read as a Level by pipeline.tiled.as_level, which place.prefabs and the level
graph's room templates share.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from pipeline.level.art import ArtTileset
from pipeline.errors import KeyedError, PipelineError
from pipeline.level import PROVENANCE, Level, ObjectRef
from pipeline.output import counted
from pipeline.registry import StageParams, stage
from pipeline.tiled.as_level.file import read_map_file
from pipeline.tiled.read.error import MapFileError


@stage("load.tmx", version=8)
class LoadTmx(StageParams):
    """Load a map you drew in Tiled (`.tmx`, or Tiled JSON `.tmj`/`.json`) as the map's tiles.

    Each tile's symbol is, by `symbols`: its `symbol` property (a string, set on the tile in
    Tiled's tileset editor; the default), its Tiled class (`"class"`: Class, or Type before
    Tiled 1.9), or the tile itself (`"tile"`: a symbol per distinct tile, named `TILESET:ID`, a
    second tileset of one name `TILESET#2:ID`). Tiles that decide a cell and have none are one
    error naming them all (how many, and their ids per tileset) and where the first is.
    Maps our exporters wrote load back with their symbols: a tileset whose every tile names its
    symbol in `name` and its char in a one-letter `symbol` (and has no `char`) is read so.
    Empty cells get the symbol `empty`. Without `layer`, every tile layer counts (inside groups
    too, hidden or not) and the uppermost non-empty tile of each cell wins; `layer` reads one.
    A map with no tile layer (objects alone) is the map's size of `empty`.

    The alphabet is `empty` first (the fill), then every other symbol the map uses, in the
    order of the first tile (tileset, then tile id) that carries it. A symbol's char is the
    tile property `char` if set, else B/W/D for wall/floor/door, else the first free of its
    name's initial (upper, then lower case) and A-Z, a-z, 0-9; its colour is the tile property
    `color` if set, else black/white/brown for wall/floor/door, else MarkovJunior's colour of
    its char.

    Objects of every object layer become objects in tiles (pixels divided by the tile size;
    positions that are not on the tile grid stay fractional), with their class (or type) and
    typed properties (an object-typed one names its object however exporters number them);
    tile objects become rectangles with their top-left corner, polylines keep their points (in
    tiles, from the object's position), ellipses, polygons and text become their bounding
    boxes. A rotated object is loaded as drawn before its rotation, with its angle in the
    property `rotation` and a warning naming it. Tile layers that carry a `values` property
    (the data layers our exporters write) are left out. Map properties go into the map's
    properties, the map's own: a build hands them on through stages that start their stats
    afresh (`rewrite`). The map, its external tilesets and their images are read when the recipe
    loads and are part of the cache key.

    The map keeps its art: every exporter that draws tiles writes the cells as you drew them
    (the map's tilesets, with their images copied into the pack, its tile layers, flipped and
    turned tiles, tile objects with their tile) and the rest of the map with the pack's tileset.
    A cell whose symbol a later stage changes (a rule, a carved maze, a prefab) loses its art and
    shows the pack's tile for its new symbol. A tileset without a tilesheet image (an image
    collection) or of another tile size than the map is not kept (a warning says so).

    Only finite orthogonal maps are read (an isometric, hexagonal, staggered or infinite one is
    an error saying so); layer data may be XML, CSV or base64 (plain, zlib or gzip); Tiled JSON
    as Tiled 1.2 and later write it, or as before (tiles and properties as objects keyed by id
    and name); image-collection tilesets with gaps in their tile ids.
    """

    arity: ClassVar[tuple[int, int]] = (0, 0)

    file: str = Field(description='The Tiled map, relative to the recipe (e.g. "maps/start.tmx"; .tmx, .tmj or .json).')
    layer: str | None = Field(None, description="The one tile layer to read (unset: all of them, upper tiles over lower).")
    empty: str = Field("wall", min_length=1, description="Symbol of cells with no tile; first in the alphabet (the fill).")
    symbols: Literal["property", "class", "tile"] = Field(
        "property",
        description='Where a tile\'s symbol comes from: its `symbol` property, its Tiled class ("class": Class, or Type before'
        ' Tiled 1.9), or "tile": a symbol per distinct tile, named TILESET:ID.',
    )

    _level: Level | None = PrivateAttr(None)
    _files: dict[str, str] = PrivateAttr(default_factory=dict)
    _dropped: list[str] = PrivateAttr(default_factory=list)
    _rotated: list[str] = PrivateAttr(default_factory=list)
    _not_drawn: list[str] = PrivateAttr(default_factory=list)
    _art_tilesets: tuple[ArtTileset, ...] = PrivateAttr(())

    @model_validator(mode="after")
    def _load(self, info: ValidationInfo) -> LoadTmx:
        recipe_dir = Path((info.context or {}).get("recipe_dir", "."))
        try:
            loaded = read_map_file(recipe_dir, self.file, self.layer, self.empty, self.symbols)
        except MapFileError as exc:
            raise KeyedError("file", f"{recipe_dir / self.file}: {exc}") from None
        self._level = loaded.level
        self._files = loaded.files
        self._dropped = loaded.dropped
        self._rotated = loaded.rotated
        self._not_drawn = loaded.not_drawn
        self._art_tilesets = tuple(loaded.art_tilesets)
        return self

    def art_tilesets(self) -> list[ArtTileset]:
        return list(self._art_tilesets)

    def files_read(self) -> dict[str, str]:
        return dict(self._files)

    def added_stats(self) -> tuple[str, ...] | None:
        # The map's own properties, known since the file was read as the recipe loaded; but an
        # object reference names an object, and is no stat a filter or `order_by` can read.
        if self._level is None:
            return None
        return tuple(k for k, v in self._level.properties.items() if not isinstance(v, ObjectRef))

    def authored_stats(self) -> tuple[str, ...]:
        return tuple(self._level.properties) if self._level is not None else ()

    def warnings(self) -> list[str]:
        # Exporters write these where a map came from: the map's own are replaced.
        own = self._level.properties if self._level is not None else {}
        return [
            f"file: {self.file}: its map property {name!r} is one the exporters write of "
            + ("a map a filter made again" if name == "attempt" else "every map")
            + " (where it came from), so the exported map has theirs: rename it"
            for name in PROVENANCE
            if name in own
        ] + [
            f"file: {self.file}: {dropped} is not read: a Level holds string, int, float, bool, color, file and object properties"
            for dropped in self._dropped
        ] + ([
            f"file: {self.file}: {counted(len(self._rotated), 'object')} {'is' if len(self._rotated) == 1 else 'are'} rotated"
            f" ({', '.join(self._rotated)}): a Level's objects are upright, so each is loaded as drawn before its rotation,"
            " with the angle (degrees clockwise about its origin, as in Tiled) in its property `rotation`"
        ] if self._rotated else []) + [f"file: {self.file}: {line}" for line in self._not_drawn]

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = self._level
        if level is None:  # only a validated stage has one
            raise PipelineError(["load.tmx: the stage was not validated (make it with model_validate)"])
        # The worker freezes what a stage returns: hand out copies, never the stored map.
        art = level.art
        return Level(
            tiles=level.tiles.copy(),
            alphabet=level.alphabet,
            objects=[replace(o, properties=dict(o.properties)) for o in level.objects],
            properties=dict(level.properties),
            art=None if art is None else replace(art, layers={n: g.copy() for n, g in art.layers.items()}, drawn_for=art.drawn_for.copy()),
        )
