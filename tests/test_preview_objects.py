"""Objects in previews, thumbnails and contact sheets: each kind drawn where the map file puts it,
still visible at thumbnail size; big maps' thumbnails show a readable detail, said so under them;
sheet rows carry no empty band. (tests/test_exports.py checks the previews against tmxrasterizer.)"""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import numpy as np
from PIL import Image

from conftest import RECIPES, TILESETS, pcg, write_recipe
from pipeline.building.contact_sheet import CONTACT_SHEET, LINE, PAD
from pipeline.level import Level, MapObject
from pipeline.registry import ExportContext
from pipeline.stages.export.png import ExportPng
from pipeline.stages.export.tmx import ExportTmx
from pipeline.stages.maze.block import MAZE_ALPHABET
from pipeline.thumbnail import BACKGROUND, DETAIL_KEY, THUMB, from_preview
from pipeline.tiled.markers import COLOURS, MIN_RADIUS, PreviewInfo, colour as colour_of

SPAWN, EXIT, ROOM, PATH = (COLOURS[k][:3] for k in ("spawn", "exit", "room", "path"))


def level(size: int) -> Level:
    """An open floor ringed by wall, with one object of each kind."""
    tiles = np.ones((size, size), dtype=np.uint8)
    tiles[0, :] = tiles[-1, :] = tiles[:, 0] = tiles[:, -1] = 0
    objects = [
        MapObject("room_1", "room", 2, 2, 6, 4),
        MapObject("path", "path", 10.5, 3.5, points=((0, 0), (6, 0), (6, 5))),
        MapObject("key_1", "key", 12.5, 12.5, tile="wall"),  # a tile object: drawn as its tile
        MapObject("spawn", "spawn", 4.5, 10.5),
        MapObject("exit", "exit", size - 2.5, size - 2.5),
    ]
    return Level(tiles=tiles, alphabet=MAZE_ALPHABET, objects=objects)


def preview(lv: Level) -> Image.Image:
    files = ExportTmx(tile_size=16).export(lv, ExportContext(stem="m"))
    return Image.open(io.BytesIO(files["previews/m.png"]))


