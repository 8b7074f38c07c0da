"""Draw the pictures of docs/tilesets.md, and tilesets/stone.png (the example of your own art).

    python docs/make_images.py            # writes docs/img/*.png and tilesets/stone.png
    python docs/make_images.py --out DIR  # the same files under DIR (tests compare them)

Every picture is drawn by the pipeline's own tileset code from the files in tilesets/, over one
sample map that has every kind of wall: rooms, one-tile walls, T and X junctions, lone pillars,
diagonal runs, thick masses with inner corners, a door and a chest. Output is deterministic.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.level import Symbol  # noqa: E402
from pipeline.tiled.art import STYLES, blend, ground_tile, lay_out  # noqa: E402
from pipeline.tiled.icons import icon_tile  # noqa: E402
from pipeline.tiled.render import render  # noqa: E402
from pipeline.tiled.spec import TilesetSpec, load_tileset  # noqa: E402
from pipeline.tiled.tilesheet import BuiltTileset, build_tileset  # noqa: E402
from pipeline.tiled.walls import lone_wall, wall_material, wall_pieces  # noqa: E402

SAMPLE = """\
##########################
#.......#######..........#
#.......#.....#..#...#...#
#...c...+.....#..#...#...#
#.......#.....#..#####...#
####+####.#.#.#..........#
#.........#...#..#.#.#.#.#
#.###.###.#.#.#..........#
#.#.....#.........#......#
#.#.###.#.###.#....#.....#
#.#.....#.#.#.#.....#....#
#.#######.###.####...#...#
#.........................
##########################
"""
ALPHABET = (Symbol("#", "wall", "#000000"), Symbol(".", "floor", "#ffffff"), Symbol("+", "door", "#8b4513"))
# Puzzle colours (flood_it's six), drawn without walls.
PUZZLE = ("#e8174d", "#2fae4a", "#4a6ee0", "#f08a24", "#8c2db8", "#f5d21e")
SCALE = 2  # docs pictures are drawn at twice the pixels, nearest neighbour, to show the art
SHIPPED = ("dungeon", "caves", "maze", "stone")


def _sample() -> tuple[np.ndarray, np.ndarray]:
    """(symbol index per cell, chest mask) of the sample map."""
    rows = SAMPLE.splitlines()
    chars = np.array([list(r) for r in rows])
    chest = chars == "c"
    chars[chest] = "."
    index = np.zeros(chars.shape, dtype=np.int16)
    for i, s in enumerate(ALPHABET):
        index[chars == s.char] = i
    return index, chest


def _png(image: Image.Image, scale: int = SCALE) -> bytes:
    image = image.convert("RGBA")
    if scale != 1:
        image = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _draw(built: BuiltTileset) -> Image.Image:
    """The sample map through a tileset, as a preview draws it: walls autotiled, the chest an
    object tile over the floor."""
    index, chest = _sample()
    ts = built.tileset
    gids = np.zeros(index.shape, dtype=np.uint32)
    for i, symbol in enumerate(ALPHABET):
        where = index == i
        auto = built.autotiles.get(symbol.name)
        if auto is not None:
            gids[where] = auto.pieces(index, i, [s.name for s in ALPHABET])[where] + 1
        else:
            gids[where] = ts.tile_id(symbol.name) + 1
    objects = np.zeros_like(gids)
    if "chest" in ts.names:
        objects[chest] = ts.tile_id("chest") + 1
    return render([gids, objects], built)


def _sheet(built: BuiltTileset) -> Image.Image:
    return Image.fromarray(built.pixels, "RGBA")


def _shipped(name: str) -> BuiltTileset:
    loaded = load_tileset(ROOT / "tilesets", f"{name}.toml")
    # The stone pictures show the sheet this script draws, not whatever stone.png is on disk.
    return build_tileset(loaded.spec, ALPHABET, stone_sheet() if name == "stone" else loaded.image)


def _style(style: str) -> Image.Image:
    """The sample map in one style (the dungeon's colours, walls autotiled), and beside it a
    puzzle board in that style (symbols without walls)."""
    colors = {"wall": "#5b5566", "floor": "#a39584", "door": "#9c5a2c", "chest": "#c8812d"}
    spec = TilesetSpec(name=style, style=style, colors=colors, autotile={"wall": {}}, icons={"door": "door", "chest": "chest"})
    walls = _draw(build_tileset(spec, ALPHABET, b""))
    board_symbols = tuple(Symbol(str(i), f"c{i}", c) for i, c in enumerate(PUZZLE))
    board = build_tileset(TilesetSpec(name=style, style=style), board_symbols, b"")
    h, w = _sample()[0].shape
    cells = (np.add.outer(np.arange(h) // 3, np.arange(8) // 2) + np.arange(h)[:, None] % 2) % len(PUZZLE)
    board_image = render([cells.astype(np.uint32) + 1], board)
    out = Image.new("RGBA", (walls.width + 16 + board_image.width, walls.height), (0, 0, 0, 0))
    out.paste(walls.convert("RGBA"), (0, 0))
    out.paste(board_image.convert("RGBA"), (walls.width + 16, 0))
    return out


def stone_sheet() -> bytes:
    """tilesets/stone.png: 16-pixel tiles, margin 1, spacing 2; 0 floor, 1 door, 2 chest, 3 key,
    4 wall, 5-7 floor variants, 8-54 the wall's blob set in the standard order. Walls fill their
    tiles, as the collision boxes the tileset gets (solid = true) say."""
    size = 16
    wall_rgb, floor_rgb = (70, 78, 96), (150, 132, 104)
    floor = ground_tile(floor_rgb, size, size, "noise", "stone-floor")
    y, x = np.indices((size, size))
    groove = (x == 0) | (y == 0)
    floor[..., :3][groove] = blend(floor[..., :3][groove], 0, 1, 6)
    material = wall_material(wall_rgb, size, size, "bevel", "stone-wall", grain=True)
    variants = []
    for marks in (((3, 4), (4, 5), (5, 5), (6, 6), (7, 6), (8, 7), (9, 9)), ((4, 10), (5, 11), (11, 4), (12, 3), (10, 12)), ((9, 3), (3, 12), (12, 9))):
        tile = floor.copy()
        for yy, xx in marks:  # a crack, pebbles
            tile[yy, xx, :3] = blend(tile[yy, xx, :3], 0, 3, 8)
        variants.append(tile)
    tiles = [
        floor,
        icon_tile("door", (150, 86, 44), size, size, floor, wall_rgb),
        icon_tile("chest", (200, 129, 45), size, size, None, wall_rgb),
        icon_tile("key", (240, 200, 60), size, size, None, wall_rgb),
        lone_wall(material, "bevel", "stone-wall"),
        *variants,
        *wall_pieces("blob", material, "bevel", "stone-wall"),
    ]
    sheet = lay_out(tiles, 8, margin=1, spacing=2)
    return _png(Image.fromarray(sheet, "RGBA"), scale=1)


def images() -> dict[str, bytes]:
    """Path (relative to the repository) -> PNG bytes of every file this script writes."""
    out = {"tilesets/stone.png": stone_sheet()}
    for name in SHIPPED:
        built = _shipped(name)
        out[f"docs/img/tileset_{name}.png"] = _png(_draw(built))
        out[f"docs/img/sheet_{name}.png"] = _png(_sheet(built))
    for style in STYLES:
        out[f"docs/img/style_{style}.png"] = _png(_style(style))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="folder to write docs/img/ and tilesets/stone.png under")
    args = parser.parse_args()
    for path, data in images().items():
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        print(path)


if __name__ == "__main__":
    main()
