"""Tiled TMX maps with their tileset (.tsx) and tilesheet PNG."""

from __future__ import annotations

from pipeline.registry import stage
from pipeline.stages.export.tiled_map import TiledMapExporter
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TmxMap


@stage("export.tmx", version=15)
class ExportTmx(TiledMapExporter):
    """Write each map as a Tiled TMX file with its tileset, tilesheet and preview.

    The file is as Tiled itself writes it; the tileset (.tsx) and tilesheet PNG go under
    tilesets/ (shared by every map of the pack), and the preview PNG is drawn from that tilesheet.

    The tileset comes from a tileset file (`tileset = "../tilesets/dungeon.toml"`: your own
    tilesheet or generated art, autotiled walls, per-tile properties) or, without one, is one
    tile per symbol in its colour. `layers` splits the map into tile layers (floor, walls,
    decoration); `profile` fits the files to an engine's importer (what it accepts, and for
    Godot and Unity the properties that keep rooms from importing as walls). Objects (spawn, exit,
    rooms, items) go into an object layer with typed properties; map properties carry the
    pack, map index, seed, stage chain and the map's stats. Beside the maps, `maps.tiled-project`
    declares a class for each object type the maps hold, with typed members, and enums for room
    roles, door sides and stairs (`project` names it; its folder's TMX and JSON maps share it).
    """

    format = "tmx"

    def write_map(self, tmap: TmxMap) -> bytes:
        return tmap.to_bytes()

    def write_tileset(self, tileset: Tileset) -> bytes:
        return tileset.tsx()
