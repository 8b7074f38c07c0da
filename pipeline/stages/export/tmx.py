"""Tiled TMX maps with their tileset (.tsx) and tilesheet PNG."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
from pydantic import Field, PositiveInt, ValidationInfo, field_validator

from pipeline.level import Level
from pipeline.paths import check_plain_name, check_relative_dir, join, relative_to
from pipeline.registry import ExportContext, Exporter, stage
from pipeline.tiled.tileset import colour_tileset
from pipeline.tiled.tmx import TileLayer, TmxMap


@stage("export.tmx", version=1)
class ExportTmx(Exporter):
    """Write each map as a Tiled TMX file, as Tiled itself writes it.

    Symbols are mapped to tiles by name through the tileset (each tile's `name` property). The
    tilesheet PNG is drawn from the alphabet's colours (one tile per symbol, `tile_size` pixels,
    with `margin` and `spacing`) and shared by every map of the pack under `tilesets/`. Map properties carry the pack,
    map index, seed, stage chain and the Level's stats as typed Tiled properties.
    """

    dir: str = Field(".", description="Folder inside the pack for the .tmx files.")
    encoding: Literal["csv", "base64"] = Field("csv", description="Tile layer data encoding.")
    compression: Literal["none", "zlib", "gzip"] = Field("none", description="Compression of base64 layer data.")
    embed_tileset: bool = Field(False, description="Embed the tileset in every map instead of an external .tsx.")
    tileset_name: str = Field("symbols", description="Name of the generated tileset and its files under tilesets/.")
    tile_size: PositiveInt = Field(16, le=1024, description="Tile width and height in pixels.")
    margin: int = Field(0, ge=0, le=64, description="Pixels around the tilesheet's edge.")
    spacing: int = Field(0, ge=0, le=64, description="Pixels between tiles in the tilesheet.")
    layer_name: str = Field("tiles", min_length=1, description="Name of the tile layer.")

    _dir = field_validator("dir")(classmethod(lambda cls, v: check_relative_dir(v)))
    _tileset = field_validator("tileset_name")(classmethod(lambda cls, v: check_plain_name(v)))

    @field_validator("compression")
    @classmethod
    def _compression_needs_base64(cls, value: str, info: ValidationInfo) -> str:
        # `encoding` is declared first, so it is already validated here (absent if it was invalid).
        if value != "none" and info.data.get("encoding", "base64") != "base64":
            raise ValueError('needs encoding = "base64" (CSV data is never compressed)')
        return value

    @property
    def _tsx_path(self) -> str:
        return f"tilesets/{self.tileset_name}.tsx"

    @property
    def _sheet_path(self) -> str:
        return f"tilesets/{self.tileset_name}.png"

    def shared_outputs(self) -> list[str]:
        return [self._sheet_path] if self.embed_tileset else [self._tsx_path, self._sheet_path]

    def outputs(self, stem: str) -> list[str]:
        return [join(self.dir, f"{stem}.tmx"), *self.shared_outputs()]

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        tileset, sheet = colour_tileset(
            level.alphabet, self.tileset_name, self.tile_size, margin=self.margin, spacing=self.spacing
        )
        sheet_path = self._sheet_path
        if self.embed_tileset:
            # An embedded tileset's image path is relative to the map, not to a .tsx.
            tileset = replace(tileset, image=relative_to(sheet_path, self.dir))
        gids = np.array([1 + tileset.tile_id(sym.name) for sym in level.alphabet], dtype=np.uint32)
        tsx_path = self._tsx_path
        tmx = TmxMap(
            width=level.width,
            height=level.height,
            tile_width=self.tile_size,
            tile_height=self.tile_size,
            tileset=tileset,
            tileset_source=None if self.embed_tileset else relative_to(tsx_path, self.dir),
            layers=[TileLayer(self.layer_name, level.tiles, gids)],
            objects=list(level.objects),
            properties={**level.properties, **ctx.provenance},
            encoding=self.encoding,
            compression=self.compression,
        )
        files = {join(self.dir, f"{ctx.stem}.tmx"): tmx.to_bytes(), sheet_path: sheet}
        if not self.embed_tileset:
            files[tsx_path] = tileset.tsx()
        return files
