"""Tile art: deterministic styles, seamless ground, wall pieces that fill their tiles and join without
seams, pictures, sheets that Tiled cuts back."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.tiled.art import STYLES, cut_tiles, ground_tile, lay_out, symbol_tile
from pipeline.tiled.icons import icon_tile
from pipeline.tiled.walls import lone_wall, wall_material, wall_pieces
from pipeline.tiled.autotile import BLOB_MASKS, CORNER_MASKS, E, N, NE, NW, S, SE, SW, W

ROOT = Path(__file__).resolve().parents[1]
FG_RGB, BG_RGB = (200, 40, 40), (30, 90, 160)
NOISE_DIGEST = "a111ed037f8e027408dfa729316d6e340842a74d53cf7709de2d12e81311d52f"


def flat(rgb: tuple[int, int, int], w: int = 16, h: int = 16) -> np.ndarray:
    return symbol_tile(rgb, w, h, "flat", "x")


# --- symbol tiles -------------------------------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("size", [(1, 1), (5, 3), (16, 16), (32, 24)])
def test_symbol_tile_basics(style, size):
    w, h = size
    tile = symbol_tile((120, 200, 10), w, h, style, "wall")
    assert tile.shape == (h, w, 4) and tile.dtype == np.uint8
    assert np.all(tile[..., 3] == 255)
    assert symbol_tile((120, 200, 10), w, h, style, "wall").tobytes() == tile.tobytes()


def test_flat_is_the_colour():
    assert np.all(symbol_tile((1, 2, 3), 8, 8, "flat", "a") == (1, 2, 3, 255))


def test_bevel_lit_top_left_shaded_bottom_right():
    tile = symbol_tile((100, 100, 100), 16, 16, "bevel", "a").astype(int)
    depth = 2  # 16 // 8
    assert np.all(tile[8, 8, :3] == 100)
    assert np.all(tile[:depth, 4:12, :3] > 100) and np.all(tile[4:12, :depth, :3] > 100)
    assert np.all(tile[-depth:, 4:12, :3] < 100) and np.all(tile[4:12, -depth:, :3] < 100)
    assert np.all(tile[depth : 16 - depth, depth : 16 - depth, :3] == 100)


def test_outline_is_one_darker_pixel():
    tile = symbol_tile((100, 100, 100), 8, 8, "outline", "a").astype(int)
    border = np.ones((8, 8), bool)
    border[1:-1, 1:-1] = False
    assert np.all(tile[border][:, :3] < 100) and np.all(tile[~border][:, :3] == 100)


def test_noise_is_small_and_keyed():
    a = symbol_tile((128, 128, 128), 16, 16, "noise", "wall")
    b = symbol_tile((128, 128, 128), 16, 16, "noise", "floor")
    assert a.tobytes() != b.tobytes()
    assert a.tobytes() == symbol_tile((128, 128, 128), 16, 16, "noise", "wall").tobytes()
    # The size is part of the seed, too.
    assert not np.array_equal(a[:8, :8], symbol_tile((128, 128, 128), 8, 8, "noise", "wall"))
    delta = a[..., :3].astype(int) - 128
    assert np.abs(delta).max() <= 0.08 * 128 + 1 and len(np.unique(delta)) > 10
    # Brightness jitter: the three channels move together.
    assert np.all(delta[..., 0] == delta[..., 1]) and np.all(delta[..., 1] == delta[..., 2])


def test_noise_same_bytes_in_a_fresh_process():
    code = (
        "import hashlib, sys; from pipeline.tiled.art import symbol_tile; "
        "sys.stdout.write(hashlib.sha256(symbol_tile((90, 160, 60), 24, 16, 'noise', 'grass').tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    here = hashlib.sha256(symbol_tile((90, 160, 60), 24, 16, "noise", "grass").tobytes()).hexdigest()
    assert out.stdout == here


def test_noise_is_pinned():
    """The grain is part of a pack's output: it must not move with a numpy upgrade. If this digest
    changes on purpose, packs' tilesheets change too; say so in the changelog."""
    tile = symbol_tile((90, 160, 60), 24, 16, "noise", "grass")
    assert hashlib.sha256(tile.tobytes()).hexdigest() == NOISE_DIGEST


