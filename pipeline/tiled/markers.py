"""A map's objects over its picture, exactly as the TMX's object layer holds them: tile objects as
their tile (an extra layer of gids, so they are drawn as Tiled draws tiles), points, rectangles
and polylines (paths) as markers. A level graph's connections are drawn too, as links: a `door`
object whose `from` and `to` name two `room` objects' `node` is a line from the one room's
middle through the door to the other's, in the key's colour when the door is locked; they show
which rooms a door joins where rooms merely touch.

Markers are sized from the tile size at the scale they are drawn, with a floor in pixels, so the
same objects read on a full preview and on a 160-pixel thumbnail. They are drawn with Pillow's
plain (not antialiased) primitives in opaque colours: every pixel is set, none blended, so they
are the same bytes on every machine.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Sequence

import numpy as np

from pipeline.level import MapObject
from pipeline.tiled.tmx import object_box, polyline_pixels

if TYPE_CHECKING:
    from PIL import Image

Kind = Literal["point", "rect", "path", "tile", "link"]

OUTLINE = (0, 0, 0, 255)
# PICO-8 colours, as the sheet's background and text are: spawn green, exit red, rooms blue.
# Doors brown, as the door symbol is (white, their colour by name, vanished on light floors);
# a level graph's links white (not the traps' white). A locked door, and its link, are drawn as
# LOCKED, in the keys' colour (`colour("key")`): a door and its key read as a pair.
COLOURS = {
    "spawn": (0, 228, 54, 255), "exit": (255, 0, 77, 255), "room": (41, 173, 255, 255), "path": (255, 236, 39, 255),
    "door": (171, 82, 54, 255), "link": (255, 255, 255, 255), "locked": (0, 255, 255, 255),
}
LINK, LOCKED = "link", "locked"
# Other types: MarkovJunior's palette's colours that none of those, the black ring or each other
# are easily taken for (orange, pink, peach, grey, cyan, magenta, lime, white, brown, teal,
# slate); with four, a pack's chests, keys, enemies and traps shared colours.
OTHERS = (
    (255, 163, 0, 255), (255, 119, 168, 255), (255, 204, 170, 255), (194, 195, 199, 255), (0, 255, 255, 255), (255, 0, 255, 255),
    (168, 231, 46, 255), (255, 241, 232, 255), (171, 82, 54, 255), (55, 148, 110, 255), (131, 118, 156, 255),
)
MIN_RADIUS = 3  # pixels: a point is at least a 7-pixel disc
# Below this many pixels a tile object's own tile is a smudge: it gets a point marker too.
TILE_MARKS_BELOW = 6.0


@dataclass(frozen=True)
class Marker:
    """One object of the object layer in map pixels, as the TMX stores it: a point at (x, y), a
    rectangle from (x, y) of w x h, a path through `points` (absolute), or a tile object's tile
    cell from (x, y) of w x h; or a link, a door's connection through `points` (its rooms'
    middles and the door's), of type LINK or LOCKED. A locked door's rectangle is of type LOCKED."""

    kind: Kind
    type: str
    x: float
    y: float
    w: float = 0.0
    h: float = 0.0
    points: tuple[tuple[float, float], ...] = ()

    def to_json(self) -> list[object]:
        return [self.kind, self.type, self.x, self.y, self.w, self.h, [list(p) for p in self.points]]

    @classmethod
    def from_json(cls, item: list[object]) -> Marker:
        kind, type_, x, y, w, h, points = item
        return cls(kind, str(type_), float(x), float(y), float(w), float(h), tuple((float(a), float(b)) for a, b in points))  # type: ignore[arg-type, misc]


def markers_of(objects: Sequence[MapObject], gids: Sequence[int], tile_width: int, tile_height: int) -> list[Marker]:
    """The markers of a map's objects (`gids`: each object's tile gid, 0 for none), in the order
    they are drawn (`drawing_order`)."""
    out: list[Marker] = []
    for obj, gid in zip(objects, list(gids) + [0] * (len(objects) - len(gids))):
        box = object_box(obj, tile_width, tile_height, gid)
        if gid:
            out.append(Marker("tile", obj.type, box["x"], box["y"] - box["height"], box["width"], box["height"]))
        elif obj.points:
            path = tuple((box["x"] + px, box["y"] + py) for px, py in polyline_pixels(obj, tile_width, tile_height))
            out.append(Marker("path", obj.type, box["x"], box["y"], points=path))
        elif box.get("point"):
            out.append(Marker("point", obj.type, box["x"], box["y"]))
        else:
            out.append(Marker("rect", LOCKED if _locked_door(obj) else obj.type, box["x"], box["y"], box["width"], box["height"]))
    return drawing_order(out + links(objects, tile_width, tile_height))


def links(objects: Sequence[MapObject], tile_width: int, tile_height: int) -> list[Marker]:
    """The links of a level graph's doors (see the module's docstring), in the doors' order."""
    middle: dict[str, tuple[float, float]] = {}
    for obj in objects:
        node = obj.properties.get("node")
        if obj.type == "room" and isinstance(node, str) and not obj.points and obj.w and obj.h:
            middle.setdefault(node, ((obj.x + obj.w / 2) * tile_width, (obj.y + obj.h / 2) * tile_height))
    out = []
    for obj in objects:
        a, b = obj.properties.get("from"), obj.properties.get("to")
        if obj.type != "door" or not isinstance(a, str) or not isinstance(b, str) or a not in middle or b not in middle:
            continue
        door = ((obj.x + obj.w / 2) * tile_width, (obj.y + obj.h / 2) * tile_height)
        kind = LOCKED if _locked_door(obj) else LINK
        out.append(Marker("link", kind, door[0], door[1], points=(middle[a], door, middle[b])))
    return out


