"""Checks a map must pass before it is written: what an engine importer would otherwise trip on
at load time, far from the recipe that caused it."""

from __future__ import annotations

import numpy as np

from pipeline.errors import PipelineError
from pipeline.tiled.tileset import Tileset, sheet_grid

# Tiled keeps flip and rotation flags in a gid's top four bits; on orthogonal maps bit 28
# (hexagonal 120-degree rotation) means nothing, and none of them belong in generated maps.
FLAG_BITS = 0xF0000000


def check_map(
    width: int,
    height: int,
    layers: list[tuple[str, np.ndarray]],
    tileset: Tileset,
    firstgid: int,
    object_gids: list[int],
    files: dict[str, bytes],
    image_path: str,
) -> None:
    """Raise PipelineError listing every problem: layer sizes, gids in range and free of flag
    bits, the tilesheet among the files written, `columns` consistent with its size."""
    problems = []
    last = firstgid + tileset.tilecount - 1
    for name, gids in layers:
        if gids.shape != (height, width) or gids.size != width * height:
            problems.append(f"layer {name!r}: {gids.size} cells for a {width} x {height} map")
            continue
        flagged = (gids & FLAG_BITS) != 0
        if flagged.any():
            problems.append(f"layer {name!r}: flip/rotation flag bits set at {_first(flagged)}")
        outside = (gids != 0) & ((gids < firstgid) | (gids > last))
        if outside.any():
            problems.append(f"layer {name!r}: gid {int(gids[outside][0])} at {_first(outside)} is outside tileset {tileset.name!r} ({firstgid}..{last})")
    for gid in object_gids:
        if not firstgid <= gid <= last:
            problems.append(f"a tile object has gid {gid}, outside tileset {tileset.name!r} ({firstgid}..{last})")
    if image_path not in files:
        problems.append(f"tileset {tileset.name!r}: its image {image_path} is not written with the map")
    columns, rows = sheet_grid(
        tileset.image_width, tileset.image_height, tileset.tile_width, tileset.tile_height, tileset.margin, tileset.spacing
    )
    if (columns, rows) != (tileset.columns, tileset.rows):
        problems.append(
            f"tileset {tileset.name!r}: a {tileset.image_width} x {tileset.image_height} image holds {columns} x {rows} tiles, "
            f"the tileset says {tileset.columns} x {tileset.rows}"
        )
    if problems:
        raise PipelineError(problems)


def _first(where: np.ndarray) -> str:
    y, x = np.argwhere(where)[0]
    return f"row {int(y)}, column {int(x)}"
