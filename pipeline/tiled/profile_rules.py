"""What an engine profile changes in the written files: properties on the objects its importer
would otherwise turn into solid colliders, and tile property names its importer picks out."""

from __future__ import annotations

from dataclasses import replace

from pipeline.level import MapObject
from pipeline.tiled.profiles import Profile
from pipeline.tiled.tileset import Tileset


def object_shape(obj: MapObject) -> str:
    """How Tiled stores the object: "tile", "polyline", "rect" or "point"."""
    if obj.tile:
        return "tile"
    if obj.points:
        return "polyline"
    return "rect" if obj.w or obj.h else "point"


def profile_objects(profile: Profile, objects: list[MapObject]) -> list[MapObject]:
    """The objects with the profile's properties for their shape; a property the object already
    has (from a stage or a loaded map) wins, so a designer's choice is never overwritten."""
    if not profile.object_properties:
        return objects
    out = []
    for obj in objects:
        extra = profile.object_properties.get(object_shape(obj))
        out.append(replace(obj, properties={**extra, **obj.properties}) if extra else obj)
    return out


def profile_tileset(profile: Profile, tileset: Tileset) -> Tileset:
    """The tileset with its tile property names prefixed as the profile's importer wants them."""
    prefix = profile.tile_property_prefix
    if not prefix or not tileset.tile_properties:
        return tileset
    renamed = {tile: {prefix + name: value for name, value in props.items()} for tile, props in tileset.tile_properties.items()}
    return replace(tileset, tile_properties=renamed)