def test_bad_arguments():
    with pytest.raises(ValueError):
        symbol_tile((0, 0, 0), 8, 8, "shiny", "a")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        symbol_tile((0, 0, 256), 8, 8, "flat", "a")
    with pytest.raises(ValueError):
        wall_pieces("blob", flat(FG_RGB, 2, 2), "flat", "wall")
    with pytest.raises(ValueError):
        wall_pieces("blob", flat(FG_RGB), "shiny", "wall")  # type: ignore[arg-type]


def test_ground_is_seamless():
    """Ground has no per-tile border in any style but bevel's faint flagstone groove: floors read
    as one surface, not graph paper or raised squares."""
    for style in STYLES:
        tile = ground_tile((100, 100, 100), 16, 16, style, "floor").astype(int)
        if style in ("flat", "outline"):
            assert np.all(tile[..., :3] == 100), style
        if style == "bevel":
            assert np.all(tile[1:, 1:, :3] == 100) and np.all(tile[0, :, :3] < 100) and np.all(tile[:, 0, :3] < 100)
            assert np.all(tile[0, :, :3] >= 100 * 7 // 8)  # faint: sunk, not a wall


# --- wall pieces --------------------------------------------------------------------------------

SIZES = [(16, 16), (8, 8), (3, 3), (12, 7), (5, 9)]
EDGE_MIDDLE = {N: (0, None), S: (-1, None), W: (None, 0), E: (None, -1)}  # row, column; None = middle
CORNER_PIXEL = {NE: (0, -1), SE: (-1, -1), SW: (-1, 0), NW: (0, 0)}


def middle_of_edge(tile: np.ndarray, bit: int) -> np.ndarray:
    h, w = tile.shape[:2]
    row, col = EDGE_MIDDLE[bit]
    return tile[h // 2 if row is None else row, w // 2 if col is None else col]


def pieces(kind: str, material: np.ndarray, style: str) -> dict[int, np.ndarray]:
    masks = BLOB_MASKS if kind == "blob" else CORNER_MASKS
    return dict(zip(masks, wall_pieces(kind, material, style, "wall"), strict=True))  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "count"), [("blob", 47), ("corner", 16)])
@pytest.mark.parametrize("style", STYLES)
def test_wall_set_size_and_type(kind, count, style):
    material = wall_material(FG_RGB, 12, 10, style, "wall")
    tiles = wall_pieces(kind, material, style, "wall")
    assert len(tiles) == count
    assert all(t.shape == (10, 12, 4) and t.dtype == np.uint8 and np.all(t[..., 3] == 255) for t in tiles)
    assert [t.tobytes() for t in tiles] == [t.tobytes() for t in wall_pieces(kind, material, style, "wall")]
    # Pieces differ, or a player could not see where a wall ends.
    assert len({t.tobytes() for t in tiles}) == count