def _locked_door(obj: MapObject) -> bool:
    return obj.type == "door" and bool(obj.properties.get("lock"))


def drawing_order(markers: Sequence[Marker]) -> list[Marker]:
    """Links under rooms under paths under tile objects' marks under points; the file's order
    within a kind."""
    order = {"link": 0, "rect": 1, "path": 2, "tile": 3, "point": 4}
    return sorted(markers, key=lambda m: order[m.kind])  # stable


def tile_object_layers(objects: Sequence[MapObject], gids: Sequence[int], shape: tuple[int, int]) -> list[np.ndarray]:
    """Tile objects as gid layers over the map's tile layers: each object fills the tile cell the
    TMX anchors it in. Objects sharing a cell go on successive layers, later ones on top, as Tiled
    draws them (top-down order keeps the file's order among equal y)."""
    h, w = shape
    layers: list[np.ndarray] = []
    for obj, gid in zip(objects, gids):
        if not gid:
            continue
        box = object_box(obj, 1, 1, gid)
        x, y = int(box["x"]), int(box["y"]) - 1
        if not (0 <= x < w and 0 <= y < h):
            continue  # outside the map: outside its picture too
        for layer in layers:
            if layer[y, x] == 0:
                layer[y, x] = gid
                break
        else:
            layers.append(np.zeros(shape, dtype=np.uint32))
            layers[-1][y, x] = gid
    return layers


def colour(type_: str) -> tuple[int, int, int, int]:
    if type_ in COLOURS:
        return COLOURS[type_]
    # blake2b, not hash(): the same colour for a type in every process. The key was searched for
    # one that gives the commonest item types a colour each: chest orange, key cyan, enemy
    # magenta, potion slate, trap white, item pink, coin lime, lever grey.
    return OTHERS[hashlib.blake2b(type_.encode(), digest_size=2, key=b"pcg-marker-19443").digest()[0] % len(OTHERS)]


def draws(markers: Sequence[Marker], tile: float) -> bool:
    """Whether `draw` would draw any of the markers at this tile size."""
    return any(m.kind != "tile" or tile < TILE_MARKS_BELOW for m in markers)


def inks(markers: Sequence[Marker]) -> list[tuple[int, int, int, int]]:
    """The colours the markers are drawn in, in a fixed order."""
    return list(dict.fromkeys([OUTLINE, *(colour(m.type) for m in markers)]))


def with_inks(image: Image.Image, markers: Sequence[Marker]) -> Image.Image:
    """The image ready to draw the markers on: a palette image with their colours added to its
    palette when there is room (drawing and writing stay a quarter of RGBA's work), else RGBA."""
    if image.mode == "P":
        palette = image.getpalette() or []
        used = len(palette) // 3
        wanted = inks(markers)
        if used + len(wanted) <= 256:
            image = image.copy()
            clear = image.info.get("transparency")
            alpha = bytes(clear) if isinstance(clear, bytes) else bytes(255 if i != clear else 0 for i in range(used))
            image.putpalette(palette + [v for c in wanted for v in c[:3]])
            image.info["transparency"] = alpha.ljust(used, b"\xff") + bytes(255 for _ in wanted)
            return image
    return image.convert("RGBA")


