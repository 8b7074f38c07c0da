"""Tiled's Lua map format (`tiled --export-map lua`), the format LÖVE's STI loads.

The same `TmxMap` as the TMX and JSON writers, laid out key for key and space for space as Tiled
1.8's Lua plugin writes it (its LuaTableWriter: two-space indent, `key = value` one per line,
small tables such as colours and wang ids on one line), every tileset embedded: STI cannot
follow a reference to a .tsx. Two deliberate departures from Tiled, both where Tiled's file
would be wrong: numbers are written exactly (Tiled rounds positions to 6 significant digits),
and a carriage return in a string is escaped (Tiled writes it raw, which Lua cannot load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

import numpy as np

from pipeline.level import Color, ObjectId, PropertyValue
from pipeline.tiled import TILED_VERSION
from pipeline.tiled.properties import property_type
from pipeline.tiled.tileset import Rect, Tileset, WangSet
from pipeline.tiled.tmx import TmxMap, base64_data, csv_rows, object_box, polyline_pixels

# The Lua format's own version, which Tiled 1.8 writes (it is not the TMX format version).
LUA_FORMAT_VERSION = "1.5"
INDENT = "  "


@dataclass(frozen=True)
class Inline:
    """A table Tiled writes on one line: `{ 1, 2 }` or `{ x = 0, y = 0 }`."""

    items: tuple[tuple[str | None, Union[int, float]], ...]


@dataclass(frozen=True)
class Rows:
    """A tile layer's gids, one map row per line."""

    gids: np.ndarray


Value = Union[bool, int, float, str, Inline, Rows, "Table"]
Table = list[tuple[str | None, Value]]  # (key or None for a list entry, value), in Tiled's order


def lua_bytes(tmap: TmxMap) -> bytes:
    """The map as a Lua chunk returning one table, every tileset embedded."""
    if tmap.tileset_source is not None or any(source is not None for _, _, source in tmap.more_tilesets):
        raise ValueError("the Lua map format embeds every tileset; STI cannot read external ones")
    tilesets: Table = [(None, _tileset(tmap.tileset, 1))]
    tilesets += [(None, _tileset(tileset, firstgid)) for firstgid, tileset, _ in tmap.more_tilesets]
    has_objects = bool(tmap.objects)
    root: Table = [
        ("version", LUA_FORMAT_VERSION),
        ("luaversion", "5.1"),
        ("tiledversion", TILED_VERSION),
        ("orientation", "orthogonal"),
        ("renderorder", "right-down"),
        ("width", tmap.width),
        ("height", tmap.height),
        ("tilewidth", tmap.tile_width),
        ("tileheight", tmap.tile_height),
        ("nextlayerid", len(tmap.layers) + has_objects + 1),
        ("nextobjectid", len(tmap.objects) + 1),
        ("properties", _properties(tmap.properties)),
        ("tilesets", tilesets),
        ("layers", _layers(tmap)),
    ]
    return ("return " + _table(root, 0) + "\n").encode("utf-8")


def _tileset(tileset: Tileset, firstgid: int) -> Table:
    return [
        ("name", tileset.name),
        ("firstgid", firstgid),
        ("tilewidth", tileset.tile_width),
        ("tileheight", tileset.tile_height),
        ("spacing", tileset.spacing),
        ("margin", tileset.margin),
        ("columns", tileset.columns),
        ("image", tileset.image),
        ("imagewidth", tileset.image_width),
        ("imageheight", tileset.image_height),
        ("objectalignment", "unspecified"),
        # STI reads `tileoffset` for every tile it draws: it must be there even at 0, 0.
        ("tileoffset", [("x", 0), ("y", 0)]),
        ("grid", [("orientation", "orthogonal"), ("width", tileset.tile_width), ("height", tileset.tile_height)]),
        ("properties", []),
        ("wangsets", [(None, _wangset(w)) for w in tileset.wangsets]),
        ("tilecount", tileset.tilecount),
        # Tiled lists only the tiles that have something to say: properties, collision shapes.
        ("tiles", [(None, _tile(tileset, tile_id)) for tile_id in tileset.described() if _has_data(tileset, tile_id)]),
    ]


