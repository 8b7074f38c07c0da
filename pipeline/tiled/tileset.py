"""A Tiled tileset as written into .tsx files, embedded in maps, or in Tiled JSON."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import did_you_mean
from pipeline.level import PropertyValue
from pipeline.tiled import FORMAT_VERSION, TILED_VERSION
from pipeline.tiled.autotile import TILED_TYPE, WangKind
from pipeline.tiled.properties import json_properties
from pipeline.tiled.xmlout import add_properties, to_bytes


def sheet_grid(width: int, height: int, tile_width: int, tile_height: int, margin: int, spacing: int) -> tuple[int, int]:
    """(columns, rows) of whole tiles in a width x height sheet: Tiled's own rule."""
    columns = (width - 2 * margin + spacing) // (tile_width + spacing)
    rows = (height - 2 * margin + spacing) // (tile_height + spacing)
    return max(columns, 0), max(rows, 0)


Rect = tuple[int, int, int, int]


def _collision_element(parent: ET.Element, rects: tuple[Rect, ...]) -> None:
    # Tiled numbers a tile's object group 2 and its objects from 1, and writes it after properties.
    group = ET.SubElement(parent, "objectgroup", {"draworder": "index", "id": "2"})
    for i, (x, y, w, h) in enumerate(rects, 1):
        ET.SubElement(group, "object", {"id": str(i), "x": str(x), "y": str(y), "width": str(w), "height": str(h)})


def _collision_json(rects: tuple[Rect, ...]) -> dict[str, Any]:
    objects = [
        {"height": h, "id": i, "name": "", "rotation": 0, "type": "", "visible": True, "width": w, "x": x, "y": y}
        for i, (x, y, w, h) in enumerate(rects, 1)
    ]
    return {"draworder": "index", "id": 2, "name": "", "objects": objects, "opacity": 1, "type": "objectgroup", "visible": True, "x": 0, "y": 0}


@dataclass(frozen=True)
class WangSet:
    """Autotiling of one symbol: colour 1 is the symbol, colour 2 what surrounds it."""

    name: str
    kind: WangKind
    colors: tuple[tuple[str, str], tuple[str, str]]  # (name, "#rrggbb") of colours 1 and 2
    tiles: tuple[tuple[int, tuple[int, ...]], ...]  # (tile id, wangid) pairs

    def element(self) -> ET.Element:
        node = ET.Element("wangset", {"name": self.name, "type": TILED_TYPE[self.kind], "tile": "-1"})
        for name, color in self.colors:
            ET.SubElement(node, "wangcolor", {"name": name, "color": color, "tile": "-1", "probability": "1"})
        for tile_id, wangid in self.tiles:
            ET.SubElement(node, "wangtile", {"tileid": str(tile_id), "wangid": ",".join(map(str, wangid))})
        return node

    def json(self) -> dict[str, Any]:
        return {
            "colors": [{"color": color, "name": name, "probability": 1, "tile": -1} for name, color in self.colors],
            "name": self.name,
            "tile": -1,
            "type": TILED_TYPE[self.kind],
            "wangtiles": [{"tileid": tile_id, "wangid": list(wangid)} for tile_id, wangid in self.tiles],
        }


