"""Tile art drawn with numpy, for recipes that name colours but no tilesheet: plain tiles in a
style, seamless ground, and cutting and laying out sheets. Walls are `walls.py`, pictures
(doors, chests, keys) `icons.py`.

Everything is integer arithmetic on uint8 RGBA arrays of shape (height, width, 4), so a sheet is
byte-identical on every platform and run: shading blends toward white or black by a fixed
fraction with integer rounding, and noise comes from a PCG64 stream seeded by blake2b.
"""

from __future__ import annotations

import hashlib
import math
from typing import Literal

import numpy as np

Style = Literal["flat", "bevel", "noise", "outline"]
STYLES: tuple[Style, ...] = ("flat", "bevel", "noise", "outline")

# Shading blends this fraction (numerator, denominator) of the way toward white or black.
SHADE = (3, 8)
# Noise scales brightness by (256 + j) / 256 with j uniform in -NOISE..NOISE: about ±8%.
NOISE = 20
_NOISE_PERSON = b"pcg-tile-noise"


def blend(rgb: np.ndarray, target: int, num: int, den: int) -> np.ndarray:
    """Integer blend num/den of the way toward `target` (0 or 255), rounded half up, so no float
    rounding can differ between platforms."""
    out = (rgb.astype(np.int32) * (den - num) + target * num + den // 2) // den
    return out.astype(np.uint8)


def _blend(rgb: np.ndarray, target: int) -> np.ndarray:
    return blend(rgb, target, *SHADE)


def lighter(rgb: np.ndarray) -> np.ndarray:
    return _blend(rgb, 255)


def darker(rgb: np.ndarray) -> np.ndarray:
    return _blend(rgb, 0)


def noise_jitter(key: str, width: int, height: int) -> np.ndarray:
    """Per-pixel brightness offsets in -NOISE..NOISE, a pure function of (key, size).

    The seed is a blake2b digest, not `hash()`, which Python salts per process. Only the PCG64
    bit generator's raw output is used: numpy keeps bit generator streams fixed, but not the
    algorithms of `Generator` methods such as `integers` (NEP 19), which could change the art
    between numpy releases."""
    raw = _raw_bits(key, width, height, width * height)
    # The modulo bias of 2**64 % 41 is far below anything visible.
    return (raw % np.uint64(2 * NOISE + 1)).astype(np.int32).reshape(height, width) - NOISE


def _raw_bits(key: str, width: int, height: int, n: int) -> np.ndarray:
    """`n` raw 64-bit draws, a pure function of (key, size)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8, person=_NOISE_PERSON).digest()
    return np.random.PCG64(np.random.SeedSequence([int.from_bytes(digest, "little"), width, height])).random_raw(n)


def worn_tile(tile: np.ndarray, key: str) -> np.ndarray:
    """`tile` with a crack and a pebble or two pressed into it: a variant that tiles with the
    tile itself, since its border pixels are left as they are. A pure function of (tile, key),
    drawn from raw bit-generator output for the reason `noise_jitter` gives."""
    height, width = tile.shape[:2]
    out = tile.copy()
    draws = iter(_raw_bits(key, width, height, 64).tolist())
    inner_w, inner_h = width - 2, height - 2  # the interior, inside a one-pixel border
    marks: list[tuple[int, int]] = []
    x, y = 1 + next(draws) % inner_w, 1 + next(draws) % inner_h
    dx, dy = (-1, 1)[next(draws) % 2], (-1, 1)[next(draws) % 2]
    for _ in range(max(2, min(width, height) // 3)):  # the crack: a wandering diagonal
        marks.append((y, x))
        if next(draws) % 3 == 0:
            dx, dy = (dx, -dy) if next(draws) % 2 else (-dx, dy)
        x, y = min(max(x + dx, 1), width - 2), min(max(y + dy, 1), height - 2)
    for _ in range(1 + next(draws) % 2):  # pebbles
        marks.append((1 + next(draws) % inner_h, 1 + next(draws) % inner_w))
    for yy, xx in dict.fromkeys(marks):
        out[yy, xx, :3] = blend(out[yy, xx, :3], 0, 3, 8)
    return out


def _check(rgb: tuple[int, int, int], width: int, height: int, style: Style) -> None:
    if width < 1 or height < 1:
        raise ValueError(f"tile size must be positive, got {width}x{height}")
    if not all(0 <= c <= 255 for c in rgb):
        raise ValueError(f"colour components must be 0..255, got {rgb}")
    if style not in STYLES:
        raise ValueError(f"unknown tile style {style!r}; expected one of {', '.join(STYLES)}")


def ground_tile(rgb: tuple[int, int, int], width: int, height: int, style: Style, key: str) -> np.ndarray:
    """A tile of ground (what walls stand on): seamless, so a floor reads as one surface below the
    walls rather than a grid of raised or outlined squares. `bevel` lays it as flagstones: a
    faint groove on the top and left, sunk below the bevelled walls."""
    _check(rgb, width, height, style)
    tile = symbol_tile(rgb, width, height, "noise" if style == "noise" else "flat", key)
    if style == "bevel" and min(width, height) >= 4:
        colour = tile[..., :3]
        y, x = np.indices((height, width))
        groove = (x == 0) | (y == 0)
        colour[groove] = blend(colour[groove], 0, 1, 8)
    return tile


def symbol_tile(rgb: tuple[int, int, int], width: int, height: int, style: Style, key: str) -> np.ndarray:
    """An opaque tile of a symbol's colour. `key` (the symbol's name) only seeds `noise`, so two
    symbols of one colour still get different grain, and a symbol keeps its grain across runs."""
    _check(rgb, width, height, style)
    tile = np.empty((height, width, 4), dtype=np.uint8)
    tile[..., :3] = rgb
    tile[..., 3] = 255
    colour = tile[..., :3]
    y, x = np.indices((height, width))
    if style == "bevel":
        depth = max(1, min(width, height) // 8)
        near_lit = np.minimum(x, y)  # distance to the top or left edge
        near_shaded = np.minimum(width - 1 - x, height - 1 - y)
        # Each pixel takes the nearer edge's shade, so the corners split along the diagonal.
        lit = (near_lit < depth) & (near_lit <= near_shaded)
        shaded = (near_shaded < depth) & ~lit
        colour[lit] = lighter(colour[lit])
        colour[shaded] = darker(colour[shaded])
    elif style == "outline":
        border = (x == 0) | (y == 0) | (x == width - 1) | (y == height - 1)
        colour[border] = darker(colour[border])
    elif style == "noise":
        scale = 256 + noise_jitter(key, width, height)[..., None]
        colour[...] = np.clip((colour.astype(np.int32) * scale + 128) >> 8, 0, 255)
    return tile


def _grid(extent: int, margin: int, spacing: int, tile: int) -> int:
    """Tiled's count of whole tiles along one side of a sheet."""
    return max(0, (extent - 2 * margin + spacing) // (tile + spacing))


def cut_tiles(sheet: np.ndarray, tile_width: int, tile_height: int, margin: int, spacing: int) -> list[np.ndarray]:
    """A user's tilesheet as tiles in Tiled's numbering (reading order), with partial tiles at the
    right and bottom ignored the way Tiled ignores them."""
    if tile_width < 1 or tile_height < 1 or margin < 0 or spacing < 0:
        raise ValueError(f"bad tile grid: {tile_width}x{tile_height}, margin {margin}, spacing {spacing}")
    columns = _grid(sheet.shape[1], margin, spacing, tile_width)
    rows = _grid(sheet.shape[0], margin, spacing, tile_height)
    tiles = []
    for row in range(rows):
        top = margin + row * (tile_height + spacing)
        for column in range(columns):
            left = margin + column * (tile_width + spacing)
            tiles.append(sheet[top : top + tile_height, left : left + tile_width].copy())
    return tiles


def lay_out(tiles: list[np.ndarray], columns: int, margin: int, spacing: int, extrude: int = 0) -> np.ndarray:
    """A tilesheet of `tiles` in reading order, transparent around and between them.

    `extrude = n` repeats each tile's border pixels n pixels outward, so an engine's texture
    filtering at a tile's edge samples the tile itself, never its neighbour or the gutter. The
    gutters grow to fit: the sheet is laid out with margin + n and spacing + 2n, and the caller
    MUST write those two values (not `margin` and `spacing`) into the tileset, or Tiled cuts
    the tiles in the wrong places. `cut_tiles(sheet, w, h, margin + n, spacing + 2 * n)` gives
    the tiles back."""
    if not tiles:
        raise ValueError("no tiles to lay out")
    if columns < 1 or margin < 0 or spacing < 0 or extrude < 0:
        raise ValueError(f"bad layout: {columns} columns, margin {margin}, spacing {spacing}, extrude {extrude}")
    shape = tiles[0].shape
    if any(t.shape != shape for t in tiles):
        raise ValueError("all tiles must have the same shape")
    th, tw = shape[:2]
    rows = math.ceil(len(tiles) / columns)
    margin, spacing = margin + extrude, spacing + 2 * extrude
    sheet_height = 2 * margin + rows * th + (rows - 1) * spacing
    sheet_width = 2 * margin + columns * tw + (columns - 1) * spacing
    sheet = np.zeros((sheet_height, sheet_width, *shape[2:]), dtype=tiles[0].dtype)
    pad = ((extrude, extrude), (extrude, extrude)) + ((0, 0),) * (len(shape) - 2)
    for i, tile in enumerate(tiles):
        top = margin + (i // columns) * (th + spacing) - extrude
        left = margin + (i % columns) * (tw + spacing) - extrude
        sheet[top : top + th + 2 * extrude, left : left + tw + 2 * extrude] = np.pad(tile, pad, mode="edge")
    return sheet
