"""A drawn map's objects as a Level's: in tiles rather than pixels, and upright boxes."""

from __future__ import annotations

from pipeline.level.art import ArtTile
from pipeline.level import MapObject
from pipeline.tiled.read.model import TiledObject


def level_objects(objects: list[TiledObject], tw: int, th: int) -> tuple[list[MapObject], list[str]]:
    """The objects in tiles of `tw` x `th` pixels, and the rotated ones, named with their angle.

    Tile objects become rectangles with their top-left corner, polylines keep their points (from
    the object's position), polygons (and ellipses and text, which Tiled gives a box) their
    bounding boxes."""
    rotated: list[str] = []
    out = []
    for obj in objects:
        x, y, w, h = obj.box
        props = obj.properties
        if obj.rotation:
            # A Level's objects are upright boxes: a rotated one (a decoration, mostly) keeps the
            # box it had before turning about its origin, and its angle (clockwise, as in Tiled)
            # for a game that reads it, rather than refusing the whole map.
            rotated.append(f"{obj.where}{f' ({obj.name!r})' if obj.name else ''} by {obj.rotation:g} degrees")
            props = {**props, "rotation": props.get("rotation", obj.rotation)}
        ref = "" if obj.id is None else str(obj.id)
        if obj.gid:
            y -= h  # a tile object's y is its bottom edge
        if obj.polyline and obj.points and not obj.gid:
            points = tuple((px / tw, py / th) for px, py in obj.points)
            out.append(MapObject(name=obj.name, type=obj.cls, x=x / tw, y=y / th, properties=props, points=points, ref=ref))
            continue
        if obj.points:
            xs = [x + p[0] for p in obj.points]
            ys = [y + p[1] for p in obj.points]
            x, y, w, h = min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
        # A tile object keeps its gid (flips and all) in an ArtTile with no tileset yet:
        # `keep_art` finds its tileset once all are read.
        art = ArtTile("", obj.drawn_gid, 0) if obj.gid else None
        out.append(MapObject(name=obj.name, type=obj.cls, x=x / tw, y=y / th, w=w / tw, h=h / th, properties=props, ref=ref, art=art))
    return out, rotated
