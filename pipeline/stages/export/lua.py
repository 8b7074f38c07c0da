"""Tiled Lua maps (.lua) for LÖVE with STI (Simple Tiled Implementation)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pipeline.registry import stage
from pipeline.stages.export.tiled_map import TiledMapExporter
from pipeline.tiled.lua import lua_bytes
from pipeline.tiled.profiles import ProfileName
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TmxMap


@stage("export.lua", version=8)
class ExportLua(TiledMapExporter):
    """Write each map in Tiled's Lua format (.lua), the map file LÖVE's STI loads.

    The file is what `tiled --export-map lua` would write for the same map as `export.tmx`
    (tileset, layers, objects, typed properties, preview PNG), with every tileset embedded,
    since STI cannot read external ones, and the tilesheet PNG under tilesets/. Load it with
    `sti("map_000.lua")`. Layer data is a plain Lua array for maps up to 256 x 256 tiles and
    base64 + zlib for bigger ones (`encoding = "auto"`, the default: STI decodes them with
    LuaJIT's FFI and LÖVE 11's decompressor); `encoding = "csv"` keeps arrays at any size.
    """

    format = "lua"

    # The options `export.tmx` has, told as they are for Lua maps (`pcg stages` shows these).
    profile: ProfileName = Field(
        "love", description="Engine the files are for: love (LÖVE with STI), the only reader of Lua maps; the others read export.tmx or export.tmj."
    )
    embed_tileset: bool | None = Field(None, description="Always embedded (STI cannot read a tileset of its own file): false is refused.")
    encoding: Literal["auto", "csv", "base64"] | None = Field(
        None,
        description='Tile layer data: "csv" writes plain Lua arrays (encoding = "lua" in the file), "base64" smaller files; unset or "auto": arrays up to 256 x 256 tiles, base64 + zlib beyond.',
    )
    compression: Literal["none", "zlib", "gzip"] | None = Field(
        None, description='Compression of base64 layer data (unset: none for small maps, zlib for big ones with encoding auto; LÖVE 11 or later decompresses "zlib" and "gzip").'
    )

    project: str = Field("", exclude_if=lambda project: not project, description="Not for Lua maps: STI reads no Tiled project (export.tmx and export.tmj write one).")

    @field_validator("project")
    @classmethod
    def _no_project(cls, value: str) -> str:
        if value:
            raise ValueError("export.lua writes no Tiled project: STI reads none (export.tmx and export.tmj write one)")
        return value

    def write_map(self, tmap: TmxMap) -> bytes:
        return lua_bytes(tmap)

    def write_tileset(self, tileset: Tileset) -> bytes:
        # Unreachable: the love profile makes every tileset embedded.
        raise ValueError("export.lua embeds its tilesets")
