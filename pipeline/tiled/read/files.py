"""A Tiled map file and the external tilesets it names, each read in its format (XML or JSON,
by its name, else by its first byte) through the caller's function for reading files."""

from __future__ import annotations

import functools
import posixpath
from typing import Callable

from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.model import TiledMap, Tileset
from pipeline.tiled.read.tmj import parse_json, read_tmj, read_tsj
from pipeline.tiled.read.tmx import parse_xml, read_tmx, read_tsx

# The bytes of a file, by its path relative to the folder the caller reads from and what it is
# (for the caller's error: "the map", "the tileset 'a.tsx' at"); a MapFileError if unreadable.
ReadFile = Callable[[str, str], bytes]


def read_tiled_map(read: ReadFile, relative: str) -> TiledMap:
    """The map at `relative`, with its tilesets; a problem is a MapFileError without the map's
    name (the caller puts it in front)."""
    data = read(relative, "the map")
    folder = posixpath.dirname(relative)
    external = functools.partial(_external_tileset, read)
    if looks_like_json(relative, data):
        return read_tmj(parse_json(data, "the map"), folder, external)
    return read_tmx(parse_xml(data, "the map"), folder, external)


def looks_like_json(name: str, data: bytes) -> bool:
    if name.lower().endswith((".tmj", ".json", ".tsj")):
        return True
    if name.lower().endswith((".tmx", ".tsx", ".xml")):
        return False
    return data.lstrip()[:1] in (b"{", b"[")


def _external_tileset(read: ReadFile, folder: str, source: str, firstgid: int) -> Tileset:
    relative = posixpath.normpath(posixpath.join(folder, source))
    data = read(relative, f"the tileset {source!r} at")
    if looks_like_json(source, data):
        return read_tsj(parse_json(data, f"the tileset {relative}"), firstgid, relative, posixpath.dirname(relative))
    node = parse_xml(data, f"the tileset {relative}")
    if node.tag != "tileset":
        raise MapFileError(f"the tileset {relative} is not a Tiled tileset (root <{node.tag}>)")
    return read_tsx(node, firstgid, posixpath.dirname(relative))