@pytest.mark.parametrize("kind", ["blob", "corner"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("size", SIZES)
def test_pieces_are_all_wall(kind, style, size):
    """Every pixel of every piece is the wall (material, or material shaded for the rim): there is
    no floor inside a wall tile for a player to see and not walk on."""
    material = flat(FG_RGB, *size)
    for tile in pieces(kind, material, style).values():
        assert np.all(tile[..., 3] == 255)
        assert not np.any(np.all(tile[..., :3] == BG_RGB, axis=-1))
        # Shading keeps a pixel's hue: each is a blend of the wall colour toward black or white.
        r, g, b = (tile[..., i].astype(int) for i in range(3))
        assert np.all(g == b) and np.all(r >= g)


@pytest.mark.parametrize("size", [s for s in SIZES if min(s) >= 5])  # in a 3-pixel tile every pixel is near a side
@pytest.mark.parametrize("style", STYLES)
def test_blob_rims_follow_the_bits(size, style):
    """A side's middle pixel is bare material where the wall runs on and rim where it does not; a
    corner pixel is rim unless both sides beside it and the diagonal are wall."""
    material = flat(FG_RGB, *size)
    for mask, tile in pieces("blob", material, style).items():
        for bit in (N, E, S, W):
            assert np.array_equal(middle_of_edge(tile, bit), material[0, 0]) == bool(mask & bit), (mask, bit)
        for bit, (y, x) in CORNER_PIXEL.items():
            assert np.array_equal(tile[y, x], material[0, 0]) == bool(mask & bit), (mask, bit)
    assert np.array_equal(pieces("blob", material, style)[255], material)


@pytest.mark.parametrize("size", SIZES)
def test_corner_set_rims(size):
    material = flat(FG_RGB, *size)
    tiles = pieces("corner", material, "flat")
    assert np.array_equal(tiles[NE | SE | SW | NW], material)
    for mask, tile in tiles.items():
        for bit, (y, x) in CORNER_PIXEL.items():
            assert np.array_equal(tile[y, x], material[0, 0]) == bool(mask & bit), (mask, bit)


def neighbour_pairs(kind: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(left, right) and (top, bottom) mask pairs that can sit side by side in a real map: every
    bit describing the shared side agrees."""
    masks = BLOB_MASKS if kind == "blob" else CORNER_MASKS
    # (bit of the first tile, bit of the second) that describe the same thing on the shared side.
    across = [(E, W), (NE, NW), (SE, SW)] if kind == "blob" else [(NE, NW), (SE, SW)]
    down = [(S, N), (SE, NE), (SW, NW)] if kind == "blob" else [(SE, NE), (SW, NW)]

    def pairs(bits: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # Both tiles are wall: the first's side bit toward the second is set, and the second's back.
        first, second = bits[0] if kind == "blob" else (0, 0)
        return [
            (a, b)
            for a in masks
            for b in masks
            if all(bool(a & x) == bool(b & y) for x, y in bits) and (kind != "blob" or (a & first and b & second))
        ]

    return pairs(across), pairs(down)


@pytest.mark.parametrize("kind", ["blob", "corner"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("size", [(16, 16), (9, 7), (12, 12)])
def test_neighbours_join_without_seams(kind, style, size):
    """Wherever two wall tiles meet, the pixels along their shared side match exactly, rims and
    all: a run of wall, straight, bent, thin or diagonal, is one wall."""
    tiles = pieces(kind, flat(FG_RGB, *size), style)
    across, down = neighbour_pairs(kind)
    assert across and down
    for a, b in across:
        assert np.array_equal(tiles[a][:, -1], tiles[b][:, 0]), (a, b)
    for a, b in down:
        assert np.array_equal(tiles[a][-1], tiles[b][0]), (a, b)


def test_bevel_lit_above_shaded_below():
    pillar = lone_wall(flat(FG_RGB), "bevel", "wall").astype(int)
    # The outline is row/column 0 and 15, the bevel the two pixels inside it.
    assert np.all(pillar[1:3, 4:12, :3].sum(-1) > sum(FG_RGB))
    assert np.all(pillar[13:15, 4:12, :3].sum(-1) < sum(FG_RGB))
    assert np.all(pillar[4:12, 1:3, :3].sum(-1) > sum(FG_RGB))
    assert np.all(pillar[4:12, 13:15, :3].sum(-1) < sum(FG_RGB))
    assert np.all(pillar[0, :, :3].sum(-1) < sum(FG_RGB))


def test_bevel_material_is_stone_courses():
    material = wall_material(FG_RGB, 16, 16, "bevel", "wall").astype(int)
    mortar = material[..., :3].sum(-1) < sum(FG_RGB)
    assert mortar[0].all() and mortar[8].all()  # a course every half tile
    assert mortar[1:8, 0].all() and mortar[9:16, 8].all() and not mortar[9:16, 0].any()  # offset joints


def test_icons():
    floor = flat(BG_RGB)
    door = icon_tile("door", (150, 80, 40), 16, 16, floor, FG_RGB)
    assert np.all(door[..., 3] == 255)
    # The frame is the wall's colour on every side, so it meets the walls whichever way it stands.
    for edge in (door[0], door[-1], door[:, 0], door[:, -1]):
        assert np.all(edge[:, :3] == FG_RGB)
    chest = icon_tile("chest", (200, 130, 45), 16, 16, None, FG_RGB)
    assert chest[0, 0, 3] == 0 and chest[8, 8, 3] == 255  # an object tile: clear around the chest
    for icon in ("door", "chest", "key"):
        for size in ((6, 6), (12, 12), (16, 16), (32, 24)):
            tile = icon_tile(icon, (150, 80, 40), *size, None, FG_RGB)
            assert tile.shape == (size[1], size[0], 4) and tile[..., 3].any()
    with pytest.raises(ValueError):
        icon_tile("door", (1, 2, 3), 5, 5, None, FG_RGB)


# --- sheets -------------------------------------------------------------------------------------


@st.composite
def tile_lists(draw):
    w, h = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    count = draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.Generator(np.random.PCG64(seed))
    tiles = [rng.integers(0, 256, size=(h, w, 4), dtype=np.uint8) for _ in range(count)]
    for t in tiles:  # transparent pixels would hide a wrongly placed tile against the gutter
        t[..., 3] |= 1
    return tiles


@settings(max_examples=60, deadline=None)
@given(tiles=tile_lists(), columns=st.integers(1, 4), margin=st.integers(0, 3), spacing=st.integers(0, 3))
def test_lay_out_cut_round_trip(tiles, columns, margin, spacing):
    sheet = lay_out(tiles, columns, margin, spacing)
    h, w = tiles[0].shape[:2]
    rows = -(-len(tiles) // columns)
    height = 2 * margin + rows * h + (rows - 1) * spacing
    assert sheet.shape == (height, 2 * margin + columns * w + (columns - 1) * spacing, 4)
    back = cut_tiles(sheet, w, h, margin, spacing)
    assert len(back) == rows * columns
    assert all(np.array_equal(a, b) for a, b in zip(tiles, back, strict=False))
    assert all(not b.any() for b in back[len(tiles) :])  # the unused cells are transparent
    # Everything outside the tiles is transparent, too.
    assert int(sheet[..., 3].astype(bool).sum()) == len(tiles) * w * h


@settings(max_examples=60, deadline=None)
@given(
    tiles=tile_lists(),
    columns=st.integers(1, 4),
    margin=st.integers(0, 2),
    spacing=st.integers(0, 2),
    extrude=st.integers(1, 3),
)
def test_extruded_sheet(tiles, columns, margin, spacing, extrude):
    n = extrude
    sheet = lay_out(tiles, columns, margin, spacing, extrude=n)
    h, w = tiles[0].shape[:2]
    back = cut_tiles(sheet, w, h, margin + n, spacing + 2 * n)
    assert all(np.array_equal(a, b) for a, b in zip(tiles, back, strict=False))
    for i, tile in enumerate(tiles):
        top = margin + n + (i // columns) * (h + spacing + 2 * n)
        left = margin + n + (i % columns) * (w + spacing + 2 * n)
        ring = sheet[top - n : top + h + n, left - n : left + w + n]
        # Each ring pixel is the tile's pixel nearest to it (corners from the corner pixel).
        ys = np.clip(np.arange(-n, h + n), 0, h - 1)
        xs = np.clip(np.arange(-n, w + n), 0, w - 1)
        assert np.array_equal(ring, tile[ys][:, xs])
    # Only the extruded tiles are opaque: the original margin and spacing stay transparent.
    assert int(sheet[..., 3].astype(bool).sum()) == len(tiles) * (w + 2 * n) * (h + 2 * n)


def test_cut_ignores_partial_tiles():
    sheet = np.arange(11 * 14 * 4, dtype=np.uint32).astype(np.uint8).reshape(11, 14, 4)
    # margin 1, spacing 2, 3x3 tiles: columns (14 - 2 + 2) // 5 = 2, rows (11 - 2 + 2) // 5 = 2.
    tiles = cut_tiles(sheet, 3, 3, 1, 2)
    assert len(tiles) == 4
    assert np.array_equal(tiles[1], sheet[1:4, 6:9]) and np.array_equal(tiles[2], sheet[6:9, 1:4])
    assert cut_tiles(sheet[:3, :3], 4, 4, 0, 0) == []
