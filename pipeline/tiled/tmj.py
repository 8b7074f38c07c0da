"""Tiled JSON maps (.tmj), laid out as Tiled writes them, for engines that read only JSON."""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.tiled import FORMAT_VERSION, TILED_VERSION
from pipeline.tiled.chunks import DEFAULT_CHUNK, chunked
from pipeline.tiled.custom_types import enum_members
from pipeline.tiled.properties import json_properties
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TmxMap, base64_data, csv_rows, object_box, polyline_pixels


def tmj_bytes(tmap: TmxMap) -> bytes:
    """The map as Tiled JSON; `tmap.tileset_source` names an external .tsj, else it is embedded."""
    if tmap.tileset_source is None:
        tileset: dict[str, Any] = tmap.tileset.json(firstgid=1)
    else:
        tileset = {"firstgid": 1, "source": tmap.tileset_source}
    tilesets = [tileset]
    for firstgid, more, source in tmap.more_tilesets:
        tilesets.append(more.json(firstgid=firstgid) if source is None else {"firstgid": firstgid, "source": source})
    layers: list[dict[str, Any]] = []
    arrays: list[str] = []  # CSV data goes in after json.dumps, one map row per line
    for layer_id, layer in enumerate(tmap.layers, start=1):
        node: dict[str, Any] = {}
        if tmap.encoding == "base64":
            # Tiled writes "" for uncompressed base64, and readers (pytiled-parser) require the key.
            node["compression"] = "" if tmap.compression == "none" else tmap.compression
        width, height = tmap.width, tmap.height
        if tmap.chunk is not None:
            found = chunked(layer.gids, tmap.chunk)
            node["chunks"] = [_chunk(x, y, block, tmap, arrays) for x, y, block in found.chunks]
            startx, starty, width, height = found.bounds
        elif tmap.encoding == "base64":
            node["data"] = base64_data(layer.gids, tmap.compression)
        else:
            node["data"] = f"@data{len(arrays)}@"
            arrays.append("[\n" + csv_rows(layer.gids) + "]")
        if tmap.encoding == "base64":
            node["encoding"] = "base64"
        node.update(
            {
                "height": height,
                "id": layer_id,
                "name": layer.name,
                "opacity": 1 if layer.opacity == 1 else layer.opacity,  # Tiled writes a whole 1 as 1
                "type": "tilelayer",
                "visible": layer.visible,
                "width": width,
                "x": 0,
                "y": 0,
            }
        )
        if tmap.chunk is not None:
            node.update({"startx": startx, "starty": starty})
        if layer.locked:
            node["locked"] = True  # Tiled writes it only when set
        if layer.properties:
            node["properties"] = json_properties(layer.properties)
        layers.append(dict(sorted(node.items())))  # Tiled's key order
    if tmap.objects:
        gids = tmap.object_gids or [0] * len(tmap.objects)
        objects = []
        for object_id, (obj, gid) in enumerate(zip(tmap.objects, gids), start=1):
            box = object_box(obj, tmap.tile_width, tmap.tile_height, gid)
            item: dict[str, Any] = {}
            if gid:
                item["gid"] = gid
            item.update({"height": _number(box.get("height", 0)), "id": object_id, "name": obj.name})
            if box.get("point"):
                item["point"] = True
            elif obj.points and not gid:
                item["polyline"] = [{"x": _number(x), "y": _number(y)} for x, y in polyline_pixels(obj, tmap.tile_width, tmap.tile_height)]
            if obj.properties:
                item["properties"] = json_properties(obj.properties, enum_members(obj.type) if tmap.enums else None)
            item.update({
                "rotation": 0, "type": obj.type, "visible": True,
                "width": _number(box.get("width", 0)), "x": _number(box["x"]), "y": _number(box["y"]),
            })
            objects.append(item)
        layers.append(
            {
                "draworder": "topdown",
                "id": len(tmap.layers) + 1,
                "name": "objects",
                "objects": objects,
                "opacity": 1,
                "type": "objectgroup",
                "visible": True,
                "x": 0,
                "y": 0,
            }
        )
    root: dict[str, Any] = {"compressionlevel": -1}
    if tmap.chunk is not None and tmap.chunk != DEFAULT_CHUNK:  # Tiled leaves its default out
        root["editorsettings"] = {"chunksize": {"height": tmap.chunk, "width": tmap.chunk}}
    root.update({
        "height": tmap.height,
        "infinite": tmap.chunk is not None,
        "layers": layers,
        "nextlayerid": len(layers) + 1,
        "nextobjectid": len(tmap.objects) + 1,
        "orientation": "orthogonal",
    })
    if tmap.properties:
        root["properties"] = json_properties(tmap.properties)
    root.update(
        {
            "renderorder": "right-down",
            "tiledversion": TILED_VERSION,
            "tileheight": tmap.tile_height,
            "tilesets": tilesets,
            "tilewidth": tmap.tile_width,
            "type": "map",
            "version": FORMAT_VERSION,
            "width": tmap.width,
        }
    )
    text = json.dumps(root, indent=1, ensure_ascii=False, allow_nan=False)
    if arrays:
        # In one pass: an infinite map may have thousands of chunks. Anchored on the key, which
        # no text a user wrote can hold: json.dumps escapes the quotes in a name or a value.
        text = re.sub(r'"data": "@data(\d+)@"', lambda m: '"data": ' + arrays[int(m.group(1))], text)
    return (text + "\n").encode("utf-8")


def _chunk(x: int, y: int, block: Any, tmap: TmxMap, arrays: list[str]) -> dict[str, Any]:
    """One chunk of an infinite map's layer, its data as the map's other layer data is."""
    if tmap.encoding == "base64":
        data: Any = base64_data(block, tmap.compression)
    else:
        data = f"@data{len(arrays)}@"
        arrays.append("[" + csv_rows(block).replace("\n", "") + "]")
    return {"data": data, "height": block.shape[0], "width": block.shape[1], "x": x, "y": y}


def _number(value: float) -> float:
    """A whole number as an integer (`24`, not `24.0`), as Tiled writes one, so that a map saved
    again in Tiled differs from ours only where the map does."""
    return int(value) if float(value).is_integer() else float(value)


def tsj_bytes(tileset: Tileset) -> bytes:
    """The tileset alone, as an external Tiled JSON tileset (.tsj)."""
    return (json.dumps(tileset.json(), indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
