"""Palette PNGs written from rows of packed pixels, for previews.

A preview is tiles laid side by side, so its pixel rows can be gathered already packed (2 bits a
pixel for a 4-colour sheet) from a packed copy of the tilesheet, and rows repeat down each tile:
with PNG's "Up" filter on every row they become runs of zeros, which deflate's RLE strategy
squeezes in one quick pass. Measured on a 1328 x 1328 maze preview: 0.9 ms and 5.5 KB, against
2.2 ms and 5.6 KB drawing the image and encoding it with Pillow.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_UP = 2  # filter type: each byte minus the byte above it
_INDEXED = 3  # colour type


def bits_for(colours: int) -> int:
    """The fewest bits a pixel of a palette with this many entries takes in a PNG."""
    return next(bits for bits in (1, 2, 4, 8) if colours <= 1 << bits)


def pack(index: np.ndarray, bits: int) -> np.ndarray:
    """Palette indices (..., width), width a multiple of 8 / bits, packed into bytes the way PNG
    stores them: the leftmost pixel in the high bits."""
    per = 8 // bits
    grouped = index.reshape(*index.shape[:-1], index.shape[-1] // per, per).astype(np.uint8)
    shifts = ((8 - bits) - bits * np.arange(per)).astype(np.uint8)
    return np.bitwise_or.reduce(grouped << shifts, axis=-1).astype(np.uint8)


def write(rows: np.ndarray, width: int, bits: int, palette: np.ndarray, text: dict[str, str] | None = None) -> bytes:
    """The PNG of `rows` (height x row bytes, packed as `pack` does) for a `width`-pixel image of
    `bits`-bit indices into `palette` (entries x RGBA), with `text` as tEXt chunks (Latin-1)
    before the pixels, where a reader finds them without decoding any."""
    height, size = rows.shape
    raw = np.empty((height, size + 1), dtype=np.uint8)
    raw[:, 0] = _UP  # above the first row the standard reads zeros: Up copies it
    raw[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=raw[1:, 1:])  # modulo 256, as the filter defines
    deflate = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_RLE)
    data = deflate.compress(raw) + deflate.flush()
    header = struct.pack(">IIBBBBB", width, height, bits, _INDEXED, 0, 0, 0)
    return b"".join(
        (
            _SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", np.ascontiguousarray(palette[:, :3]).tobytes()),
            _chunk(b"tRNS", np.ascontiguousarray(palette[:, 3]).tobytes()),
            *(_chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1")) for key, value in (text or {}).items()),
            _chunk(b"IDAT", data),
            _chunk(b"IEND", b""),
        )
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))
