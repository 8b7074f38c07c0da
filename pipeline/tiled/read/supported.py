"""What the reader reads: finite orthogonal maps of a size a Level can hold, each tile layer the
map's size. Anything else is refused while reading the header, before any layer is decoded."""

from __future__ import annotations

from typing import Any

from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.numbers import integer

MAX_CELLS = 64_000_000


def check_map_header(orientation: Any, infinite: Any, width: int, height: int, tw: int, th: int) -> None:
    if orientation != "orthogonal":
        raise MapFileError(f"orientation {orientation!r} is not supported: load.tmx reads orthogonal maps")
    if infinite:
        raise MapFileError("is an infinite map: load.tmx reads fixed-size maps (Map > Map Properties > Infinite off)")
    if width < 1 or height < 1 or width * height > MAX_CELLS:
        raise MapFileError(f"map size {width} x {height} is not between 1 x 1 and {MAX_CELLS:,} cells")
    if tw < 1 or th < 1:
        raise MapFileError(f"tile size {tw} x {th} must be positive")


def check_layer_size(w: Any, h: Any, width: int, height: int, what: str) -> None:
    """A tile layer is the map's size (Tiled reads another as corrupt layer data)."""
    size = (width if w is None else integer(w, f"{what} width"), height if h is None else integer(h, f"{what} height"))
    if size != (width, height):
        raise MapFileError(f"{what} is {size[0]} x {size[1]} tiles, the map {width} x {height}: Tiled reads it as corrupt")


def chunked(what: str) -> MapFileError:
    return MapFileError(f"{what} is stored in chunks (an infinite map): load.tmx reads fixed-size maps")
