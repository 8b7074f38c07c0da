"""TMX and TSX, Tiled's XML map and tileset, read into the reader's form.

Parsed with ElementTree rather than pytmx: pytmx opens external tilesets itself (a FIFO would
hang the load, and the bytes it read would not be the ones the caller recorded), renumbers
gids, and refuses properties whose names clash with its attributes (`width`, `type`...).
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET

import numpy as np

from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.layer_data import base64_gids, csv_gids, gid_rows
from pipeline.tiled.read.model import DataLayer, ExternalTileset, TiledMap, TiledObject, TileLayer, Tileset
from pipeline.tiled.read.numbers import image_size, integer, number
from pipeline.tiled.read.properties import Properties, typed
from pipeline.tiled.read.supported import check_layer_size, check_map_header, from_chunks


def parse_xml(data: bytes, what: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise MapFileError(f"{what} is not a Tiled TMX/TSX file (XML error: {exc})") from None


def read_tmx(root: ET.Element, folder: str, external: ExternalTileset) -> TiledMap:
    """The map `root` of a TMX file in `folder` (relative to where the caller reads files)."""
    if root.tag != "map":
        raise MapFileError(f"is not a Tiled map (its root element is <{root.tag}>, not <map>)")
    width = integer(root.get("width"), "map width")
    height = integer(root.get("height"), "map height")
    tw = integer(root.get("tilewidth"), "tilewidth")
    th = integer(root.get("tileheight"), "tileheight")
    check_map_header(root.get("orientation", "orthogonal"), width, height, tw, th)
    tilesets = [_map_tileset(node, folder, external) for node in root.findall("tileset")]
    tiled = TiledMap(width, height, tw, th, tilesets, infinite=root.get("infinite", "0") == "1")
    _layers(root, tiled)
    tiled.properties = _properties(root, "map ", tiled.dropped)
    return tiled


def read_tsx(node: ET.Element, firstgid: int, folder: str) -> Tileset:
    """A <tileset>, embedded in a map or the root of a TSX file in `folder`."""
    name = node.get("name", "")
    count = node.get("tilecount")
    tiles: dict[int, Properties] = {}
    classes: dict[int, str] = {}
    for tile in node.findall("tile"):
        local = integer(tile.get("id"), f"tileset {name!r} tile id")
        tiles[local] = _properties(tile, f"tileset {name!r} tile {local}: ")
        classes[local] = tile.get("class") or tile.get("type") or ""
    image = node.find("image")
    collection = image is None and node.get("columns") == "0"
    ts = Tileset(firstgid, name, integer(count, "tilecount") if count is not None else None, tiles, classes, collection)
    if image is not None and image.get("source"):
        what = f"tileset {name!r}"
        ts.image = posixpath.normpath(posixpath.join(folder, image.get("source", "")))
        ts.image_size = image_size(image.get("width"), image.get("height"), what)
        ts.tile_size = (integer(node.get("tilewidth"), f"{what} tile size"), integer(node.get("tileheight"), f"{what} tile size"))
        ts.margin = integer(node.get("margin") or 0, f"{what} margin")
        ts.spacing = integer(node.get("spacing") or 0, f"{what} spacing")
        ts.columns = integer(node.get("columns") or 0, f"{what} columns")
    return ts


def _map_tileset(node: ET.Element, folder: str, external: ExternalTileset) -> Tileset:
    firstgid = integer(node.get("firstgid"), "tileset firstgid")
    source = node.get("source")
    if source:
        return external(folder, source, firstgid)
    return read_tsx(node, firstgid, folder)


def _layers(parent: ET.Element, tiled: TiledMap) -> None:
    for node in parent:
        if node.tag == "layer":
            own = _properties(node, "")
            if "values" in own:
                data = node.find("data")
                compression = data.get("compression", "") if data is not None else ""
                tiled.data_layers.append(DataLayer(node.get("name", ""), str(own["values"]), compression))
            else:
                tiled.layers.append(_tile_layer(node, tiled.width, tiled.height, tiled.infinite))
        elif node.tag == "objectgroup":
            for obj in node.findall("object"):
                tiled.objects.append(read_object(obj, tiled.dropped))
        elif node.tag == "group":
            _layers(node, tiled)


def _tile_layer(node: ET.Element, width: int, height: int, infinite: bool = False) -> TileLayer:
    name = node.get("name", "")
    what = f"layer {name!r}"
    data = node.find("data")
    if data is None:
        raise MapFileError(f"{what} has no <data>")
    encoding = data.get("encoding", "")
    # An infinite map's layer is its chunks: none at all for a layer with no tile.
    if infinite or data.find("chunk") is not None:
        pieces = []
        for c in data.findall("chunk"):
            x, y, w, h = (integer(c.get(k), f"{what} chunk {k}") for k in ("x", "y", "width", "height"))
            where = f"{what}, the chunk at ({x}, {y})"
            if w < 1 or h < 1:
                raise MapFileError(f"{where} is {w} x {h} tiles")
            pieces.append((x, y, w, h, _gids(c, encoding, data.get("compression", ""), w, h, where)))
        return TileLayer(name, from_chunks(pieces, width, height, what), node.get("visible", "1") != "0")
    check_layer_size(node.get("width"), node.get("height"), width, height, what)
    return TileLayer(name, _gids(data, encoding, data.get("compression", ""), width, height, what), node.get("visible", "1") != "0")


def _gids(node: ET.Element, encoding: str, compression: str, w: int, h: int, what: str) -> np.ndarray:
    """The w x h gids of a <data> or a <chunk>, encoded as the layer's <data> says, checked."""
    if encoding == "csv":
        return gid_rows(csv_gids(node.text or "", what), w, h, what)
    if encoding == "base64":
        return gid_rows(base64_gids(node.text or "", compression, what), w, h, what)
    if encoding == "":
        return gid_rows([integer(t.get("gid", "0"), f"{what} tile gid") for t in node.findall("tile")], w, h, what)
    raise MapFileError(f"{what}: encoding {encoding!r} is not supported (use CSV or base64)")


