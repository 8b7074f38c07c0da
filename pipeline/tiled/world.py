"""A Tiled world file (.world): the maps of a pack placed side by side, which Tiled opens as
one (World > Load World) and engines' Tiled importers read to place levels."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from pipeline.errors import PipelineError

WORLD_FILE = "maps.world"
GAP_TILES = 2  # between maps, so that each map's edge shows


def world_json(maps: list[tuple[str, tuple[int, int, int]]]) -> bytes:
    """The world of `maps` ((file name relative to the world file, (width, height, tile width)
    in pixels)), left to right in their order, tops aligned, GAP_TILES tiles apart."""
    placed = []
    x = 0
    for name, (width, height, tile) in maps:
        placed.append({"fileName": name, "height": height, "width": width, "x": x, "y": 0})
        x += width + GAP_TILES * tile
    text = json.dumps({"maps": placed, "onlyShowAdjacentMaps": False, "type": "world"}, indent=4)
    return (text + "\n").encode()


def map_pixels(path: Path) -> tuple[int, int, int]:
    """(width, height, tile width) in pixels of a TMX or TMJ map, from its header alone."""
    try:
        if path.suffix == ".tmj":
            doc = json.loads(path.read_bytes())
            tw, th, w, h = (int(doc[k]) for k in ("tilewidth", "tileheight", "width", "height"))
        else:
            _, root = next(ET.iterparse(path, events=("start",)))
            tw, th, w, h = (int(root.attrib[k]) for k in ("tilewidth", "tileheight", "width", "height"))
    except (OSError, ValueError, KeyError, StopIteration, ET.ParseError) as exc:
        raise PipelineError([f"{path}: cannot read the map's size for the world file ({type(exc).__name__}: {exc}); rebuild the pack with --force"]) from None
    return w * tw, h * th, tw