def _has_data(tileset: Tileset, tile_id: int) -> bool:
    return bool(tileset.tile_properties.get(tile_id)) or bool(tileset.collision.get(tile_id)) or tile_id in tileset.animation


def _tile(tileset: Tileset, tile_id: int) -> Table:
    # In the order Tiled's own Lua export writes a tile's keys.
    tile: Table = [("id", tile_id)]
    if tileset.tile_properties.get(tile_id):
        tile.append(("properties", _properties(tileset.tile_properties[tile_id])))
    if tile_id in tileset.probability:
        tile.append(("probability", tileset.probability[tile_id]))
    if tileset.collision.get(tile_id):
        tile.append(("objectGroup", _collision(tileset.collision[tile_id])))
    if tile_id in tileset.animation:
        tile.append(("animation", [(None, [("tileid", frame), ("duration", ms)]) for frame, ms in tileset.animation[tile_id]]))
    return tile


def _collision(rects: tuple[Rect, ...]) -> Table:
    """A tile's collision shapes as Tiled writes its collision editor's: group 2, objects from 1."""
    shapes: Table = [
        (None, [
            ("id", i), ("name", ""), ("type", ""), ("shape", "rectangle"), ("x", x), ("y", y), ("width", w), ("height", h),
            ("rotation", 0), ("visible", True), ("properties", []),
        ])
        for i, (x, y, w, h) in enumerate(rects, 1)
    ]
    return [
        ("type", "objectgroup"), ("draworder", "index"), ("id", 2), ("name", ""), ("visible", True), ("opacity", 1),
        ("offsetx", 0), ("offsety", 0), ("parallaxx", 1), ("parallaxy", 1), ("properties", []), ("objects", shapes),
    ]


def _wangset(wangset: WangSet) -> Table:
    colors: Table = [
        (None, [("color", _color(color)), ("name", name), ("probability", 1), ("tile", -1), ("properties", [])])
        for name, color in wangset.colors
    ]
    tiles: Table = [
        (None, [("wangid", Inline(tuple((None, c) for c in wangid))), ("tileid", tile_id)])
        for tile_id, wangid in sorted(wangset.tiles)
    ]
    # Tiled 1.8's Lua format has no wang set `type` (corner, edge, mixed): it writes none either.
    return [("name", wangset.name), ("tile", -1), ("properties", []), ("colors", colors), ("wangtiles", tiles)]


def _color(hex_color: str) -> Inline:
    """`#rrggbb` (or `#aarrggbb`) as Tiled's `{ r, g, b }`, alpha last and only when not opaque."""
    digits = hex_color.lstrip("#")
    alpha, rgb = (int(digits[:2], 16), digits[2:]) if len(digits) == 8 else (255, digits)
    channels = [int(rgb[i : i + 2], 16) for i in (0, 2, 4)] + ([alpha] if alpha != 255 else [])
    return Inline(tuple((None, v) for v in channels))


def _layer_common(layer_id: int, name: str, visible: bool, opacity: float) -> Table:
    # STI adds offsetx/offsety to every layer's position: they must be present.
    return [
        ("id", layer_id),
        ("name", name),
        ("visible", visible),
        ("opacity", opacity),
        ("offsetx", 0),
        ("offsety", 0),
        ("parallaxx", 1),
        ("parallaxy", 1),
    ]


