"""Tiled's files read back: the TMX/TSX or JSON document, and its tile layer data (CSV, or base64
plain, zlib or gzip) as gids. One reader for the maps users draw (load.tmx, place.prefabs) and
the maps the gallery draws."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import xml.etree.ElementTree as ET
import zlib
from typing import Any

import numpy as np

# Bits 29-31 flip a tile, bit 28 rotates a hexagonal one: none of them changes what the tile is.
GID_MASK = 0x0FFFFFFF


class MapFileError(Exception):
    """A problem with a map file (or a tileset or image it uses)."""


def parse_json(data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MapFileError(f"{what} is not Tiled JSON ({exc})") from None


def parse_xml(data: bytes, what: str) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise MapFileError(f"{what} is not a Tiled TMX/TSX file (XML error: {exc})") from None


def gid_rows(values: list[int], width: int, height: int, what: str, flips: bool = False) -> np.ndarray:
    """A layer's gids as an (h, w) uint32 array, flip and rotation bits cleared (kept with
    `flips`: the tile as drawn, for art carried to the exports)."""
    if len(values) != width * height:
        raise MapFileError(f"{what} has {len(values)} tiles, the map {width} x {height} = {width * height}")
    # Tiled's gids are 32 bits (the top three the flips): anything else wraps around unseen.
    try:
        wide = np.asarray(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)
        bad = np.nonzero((wide < 0) | (wide >= 2**32))[0]
        k = int(bad[0]) if bad.size else None
    except OverflowError:  # past 64 bits: found the slow way, as only such a file needs
        k = next(k for k, v in enumerate(values) if not -(2**63) <= v < 2**63)
    if k is not None:
        raise MapFileError(f"{what}, cell ({k % width}, {k // width}): tile gid {values[k]} is not a Tiled gid (0 to 4294967295)")
    gids = wide.astype(np.uint32)
    return (gids if flips else gids & np.uint32(GID_MASK)).reshape(height, width)


def base64_data(text: str, compression: str, what: str) -> bytes:
    """The bytes of base64 layer data (plain, zlib or gzip): gids, or a data layer's values."""
    if compression not in ("", "zlib", "gzip"):
        raise MapFileError(f"{what}: compression {compression!r} is not supported (use CSV, or base64 plain, zlib or gzip)")
    try:
        raw = base64.b64decode(text.strip(), validate=False)
        if compression == "zlib":
            raw = zlib.decompress(raw)
        elif compression == "gzip":
            raw = gzip.decompress(raw)
    except (ValueError, zlib.error, OSError, EOFError) as exc:
        raise MapFileError(f"{what}: bad base64 layer data ({exc})") from None
    return raw


def base64_gids(text: str, compression: str, what: str) -> list[int]:
    raw = base64_data(text, compression, what)
    if len(raw) % 4:
        raise MapFileError(f"{what}: base64 layer data is {len(raw)} bytes, not a whole number of 4-byte gids")
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def csv_gids(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in text.replace("\n", "").split(",") if v.strip()]
    except ValueError:
        raise MapFileError(f"{what}: CSV layer data holds something that is not a tile id") from None
