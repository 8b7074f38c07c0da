"""What the gallery draws of one exported map, read back from its Tiled file (TMX or TMJ).

The map page needs the map without the markers a preview PNG has baked in (objects are an
overlay the designer switches on and off), and the data layers' exact numbers (region labels,
distances) for the other overlays. Both are read from the files the pack ships, not from the
cache: what the page shows is what the game will load.

Only a pack's own files are read (every path is checked to stay inside the pack folder), and
the picture is drawn at the preview's scale (`step_of`), never as one huge image.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from pipeline.fsio import read_regular
from pipeline.tiled.layer_data import MapFileError, base64_gids, csv_gids, gid_rows, parse_json, parse_xml
from pipeline.tiled.render import png_bytes, step_of
from pipeline.tiled.values import decode_values

@dataclass
class TilesetRef:
    firstgid: int
    tile: tuple[int, int]  # width, height in pixels
    columns: int
    count: int
    margin: int
    spacing: int
    image: str  # relative to the pack folder


@dataclass
class MapFile:
    width: int
    height: int
    tile: tuple[int, int]
    tile_layers: list[np.ndarray] = field(default_factory=list)  # visible tile layers' gids, bottom first
    data_layers: dict[str, np.ndarray] = field(default_factory=dict)  # name -> int32 values
    tilesets: list[TilesetRef] = field(default_factory=list)


def inside(pack: Path, relative: str) -> Path:
    """`relative` under the pack folder, refused when it (or a link on the way) leads out."""
    root = pack.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise MapFileError(f"{relative}: leads out of the pack")
    return path


def read_map(pack: Path, relative: str) -> MapFile:
    data = _read(pack, relative)
    folder = posixpath.dirname(relative)
    if relative.endswith((".tmj", ".json")):
        return _JsonMap(pack, folder).parse(parse_json(data, relative))
    return _XmlMap(pack, folder).parse(parse_xml(data, relative))


def picture(pack: Path, m: MapFile) -> bytes:
    """The map's visible tile layers drawn from their tilesheets, every step-th pixel as in the
    preview (so overlays line up with the preview's coordinates too)."""
    tw, th = m.tile
    step = step_of(m.height * th, m.width * tw)
    atlas, lookup = _atlas(pack, m)
    ys = np.arange(0, m.height * th, step)
    xs = np.arange(0, m.width * tw, step)
    out = np.zeros((len(ys), len(xs), 4), dtype=np.uint8)
    for drawn in m.tile_layers:
        gids = drawn & np.uint32(0x0FFFFFFF)
        idx = lookup[np.minimum(gids, len(lookup) - 1)]
        cell = idx[(ys // th)[:, None], (xs // tw)[None, :]]
        py = np.broadcast_to((ys % th)[:, None], cell.shape)
        px = np.broadcast_to((xs % tw)[None, :], cell.shape)
        flips = (drawn >> 29)[(ys // th)[:, None], (xs // tw)[None, :]]
        if flips.any():
            # A tile drawn flipped (a hand-drawn map's art): each pixel read from where Tiled's
            # flips (diagonal, then left-right, then upside down) bring it from.
            py = np.where(flips & 2, th - 1 - py, py)
            px = np.where(flips & 4, tw - 1 - px, px)
            py, px = np.where(flips & 1, px, py), np.where(flips & 1, py, px)
        top = atlas[cell, py, px]
        alpha = top[..., 3:4].astype(np.uint16)
        out = ((top.astype(np.uint16) * alpha + out.astype(np.uint16) * (255 - alpha)) // 255).astype(np.uint8)
        out[..., 3] = np.maximum(out[..., 3], top[..., 3])
    return png_bytes(Image.fromarray(out, "RGBA"))


def _atlas(pack: Path, m: MapFile) -> tuple[np.ndarray, np.ndarray]:
    """Every tile of the map's tile size as one (n, th, w, 4) array (index 0 see-through), and
    gid -> index into it."""
    tw, th = m.tile
    tiles = [np.zeros((1, th, tw, 4), dtype=np.uint8)]
    top = max((t.firstgid + t.count for t in m.tilesets), default=1)
    lookup = np.zeros(top + 1, dtype=np.int64)
    n = 1
    for ts in m.tilesets:
        if ts.tile != (tw, th) or not ts.count:
            continue
        try:
            with Image.open(inside(pack, ts.image)) as im:
                sheet = np.asarray(im.convert("RGBA"))
        except (OSError, ValueError) as exc:
            raise MapFileError(f"{ts.image}: cannot read the tilesheet ({exc})") from None
        ids = np.arange(ts.count)
        x0 = ts.margin + (ids % ts.columns) * (tw + ts.spacing)
        y0 = ts.margin + (ids // ts.columns) * (th + ts.spacing)
        ok = (x0 + tw <= sheet.shape[1]) & (y0 + th <= sheet.shape[0])
        ids, x0, y0 = ids[ok], x0[ok], y0[ok]
        rows = y0[:, None, None] + np.arange(th)[None, :, None]
        cols = x0[:, None, None] + np.arange(tw)[None, None, :]
        tiles.append(sheet[rows, cols])
        lookup[ts.firstgid + ids] = n + np.arange(len(ids))
        n += len(ids)
    return np.concatenate(tiles), lookup


def _read(pack: Path, relative: str) -> bytes:
    try:
        return read_regular(inside(pack, relative))
    except OSError as exc:
        raise MapFileError(f"{relative}: cannot read ({exc.strerror or exc})") from None


def _gids(text: str, encoding: str, compression: str, width: int, height: int, what: str) -> np.ndarray:
    if encoding == "csv":
        return gid_rows(csv_gids(text, what), width, height, what, flips=True)
    if encoding == "base64":
        return gid_rows(base64_gids(text, compression, what), width, height, what, flips=True)
    raise MapFileError(f"{what}: encoding {encoding!r} is not drawn (CSV or base64)")


class _XmlMap:
    def __init__(self, pack: Path, folder: str):
        self.pack, self.folder = pack, folder

    def parse(self, root: ET.Element) -> MapFile:
        m = MapFile(int(root.get("width", 0)), int(root.get("height", 0)), (int(root.get("tilewidth", 1)), int(root.get("tileheight", 1))))
        for node in root.findall("tileset"):
            m.tilesets.append(self._tileset(node))
        for node in root.iter("layer"):
            data = node.find("data")
            if data is None:
                continue
            props = {p.get("name"): p.get("value", p.text or "") for p in node.findall("properties/property")}
            compression = data.get("compression", "")
            if "values" in props:
                m.data_layers[node.get("name", "")] = decode_values(props["values"], m.width, m.height, compression)
            elif node.get("visible", "1") != "0":
                m.tile_layers.append(_gids(data.text or "", data.get("encoding", ""), compression, m.width, m.height, node.get("name", "")))
        return m

    def _tileset(self, node: ET.Element) -> TilesetRef:
        firstgid = int(node.get("firstgid", 1))
        folder = self.folder
        source = node.get("source")
        if source:
            relative = posixpath.normpath(posixpath.join(self.folder, source))
            folder = posixpath.dirname(relative)
            data = _read(self.pack, relative)
            if relative.endswith((".tsj", ".json")):
                return _tileset_json(parse_json(data, relative), firstgid, folder)
            node = parse_xml(data, relative)
        image = node.find("image")
        return TilesetRef(
            firstgid,
            (int(node.get("tilewidth", 1)), int(node.get("tileheight", 1))),
            max(1, int(node.get("columns", 1))),
            int(node.get("tilecount", 0)),
            int(node.get("margin", 0)),
            int(node.get("spacing", 0)),
            posixpath.normpath(posixpath.join(folder, image.get("source", ""))) if image is not None else "",
        )


class _JsonMap:
    def __init__(self, pack: Path, folder: str):
        self.pack, self.folder = pack, folder

    def parse(self, doc: dict[str, Any]) -> MapFile:
        m = MapFile(int(doc.get("width", 0)), int(doc.get("height", 0)), (int(doc.get("tilewidth", 1)), int(doc.get("tileheight", 1))))
        for ts in doc.get("tilesets", []):
            firstgid = int(ts.get("firstgid", 1))
            folder = self.folder
            if "source" in ts:
                relative = posixpath.normpath(posixpath.join(self.folder, ts["source"]))
                folder = posixpath.dirname(relative)
                ts = parse_json(_read(self.pack, relative), relative)
            m.tilesets.append(_tileset_json(ts, firstgid, folder))
        stack = list(doc.get("layers", []))
        while stack:
            layer = stack.pop(0)
            if layer.get("type") == "group":
                stack[:0] = layer.get("layers", [])
                continue
            if layer.get("type") != "tilelayer":
                continue
            props = {p.get("name"): p.get("value") for p in layer.get("properties", [])}
            compression = layer.get("compression", "")
            if "values" in props:
                m.data_layers[layer.get("name", "")] = decode_values(str(props["values"]), m.width, m.height, compression)
            elif layer.get("visible", True):
                data = layer.get("data", [])
                if isinstance(data, list):
                    m.tile_layers.append(gid_rows(data, m.width, m.height, layer.get("name", ""), flips=True))
                else:
                    m.tile_layers.append(_gids(data, "base64", compression, m.width, m.height, layer.get("name", "")))
        return m


def _tileset_json(ts: dict[str, Any], firstgid: int, folder: str) -> TilesetRef:
    return TilesetRef(
        firstgid,
        (int(ts.get("tilewidth", 1)), int(ts.get("tileheight", 1))),
        max(1, int(ts.get("columns", 1))),
        int(ts.get("tilecount", 0)),
        int(ts.get("margin", 0)),
        int(ts.get("spacing", 0)),
        posixpath.normpath(posixpath.join(folder, ts.get("image", ""))),
    )
