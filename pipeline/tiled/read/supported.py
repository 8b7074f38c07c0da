"""What the reader reads: orthogonal maps of a size a Level can hold, each tile layer the map's
size; an infinite map when its chunks lie inside its width x height (as ours do). Anything else is
refused while reading the header, before any layer is decoded."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.numbers import integer

MAX_CELLS = 64_000_000


def check_map_header(orientation: Any, width: int, height: int, tw: int, th: int) -> None:
    if orientation != "orthogonal":
        raise MapFileError(f"orientation {orientation!r} is not supported: load.tmx reads orthogonal maps")
    if width < 1 or height < 1 or width * height > MAX_CELLS:
        raise MapFileError(f"map size {width} x {height} is not between 1 x 1 and {MAX_CELLS:,} cells")
    if tw < 1 or th < 1:
        raise MapFileError(f"tile size {tw} x {th} must be positive")


def check_layer_size(w: Any, h: Any, width: int, height: int, what: str) -> None:
    """A tile layer is the map's size (Tiled reads another as corrupt layer data)."""
    size = (width if w is None else integer(w, f"{what} width"), height if h is None else integer(h, f"{what} height"))
    if size != (width, height):
        raise MapFileError(f"{what} is {size[0]} x {size[1]} tiles, the map {width} x {height}: Tiled reads it as corrupt")


def from_chunks(chunks: list[tuple[int, int, int, int, np.ndarray]], width: int, height: int, what: str) -> np.ndarray:
    """An infinite map's layer as the map's width x height gids, from its chunks (x, y, w, h,
    gids of w * h); one with a tile outside that rectangle is refused (the Level would not hold it)."""
    layer = np.zeros((height, width), dtype=np.uint32)
    for x, y, w, h, gids in chunks:
        block = gids.reshape(h, w)  # checked by the reader: w x h gids
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, width), min(y + h, height)
        inside = block[y0 - y : max(y1 - y, y0 - y), x0 - x : max(x1 - x, x0 - x)]
        if int(np.count_nonzero(block)) != int(np.count_nonzero(inside)):
            raise MapFileError(
                f"{what} has tiles outside the map's {width} x {height} (the chunk at ({x}, {y})): crop the map in Tiled (Map > Crop to Selection) or make it finite"
            )
        if inside.size:
            layer[y0:y1, x0:x1] = inside
    return layer
