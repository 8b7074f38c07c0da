"""Tiled JSON maps (.tmj) for engines that read only JSON."""

from __future__ import annotations

from pipeline.registry import stage
from pipeline.stages.export.tiled_map import TiledMapExporter
from pipeline.tiled.tmj import tmj_bytes, tsj_bytes
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TmxMap


@stage("export.tmj", version=16)
class ExportTmj(TiledMapExporter):
    """Write each map as Tiled JSON (.tmj), the format Phaser and other JSON-only engines load.

    It is the same map as `export.tmx` (tileset, layers, objects, properties, preview), with the
    tileset embedded and layer data as a plain array by default. With
    `embed_tileset = false` the tileset goes to tilesets/NAME.tsj. The Tiled project beside the
    maps (`project`) is as `export.tmx` writes it.
    """

    format = "tmj"

    def write_map(self, tmap: TmxMap) -> bytes:
        return tmj_bytes(tmap)

    def write_tileset(self, tileset: Tileset) -> bytes:
        return tsj_bytes(tileset)
