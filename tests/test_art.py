"""Tile art: deterministic styles, Wang tiles that join without seams, sheets that Tiled cuts back."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.tiled.art import STYLES, cut_tiles, lay_out, symbol_tile, wang_tiles
from pipeline.tiled.autotile import BLOB_MASKS, CORNER_MASKS, E, N, NE, NW, S, SE, SW, W

ROOT = Path(__file__).resolve().parents[1]
FG_RGB, BG_RGB = (200, 40, 40), (30, 90, 160)
NOISE_DIGEST = "a111ed037f8e027408dfa729316d6e340842a74d53cf7709de2d12e81311d52f"


def flat(rgb: tuple[int, int, int], w: int = 16, h: int = 16) -> np.ndarray:
    return symbol_tile(rgb, w, h, "flat", "x")


def is_fg(tile: np.ndarray, fg: np.ndarray) -> np.ndarray:
    """Per pixel: drawn from fg (flat fg and bg only, of distinct colours)."""
    return np.all(tile == fg, axis=-1)


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
        wang_tiles("blob", flat(FG_RGB, 2, 2), flat(BG_RGB, 2, 2), "flat")


# --- Wang tiles ---------------------------------------------------------------------------------

SIZES = [(16, 16), (8, 8), (3, 3), (12, 7), (5, 9)]
EDGE_MIDDLE = {N: (0, None), S: (-1, None), W: (None, 0), E: (None, -1)}  # row, column; None = middle
CORNER_PIXEL = {NE: (0, -1), SE: (-1, -1), SW: (-1, 0), NW: (0, 0)}


def middle_of_edge(tile: np.ndarray, bit: int) -> np.ndarray:
    h, w = tile.shape[:2]
    row, col = EDGE_MIDDLE[bit]
    return tile[h // 2 if row is None else row, w // 2 if col is None else col]


@pytest.mark.parametrize(("kind", "count"), [("blob", 47), ("corner", 16)])
@pytest.mark.parametrize("style", STYLES)
def test_wang_set_size_and_type(kind, count, style):
    fg, bg = symbol_tile(FG_RGB, 12, 10, style, "wall"), symbol_tile(BG_RGB, 12, 10, style, "floor")
    tiles = wang_tiles(kind, fg, bg, style)
    assert len(tiles) == count
    assert all(t.shape == (10, 12, 4) and t.dtype == np.uint8 and np.all(t[..., 3] == 255) for t in tiles)
    assert [t.tobytes() for t in tiles] == [t.tobytes() for t in wang_tiles(kind, fg, bg, style)]
    # Tiles differ, or autotiling could not tell them apart.
    assert len({t.tobytes() for t in tiles}) == count


@pytest.mark.parametrize("size", SIZES)
def test_blob_full_and_pillar(size):
    fg, bg = flat(FG_RGB, *size), flat(BG_RGB, *size)
    tiles = dict(zip(BLOB_MASKS, wang_tiles("blob", fg, bg, "flat"), strict=True))
    assert np.array_equal(tiles[255], fg)
    pillar = tiles[0]
    h, w = pillar.shape[:2]
    for y, x in CORNER_PIXEL.values():
        assert np.array_equal(pillar[y, x], bg[y, x])
    assert np.array_equal(pillar[h // 2, w // 2], fg[h // 2, w // 2])
    assert not np.any(is_fg(pillar, fg)[[0, -1], :]) and not np.any(is_fg(pillar, fg)[:, [0, -1]])


@pytest.mark.parametrize("size", SIZES)
def test_blob_edge_middles_follow_the_bits(size):
    fg, bg = flat(FG_RGB, *size), flat(BG_RGB, *size)
    for mask, tile in zip(BLOB_MASKS, wang_tiles("blob", fg, bg, "flat"), strict=True):
        for bit in (N, E, S, W):
            assert np.array_equal(middle_of_edge(tile, bit), fg[0, 0]) == bool(mask & bit), (mask, bit)
        for bit, (y, x) in CORNER_PIXEL.items():
            assert np.array_equal(tile[y, x], fg[0, 0]) == bool(mask & bit), (mask, bit)


@pytest.mark.parametrize("size", SIZES)
def test_corner_full_empty_and_corners(size):
    fg, bg = flat(FG_RGB, *size), flat(BG_RGB, *size)
    tiles = dict(zip(CORNER_MASKS, wang_tiles("corner", fg, bg, "flat"), strict=True))
    assert np.array_equal(tiles[NE | SE | SW | NW], fg)
    h, w = fg.shape[:2]
    assert np.array_equal(tiles[0][h // 2, w // 2], fg[0, 0])
    assert not np.any(is_fg(tiles[0], fg)[[0, -1], :]) and not np.any(is_fg(tiles[0], fg)[:, [0, -1]])
    for mask, tile in tiles.items():
        for bit, (y, x) in CORNER_PIXEL.items():
            assert np.array_equal(tile[y, x], fg[0, 0]) == bool(mask & bit), (mask, bit)
        # Each side is split in half between the two corners beside it, as its neighbour's is.
        shape = is_fg(tile, fg)
        west, north = np.arange(w) < w // 2, np.arange(h) < h // 2
        assert np.array_equal(shape[0], np.where(west, bool(mask & NW), bool(mask & NE))), mask
        assert np.array_equal(shape[-1], np.where(west, bool(mask & SW), bool(mask & SE))), mask
        assert np.array_equal(shape[:, 0], np.where(north, bool(mask & NW), bool(mask & SW))), mask
        assert np.array_equal(shape[:, -1], np.where(north, bool(mask & NE), bool(mask & SE))), mask


def neighbour_pairs(kind: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(left, right) and (top, bottom) mask pairs that can sit side by side in a real map: every
    bit describing the shared side agrees."""
    masks = BLOB_MASKS if kind == "blob" else CORNER_MASKS
    # (bit of the first tile, bit of the second) that describe the same thing on the shared side.
    across = [(E, W), (NE, NW), (SE, SW)] if kind == "blob" else [(NE, NW), (SE, SW)]
    down = [(S, N), (SE, NE), (SW, NW)] if kind == "blob" else [(SE, NE), (SW, NW)]

    def pairs(bits: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return [(a, b) for a in masks for b in masks if all(bool(a & x) == bool(b & y) for x, y in bits)]

    return pairs(across), pairs(down)


@pytest.mark.parametrize("kind", ["blob", "corner"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("size", [(16, 16), (9, 7)])
def test_neighbours_join_without_seams(kind, style, size):
    """Wherever two tiles may meet, the pixels along their shared side match exactly, shading and
    all: no outline or bevel is drawn where the shape runs on into the next tile."""
    fg, bg = flat(FG_RGB, *size), flat(BG_RGB, *size)
    tiles = dict(zip(BLOB_MASKS if kind == "blob" else CORNER_MASKS, wang_tiles(kind, fg, bg, style), strict=True))
    across, down = neighbour_pairs(kind)
    assert across and down
    for a, b in across:
        assert np.array_equal(tiles[a][:, -1], tiles[b][:, 0]), (a, b)
    for a, b in down:
        assert np.array_equal(tiles[a][-1], tiles[b][0]), (a, b)


@pytest.mark.parametrize("kind", ["blob", "corner"])
def test_styles_shade_only_the_inner_boundary(kind):
    fg, bg = flat(FG_RGB), flat(BG_RGB)
    plain = wang_tiles(kind, fg, bg, "flat")
    for style in ("outline", "bevel"):
        for p, s in zip(plain, wang_tiles(kind, fg, bg, style), strict=True):
            changed = np.any(p != s, axis=-1)
            assert not np.any(changed & ~is_fg(p, fg))  # only the shape is shaded
            shape = is_fg(p, fg)
            if shape.all():
                assert not changed.any()
    # Noise comes from fg itself: the noise style leaves shading alone.
    assert all(np.array_equal(p, s) for p, s in zip(plain, wang_tiles(kind, fg, bg, "noise"), strict=True))


def test_bevel_lit_above_shaded_below():
    fg, bg = flat(FG_RGB), flat(BG_RGB)
    pillar = wang_tiles("blob", fg, bg, "bevel")[BLOB_MASKS.index(0)].astype(int)
    # Inset 4: the pillar is rows and columns 4..11.
    assert np.all(pillar[4, 5:11, :3].sum(-1) > sum(FG_RGB))
    assert np.all(pillar[11, 5:11, :3].sum(-1) < sum(FG_RGB))
    assert np.all(pillar[5:11, 4, :3].sum(-1) > sum(FG_RGB))
    assert np.all(pillar[5:11, 11, :3].sum(-1) < sum(FG_RGB))


def test_textured_fg_shows_through():
    fg = symbol_tile(FG_RGB, 16, 16, "noise", "wall")
    bg = symbol_tile(BG_RGB, 16, 16, "noise", "floor")
    tiles = dict(zip(BLOB_MASKS, wang_tiles("blob", fg, bg, "noise"), strict=True))
    assert np.array_equal(tiles[255], fg)
    assert np.array_equal(tiles[0][0, 0], bg[0, 0]) and np.array_equal(tiles[0][8, 8], fg[8, 8])


def test_translucent_fg_is_composited_over_bg():
    fg = flat(FG_RGB)
    fg[..., 3] = 0
    fg[6:10, 6:10, 3] = 255
    bg = flat(BG_RGB)
    full = wang_tiles("blob", fg, bg, "flat")[BLOB_MASKS.index(255)]
    assert np.array_equal(full[0, 0], bg[0, 0]) and np.array_equal(full[8, 8], (*FG_RGB, 255))
    fg[..., 3] = 128
    half = wang_tiles("blob", fg, bg, "flat")[BLOB_MASKS.index(255)].astype(int)
    expect = [round((f * 128 + b * 127) / 255) for f, b in zip(FG_RGB, BG_RGB, strict=True)]
    assert list(half[0, 0, :3]) == expect and half[0, 0, 3] == 255


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