@dataclass(frozen=True)
class Tileset:
    name: str
    tile_width: int
    tile_height: int
    margin: int
    spacing: int
    columns: int
    rows: int
    image: str  # file name of the tilesheet, relative to the file the tileset is written in
    image_size: tuple[int, int]  # (width, height) in pixels: a user's sheet may have pixels past the last whole tile
    # What draws each name (a symbol, or an extra tile for tile objects): its plain tile.
    names: dict[str, int] = field(default_factory=dict)
    tile_properties: dict[int, dict[str, PropertyValue]] = field(default_factory=dict)
    wangsets: tuple[WangSet, ...] = ()
    # Collision shapes by tile id, as Tiled's collision editor stores them: rectangles (x, y, w, h).
    collision: dict[int, tuple[Rect, ...]] = field(default_factory=dict)
    # Variant tiles' weights against their name's own tile (Tiled's probability, 1 when unset):
    # what Tiled's random brush uses, as the build does.
    probability: dict[int, float] = field(default_factory=dict)
    # Animated tiles: tile id -> its frames, (tile id, milliseconds), as Tiled's animation editor writes them.
    animation: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def described(self) -> list[int]:
        """The tiles a tileset file lists: those with properties, a collision shape or frames."""
        return sorted(self.tile_properties.keys() | self.collision.keys() | self.animation.keys())

    @property
    def tilecount(self) -> int:
        return self.columns * self.rows

    @property
    def image_width(self) -> int:
        return self.image_size[0]

    @property
    def image_height(self) -> int:
        return self.image_size[1]

    def tile_id(self, name: str) -> int:
        """The plain tile that draws a symbol (or extra tile) called `name`."""
        try:
            return self.names[name]
        except KeyError:
            known = ", ".join(self.names) or "none"
            raise KeyError(f"tileset {self.name!r} has no tile named {name!r}{did_you_mean(name, list(self.names))} (it has: {known})") from None

    def element(self, firstgid: int | None = None, source: str | None = None) -> ET.Element:
        """The <tileset> element: a reference to `source` when given, else the full description."""
        if source is not None:
            return ET.Element("tileset", {"firstgid": str(firstgid), "source": source})
        attrs = {} if firstgid is None else {"firstgid": str(firstgid)}
        if firstgid is None:
            attrs.update({"version": FORMAT_VERSION, "tiledversion": TILED_VERSION})
        attrs.update({"name": self.name, "tilewidth": str(self.tile_width), "tileheight": str(self.tile_height)})
        # Tiled omits zero spacing/margin; we always write them so no reader has to know the default.
        attrs.update({"spacing": str(self.spacing), "margin": str(self.margin)})
        attrs.update({"tilecount": str(self.tilecount), "columns": str(self.columns)})
        node = ET.Element("tileset", attrs)
        ET.SubElement(node, "image", {"source": self.image, "width": str(self.image_width), "height": str(self.image_height)})
        for tile_id in self.described():
            tile = ET.SubElement(node, "tile", {"id": str(tile_id)})
            if tile_id in self.probability:
                tile.set("probability", f"{self.probability[tile_id]:g}")
            add_properties(tile, self.tile_properties.get(tile_id, {}))
            if tile_id in self.collision:
                _collision_element(tile, self.collision[tile_id])
            if tile_id in self.animation:
                frames = ET.SubElement(tile, "animation")
                for frame, ms in self.animation[tile_id]:
                    ET.SubElement(frames, "frame", {"tileid": str(frame), "duration": str(ms)})
        if self.wangsets:
            group = ET.SubElement(node, "wangsets")
            for wangset in self.wangsets:
                group.append(wangset.element())
        return node

    def _tile_json(self, tile_id: int) -> dict[str, Any]:
        tile: dict[str, Any] = {}
        if tile_id in self.animation:  # Tiled writes a tile's keys in alphabetical order
            tile["animation"] = [{"duration": ms, "tileid": frame} for frame, ms in self.animation[tile_id]]
        tile["id"] = tile_id
        if tile_id in self.collision:
            tile["objectgroup"] = _collision_json(self.collision[tile_id])
        if tile_id in self.probability:
            tile["probability"] = self.probability[tile_id]
        if self.tile_properties.get(tile_id):
            tile["properties"] = json_properties(self.tile_properties[tile_id])
        return tile

    def tsx(self) -> bytes:
        return to_bytes(self.element())

    def json(self, firstgid: int | None = None) -> dict[str, Any]:
        """The tileset as Tiled JSON writes it: embedded in a map (with `firstgid`) or as a .tsj."""
        out: dict[str, Any] = {} if firstgid is None else {"firstgid": firstgid}
        out.update(
            {
                "columns": self.columns,
                "image": self.image,
                "imageheight": self.image_height,
                "imagewidth": self.image_width,
                "margin": self.margin,
                "name": self.name,
                "spacing": self.spacing,
                "tilecount": self.tilecount,
                "tileheight": self.tile_height,
            }
        )
        if self.described():
            out["tiles"] = [self._tile_json(tile_id) for tile_id in self.described()]
        out["tilewidth"] = self.tile_width
        if firstgid is None:
            out.update({"tiledversion": TILED_VERSION, "type": "tileset", "version": FORMAT_VERSION})
        if self.wangsets:
            out["wangsets"] = [w.json() for w in self.wangsets]
        return out