def _layers(tmap: TmxMap) -> Table:
    out: Table = []
    for layer_id, layer in enumerate(tmap.layers, start=1):
        node: Table = [("type", "tilelayer"), ("x", 0), ("y", 0), ("width", tmap.width), ("height", tmap.height)]
        node += _layer_common(layer_id, layer.name, layer.visible, layer.opacity)
        node.append(("properties", _properties(layer.properties)))
        if tmap.encoding == "base64":
            node.append(("encoding", "base64"))
            if tmap.compression != "none":
                node.append(("compression", tmap.compression))
            node.append(("data", base64_data(layer.gids, tmap.compression)))
        else:
            node += [("encoding", "lua"), ("data", Rows(layer.gids))]
        out.append((None, node))
    if tmap.objects:
        gids = tmap.object_gids or [0] * len(tmap.objects)
        objects: Table = []
        for object_id, (obj, gid) in enumerate(zip(tmap.objects, gids), start=1):
            box = object_box(obj, tmap.tile_width, tmap.tile_height, gid)
            shape = "point" if box.get("point") else "polyline" if obj.points and not gid else "rectangle"
            item: Table = [
                ("id", object_id),
                ("name", obj.name),
                ("type", obj.type or ""),
                ("shape", shape),
                ("x", box["x"]),
                ("y", box["y"]),
                ("width", box.get("width", 0)),
                ("height", box.get("height", 0)),
                ("rotation", 0),
            ]
            if gid:
                item.append(("gid", gid))
            item.append(("visible", True))
            if shape == "polyline":
                points = polyline_pixels(obj, tmap.tile_width, tmap.tile_height)
                item.append(("polyline", [(None, Inline((("x", x), ("y", y)))) for x, y in points]))
            item.append(("properties", _properties(obj.properties)))
            objects.append((None, item))
        group: Table = [("type", "objectgroup"), ("draworder", "topdown")]
        group += _layer_common(len(tmap.layers) + 1, "objects", True, 1)
        group += [("properties", []), ("objects", objects)]
        out.append((None, group))
    return out


def _properties(properties: Mapping[str, PropertyValue]) -> Table:
    """Custom properties as Tiled writes them: `["name"] = value`, sorted by name, typed as in
    TMX (colours as "#aarrggbb" strings, integers past 32 bits as strings)."""
    out: Table = []
    for name in sorted(properties):
        value = properties[name]
        kind = property_type(value)
        if isinstance(value, Color):
            shown: Value = value.argb()
        elif isinstance(value, ObjectId):
            shown = Inline((("id", int(value)),))
        elif kind is None:
            shown = str(value)
        else:
            shown = value
        out.append((f"[{quote(name)}]", shown))
    return out


def quote(text: str) -> str:
    """A Lua string literal. Tiled escapes backslash, quote and newline; a carriage return (which
    ends a Lua string with an error) and the other control characters but tab are escaped too,
    as three-digit decimal escapes that Lua 5.1 (LuaJIT, so LÖVE) and 5.4 both read."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if any(ord(c) < 32 and c != "\t" for c in escaped):
        escaped = "".join(f"\\{ord(c):03d}" if ord(c) < 32 and c != "\t" else c for c in escaped)
    return f'"{escaped}"'


def number(value: float) -> str:
    """A number as Tiled writes it (whole values without a decimal point), but exact: the
    shortest text that reads back as the same double."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("a bool is not a number here")
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"Lua maps cannot hold the number {value!r}")
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _value(value: Value, depth: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return number(value)
    if isinstance(value, Inline):
        parts = [(f"{key} = " if key else "") + number(v) for key, v in value.items]
        return "{ " + ", ".join(parts) + " }" if parts else "{}"
    if isinstance(value, Rows):
        return _rows(value.gids, depth)
    return _table(value, depth)


def _table(table: Sequence[tuple[str | None, Value]], depth: int) -> str:
    if not table:
        return "{}"
    pad = INDENT * (depth + 1)
    lines = [pad + (f"{key} = " if key else "") + _value(value, depth + 1) for key, value in table]
    return "{\n" + ",\n".join(lines) + "\n" + INDENT * depth + "}"


def _rows(gids: np.ndarray, depth: int) -> str:
    """`{` and the gids row by row ("1, 2, 3,"), from the CSV text in one pass of string
    replaces rather than a Python loop over the tiles."""
    if gids.size == 0:
        return "{}"
    pad = INDENT * (depth + 1)
    body = csv_rows(gids).replace(",\n", "\n").replace(",", ", ").replace("\n", ",\n" + pad)
    return "{\n" + pad + body + "\n" + INDENT * depth + "}"
