"""Engine profiles: what each engine's Tiled importer accepts and what it makes of the files, so
one option gives files it loads and imports as meant. docs/engines.md cites the importers' source.

Nothing we write uses zstd (`compression` offers none, zlib and gzip), which is why no profile
has to forbid it: Unity's SuperTiled2Unity, MonoGame and Phaser cannot read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Mapping

from pipeline.level import PropertyValue

ProfileName = Literal["tiled", "phaser", "godot", "unity", "love", "bevy"]
Format = Literal["tmx", "tmj", "lua"]


@dataclass(frozen=True)
class Profile:
    name: str
    importer: str  # what reads the files, for docs and messages
    formats: tuple[Format, ...]
    embed_tileset: bool | None  # None: either; the default is an external tileset
    encodings: tuple[str, ...]
    compressions: tuple[str, ...]
    why: str  # the reason for the constraints, shown in errors
    # Compression of base64 data when the recipe sets none (CSV data is never compressed).
    default_compression: str = "none"
    # The layer data a recipe that sets neither encoding nor compression gets: "auto" is CSV for
    # a small map (readable, and it diffs line by line) and base64 + zlib for a big one.
    default_encoding: str = "auto"
    # Whether the Level's data layers are written when the recipe does not say: as hidden tile
    # layers, which an engine that ignores `visible` would draw over the map.
    data_layers: bool = True
    # Why an engine shows data layers, for the warning when a recipe asks for them anyway.
    shows_hidden_layers: str = ""
    # Properties added to objects by shape ("rect", "polyline"), for importers that turn every
    # such object into a solid collider unless a property says otherwise.
    object_properties: Mapping[str, Mapping[str, PropertyValue]] = field(default_factory=lambda: MappingProxyType({}))
    # Prefix of tile property names, for importers that pick tile data out by it.
    tile_property_prefix: str = ""

    def defaults(self, fmt: Format) -> dict[str, object]:
        """Values for the options a recipe left unset."""
        return {
            "embed_tileset": self.embed_tileset if self.embed_tileset is not None else fmt == "tmj",
            "encoding": self.default_encoding,
            "compression": self.default_compression,
        }

    @property
    def changes_bytes(self) -> bool:
        """Whether the profile writes anything the `tiled` profile would not, given the same options."""
        return bool(self.object_properties or self.tile_property_prefix)


ANY_COMPRESSION = ("none", "zlib", "gzip")

# The most tiles a map may have for "auto" to write its layers as CSV (256 x 256): beyond it CSV
# costs 2 to 12 bytes a tile a layer, and zlib'd base64 a few hundredths of a byte on a cave,
# which every importer we target inflates natively (docs/engines.md).
CSV_MAX_TILES = 256 * 256
# What "auto" compresses a big map's base64 data with: the one compression every importer
# we target reads (zstd is not: pytmx, SuperTiled2Unity, STI and Phaser cannot).
AUTO_COMPRESSION = "zlib"

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("tiled", "Tiled 1.8+", ("tmx", "tmj"), None, ("csv", "base64"), ANY_COMPRESSION, "Tiled reads everything we write"),
        Profile(
            "phaser",
            "Phaser 3 (this.load.tilemapTiledJSON)",
            ("tmj",),
            True,
            ("csv", "base64"),
            ("none",),
            "Phaser loads Tiled JSON only, with the tileset embedded and the layer data uncompressed",
            # Uncompressed base64 is 5.3 bytes a tile, more than CSV's for a tileset's small ids.
            default_encoding="csv",
            data_layers=False,
            shows_hidden_layers="Phaser 3 draws every tile layer it creates, hidden or not (it ignores Tiled's `visible`): create these with createLayer only to read them, or call setVisible(false)",
        ),
        Profile(
            "godot",
            "Godot 4.3+ with YATI 2.x",
            ("tmx", "tmj"),
            None,
            # YATI decodes base64 and inflates in Godot's native code, but splits CSV cell by cell in GDScript.
            ("base64", "csv"),
            ANY_COMPRESSION,
            "YATI reads TMX or JSON, external or embedded tilesets, zlib or gzip",
            default_compression="zlib",
            default_encoding="base64",
            # YATI makes a StaticBody2D of any rectangle or polyline without a known class:
            # rooms would be walls and the path a fence.
            object_properties=MappingProxyType(
                {"rect": MappingProxyType({"godot_node_type": "area"}), "polyline": MappingProxyType({"godot_node_type": "path"})}
            ),
            # YATI 2.1+ makes Custom Data layers only of tile properties named "data_..." (the prefix dropped).
            tile_property_prefix="data_",
        ),
        Profile(
            "unity",
            "Unity with SuperTiled2Unity 2.x",
            ("tmx",),
            None,
            ("csv", "base64"),
            ANY_COMPRESSION,
            "SuperTiled2Unity imports TMX files with their .tsx tilesets, zlib or gzip but never zstd",
            # SuperTiled2Unity gives rectangles a BoxCollider2D and polylines an EdgeCollider2D,
            # solid unless the object says unity:IsTrigger.
            object_properties=MappingProxyType({"rect": MappingProxyType({"unity:IsTrigger": True}), "polyline": MappingProxyType({"unity:IsTrigger": True})}),
        ),
        Profile(
            "love",
            "LÖVE with STI (Simple Tiled Implementation)",
            ("lua",),
            True,
            ("csv", "base64"),
            ANY_COMPRESSION,
            "STI loads only Tiled's Lua maps (sti(\"map.lua\")), each with its tilesets embedded",
        ),
        Profile(
            "bevy",
            "Bevy with bevy_ecs_tiled (the `tiled` crate)",
            ("tmx",),
            None,
            ("csv", "base64"),
            ANY_COMPRESSION,
            "bevy_ecs_tiled loads TMX maps and .tsx tilesets through the `tiled` crate",
        ),
    )
}


def resolve(profile: str, fmt: Format, given: dict[str, object]) -> tuple[dict[str, object], list[tuple[str, str]]]:
    """The options after the profile's defaults, and (key, message) for each one the profile
    does not allow."""
    spec = PROFILES[profile]
    problems = []
    if fmt not in spec.formats:
        # Not `spec.why`: "Tiled reads everything we write" reads oddly as a refusal of Lua.
        exporters = " or ".join(f"export.{f}" for f in spec.formats)
        problems.append(("profile", f"{profile}: {spec.importer} reads {' or '.join(spec.formats)} maps, not {fmt}: use {exporters}"))
    set_here = {k: v for k, v in given.items() if v is not None}
    values = {**spec.defaults(fmt), **set_here}
    if values["encoding"] == "auto" and spec.default_encoding != "auto":
        values["encoding"] = spec.default_encoding  # the one this profile's engine reads best
    if values["encoding"] == "auto" and "compression" in set_here:
        # zlib or gzip asked for: data that can be compressed; "none" keeps CSV, as it always did.
        values["encoding"] = "csv" if set_here["compression"] == "none" else "base64"
    if "compression" not in set_here and values["encoding"] == "csv":
        values["compression"] = "none"  # a profile's default compression is for base64 data only
    if spec.embed_tileset is not None and values["embed_tileset"] != spec.embed_tileset:
        problems.append(("embed_tileset", f"must be {str(spec.embed_tileset).lower()} with profile {profile!r}: {spec.why}"))
    # "auto" is decided per map (layer_format), within what every profile that defaults to it allows.
    if values["encoding"] not in (*spec.encodings, spec.default_encoding):
        problems.append(("encoding", f"must be {' or '.join(map(repr, spec.encodings))} with profile {profile!r}: {spec.why}"))
    if values["compression"] not in spec.compressions:
        problems.append(("compression", f"must be {' or '.join(map(repr, spec.compressions))} with profile {profile!r}: {spec.why}"))
    return values, problems


def layer_format(options: Mapping[str, object], tiles: int) -> tuple[str, str]:
    """The encoding and compression of a map of `tiles` tiles, from resolved options: "auto" is
    CSV up to CSV_MAX_TILES, else base64 compressed with AUTO_COMPRESSION."""
    encoding, compression = str(options["encoding"]), str(options["compression"])
    if encoding != "auto":
        return encoding, compression
    return ("csv", "none") if tiles <= CSV_MAX_TILES else ("base64", AUTO_COMPRESSION)
