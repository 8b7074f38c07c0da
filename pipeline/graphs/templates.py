"""Room templates: the shape of a room as tiles (floor inside a ring of wall) and the places on
its wall where a door may go.

A room is laid out as whole tiles: floor cells, and a one-tile ring of wall around them. Two
rooms joined by a door share a stretch of wall, and the door is cut into it, so every door has
one room's floor on one side and the other's on the other. Rooms not joined may share wall too
(that is how dungeons look), but a floor never lies on another room's floor or wall.

Edgar's room shapes are polygons on the integer grid: their unit squares are our floor cells and
the ring around them our walls, so a door of Edgar's `doorLength` L is L wall tiles, at least
`cornerDistance` tiles from the corners of the side it is on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from pipeline.level import Level, PropertyValue

OUTSIDE, WALL, FLOOR = 0, 1, 2

# Outward directions, in map coordinates (y grows down, as in Tiled).
NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
DIRECTION_NAMES = ("north", "east", "south", "west")
DX = (0, 1, 0, -1)
DY = (-1, 0, 1, 0)


@dataclass(frozen=True)
class DoorSpot:
    """Where a door may go: `length` wall tiles from (x, y) along the wall (east for a door on a
    north or south wall, south for one on an east or west wall), opening towards `side`."""

    x: int
    y: int
    length: int
    side: int
    socket: str = ""

    def cells(self) -> list[tuple[int, int]]:
        along_x = self.side in (NORTH, SOUTH)
        return [(self.x + k, self.y) if along_x else (self.x, self.y + k) for k in range(self.length)]


@dataclass(frozen=True)
class RoomTemplate:
    """A room's tiles (`kinds`: OUTSIDE, WALL or FLOOR per cell) and its door spots.

    `drawn`: a room drawn in Tiled, as its Level (symbols, objects), pasted over the floor and
    wall the layout draws, so the room arrives as drawn. `weight`: how often the template is
    chosen among a room's pool, relative to the others."""

    name: str
    kinds: np.ndarray
    doors: tuple[DoorSpot, ...]
    corridor: bool = False
    weight: float = 1.0
    drawn: Level | None = field(default=None, compare=False)
    properties: dict[str, PropertyValue] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # One order for equal spots, so templates with one digest number their doors alike.
        object.__setattr__(self, "doors", tuple(sorted(self.doors, key=lambda d: (d.y, d.x, d.side, d.length, d.socket))))

    @property
    def width(self) -> int:
        return int(self.kinds.shape[1])

    @property
    def height(self) -> int:
        return int(self.kinds.shape[0])

    def digest(self) -> str:
        """What the layout depends on: the shape and the doors (not the name or the art)."""
        h = hashlib.sha256(self.kinds.tobytes() + repr(self.kinds.shape).encode())
        h.update(repr([(d.x, d.y, d.length, d.side, d.socket) for d in self.doors]).encode())
        return h.hexdigest()


class TemplateError(ValueError):
    """A room shape or door that cannot be a room (the message names what is wrong)."""


def polygon_cells(points: Sequence[tuple[int, int]]) -> tuple[np.ndarray, int, int]:
    """The unit squares inside an orthogonal polygon with integer corners, as a boolean grid,
    and the grid's origin (the polygon's smallest x and y)."""
    pts = [(int(x), int(y)) for x, y in points]
    if len(pts) < 4:
        raise TemplateError(f"a shape needs at least 4 corners (got {len(pts)})")
    for (x1, y1), (x2, y2) in zip(pts, pts[1:] + pts[:1]):
        if x1 != x2 and y1 != y2:
            raise TemplateError(f"the side from {[x1, y1]} to {[x2, y2]} is slanted: a room's sides run along the grid")
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, y0 = min(xs), min(ys)
    w, h = max(xs) - x0, max(ys) - y0
    if w < 1 or h < 1 or w * h > 1_000_000:
        raise TemplateError(f"the shape is {w} x {h}: a room is between 1 x 1 and 1000 x 1000")
    # Even-odd rule at each cell's centre, counting the vertical sides to its right.
    cx = np.arange(w) + x0 + 0.5
    cy = np.arange(h)[:, None] + y0 + 0.5
    inside = np.zeros((h, w), dtype=bool)
    for (x1, y1), (x2, y2) in zip(pts, pts[1:] + pts[:1]):
        if x1 == x2 and y1 != y2:
            lo, hi = min(y1, y2), max(y1, y2)
            inside ^= ((cy > lo) & (cy < hi)) & (cx[None, :] < x1)
    if not inside.any():
        raise TemplateError("the shape has no area")
    return inside, x0, y0


def ring(floor: np.ndarray) -> np.ndarray:
    """Kinds for floor cells padded by one, with a wall on every cell touching the floor (corners too)."""
    padded = np.pad(floor, 1)
    # Eight-neighbour dilation by shifts (scipy stays out of every command's imports).
    grown = np.pad(padded, 1)
    near = np.zeros_like(padded)
    h, w = padded.shape
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            near |= grown[dy : dy + h, dx : dx + w]
    walls = near & ~padded
    kinds = np.zeros(padded.shape, dtype=np.uint8)
    kinds[walls] = WALL
    kinds[padded] = FLOOR
    return kinds


