"""A map's thumbnail on the contact sheet: one definition, drawn two ways with the same pixels.

The definition is the preview PNG over the sheet's background, shrunk by a whole-factor box
reduction and then fitted to THUMB x THUMB (`from_preview`). Decoding a 1328 x 1328 preview to
shrink it costs about 6 ms; a worker that has just drawn the map's tile layers draws the same
thumbnail small instead (`drawn_small`): each distinct stack of tiles is drawn and reduced once,
then laid out tile by tile. The reduction factor divides the tile size, so every reduced block
lies inside one tile and the two ways agree pixel for pixel (tests/test_thumbnail.py).

A map too big to read whole at THUMB pixels (a tile under MIN_TILE pixels) shows a detail
instead: its top-left DETAIL x DETAIL tiles (`detail`), and the sheet says so under it. The map's
objects are drawn again over the thumbnail at its own scale (pipeline.tiled.markers), from the
PreviewInfo the preview PNG carries: shrunk with the preview, a spawn point would be a pixel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from pipeline.level import MapObject
    from pipeline.tiled.markers import PreviewInfo
    from pipeline.tiled.tilesheet import BuiltTileset

THUMB = 160  # pixels: each map fits in a THUMB x THUMB square
BACKGROUND = (29, 43, 83)
MIN_TILE = 1.5  # thumbnail pixels a tile needs for corridors one tile wide to read (a 81 x 51 dungeon of 16-pixel tiles has 1.98)
DETAIL = 40  # tiles across a detail: 4 pixels each at THUMB
DETAIL_KEY = "pcg-detail"  # in a thumbnail's `info`: the caption line saying it shows a detail


def detail(tiles: tuple[int, int], tile: tuple[int, int]) -> tuple[int, int] | None:
    """The (columns, rows) of the top-left detail a map of `tiles` (width, height) of `tile`
    pixels shows on its thumbnail; None when the whole map reads."""
    w, h = tiles
    if THUMB * min(tile) / max(w * tile[0], h * tile[1]) >= MIN_TILE:
        return None
    return min(w, DETAIL), min(h, DETAIL)


def detail_caption(tiles: tuple[int, int], shown: tuple[int, int]) -> str:
    return f"detail: {shown[0]}x{shown[1]} of {tiles[0]}x{tiles[1]}"


@dataclass(frozen=True)
class Fit:
    """How a width x height preview becomes its thumbnail: reduce by `reduce` (a power of two
    that divides both sides), then resize to `size`; small maps grow by `grow` whole pixels."""

    reduce: int
    size: tuple[int, int]
    grow: int


def fit(width: int, height: int) -> Fit:
    scale = THUMB / max(width, height)
    if scale >= 1:
        grow = int(scale)  # whole pixels only: walls stay crisp
        return Fit(1, (width * grow, height * grow), grow)
    # Averaging keeps whole tiles readable. The box reduction (fast, and drawn tile by tile when
    # it divides the tile size) leaves less than twice the final size for the exact resize.
    reduce = 1
    while 2 * reduce * scale <= 1 and width % (2 * reduce) == 0 and height % (2 * reduce) == 0:
        reduce *= 2
    return Fit(reduce, (max(1, round(width * scale)), max(1, round(height * scale))), 1)


def from_preview(image: Image.Image) -> Image.Image:
    """The thumbnail of a preview image (as written: palette or RGBA, with its PreviewInfo when
    our exporters wrote it)."""
    from pipeline.tiled.markers import PreviewInfo

    info = PreviewInfo.from_text(image.info.get(PreviewInfo.KEY))
    shown = detail(info.tiles, info.tile) if info else None
    if info and shown:
        # Whole preview pixels: those a huge map's preview kept of the detail's map pixels.
        image = image.crop((0, 0, -(-shown[0] * info.tile[0] // info.step), -(-shown[1] * info.tile[1] // info.step)))
    rgb = on_background(image)
    return _with_objects(_shrink(rgb), rgb.width, info, shown)


def _shrink(rgb: Image.Image) -> Image.Image:
    shape = fit(rgb.width, rgb.height)
    return _finish(rgb.reduce(shape.reduce) if shape.reduce > 1 else rgb, shape)


def _with_objects(thumb: Image.Image, width: int, info: PreviewInfo | None, shown: tuple[int, int] | None, marks: bool = True) -> Image.Image:
    """The thumbnail of a preview (or its detail) `width` pixels wide, with the objects drawn at
    the thumbnail's scale (with `marks`) and the detail noted."""
    from pipeline.tiled.markers import draw

    if info is None:
        return thumb
    scale = thumb.width / (width * info.step)  # thumbnail pixels per map pixel
    if marks and info.markers:
        draw(thumb, info.markers, scale, min(info.tile) * scale)
    if shown:
        thumb.info[DETAIL_KEY] = detail_caption(info.tiles, shown)
    return thumb