def read_object(node: ET.Element, dropped: list[str]) -> TiledObject:
    where = f"object {node.get('id', '?')}"
    if node.get("template"):
        raise MapFileError(f"{where} comes from a template ({node.get('template')}): detach it in Tiled (Detach Template), or export with --detach-templates")
    points = None
    polyline = False
    for tag in ("polygon", "polyline"):
        shape = node.find(tag)
        if shape is not None:
            polyline = tag == "polyline"
            try:
                points = [(float(a), float(b)) for a, b in (p.split(",") for p in shape.get("points", "").split())]
            except ValueError:
                raise MapFileError(f"{where}: bad {tag} points") from None
    x, y, w, h = (number(node.get(k, "0"), f"{where} {k}") for k in ("x", "y", "width", "height"))
    drawn = integer(node.get("gid", "0"), f"{where} gid")
    rotation = number(node.get("rotation", "0"), f"{where} rotation")
    props = _properties(node, f"{where}: ", dropped)
    oid = node.get("id")
    return TiledObject(
        None if oid is None else integer(oid, f"{where} id"), node.get("name", ""), node.get("class", node.get("type", "")) or "",
        (x, y, w, h), drawn, points, polyline, rotation, props,
    )


def _properties(node: ET.Element, where: str, dropped: list[str] | None = None) -> Properties:
    props: Properties = {}
    block = node.find("properties")
    if block is None:
        return props
    for prop in block.findall("property"):
        name = prop.get("name", "")
        value = prop.get("value")
        if value is None:
            value = prop.text or ""  # multi-line strings are the element's text
        value_typed = typed(name, prop.get("type", "string"), value, where, dropped)
        if value_typed is not None:
            props[name] = value_typed
    return props
