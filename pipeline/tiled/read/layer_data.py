"""Tile layer data as Tiled writes it (CSV, or base64 plain, zlib or gzip) decoded to gids."""

from __future__ import annotations

import base64
import gzip
import zlib
from typing import Sequence

import numpy as np

from pipeline.tiled.read.error import MapFileError

# Bits 29-31 flip a tile, bit 28 rotates a hexagonal one: none of them changes what the tile is.
GID_MASK = 0x0FFFFFFF


def gid_rows(values: Sequence[int] | np.ndarray, width: int, height: int, what: str) -> np.ndarray:
    """A layer's gids as an (h, w) uint32 array, flip and rotation bits kept (the tile as drawn)."""
    if len(values) != width * height:
        raise MapFileError(f"{what} has {len(values)} tiles, the map {width} x {height} = {width * height}")
    if isinstance(values, np.ndarray):  # decoded from 4-byte words: 32 bits by construction
        return values.astype(np.uint32).reshape(height, width)
    # Tiled's gids are 32 bits (the top three the flips): anything else wraps around unseen.
    try:
        wide = np.asarray(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)
        bad = np.nonzero((wide < 0) | (wide >= 2**32))[0]
        k = int(bad[0]) if bad.size else None
    except OverflowError:  # past 64 bits: found the slow way, as only such a file needs
        k = next(k for k, v in enumerate(values) if not -(2**63) <= v < 2**63)
    if k is not None:
        raise MapFileError(f"{what}, cell ({k % width}, {k // width}): tile gid {values[k]} is not a Tiled gid (0 to 4294967295)")
    return wide.astype(np.uint32).reshape(height, width)


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


def base64_gids(text: str, compression: str, what: str) -> np.ndarray:
    raw = base64_data(text, compression, what)
    if len(raw) % 4:
        raise MapFileError(f"{what}: base64 layer data is {len(raw)} bytes, not a whole number of 4-byte gids")
    return np.frombuffer(raw, dtype="<u4")


def csv_gids(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in text.replace("\n", "").split(",") if v.strip()]
    except ValueError:
        raise MapFileError(f"{what}: CSV layer data holds something that is not a tile id") from None
