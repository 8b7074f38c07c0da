"""MagicaVoxel `.vox` files, as far as MarkovJunior's tilesets need them: the size of the first
model and its voxels as palette indices (the colours themselves never matter: a tileset's values
are numbered by the order its palette indices first appear)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

EMPTY = -1  # a voxel the file does not list


class VoxError(ValueError):
    """A file that is not a `.vox` model this reader understands."""


@dataclass(frozen=True, eq=False)
class Vox:
    voxels: np.ndarray  # int16 (mz, my, mx): palette index 1..255, or EMPTY
    palette: np.ndarray | None  # uint8 (256, 4) RGBA for palette indices 1..256 when the file has one

    @property
    def size(self) -> tuple[int, int, int]:
        """(mx, my, mz), in the file's order."""
        mz, my, mx = self.voxels.shape
        return mx, my, mz


def read_vox(data: bytes) -> Vox:
    """The first model of a `.vox` file. Chunks are (id, content size, children size, content,
    children); everything but SIZE, XYZI and RGBA is skipped."""
    if len(data) < 8 or data[:4] != b"VOX ":
        raise VoxError("is not a MagicaVoxel file (no 'VOX ' header)")
    size: tuple[int, int, int] | None = None
    voxels: np.ndarray | None = None
    palette: np.ndarray | None = None
    pos = 8
    while pos + 12 <= len(data):
        chunk = data[pos : pos + 4]
        (content,) = struct.unpack_from("<i", data, pos + 4)
        body = data[pos + 12 : pos + 12 + content]
        if content < 0 or len(body) < content:
            raise VoxError(f"chunk {chunk!r} at byte {pos} runs past the end of the file")
        if chunk == b"MAIN":
            pos += 12  # its children follow at once
            continue
        if chunk == b"SIZE" and size is None:
            if content < 12:
                raise VoxError("SIZE chunk is too short")
            mx, my, mz = struct.unpack_from("<iii", body)
            if min(mx, my, mz) <= 0:
                raise VoxError(f"model size {mx}x{my}x{mz} is empty")
            size = (mx, my, mz)
        elif chunk == b"XYZI" and voxels is None:
            if size is None:
                raise VoxError("XYZI chunk comes before any SIZE chunk")
            if content < 4:
                raise VoxError("XYZI chunk is too short")
            (count,) = struct.unpack_from("<i", body)
            if count < 0 or 4 + 4 * count > content:
                raise VoxError(f"XYZI chunk lists {count} voxels but holds {max(content - 4, 0) // 4}")
            xyzi = np.frombuffer(body, dtype=np.uint8, count=4 * count, offset=4).reshape(count, 4).astype(np.int64)
            mx, my, mz = size
            inside = (xyzi[:, 0] < mx) & (xyzi[:, 1] < my) & (xyzi[:, 2] < mz)
            if not inside.all():
                raise VoxError(f"a voxel lies outside the model's {mx}x{my}x{mz} size")
            grid = np.full((mz, my, mx), EMPTY, dtype=np.int16)
            grid[xyzi[:, 2], xyzi[:, 1], xyzi[:, 0]] = xyzi[:, 3]  # a later voxel at one place wins
            voxels = grid
        elif chunk == b"RGBA" and palette is None and content >= 1024:
            palette = np.frombuffer(body, dtype=np.uint8, count=1024).reshape(256, 4).copy()
        pos += 12 + content
    if voxels is None:
        raise VoxError("has no voxels (no SIZE and XYZI chunks)")
    return Vox(voxels, palette)
