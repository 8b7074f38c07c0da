"""TMX maps: one tile layer per grid, an object layer, typed map properties."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pipeline.level import MapObject, PropertyValue
from pipeline.tiled import FORMAT_VERSION, TILED_VERSION
from pipeline.tiled.chunks import DEFAULT_CHUNK, chunked
from pipeline.tiled.custom_types import enum_members
from pipeline.tiled.deflate import compress
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.xmlout import add_properties, to_bytes

Encoding = Literal["csv", "base64"]
Compression = Literal["none", "zlib", "gzip"]


@dataclass
class TileLayer:
    name: str
    gids: np.ndarray  # uint32 global tile ids, H x W (0 = empty)
    # Written only when they differ from Tiled's defaults, so plain layers keep their bytes.
    visible: bool = True
    locked: bool = False
    opacity: float = 1.0
    properties: dict[str, PropertyValue] = field(default_factory=dict)


@dataclass
class TmxMap:
    width: int
    height: int
    tile_width: int
    tile_height: int
    tileset: Tileset
    tileset_source: str | None  # path of the external .tsx, or None to embed the tileset
    layers: list[TileLayer]
    objects: list[MapObject] = field(default_factory=list)
    object_gids: list[int] = field(default_factory=list)  # per object: its tile's gid, or 0
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    encoding: Encoding = "csv"
    compression: Compression = "none"
    # Tilesets after the first, as (firstgid, tileset, path of its external file or None to embed).
    more_tilesets: list[tuple[int, Tileset, str | None]] = field(default_factory=list)
    chunk: int | None = None  # an infinite map's chunk size (pipeline.tiled.chunks); None: finite
    # Write each word of an enum (a room's role) with the enum's name, which the pack's Tiled
    # project declares; without a project a name Tiled does not know would be an error to it.
    enums: bool = True

    def to_bytes(self) -> bytes:
        has_objects = bool(self.objects)
        root = ET.Element(
            "map",
            {
                "version": FORMAT_VERSION,
                "tiledversion": TILED_VERSION,
                "orientation": "orthogonal",
                "renderorder": "right-down",
                "width": str(self.width),
                "height": str(self.height),
                "tilewidth": str(self.tile_width),
                "tileheight": str(self.tile_height),
                "infinite": "0" if self.chunk is None else "1",
                "nextlayerid": str(len(self.layers) + has_objects + 1),
                "nextobjectid": str(len(self.objects) + 1),
            },
        )
        if self.chunk is not None and self.chunk != DEFAULT_CHUNK:  # Tiled leaves its default out
            settings = ET.SubElement(root, "editorsettings")
            ET.SubElement(settings, "chunksize", {"width": str(self.chunk), "height": str(self.chunk)})
        add_properties(root, self.properties)
        texts: list[str] = []
        root.append(self.tileset.element(firstgid=1, source=self.tileset_source))
        for firstgid, tileset, source in self.more_tilesets:
            root.append(tileset.element(firstgid=firstgid, source=source))
        for layer_id, layer in enumerate(self.layers, start=1):
            attrs = {"id": str(layer_id), "name": layer.name, "width": str(self.width), "height": str(self.height)}
            # Tiled's attribute order, each left out at its default as Tiled leaves it out.
            if not layer.visible:
                attrs["visible"] = "0"
            if layer.locked:
                attrs["locked"] = "1"
            if layer.opacity != 1:
                attrs["opacity"] = _number(layer.opacity)
            node = ET.SubElement(root, "layer", attrs)
            add_properties(node, layer.properties)
            if self.chunk is None:
                data = layer_data(layer.gids, self.encoding, self.compression)
            else:
                data = chunked_data(layer.gids, self.encoding, self.compression, self.chunk)
            texts.append(data.text or "")
            data.text = None  # spliced in as the document is written
            node.append(data)
        if has_objects:
            group = ET.SubElement(root, "objectgroup", {"id": str(len(self.layers) + 1), "name": "objects"})
            gids = self.object_gids or [0] * len(self.objects)
            for object_id, (obj, gid) in enumerate(zip(self.objects, gids), start=1):
                group.append(object_element(obj, object_id, self.tile_width, self.tile_height, gid, self.enums))
        return to_bytes(root, texts)


def object_element(obj: MapObject, object_id: int, tile_width: int, tile_height: int, gid: int = 0, enums: bool = True) -> ET.Element:
    """A Tiled object; positions and sizes arrive in tiles and are written in pixels. `enums`:
    the words of enums with their enum's name (`TmxMap.enums`)."""
    attrs = {"id": str(object_id), "name": obj.name}
    if obj.type:
        attrs["type"] = obj.type  # Tiled omits an empty type
    box = object_box(obj, tile_width, tile_height, gid)
    if gid:
        attrs["gid"] = str(gid)
    attrs["x"] = _number(box["x"])
    attrs["y"] = _number(box["y"])
    if "width" in box:
        attrs["width"] = _number(box["width"])
        attrs["height"] = _number(box["height"])
    node = ET.Element("object", attrs)
    add_properties(node, obj.properties, enum_members(obj.type) if enums else None)
    if box.get("point"):
        ET.SubElement(node, "point")
    elif obj.points and not gid:
        ET.SubElement(node, "polyline", {"points": " ".join(f"{_number(x)},{_number(y)}" for x, y in polyline_pixels(obj, tile_width, tile_height))})
    return node


