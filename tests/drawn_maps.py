"""A small map drawn as in Tiled, for the tests of hand-drawn art: two tile layers (the upper in
a group), tiles flipped every way, an external tileset in a folder of its own with its image,
an embedded tileset with margin and spacing, a tile object flipped left-right, a point.

Written by code rather than kept as files: each tile's pixels are asymmetric under all eight
flips, so that a test can tell every flip apart by its pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

TILE = 16
W, H = 8, 6
H_, V_, D_ = 0x80000000, 0x40000000, 0x20000000

# Symbols of the tiles of art/tiles.tsx (4 x 2 tiles) and of the embedded "props" tileset (2).
TILES_SYMBOLS = ["wall", "floor", "door", "floor", "floor", "wall", "floor", "floor"]
PROPS_FIRSTGID = 9

# gids as the map file holds them.
GROUND = np.full((H, W), 2, dtype=np.uint32)
GROUND[0, :] = GROUND[-1, :] = GROUND[:, 0] = GROUND[:, -1] = 1
GROUND[2, -1] = 3  # a door in the east wall
DECOR = np.zeros((H, W), dtype=np.uint32)
DECOR[2, 2] = 5 | H_
DECOR[2, 3] = 5 | V_
DECOR[2, 4] = 5 | D_
DECOR[2, 5] = 5 | H_ | D_
DECOR[3, 2] = PROPS_FIRSTGID + 1
DECOR[4, 3] = 4 | H_ | V_ | D_
DECOR[3, 5] = 8 | V_ | D_
CHEST_GID = 7 | H_  # a tile object, at cell (5, 4)
CHEST_CELL = (5, 4)
SPAWN_CELL = (1, 1)


def tile_pixels(k: int, seed: int = 0) -> np.ndarray:
    """Tile k's pixels: a colour of its own, a block in its top-left corner and a bar along part
    of its top edge, which no flip leaves in place."""
    tile = np.zeros((TILE, TILE, 4), dtype=np.uint8)
    tile[...] = (40 + 25 * k + seed, 200 - 20 * k, 90 + 50 * seed, 255)
    tile[1:5, 1:5] = (255, 255, 255, 255)
    tile[0, 0:10] = (220, 20, 20, 255)
    tile[6:8, 12:15] = (10, 10, 10, 255)
    return tile


def tiles_image() -> np.ndarray:
    sheet = np.zeros((2 * TILE, 4 * TILE, 4), dtype=np.uint8)
    for k in range(8):
        y, x = divmod(k, 4)
        sheet[y * TILE : (y + 1) * TILE, x * TILE : (x + 1) * TILE] = tile_pixels(k)
    return sheet


def props_image() -> np.ndarray:
    """Two tiles with a margin of 1 and a spacing of 2 (36 x 18 pixels), the rest magenta."""
    sheet = np.zeros((2 + TILE, 2 + 2 * TILE + 2, 4), dtype=np.uint8)
    sheet[...] = (255, 0, 255, 255)
    for k in range(2):
        x = 1 + k * (TILE + 2)
        sheet[1 : 1 + TILE, x : x + TILE] = tile_pixels(k, seed=1)
    return sheet


def flipped(tile: np.ndarray, bits: int) -> np.ndarray:
    """A tile as Tiled draws it with flip bits: diagonal first, then left-right, then upside down."""
    if bits & D_:
        tile = tile.transpose(1, 0, 2)
    if bits & H_:
        tile = tile[:, ::-1]
    if bits & V_:
        tile = tile[::-1]
    return tile


def gid_pixels(gid: int) -> np.ndarray:
    bare = gid & 0x0FFFFFFF
    tile = tile_pixels(bare - PROPS_FIRSTGID, seed=1) if bare >= PROPS_FIRSTGID else tile_pixels(bare - 1)
    return flipped(tile, gid & (H_ | V_ | D_))


def expected_picture() -> np.ndarray:
    """The map's tile layers as Tiled draws them (every tile opaque: the upper one shows)."""
    out = np.zeros((H * TILE, W * TILE, 4), dtype=np.uint8)
    for y in range(H):
        for x in range(W):
            gid = int(DECOR[y, x]) or int(GROUND[y, x])
            out[y * TILE : (y + 1) * TILE, x * TILE : (x + 1) * TILE] = gid_pixels(gid)
    return out


def _csv(gids: np.ndarray) -> str:
    return "\n" + ",\n".join(",".join(str(int(g)) for g in row) for row in gids) + "\n"


def write(folder: Path) -> Path:
    """Write maps/drawn.tmx, maps/art/tiles.tsx and the two images under `folder`; returns the map."""
    art = folder / "maps" / "art"
    art.mkdir(parents=True, exist_ok=True)
    Image.fromarray(tiles_image(), "RGBA").save(art / "tiles.png")
    Image.fromarray(props_image(), "RGBA").save(folder / "maps" / "props.png")
    tiles = "\n".join(
        f' <tile id="{k}">\n  <properties>\n   <property name="symbol" value="{s}"/>\n'
        + ('   <property name="solid" type="bool" value="true"/>\n' if s == "wall" else "")
        + "  </properties>\n </tile>"
        for k, s in enumerate(TILES_SYMBOLS)
    )
    (art / "tiles.tsx").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<tileset version="1.8" tiledversion="1.8.2" name="dungeon art" tilewidth="16" tileheight="16" tilecount="8" columns="4">\n'
        ' <image source="tiles.png" width="64" height="32"/>\n' + tiles + "\n</tileset>\n",
        encoding="utf-8",
    )
    x, y = CHEST_CELL
    sx, sy = SPAWN_CELL
    path = folder / "maps" / "drawn.tmx"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<map version="1.8" tiledversion="1.8.2" orientation="orthogonal" renderorder="right-down" width="{W}" height="{H}"'
        ' tilewidth="16" tileheight="16" infinite="0" nextlayerid="6" nextobjectid="3">\n'
        ' <tileset firstgid="1" source="art/tiles.tsx"/>\n'
        f' <tileset firstgid="{PROPS_FIRSTGID}" name="props" tilewidth="16" tileheight="16" spacing="2" margin="1" tilecount="2" columns="2">\n'
        '  <image source="props.png" width="36" height="18"/>\n'
        '  <tile id="0"><properties><property name="symbol" value="floor"/></properties></tile>\n'
        '  <tile id="1"><properties><property name="symbol" value="floor"/><property name="kind" value="rug"/></properties></tile>\n'
        ' </tileset>\n'
        f' <layer id="1" name="ground" width="{W}" height="{H}">\n  <data encoding="csv">{_csv(GROUND)}</data>\n </layer>\n'
        ' <group id="2" name="upper">\n'
        f'  <layer id="3" name="decor" width="{W}" height="{H}">\n   <data encoding="csv">{_csv(DECOR)}</data>\n  </layer>\n'
        ' </group>\n'
        ' <objectgroup id="4" name="things">\n'
        f'  <object id="1" name="chest" type="chest" gid="{CHEST_GID}" x="{x * TILE}" y="{(y + 1) * TILE}" width="16" height="16"/>\n'
        f'  <object id="2" name="spawn" type="spawn" x="{sx * TILE + 8}" y="{sy * TILE + 8}"><point/></object>\n'
        ' </objectgroup>\n'
        '</map>\n',
        encoding="utf-8",
    )
    return path