def rgb(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB"))


def test_each_object_is_drawn_where_the_map_puts_it() -> None:
    image = preview(level(20))
    px = rgb(image)
    assert tuple(px[10 * 16 + 8, 4 * 16 + 8]) == SPAWN  # a point: a disc on its position
    assert tuple(px[17 * 16 + 8, 17 * 16 + 8]) == EXIT
    assert tuple(px[2 * 16, 2 * 16 + 40]) == ROOM and tuple(px[6 * 16 - 1, 3 * 16]) == ROOM  # the room's outline
    assert tuple(px[2 * 16 + 20, 2 * 16 + 20]) != ROOM  # ... not its inside
    assert tuple(px[3 * 16 + 8, 13 * 16]) == PATH and tuple(px[6 * 16, 16 * 16 + 8]) == PATH  # along both legs
    # The tile object is its tile (a wall on the floor), as Tiled draws it.
    assert (px[12 * 16 : 13 * 16, 12 * 16 : 13 * 16] == px[0:16, 0:16]).all()
    assert not (px[12 * 16 : 13 * 16, 12 * 16 : 13 * 16] == px[16 * 5 : 16 * 6, 16 * 5 : 16 * 6]).all()
    info = PreviewInfo.from_text(image.info[PreviewInfo.KEY])
    assert info is not None and [m.kind for m in info.markers] == ["rect", "path", "tile", "point", "point"]


def test_a_colour_map_draws_its_objects_when_asked_and_is_plain_otherwise() -> None:
    lv = level(20)
    plain = ExportPng(scale=8).export(lv, ExportContext(stem="m"))["colour_maps/m.png"]
    assert plain == ExportPng(scale=8).export(Level(tiles=lv.tiles, alphabet=lv.alphabet), ExportContext(stem="m"))["colour_maps/m.png"]
    marked = Image.open(io.BytesIO(ExportPng(scale=8, objects=True).export(lv, ExportContext(stem="m"))["colour_maps/m.png"]))
    assert marked.mode == "P"  # the markers' colours joined the symbols' palette
    px, under = rgb(marked), rgb(Image.open(io.BytesIO(plain)))
    assert tuple(px[10 * 8 + 4, 4 * 8 + 4]) == SPAWN and tuple(px[17 * 8 + 4, 17 * 8 + 4]) == EXIT
    assert tuple(px[2 * 8, 2 * 8 + 20]) == ROOM and tuple(px[2 * 8 + 10, 2 * 8 + 10]) != ROOM  # an outline
    assert tuple(px[3 * 8 + 4, 13 * 8]) == PATH
    # No tileset to draw the key's tile with: it is marked at its position, as a point is.
    assert tuple(px[12 * 8 + 4, 12 * 8 + 4]) == colour_of("key")[:3]
    # Away from the objects, the symbol colours are untouched.
    assert (px[-8:, :8] == under[-8:, :8]).all() and (px[15 * 8 : 16 * 8, 1 * 8 : 2 * 8] == under[15 * 8 : 16 * 8, 1 * 8 : 2 * 8]).all()


def test_markers_stay_visible_on_a_thumbnail_of_a_big_map() -> None:
    """A 70 x 70 map of 16-pixel tiles: a tile is 2.3 thumbnail pixels, a marker still a disc."""
    thumb = from_preview(preview(level(70)))
    assert thumb.size == (THUMB, THUMB) and DETAIL_KEY not in thumb.info
    px = rgb(thumb)
    scale = THUMB / (70 * 16)
    for colour, (x, y) in ((SPAWN, (4.5, 10.5)), (EXIT, (67.5, 67.5))):
        cx, cy = round(x * 16 * scale), round(y * 16 * scale)
        assert tuple(px[cy, cx]) == colour
        fill = (px[cy - 4 : cy + 5, cx - 4 : cx + 5] == colour).all(axis=-1).sum()
        assert fill >= 9, fill  # a disc, not a dot: its colour inside a black ring 7 pixels across
        assert (px[cy, cx - MIN_RADIUS] == 0).all() and (px[cy, cx + MIN_RADIUS] == 0).all()
    # The room's outline: one unbroken line of its colour along its top edge.
    top, left, right = round(2 * 16 * scale), round(2 * 16 * scale), round(8 * 16 * scale) - 1
    assert (px[top, left : right + 1] == ROOM).all()
    # The tile object, too small to see as its tile, gets a marker of its own.
    assert (px[round(13 * 16 * scale) - 3 : round(13 * 16 * scale) + 3, round(13 * 16 * scale) - 3 : round(13 * 16 * scale) + 3] != px[0, 0]).any()


def test_the_megamaze_thumbnail_is_a_readable_detail_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "megamaze.toml").write_text((RECIPES / "megamaze.toml").read_text())
    (tmp_path / "tilesets").mkdir()
    (tmp_path / "tilesets" / "maze.toml").write_text((TILESETS / "maze.toml").read_text())
    pcg("build", "recipes", "-q", cwd=tmp_path)
    pack = tmp_path / "exports" / "megamaze"
    with Image.open(pack / "map_000.png" if (pack / "map_000.png").exists() else pack / "previews" / "map_000.png") as image:
        thumb = from_preview(image)
    # 40 of 401 tiles across 160 pixels: a tile (and a corridor) is 4 pixels wide, where the
    # whole map would give it 0.4.
    assert thumb.info[DETAIL_KEY] == "detail: 40x40 of 401x401" and thumb.size == (THUMB, THUMB)
    # Readable: walls and floors are their own colours, not a grey blur, and the gaps between
    # walls along a row (corridors, with the floor tiles' own outlines) at least 2 pixels.
    colors = tomllib.loads((TILESETS / "maze.toml").read_text())["colors"]
    wall, floor = (np.array([int(colors[name][i : i + 2], 16) for i in (1, 3, 5)]) for name in ("wall", "floor"))
    px = rgb(thumb).astype(int)
    near = lambda c: (np.abs(px - c).sum(axis=-1) < 90)  # noqa: E731
    assert near(wall).mean() > 0.2 and near(floor).mean() > 0.2
    row = ~near(wall)[THUMB // 2 + 2]
    edges = np.flatnonzero(np.diff(row.astype(int)))
    runs = np.diff(edges)[::2] if row[0] == 0 else np.diff(edges)[1::2]
    assert len(runs) > 3 and runs.min() >= 2, runs
    sheet = rgb(Image.open(pack / CONTACT_SHEET))
    caption_top = 20 + PAD + THUMB + 3
    lines = sheet[caption_top : caption_top + 4 * LINE]
    assert lines.shape[0] == 4 * LINE and (lines != BACKGROUND).any(axis=-1)[3 * LINE :].any()  # the fourth line: the note


def test_a_row_of_wide_maps_has_no_empty_band_above_it(project: Path) -> None:
    write_recipe(project, "wide", """\
[pack]
name = "wide"
seed = 1
maps = 3

[stage.maze]
use = "maze.backtracker"
cells = [30, 6]

[stage.tmx]
use = "export.tmx"
input = "maze"
""")
    pcg("build", "recipes/wide.toml", "-q", cwd=project)
    sheet = rgb(Image.open(project / "exports" / "wide" / CONTACT_SHEET))
    with Image.open(project / "exports" / "wide" / "previews" / "map_000.png") as image:
        thumb_h = from_preview(image).height
    assert thumb_h < THUMB // 2
    top = 20 + LINE + PAD  # under the title and the pack's measures: the first thumbnail's first row
    assert (sheet[top, PAD : PAD + THUMB] != BACKGROUND).any()
    assert (sheet[top - 1, PAD : PAD + THUMB] == BACKGROUND).all()
    # Thumbnail, caption (name, diameter, dead ends), padding: nothing more.
    assert sheet.shape[0] == top + thumb_h + 3 * LINE + 4 + PAD


def test_the_commonest_item_types_get_markers_of_their_own_colour() -> None:
    # With four colours for every other type, a pack's keys and enemies looked alike.
    from pipeline.tiled.markers import COLOURS, OUTLINE, colour

    common = ("chest", "key", "enemy", "potion", "trap", "item", "coin", "lever")
    inks = [colour(t) for t in common]
    own = {c for kind, c in COLOURS.items() if kind != "locked"}  # a locked door is in its key's colour, on purpose
    assert len(set(inks)) == len(common) and not set(inks) & {*own, OUTLINE}
    assert COLOURS["locked"] == colour("key")
    assert colour("spawn") == COLOURS["spawn"]
    # As docs/previews.md and markers.py say: a change of the hash's key would change them all.
    assert (colour("chest"), colour("key"), colour("enemy")) == ((255, 163, 0, 255), (0, 255, 255, 255), (255, 0, 255, 255))


def test_a_level_graphs_doors_are_drawn_as_links_between_the_rooms_they_join() -> None:
    """Rooms that touch are not joined unless a door says so: each door is a line from one room's
    middle through the door to the other's, in the key's colour when it is locked."""
    tiles = np.zeros((12, 22), dtype=np.uint8)  # all wall (black): the floor is the door's colour
    objects = [
        MapObject("room_1", "room", 1, 1, 6, 6, {"node": "a"}),
        MapObject("room_2", "room", 7, 1, 6, 6, {"node": "b"}),
        MapObject("room_3", "room", 13, 1, 6, 6, {"node": "c"}),
        MapObject("door_a_b", "door", 6, 3, 1, 1, {"from": "a", "to": "b"}),
        MapObject("door_b_c", "door", 12, 3, 1, 1, {"from": "b", "to": "c", "lock": "gold"}),
        MapObject("door_c_x", "door", 18, 3, 1, 1, {"from": "c", "to": "x"}),  # no room x: no link
    ]
    px = rgb(preview(Level(tiles=tiles, alphabet=MAZE_ALPHABET, objects=objects)))
    link, key = colour_of("link")[:3], colour_of("locked")[:3]
    # Half-way from a's middle (4, 4) to the door's (6.5, 3.5), and from the door to b's (10, 4).
    assert tuple(px[round(3.75 * 16), round(5.25 * 16)]) == link
    assert tuple(px[round(3.75 * 16), round(8.25 * 16)]) == link
    assert tuple(px[round(3.75 * 16), round(14.25 * 16)]) == key  # the locked door's link
    # Nothing between c's middle and the door to a missing room: that door links nothing.
    row = px[round(3.5 * 16), round(16.5 * 16) : round(17.75 * 16)]
    assert not (row == link).all(axis=1).any()