def polyline_pixels(obj: MapObject, tile_width: int, tile_height: int) -> list[tuple[float, float]]:
    """The object's polyline points in pixels, relative to its position, as Tiled stores them."""
    return [(x * tile_width, y * tile_height) for x, y in obj.points]


def object_box(obj: MapObject, tile_width: int, tile_height: int, gid: int) -> dict[str, float]:
    """Pixel position and size as Tiled stores them. A tile object fills the tile its point falls
    in, and Tiled anchors tile objects at their bottom-left corner. A tile object drawn by hand
    (with `art`) keeps the position and size it was drawn at."""
    if gid and obj.art is not None:
        return {"x": obj.x * tile_width, "y": (obj.y + obj.h) * tile_height, "width": obj.w * tile_width, "height": obj.h * tile_height}
    if gid:
        return {"x": int(obj.x) * tile_width, "y": (int(obj.y) + 1) * tile_height, "width": tile_width, "height": tile_height}
    box: dict[str, float] = {"x": obj.x * tile_width, "y": obj.y * tile_height}
    if obj.points:
        return box  # a polyline: its points give its shape, Tiled writes no size
    if obj.w or obj.h:
        box.update(width=obj.w * tile_width, height=obj.h * tile_height)
    else:
        box["point"] = 1
    return box


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def layer_data(gids: np.ndarray, encoding: Encoding, compression: Compression) -> ET.Element:
    if encoding == "csv":
        if compression != "none":
            raise ValueError("CSV layer data cannot be compressed; use encoding = \"base64\"")
        node = ET.Element("data", {"encoding": "csv"})
        node.text = "\n" + csv_rows(gids) + "\n"
        return node
    attrs = {"encoding": "base64"}
    if compression != "none":
        attrs["compression"] = compression
    node = ET.Element("data", attrs)
    node.text = "\n   " + base64_data(gids, compression) + "\n  "
    return node


def chunked_data(gids: np.ndarray, encoding: Encoding, compression: Compression, size: int) -> ET.Element:
    """An infinite map's <data>: a <chunk> per chunk holding a tile, each encoded as a finite
    layer's data is (its text one level deeper)."""
    attrs = {"encoding": encoding}
    if compression != "none":
        attrs["compression"] = compression
    node = ET.Element("data", attrs)
    parts = []
    for x, y, block in chunked(gids, size).chunks:
        if encoding == "csv":
            text = "\n" + csv_rows(block) + "\n"
        else:
            text = "\n    " + base64_data(block, compression) + "\n   "
        parts.append(f'\n   <chunk x="{x}" y="{y}" width="{size}" height="{size}">{text}</chunk>')
    node.text = "".join(parts) + "\n  "
    return node


def base64_data(gids: np.ndarray, compression: Compression) -> str:
    # The gids' own buffer when they are little-endian 32-bit already: no copy of a big layer.
    return base64_bytes(memoryview(np.ascontiguousarray(gids, dtype="<u4")).cast("B"), compression)


def base64_bytes(raw: bytes | memoryview, compression: Compression) -> str:
    """Bytes as Tiled writes layer data: compressed as asked (pipeline.tiled.deflate), then base64."""
    if compression != "none":
        raw = compress(raw, compression)
    return base64.b64encode(raw).decode("ascii")


def csv_rows(gids: np.ndarray) -> str:
    """Tiled's CSV layout ("1,2,3,\\n4,5,6"), built with numpy rather than a join per tile.

    Each gid up to the largest has a fixed-width token "gid," padded with NUL bytes; the tokens of
    the whole grid are laid out at once, a newline column appended, and the padding dropped.
    """
    tiles = gids
    top = int(gids.max(initial=0))
    if top < 65536:
        tokens = [f"{g},".encode("ascii") for g in range(top + 1)]
    else:
        # Flip bits put drawn tiles' gids past 2**29: a token per value present, not per value
        # up to the largest.
        values, inverse = np.unique(gids, return_inverse=True)
        tokens = [f"{g},".encode("ascii") for g in values.tolist()]
        tiles = inverse.reshape(gids.shape)
    width = max(len(t) for t in tokens)
    table = np.zeros((len(tokens), width), dtype=np.uint8)
    for i, token in enumerate(tokens):
        table[i, : len(token)] = np.frombuffer(token, dtype=np.uint8)
    h, w = tiles.shape
    grid = np.zeros((h, w * width + 1), dtype=np.uint8)
    grid[:, :-1] = table[tiles].reshape(h, w * width)
    grid[:, -1] = ord("\n")
    flat = grid.reshape(-1)
    text = flat[flat != 0].tobytes().decode("ascii")
    return text[:-2]  # the last tile has neither a comma nor a newline after it