def wall_runs(kinds: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Straight stretches of wall a door can go through, as (x, y, length, side): wall cells with
    floor on the inside (opposite `side`) and nothing of the room outside."""
    h, w = kinds.shape
    padded = np.pad(kinds, 1)
    runs = []
    for side in range(4):
        inner = padded[1 - DY[side] : 1 - DY[side] + h, 1 - DX[side] : 1 - DX[side] + w]
        outer = padded[1 + DY[side] : 1 + DY[side] + h, 1 + DX[side] : 1 + DX[side] + w]
        ok = (kinds == WALL) & (inner == FLOOR) & (outer == OUTSIDE)
        along_x = side in (NORTH, SOUTH)
        lines = ok if along_x else ok.T
        for row in range(lines.shape[0]):
            line = np.concatenate([[False], lines[row], [False]]).astype(np.int8)
            starts = np.flatnonzero(np.diff(line) == 1)
            stops = np.flatnonzero(np.diff(line) == -1)
            for a, b in zip(starts.tolist(), stops.tolist()):
                runs.append((a, row, b - a, side) if along_x else (row, a, b - a, side))
    return runs


def overlap_doors(kinds: np.ndarray, length: int, corner_distance: int, socket: str = "") -> tuple[DoorSpot, ...]:
    """Every door of `length` tiles along a straight wall, `corner_distance` tiles from its ends."""
    spots = []
    for x, y, n, side in wall_runs(kinds):
        along_x = side in (NORTH, SOUTH)
        for k in range(corner_distance, n - corner_distance - length + 1):
            spots.append(DoorSpot(x + k, y, length, side, socket) if along_x else DoorSpot(x, y + k, length, side, socket))
    return tuple(spots)


def line_door(kinds: np.ndarray, x0: int, y0: int, line: Sequence[Sequence[int]], socket: str = "") -> DoorSpot:
    """The door Edgar gives as a line on the polygon's outline ([[x1, y1], [x2, y2]]): the wall
    tiles just outside the floor along it. `x0`, `y0`: the polygon's origin."""
    (x1, y1), (x2, y2) = (int(v) for v in line[0]), (int(v) for v in line[1])
    if (x1 != x2) == (y1 != y2):
        raise TemplateError(f"the door {[[x1, y1], [x2, y2]]} is not a straight line along the grid")
    h, w = kinds.shape
    # Polygon coordinates -> the padded grid's: cell (x, y) of the polygon is (x - x0 + 1, y - y0 + 1).
    if y1 == y2:
        a, b = sorted((x1, x2))
        gx, gy = a - x0 + 1, y1 - y0 + 1
        above = [(gx + k, gy - 1) for k in range(b - a)]  # cells on the smaller-y side of the line
        below = [(gx + k, gy) for k in range(b - a)]
        sides = (SOUTH, NORTH)
    else:
        a, b = sorted((y1, y2))
        gx, gy = x1 - x0 + 1, a - y0 + 1
        above = [(gx - 1, gy + k) for k in range(b - a)]
        below = [(gx, gy + k) for k in range(b - a)]
        sides = (EAST, WEST)

    def kind(cells: list[tuple[int, int]]) -> set[int]:
        return {int(kinds[cy, cx]) if 0 <= cx < w and 0 <= cy < h else OUTSIDE for cx, cy in cells}

    if kind(above) == {FLOOR} and kind(below) == {WALL}:
        first, side = below[0], sides[0]
    elif kind(below) == {FLOOR} and kind(above) == {WALL}:
        first, side = above[0], sides[1]
    else:
        raise TemplateError(f"the door {[[x1, y1], [x2, y2]]} is not on the shape's outline with the room on one side")
    return DoorSpot(first[0], first[1], b - a, side, socket)


def rotated(points: Sequence[tuple[int, int]], quarter_turns: int) -> list[tuple[int, int]]:
    """The points turned by quarter turns about the origin (x, y -> -y, x)."""
    out = [(int(x), int(y)) for x, y in points]
    for _ in range(quarter_turns % 4):
        out = [(-y, x) for x, y in out]
    return out


def from_polygon(
    name: str,
    points: Sequence[tuple[int, int]],
    *,
    door_length: int = 1,
    corner_distance: int = 1,
    door_lines: Sequence[Sequence[Sequence[int]]] | None = None,
    socket: str = "",
    corridor: bool = False,
    weight: float = 1.0,
    turns: int = 0,
) -> RoomTemplate:
    """A template from a polygon: doors anywhere on its straight walls (`door_length`,
    `corner_distance`, Edgar's OverlapMode) or at the given lines (SpecificPositionsMode)."""
    pts = rotated(points, turns)
    cells, x0, y0 = polygon_cells(pts)
    kinds = ring(cells)
    if door_lines is None:
        if door_length < 1:
            raise TemplateError(f"a door is at least 1 tile long (got {door_length})")
        doors = overlap_doors(kinds, door_length, max(0, corner_distance), socket)
    else:
        doors = tuple(line_door(kinds, x0, y0, rotated(line, turns), socket) for line in door_lines)
    if not doors:
        raise TemplateError(f"no door of {door_length} tiles fits {corner_distance} tiles from the corners of any wall")
    return RoomTemplate(name, kinds, doors, corridor=corridor, weight=weight)


def turned_variants(template_of: Callable[[int], RoomTemplate], rotate: bool) -> list[RoomTemplate]:
    """The template at each quarter turn (one of each distinct shape and doors) when `rotate`."""
    out: list[RoomTemplate] = []
    seen: set[str] = set()
    for turns in range(4 if rotate else 1):
        t = template_of(turns)
        if t.digest() not in seen:
            seen.add(t.digest())
            out.append(t)
    return out
