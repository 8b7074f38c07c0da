"""Tiled JSON (TMJ map, TSJ tileset) read into the reader's form: as Tiled 1.2 and later write
it, or as before (tiles and properties as objects keyed by id and name)."""

from __future__ import annotations

import json
import posixpath
from typing import Any

import numpy as np

from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.layer_data import base64_gids, gid_rows
from pipeline.tiled.read.model import DataLayer, ExternalTileset, TiledMap, TiledObject, TileLayer, Tileset
from pipeline.tiled.read.numbers import image_size, integer, number
from pipeline.tiled.read.properties import Properties, typed
from pipeline.tiled.read.supported import check_layer_size, check_map_header, from_chunks


def parse_json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MapFileError(f"{what} is not Tiled JSON ({exc})") from None


def read_tmj(doc: Any, folder: str, external: ExternalTileset) -> TiledMap:
    """The map `doc` of a TMJ file in `folder` (relative to where the caller reads files)."""
    if not isinstance(doc, dict) or doc.get("type") != "map":
        raise MapFileError('is not a Tiled JSON map (no "type": "map")')
    width = integer(doc.get("width"), "map width")
    height = integer(doc.get("height"), "map height")
    tw = integer(doc.get("tilewidth"), "tilewidth")
    th = integer(doc.get("tileheight"), "tileheight")
    check_map_header(doc.get("orientation", "orthogonal"), width, height, tw, th)
    tilesets = [_map_tileset(ts, folder, external) for ts in doc.get("tilesets", [])]
    tiled = TiledMap(width, height, tw, th, tilesets)
    _layers(doc.get("layers", []), tiled)
    tiled.properties = _properties(doc.get("properties"), "map ", tiled.dropped, doc.get("propertytypes"))
    return tiled


def read_tsj(ts: Any, firstgid: int, label: str, folder: str = "") -> Tileset:
    """A tileset, embedded in a map or a TSJ file in `folder`; `label` names it if it has no name."""
    if not isinstance(ts, dict):
        raise MapFileError(f"the tileset {label} is not a Tiled JSON tileset")
    name = str(ts.get("name", label))
    listed = ts.get("tiles") or []
    if isinstance(listed, dict):  # Tiled before 1.2: an object keyed by tile id, properties apart
        listed = [{**(tile if isinstance(tile, dict) else {}), "id": key} for key, tile in listed.items()]
    if not isinstance(listed, list):
        raise MapFileError(f"tileset {name!r}: its tiles are neither a list nor an object")
    old_props = ts.get("tileproperties") or {}
    old_types = ts.get("tilepropertytypes") or {}
    if not isinstance(old_props, dict) or not isinstance(old_types, dict):
        raise MapFileError(f"tileset {name!r}: its tileproperties and tilepropertytypes must be objects keyed by tile id")
    tiles: dict[int, Properties] = {}
    classes: dict[int, str] = {}
    for tile in listed:
        if not isinstance(tile, dict):
            raise MapFileError(f"tileset {name!r}: a tile is not a JSON object")
        local = integer(tile.get("id"), f"tileset {name!r} tile id")
        tiles[local] = _properties(tile.get("properties"), f"tileset {name!r} tile {local}: ")
        classes[local] = str(tile.get("class") or tile.get("type") or "")
    for key, props in old_props.items():
        local = integer(key, f"tileset {name!r} tile id")
        tiles[local] = {**tiles.get(local, {}), **_properties(props, f"tileset {name!r} tile {local}: ", types=old_types.get(key))}
    count = ts.get("tilecount")
    collection = "image" not in ts and ts.get("columns") == 0
    tileset = Tileset(firstgid, name, integer(count, "tilecount") if count is not None else None, tiles, classes, collection)
    image = ts.get("image")
    if image and isinstance(image, str):
        what = f"tileset {name!r}"
        tileset.image = posixpath.normpath(posixpath.join(folder, image))
        tileset.image_size = image_size(ts.get("imagewidth"), ts.get("imageheight"), what)
        tileset.tile_size = (integer(ts.get("tilewidth"), f"{what} tile size"), integer(ts.get("tileheight"), f"{what} tile size"))
        tileset.margin = integer(ts.get("margin") or 0, f"{what} margin")
        tileset.spacing = integer(ts.get("spacing") or 0, f"{what} spacing")
        tileset.columns = integer(ts.get("columns") or 0, f"{what} columns")
    return tileset


def _map_tileset(ts: Any, folder: str, external: ExternalTileset) -> Tileset:
    if not isinstance(ts, dict):
        raise MapFileError("a tileset entry is not a JSON object")
    firstgid = integer(ts.get("firstgid"), "tileset firstgid")
    source = ts.get("source")
    if source:
        return external(folder, str(source), firstgid)
    return read_tsj(ts, firstgid, str(ts.get("name", "")), folder)


