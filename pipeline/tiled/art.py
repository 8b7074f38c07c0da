"""Tile art drawn with numpy, for recipes that name colours but no tilesheet.

Everything is integer arithmetic on uint8 RGBA arrays of shape (height, width, 4), so a sheet is
byte-identical on every platform and run: shading blends toward white or black by a fixed
fraction with integer rounding, and noise comes from a PCG64 stream seeded by blake2b.

Wang tiles follow `autotile`'s neighbour bits (N=1, NE=2, ... NW=128) and mask order, so tile k
of `wang_tiles(kind, ...)` is the tile `autotile.choose` picks as index k.
"""

from __future__ import annotations

import hashlib
import math
from typing import Literal

import numpy as np

from pipeline.tiled.autotile import CORNERS, E, N, NE, NW, S, SE, SW, W, WangKind, set_masks

Style = Literal["flat", "bevel", "noise", "outline"]
STYLES: tuple[Style, ...] = ("flat", "bevel", "noise", "outline")

# Shading blends this fraction (numerator, denominator) of the way toward white or black.
SHADE = (3, 8)
# Noise scales brightness by (256 + j) / 256 with j uniform in -NOISE..NOISE: about ±8%.
NOISE = 20
_NOISE_PERSON = b"pcg-tile-noise"


def _blend(rgb: np.ndarray, target: int) -> np.ndarray:
    """Integer blend toward `target` (0 or 255), rounded half up, so no float rounding can differ
    between platforms."""
    num, den = SHADE
    out = (rgb.astype(np.int32) * (den - num) + target * num + den // 2) // den
    return out.astype(np.uint8)


def lighter(rgb: np.ndarray) -> np.ndarray:
    return _blend(rgb, 255)


def darker(rgb: np.ndarray) -> np.ndarray:
    return _blend(rgb, 0)


def _noise_jitter(key: str, width: int, height: int) -> np.ndarray:
    """Per-pixel brightness offsets in -NOISE..NOISE, a pure function of (key, size).

    The seed is a blake2b digest, not `hash()`, which Python salts per process. Only the PCG64
    bit generator's raw output is used: numpy keeps bit generator streams fixed, but not the
    algorithms of `Generator` methods such as `integers` (NEP 19), which could change the art
    between numpy releases."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8, person=_NOISE_PERSON).digest()
    seed = np.random.SeedSequence([int.from_bytes(digest, "little"), width, height])
    rng = np.random.Generator(np.random.PCG64(seed))
    raw = rng.bit_generator.random_raw(width * height)
    # The modulo bias of 2**64 % 41 is far below anything visible.
    return (raw % np.uint64(2 * NOISE + 1)).astype(np.int32).reshape(height, width) - NOISE


def symbol_tile(rgb: tuple[int, int, int], width: int, height: int, style: Style, key: str) -> np.ndarray:
    """An opaque tile of a symbol's colour. `key` (the symbol's name) only seeds `noise`, so two
    symbols of one colour still get different grain, and a symbol keeps its grain across runs."""
    if width < 1 or height < 1:
        raise ValueError(f"tile size must be positive, got {width}x{height}")
    if not all(0 <= c <= 255 for c in rgb):
        raise ValueError(f"colour components must be 0..255, got {rgb}")
    if style not in STYLES:
        raise ValueError(f"unknown tile style {style!r}; expected one of {', '.join(STYLES)}")
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
        scale = 256 + _noise_jitter(key, width, height)[..., None]
        colour[...] = np.clip((colour.astype(np.int32) * scale + 128) >> 8, 0, 255)
    return tile


def _blob_shape(mask: int, width: int, height: int, inset: int) -> np.ndarray:
    """The pillar in the middle, an arm to each set edge, and each set corner's corner square:
    every set edge reaches its whole side at the arm's width, so neighbours' arms meet."""
    y, x = np.indices((height, width))
    mid_x = (inset <= x) & (x < width - inset)
    mid_y = (inset <= y) & (y < height - inset)
    top, bottom = y < inset, y >= height - inset
    left, right = x < inset, x >= width - inset
    parts = {
        N: mid_x & top,
        E: right & mid_y,
        S: mid_x & bottom,
        W: left & mid_y,
        NE: right & top,
        SE: right & bottom,
        SW: left & bottom,
        NW: left & top,
    }
    shape = mid_x & mid_y
    for bit, part in parts.items():
        if mask & bit:
            shape |= part
    return shape


def _corner_shape(mask: int, width: int, height: int, inset: int) -> np.ndarray:
    """The pillar in the middle, each set corner's whole quadrant, and the edge strip between two
    set corners: a corner's colour then fills half of each side it touches, as in the tiles
    around it."""
    y, x = np.indices((height, width))
    east, south = x >= width // 2, y >= height // 2
    quadrants = {NE: east & ~south, SE: east & south, SW: ~east & south, NW: ~east & ~south}
    strips = {N: y < inset, E: x >= width - inset, S: y >= height - inset, W: x < inset}
    shape = (inset <= x) & (x < width - inset) & (inset <= y) & (y < height - inset)
    for corner, quadrant in quadrants.items():
        if mask & corner:
            shape |= quadrant
    for edge, strip in strips.items():
        beside = [corner for corner, a, b in CORNERS if edge in (a, b)]
        if all(mask & corner for corner in beside):
            shape |= strip
    return shape


def _over(fg: np.ndarray, bg: np.ndarray) -> np.ndarray:
    """Porter-Duff `fg over bg` in integers (straight alpha), so art with holes shows the floor
    through them and opaque art is copied exactly."""
    fa = fg[..., 3:].astype(np.int64)
    ba = bg[..., 3:].astype(np.int64)
    alpha255 = fa * 255 + ba * (255 - fa)  # output alpha, times 255
    num = fg[..., :3].astype(np.int64) * fa * 255 + bg[..., :3].astype(np.int64) * ba * (255 - fa)
    safe = np.maximum(alpha255, 1)
    rgb = np.where(alpha255 > 0, (num + safe // 2) // safe, 0)
    out = np.empty(fg.shape, dtype=np.uint8)
    out[..., :3] = rgb
    out[..., 3:] = (alpha255 + 127) // 255
    return out


def _facing(shape: np.ndarray) -> dict[str, np.ndarray]:
    """Which shape pixels have a non-shape pixel above, left, below or right of them. Beyond the
    tile counts as shape: the shape runs on into the next tile there, so no edge is drawn."""
    p = np.pad(shape, 1, mode="edge")
    h, w = shape.shape
    return {
        "up": shape & ~p[0:h, 1 : w + 1],
        "left": shape & ~p[1 : h + 1, 0:w],
        "down": shape & ~p[2 : h + 2, 1 : w + 1],
        "right": shape & ~p[1 : h + 1, 2 : w + 2],
    }


def wang_tiles(kind: WangKind, fg: np.ndarray, bg: np.ndarray, style: Style) -> list[np.ndarray]:
    """The tiles of a Wang set, in `autotile.set_masks(kind)` order: `bg` with `fg` drawn over it
    in each mask's shape. Shapes reach a side of the tile exactly where the mask says the symbol
    continues, so neighbouring tiles meet without seams."""
    if fg.shape != bg.shape or fg.ndim != 3 or fg.shape[2] != 4:
        raise ValueError(f"fg and bg must both be (h, w, 4); got {fg.shape} and {bg.shape}")
    if style not in STYLES:
        raise ValueError(f"unknown tile style {style!r}; expected one of {', '.join(STYLES)}")
    height, width = fg.shape[:2]
    if min(width, height) < 3:
        raise ValueError(f"Wang tiles need at least 3x3 pixels to show a shape, got {width}x{height}")
    inset = max(1, min(width, height) // 4)
    shape_of = _blob_shape if kind == "blob" else _corner_shape
    drawn = _over(fg, bg)
    tiles = []
    for mask in set_masks(kind):
        shape = shape_of(mask, width, height, inset)
        tile = np.where(shape[..., None], drawn, bg).astype(np.uint8)
        rgb = tile[..., :3]
        face = _facing(shape)
        if style == "outline":
            edge = face["up"] | face["left"] | face["down"] | face["right"]
            rgb[edge] = darker(rgb[edge])
        elif style == "bevel":
            # Light from the top left; a pixel facing both ways (a thin spur's tip) takes the light.
            lit = face["up"] | face["left"]
            shaded = (face["down"] | face["right"]) & ~lit
            rgb[lit] = lighter(rgb[lit])
            rgb[shaded] = darker(rgb[shaded])
        tiles.append(tile)
    return tiles


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