def draw(image: Image.Image, markers: Sequence[Marker], scale: float, tile: float) -> None:
    """Draw the markers on `image` (RGB, RGBA, or a palette image from `with_inks`), map pixels
    times `scale`; `tile` is a tile's side in the image's pixels, which sizes them."""
    from PIL import ImageDraw

    canvas = ImageDraw.Draw(image)
    line = max(1, round(tile / 8))
    path_width = max(2, round(tile / 4))
    radius = max(MIN_RADIUS, round(tile * 0.35))
    rgb = image.mode == "RGB"
    index: dict[tuple[int, int, int, int], int] = {}
    if image.mode == "P":
        wanted = inks(markers)
        first = len(image.getpalette() or []) // 3 - len(wanted)
        index = {c: first + k for k, c in enumerate(wanted)}

    def paint(c: tuple[int, int, int, int]) -> tuple[int, ...] | int:
        if index:
            return index[c]
        return c[:3] if rgb else c

    def px(v: float) -> int:
        return math.floor(v * scale + 0.5)

    for m in markers:
        fill = paint(colour(m.type))
        if m.kind == "rect":
            x0, y0, x1, y1 = px(m.x), px(m.y), px(m.x + m.w) - 1, px(m.y + m.h) - 1
            if x1 >= x0 and y1 >= y0:
                canvas.rectangle((x0, y0, x1, y1), outline=fill, width=line)
        elif m.kind == "path":
            points = [(px(x), px(y)) for x, y in m.points]
            if len(points) > 1:
                canvas.line(points, fill=fill, width=path_width)
            for end in (points[0], points[-1]) if points else ():
                _disc(canvas, end, max(1, path_width // 2 + 1), fill, paint(OUTLINE))
        elif m.kind == "link":
            # Thinner than a path, edged in black to read on light floors and dark walls alike,
            # and a dot on each room's middle: the level graph, drawn.
            points = [(px(x), px(y)) for x, y in m.points]
            canvas.line(points, fill=paint(OUTLINE), width=line + 2)
            canvas.line(points, fill=fill, width=line)
            for end in (points[0], points[-1]):
                _disc(canvas, end, max(1, path_width // 2 + 1), fill, paint(OUTLINE))
        elif m.kind == "point":
            _disc(canvas, (px(m.x), px(m.y)), radius, fill, paint(OUTLINE))
        elif tile < TILE_MARKS_BELOW:  # kept in step with `draws`
            _disc(canvas, (px(m.x + m.w / 2), px(m.y + m.h / 2)), radius, fill, paint(OUTLINE))


def _disc(canvas: object, centre: tuple[int, int], radius: int, fill: tuple[int, ...] | int, outline: tuple[int, ...] | int) -> None:
    x, y = centre
    canvas.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill, outline=outline, width=1)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PreviewInfo:
    """What a preview PNG pictures, kept in it as text so that a thumbnail made from the file
    alone can crop it by tiles and redraw its markers at thumbnail size."""

    tiles: tuple[int, int]  # the map's width and height in tiles
    tile: tuple[int, int]  # a tile's width and height in map pixels
    step: int  # the preview keeps every step-th map pixel
    markers: tuple[Marker, ...]

    KEY = "pcg-preview"

    def to_text(self) -> str:
        return json.dumps({"tiles": self.tiles, "tile": self.tile, "step": self.step, "markers": [m.to_json() for m in self.markers]}, separators=(",", ":"))

    @classmethod
    def from_text(cls, text: object) -> PreviewInfo | None:
        """The info of a preview's text, None when it has none or it does not read."""
        if not isinstance(text, str):
            return None
        try:
            d = json.loads(text)
            return cls(tuple(d["tiles"]), tuple(d["tile"]), int(d["step"]), tuple(Marker.from_json(m) for m in d["markers"]))  # type: ignore[arg-type]
        except (ValueError, KeyError, TypeError):
            return None
