"""Engine profiles: what each engine's Tiled importer accepts, so one option gives files it loads.

Nothing we write uses zstd (`compression` offers none, zlib and gzip), which is why no profile
has to forbid it: Unity's SuperTiled2Unity, MonoGame and Phaser cannot read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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

    def defaults(self, fmt: Format) -> dict[str, object]:
        """Values for the options a recipe left unset."""
        return {
            "embed_tileset": self.embed_tileset if self.embed_tileset is not None else fmt == "tmj",
            "encoding": self.encodings[0],
            "compression": "none",
        }


ANY_COMPRESSION = ("none", "zlib", "gzip")

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("tiled", "Tiled 1.8+", ("tmx", "tmj"), None, ("csv", "base64"), ANY_COMPRESSION, "Tiled reads everything we write"),
        Profile(
            "phaser",
            "Phaser 3 (this.load.tilemapTiledJSON)",
            ("tmj",),
            True,
            ("csv",),
            ("none",),
            "Phaser loads Tiled JSON only, with the tileset embedded and the layer data uncompressed",
        ),
        Profile(
            "godot",
            "Godot 4 Tiled importers (YATI, Tiled Map Importer)",
            ("tmx", "tmj"),
            None,
            ("csv", "base64"),
            ANY_COMPRESSION,
            "Godot's importers read TMX or JSON, external or embedded tilesets, zlib or gzip",
        ),
        Profile(
            "unity",
            "Unity SuperTiled2Unity (and MonoGame.Extended)",
            ("tmx",),
            None,
            ("csv", "base64"),
            ANY_COMPRESSION,
            "SuperTiled2Unity imports TMX files with their .tsx tilesets, zlib or gzip but never zstd",
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
        problems.append(("profile", f"{profile}: {spec.why}; use export.{spec.formats[0]}"))
    values = {**spec.defaults(fmt), **{k: v for k, v in given.items() if v is not None}}
    if spec.embed_tileset is not None and values["embed_tileset"] != spec.embed_tileset:
        problems.append(("embed_tileset", f"must be {str(spec.embed_tileset).lower()} with profile {profile!r}: {spec.why}"))
    if values["encoding"] not in spec.encodings:
        problems.append(("encoding", f"must be {' or '.join(map(repr, spec.encodings))} with profile {profile!r}: {spec.why}"))
    if values["compression"] not in spec.compressions:
        problems.append(("compression", f"must be {' or '.join(map(repr, spec.compressions))} with profile {profile!r}: {spec.why}"))
    return values, problems