def _layers(items: Any, tiled: TiledMap) -> None:
    for item in items if isinstance(items, list) else []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "tilelayer":
            name = str(item.get("name", ""))
            own = _properties(item.get("properties"), f"layer {name!r}: ", types=item.get("propertytypes"))
            if "values" in own:
                tiled.data_layers.append(DataLayer(name, str(own["values"]), str(item.get("compression", ""))))
            else:
                tiled.layers.append(_tile_layer(item, tiled.width, tiled.height))
        elif kind == "objectgroup":
            for obj in item.get("objects", []):
                tiled.objects.append(read_object(obj, tiled.dropped))
        elif kind == "group":
            _layers(item.get("layers", []), tiled)


def _tile_layer(item: dict[str, Any], width: int, height: int) -> TileLayer:
    name = str(item.get("name", ""))
    what = f"layer {name!r}"
    if "chunks" in item:
        pieces = [_chunk(c, item, what) for c in item.get("chunks") or []]
        return TileLayer(name, from_chunks(pieces, width, height, what), bool(item.get("visible", True)))
    check_layer_size(item.get("width"), item.get("height"), width, height, what)
    return TileLayer(name, _gids(item.get("data"), item, width, height, what), bool(item.get("visible", True)))


def _gids(data: Any, layer: dict[str, Any], w: int, h: int, what: str) -> np.ndarray:
    """The w x h gids of a layer's or a chunk's `data`, encoded as the layer says, checked."""
    if layer.get("encoding", "csv") == "base64" and isinstance(data, str):
        return gid_rows(base64_gids(data, layer.get("compression", ""), what), w, h, what)
    if isinstance(data, list):
        return gid_rows([integer(v, f"{what} tile gid") for v in data], w, h, what)
    raise MapFileError(f"{what}: encoding {layer.get('encoding')!r} is not supported (use CSV or base64)")


def _chunk(chunk: Any, layer: dict[str, Any], what: str) -> tuple[int, int, int, int, np.ndarray]:
    """(x, y, width, height, gids) of one chunk, its data encoded as its layer says and checked
    as a layer's is."""
    if not isinstance(chunk, dict):
        raise MapFileError(f"{what}: a chunk is not a JSON object")
    x, y, w, h = (integer(chunk.get(k), f"{what} chunk {k}") for k in ("x", "y", "width", "height"))
    where = f"{what}, the chunk at ({x}, {y})"
    if w < 1 or h < 1:
        raise MapFileError(f"{where} is {w} x {h} tiles")
    return x, y, w, h, _gids(chunk.get("data"), layer, w, h, where)


def read_object(obj: Any, dropped: list[str]) -> TiledObject:
    if not isinstance(obj, dict):
        raise MapFileError("an object is not a JSON object")
    where = f"object {obj.get('id', '?')}"
    if obj.get("template"):
        raise MapFileError(f"{where} comes from a template ({obj['template']}): detach it in Tiled, or export with --detach-templates")
    points = None
    polyline = False
    for key in ("polygon", "polyline"):
        if isinstance(obj.get(key), list):
            if not all(isinstance(p, dict) for p in obj[key]):
                raise MapFileError(f"{where}: bad {key} points (each is an object with x and y)")
            polyline = key == "polyline"
            points = [(number(p.get("x"), f"{where} point"), number(p.get("y"), f"{where} point")) for p in obj[key]]
    x, y, w, h = (number(obj.get(k, 0), f"{where} {k}") for k in ("x", "y", "width", "height"))
    cls = obj.get("class", obj.get("type", "")) or ""
    drawn = integer(obj.get("gid", 0), f"{where} gid")
    rotation = number(obj.get("rotation", 0), f"{where} rotation")
    props = _properties(obj.get("properties"), f"{where}: ", dropped, obj.get("propertytypes"))
    oid = obj.get("id")
    return TiledObject(
        None if oid is None else integer(oid, f"{where} id"), str(obj.get("name", "")), str(cls),
        (x, y, w, h), drawn, points, polyline, rotation, props,
    )


def _properties(items: Any, where: str, dropped: list[str] | None = None, types: Any = None) -> Properties:
    """Properties as Tiled JSON writes them: a list of {name, type, value}, or before Tiled 1.2
    an object of values with their types in an object beside it (`types`: "propertytypes")."""
    props: Properties = {}
    if isinstance(items, dict):
        types = types if isinstance(types, dict) else {}
        items = [{"name": k, "type": types.get(k) or _json_type(v), "value": v} for k, v in items.items()]
    if items is None:
        return props
    if not isinstance(items, list):
        raise MapFileError(f"{where}properties are neither a list nor an object")
    for prop in items:
        if not isinstance(prop, dict):
            raise MapFileError(f"{where}properties: one is not a JSON object (with a name, a type and a value)")
        name = str(prop.get("name", ""))
        value = typed(name, str(prop.get("type", "string")), prop.get("value"), where, dropped)
        if value is not None:
            props[name] = value
    return props


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "string"
