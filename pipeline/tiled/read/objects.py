"""The objects of a map file alone, TMX or TMJ, for what is made once per pack from its maps' objects
(the Tiled project's classes). A map's layer data is most of its bytes: it is skipped, not
decoded, and in a TMX not even parsed (a thousand maps read whole took 0.4 s, a tenth of their
build)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pipeline.tiled.read import tmj, tmx
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.model import TiledObject


def map_objects(path: Path) -> list[TiledObject]:
    """Every object of every object layer of the map at `path` (.tmj: Tiled JSON; else TMX), in
    file order. Raises MapFileError for a file that is not such a map, OSError if unreadable."""
    dropped: list[str] = []  # properties of types a Level cannot hold: not ours to judge here
    if path.suffix == ".tmj":
        doc = tmj.parse_json(path.read_bytes(), str(path))
        if not isinstance(doc, dict):
            raise MapFileError(f"{path} is not a Tiled JSON map")
        return [tmj.read_object(obj, dropped) for obj in _json_objects(doc.get("layers"))]
    data = path.read_bytes()
    if b"<map" not in data[:512]:
        raise MapFileError(f"{path} is not a Tiled TMX map")
    # Tiled writes no element inside another of its own name, nor comments or CDATA: each object
    # layer outside the tilesets (whose tiles hold objects too: collision shapes) is found by
    # its tags, in one pass, and parsed alone; the layers' data between them never is. A file
    # not written so (a comment that could hide a tag, a tag Tiled would not write) is parsed
    # whole instead, which also tells what is wrong with a broken one.
    found: list[TiledObject] = []
    at = 0
    while (tag := _TAGS.search(data, at)) is not None:
        name = tag.group(1)
        opened = data.find(b">", tag.end())
        close = b"</" + name + b">"
        end = opened + 1 if data[opened - 1 : opened] == b"/" else data.find(close, opened) + len(close)
        if name.startswith(b"!") or opened < 0 or end < len(close) or data.find(b"<!", tag.start(), end) >= 0:
            return _streamed(path, dropped)
        if name == b"objectgroup":
            try:
                layer = ET.fromstring(data[tag.start() : end])
            except ET.ParseError:
                return _streamed(path, dropped)
            found += [tmx.read_object(node, dropped) for node in layer.iter("object")]
        at = end
    return found


_TAGS = re.compile(rb"<(!--|!\[CDATA\[|(?:tileset|objectgroup)(?=[\s/>]))")


def _streamed(path: Path, dropped: list[str]) -> list[TiledObject]:
    found: list[TiledObject] = []
    in_tileset = 0
    try:
        for event, node in ET.iterparse(path, events=("start", "end")):
            if node.tag == "tileset":
                in_tileset += 1 if event == "start" else -1
            elif event == "end" and node.tag == "object" and not in_tileset:
                found.append(tmx.read_object(node, dropped))
                node.clear()
            elif event == "end" and node.tag in ("data", "layer"):
                node.clear()
    except ET.ParseError as exc:
        raise MapFileError(f"{path} is not a Tiled TMX file (XML error: {exc})") from None
    return found


def _json_objects(layers: Any) -> list[Any]:
    out: list[Any] = []
    for layer in layers if isinstance(layers, list) else []:
        if not isinstance(layer, dict):
            continue
        if layer.get("type") == "objectgroup":
            out += layer.get("objects") or []
        elif layer.get("type") == "group":
            out += _json_objects(layer.get("layers"))
    return out
