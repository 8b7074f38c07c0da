"""Tiled JSON maps (.tmj), laid out as Tiled writes them, for engines that read only JSON."""

from __future__ import annotations

import json
from typing import Any

from pipeline.tiled import FORMAT_VERSION, TILED_VERSION
from pipeline.tiled.properties import json_properties
from pipeline.tiled.tmx import TmxMap, base64_data, csv_rows, object_box


def tmj_bytes(tmap: TmxMap) -> bytes:
    """The map as Tiled JSON; `tmap.tileset_source` names an external .tsj, else it is embedded."""
    if tmap.tileset_source is None:
        tileset: dict[str, Any] = tmap.tileset.json(firstgid=1)
    else:
        tileset = {"firstgid": 1, "source": tmap.tileset_source}
    layers: list[dict[str, Any]] = []
    arrays: list[str] = []  # CSV data goes in after json.dumps, one map row per line
    for layer_id, layer in enumerate(tmap.layers, start=1):
        node: dict[str, Any] = {}
        if tmap.encoding == "base64":
            # Tiled writes "" for uncompressed base64, and readers (pytiled-parser) require the key.
            node["compression"] = "" if tmap.compression == "none" else tmap.compression
            node["data"] = base64_data(layer.gids, tmap.compression)
            node["encoding"] = "base64"
        else:
            node["data"] = f"@data{len(arrays)}@"
            arrays.append("[\n" + csv_rows(layer.gids) + "]")
        node.update(
            {
                "height": tmap.height,
                "id": layer_id,
                "name": layer.name,
                "opacity": 1,
                "type": "tilelayer",
                "visible": True,
                "width": tmap.width,
                "x": 0,
                "y": 0,
            }
        )
        layers.append(node)
    if tmap.objects:
        gids = tmap.object_gids or [0] * len(tmap.objects)
        objects = []
        for object_id, (obj, gid) in enumerate(zip(tmap.objects, gids), start=1):
            box = object_box(obj, tmap.tile_width, tmap.tile_height, gid)
            item: dict[str, Any] = {}
            if gid:
                item["gid"] = gid
            item.update({"height": box.get("height", 0), "id": object_id, "name": obj.name})
            if box.get("point"):
                item["point"] = True
            if obj.properties:
                item["properties"] = json_properties(obj.properties)
            item.update({"rotation": 0, "type": obj.type, "visible": True, "width": box.get("width", 0), "x": box["x"], "y": box["y"]})
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
    root: dict[str, Any] = {
        "compressionlevel": -1,
        "height": tmap.height,
        "infinite": False,
        "layers": layers,
        "nextlayerid": len(layers) + 1,
        "nextobjectid": len(tmap.objects) + 1,
        "orientation": "orthogonal",
    }
    if tmap.properties:
        root["properties"] = json_properties(tmap.properties)
    root.update(
        {
            "renderorder": "right-down",
            "tiledversion": TILED_VERSION,
            "tileheight": tmap.tile_height,
            "tilesets": [tileset],
            "tilewidth": tmap.tile_width,
            "type": "map",
            "version": FORMAT_VERSION,
            "width": tmap.width,
        }
    )
    text = json.dumps(root, indent=1, ensure_ascii=False, allow_nan=False)
    for i, array in enumerate(arrays):
        text = text.replace(f'"@data{i}@"', array, 1)
    return (text + "\n").encode("utf-8")


def tsj_bytes(tmap: TmxMap) -> bytes:
    """The tileset alone, as an external Tiled JSON tileset (.tsj)."""
    return (json.dumps(tmap.tileset.json(), indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