def drawn_small(
    layers: list[np.ndarray], built: BuiltTileset, objects: Sequence[MapObject] = (), gids: Sequence[int] = (), marks: bool = True
) -> Image.Image | None:
    """The thumbnail of the preview `preview_image(layers, built, objects, gids, marks)` draws,
    without drawing it whole; None for a map whose preview is drawn at every k-th pixel (too big
    to draw whole)."""
    from pipeline.tiled.markers import draw, draws, tile_object_layers, with_inks
    from pipeline.tiled.render import MAX_SIDE, preview_info, render  # workers only: the sheet's client needs none of it

    h, w = layers[0].shape
    th, tw = built.tileset.tile_height, built.tileset.tile_width
    if max(h * th, w * tw) > MAX_SIDE:
        return None
    info = preview_info((h, w), built, objects, gids)
    shown = detail(info.tiles, info.tile)
    columns, rows = shown or (w, h)
    stack = [g[:rows, :columns] for g in layers + tile_object_layers(objects, gids, (h, w))]
    if marks and draws(info.markers, min(info.tile)):
        # The preview's own markers, shrunk, are under the thumbnail's: drawn as the preview
        # draws them, on the part of it the thumbnail shows.
        image = with_inks(render(stack, built), info.markers)
        draw(image, info.markers, 1, min(info.tile))
        return _with_objects(_shrink(on_background(image)), columns * tw, info, shown)
    small = _small_by_tiles(stack, built)
    return None if small is None else _with_objects(small, columns * tw, info, shown, marks)


def _small_by_tiles(layers: list[np.ndarray], built: BuiltTileset) -> Image.Image | None:
    """`_shrink` of the tile layers drawn over the background, drawn a distinct stack of tiles
    at a time."""
    from pipeline.tiled.render import MAX_SIDE, render

    h, w = layers[0].shape
    th, tw = built.tileset.tile_height, built.tileset.tile_width
    shape = fit(w * tw, h * th)
    if th % shape.reduce or tw % shape.reduce:
        return None
    # Each cell's tiles, one layer over another, as one row; the distinct rows are drawn once.
    distinct, where = _distinct_stacks(layers)
    n = len(distinct)
    columns = math.ceil(math.sqrt(n))
    rows = math.ceil(n / columns)
    if max(rows * th, columns * tw) > MAX_SIDE:
        return None
    grid = np.zeros((rows * columns, len(layers)), dtype=distinct.dtype)
    grid[:n] = distinct
    sheet = render([grid[:, k].reshape(rows, columns) for k in range(len(layers))], built)
    small = on_background(sheet)
    if shape.reduce > 1:
        small = small.reduce(shape.reduce)
    sh, sw = th // shape.reduce, tw // shape.reduce
    tiles = np.asarray(small).reshape(rows, sh, columns, sw, 3).swapaxes(1, 2).reshape(rows * columns, sh, sw, 3)
    cells = tiles[where.reshape(h, w)]  # (h, w, sh, sw, 3)
    rgb = cells.swapaxes(1, 2).reshape(h * sh, w * sw, 3)
    return _finish(Image.fromarray(np.ascontiguousarray(rgb), "RGB"), shape)


def _distinct_stacks(layers: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (gid per layer) stacks of the map's cells, (n, layers), and each cell's row
    in them. Each stack as one integer when they fit in 63 bits: sorting numbers is 30 times
    faster than sorting rows."""
    base = int(max(int(g.max()) for g in layers)) + 1
    if base ** len(layers) < 2**63:
        packed = np.zeros(layers[0].size, dtype=np.int64)
        for gids in layers:
            packed = packed * base + gids.ravel()
        codes, where = np.unique(packed, return_inverse=True)
        digits = [(codes // base**k) % base for k in reversed(range(len(layers)))]
        return np.stack(digits, axis=1), where
    return np.unique(np.stack([g.ravel() for g in layers], axis=1), axis=0, return_inverse=True)  # type: ignore[no-any-return]


def on_background(image: Image.Image) -> Image.Image:
    """The image as RGB over the sheet's background. A palette image just recolours its clear
    entries, several times faster than blending a full-size RGBA one."""
    clear = image.info.get("transparency")
    if image.mode == "P" and isinstance(clear, (bytes, int)):
        palette = image.getpalette() or []
        # Pillow gives one clear entry as its index, several as an alpha per entry.
        entries = [clear] if isinstance(clear, int) else [i for i, alpha in enumerate(clear) if alpha == 0]
        for i in entries:
            palette[3 * i : 3 * i + 3] = BACKGROUND
        image = image.copy()
        image.putpalette(palette)
        del image.info["transparency"]  # now drawn in the background's colour
        return image.convert("RGB")
    ground = Image.new("RGBA", image.size, (*BACKGROUND, 255))
    return Image.alpha_composite(ground, image.convert("RGBA")).convert("RGB")


def _finish(image: Image.Image, shape: Fit) -> Image.Image:
    if shape.grow > 1:
        return image.resize(shape.size, Image.Resampling.NEAREST)
    if image.size == shape.size:
        return image
    return image.resize(shape.size, Image.Resampling.BOX)


