"""Room templates drawn in Tiled: the room as the designer drew it, with its doors marked.

The map's cells with no tile are outside the room; cells of the symbol `wall` are its walls and
every other drawn cell is floor (furniture included). Doors are marked either with tiles of the
symbol `door` on the wall (a straight run of them is one door spot of that many tiles) or with
rectangle objects of class `door` over wall tiles; either may carry `socket` (only doors of the
same socket join) and a `direction` (north, east, south or west: the way out of the room), which
is otherwise the side where the room's outside is. Door tiles the layout does not use are drawn
as wall. The room arrives as drawn: its symbols, its objects and its art (tilesets, layers,
flips).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.graphs.templates import DIRECTION_NAMES, DX, DY, FLOOR, OUTSIDE, WALL, DoorSpot, RoomTemplate, TemplateError
from pipeline.level import Level
from pipeline.tiled.as_level.file import MapFile, read_map_file
from pipeline.tiled.read.error import MapFileError


def read_template(recipe_dir: Path, relative: str, name: str, weight: float = 1.0, corridor: bool = False) -> tuple[RoomTemplate, MapFile]:
    """The template drawn in the Tiled map `relative` (to `recipe_dir`), and the map as read (the
    files it took, the tilesets its art uses)."""
    try:
        loaded = read_map_file(recipe_dir, relative)
    except MapFileError as exc:
        raise TemplateError(f"{recipe_dir / relative}: {exc}") from None
    return from_level(name, loaded.level, loaded.filled, weight, corridor), loaded


def from_level(name: str, level: Level, filled: np.ndarray, weight: float = 1.0, corridor: bool = False) -> RoomTemplate:
    """The template a drawn map makes (`filled`: the cells with a tile)."""
    names = [s.name for s in level.alphabet]
    symbol = np.array(names, dtype=object)[level.tiles]
    kinds = np.where(filled, FLOOR, OUTSIDE).astype(np.uint8)
    kinds[filled & (symbol == "wall")] = WALL
    door_cells = filled & (symbol == "door")
    kinds[door_cells] = WALL
    spots: list[DoorSpot] = []
    taken = np.zeros_like(door_cells)
    for obj in level.objects:
        if obj.type != "door":
            continue
        x0, y0 = int(round(obj.x)), int(round(obj.y))
        w, h = max(1, int(round(obj.w))), max(1, int(round(obj.h)))
        cells = [(x, y) for y in range(y0, y0 + h) for x in range(x0, x0 + w)]
        spots.append(_spot(kinds, cells, str(obj.properties.get("socket", "")), str(obj.properties.get("direction", "")), f"door object {obj.name!r}"))
        for x, y in cells:
            if 0 <= y < taken.shape[0] and 0 <= x < taken.shape[1]:
                taken[y, x] = True
    ys, xs = np.nonzero(door_cells & ~taken)
    seen: set[tuple[int, int]] = set()
    for y, x in sorted(zip(ys.tolist(), xs.tolist())):
        if (x, y) in seen:
            continue
        # A run along the row, else along the column.
        run = [(x, y)]
        while run[-1][0] + 1 < kinds.shape[1] and door_cells[y, run[-1][0] + 1]:
            run.append((run[-1][0] + 1, y))
        if len(run) == 1:
            while run[-1][1] + 1 < kinds.shape[0] and door_cells[run[-1][1] + 1, x]:
                run.append((x, run[-1][1] + 1))
        seen.update(run)
        spots.append(_spot(kinds, run, "", "", f"door tiles at x={x}, y={y}"))
    if not spots:
        raise TemplateError("has no door: mark doors with tiles of the symbol `door` on its wall, or rectangle objects of class `door`")
    return RoomTemplate(name, kinds, tuple(spots), corridor=corridor, weight=weight, drawn=level)


def _spot(kinds: np.ndarray, cells: list[tuple[int, int]], socket: str, direction: str, what: str) -> DoorSpot:
    h, w = kinds.shape

    def kind(x: int, y: int) -> int:
        return int(kinds[y, x]) if 0 <= x < w and 0 <= y < h else OUTSIDE

    if any(kind(x, y) != WALL for x, y in cells):
        raise TemplateError(f"{what} is not on the room's wall")
    sides = [d for d in range(4) if all(kind(x + DX[d], y + DY[d]) == OUTSIDE and kind(x - DX[d], y - DY[d]) == FLOOR for x, y in cells)]
    if direction:
        if direction not in DIRECTION_NAMES:
            raise TemplateError(f"{what}: direction {direction!r} is none of {', '.join(DIRECTION_NAMES)}")
        wanted = DIRECTION_NAMES.index(direction)
        if wanted not in sides:
            raise TemplateError(f"{what}: direction {direction!r} does not lead out of the room there")
        sides = [wanted]
    if len(sides) != 1:
        raise TemplateError(f"{what} does not lead out of the room one way (floor on one side, nothing on the other): give it a direction")
    side = sides[0]
    along_x = side in (0, 2)
    line = sorted(cells, key=lambda c: c[0] if along_x else c[1])
    if any((b[0] - a[0], b[1] - a[1]) != ((1, 0) if along_x else (0, 1)) for a, b in zip(line, line[1:])):
        raise TemplateError(f"{what} is not one straight run of tiles along the wall")
    return DoorSpot(line[0][0], line[0][1], len(line), side, socket)
