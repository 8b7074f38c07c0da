"""Layer data compressed as Tiled reads it (a zlib or gzip stream), in fixed pieces compressed
side by side on the cores the build leaves idle.

A 4095 x 4095 layer is 67 MB of 32-bit gids, and zlib takes about a second over it on one core.
Each PIECE of the raw bytes is deflated on its own, flushed to a byte boundary, and the pieces
are joined under one header and one checksum: a standard stream any inflater reads. The pieces
are cut at fixed offsets, never by the number of cores, so the bytes are the same on every
machine and in every process; a map of up to PIECE bytes a layer (1,024 x 1,024 tiles) is one
piece, byte for byte what `zlib.compress` gives.
"""

from __future__ import annotations

import struct
import zlib
from functools import partial
from typing import Literal

from pipeline.threads import shared_out

# zlib's own default, which Tiled writes too: level 9 took 17 times as long on a 4095 x 4095
# cave layer (20 s against 1.2 s) for a file a sixth smaller.
LEVEL = 6
PIECE = 1 << 22  # raw bytes a piece: 4 MiB, big enough that the seams cost nothing measurable

# The two-byte zlib header for LEVEL (RFC 1950: deflate, 32 KiB window, level class 2, checked).
_ZLIB_HEADER = b"\x78\x9c"
# gzip's header as Python's gzip.compress(mtime=0) writes it at LEVEL on Unix (RFC 1952): no
# name, no time, no extra flags, OS 3; fixed here, so Windows writes the same bytes.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"


def compress(raw: memoryview | bytes, compression: Literal["zlib", "gzip"]) -> bytes:
    """`raw` as one zlib or gzip stream."""
    data = memoryview(raw).cast("B")
    starts = range(0, len(data), PIECE) or range(1)
    pieces = shared_out([partial(_deflate, data[i : i + PIECE], i + PIECE >= len(data)) for i in starts])
    body = b"".join(pieces)
    if compression == "zlib":
        return _ZLIB_HEADER + body + struct.pack(">I", zlib.adler32(data))
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _deflate(piece: memoryview, last: bool) -> bytes:
    # Raw deflate (no header): the pieces are joined under the stream's one header. Each but the
    # last ends on a sync flush, a byte-aligned end of block that the next piece's blocks follow.
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)
    return packer.compress(piece) + packer.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
