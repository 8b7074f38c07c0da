"""Previews drawn from the tilesheet itself, layer over layer, as Tiled and engines draw the map."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from pipeline.tiled.art import cut_tiles
from pipeline.tiled.tilesheet import BuiltTileset

# A preview larger than this on a side is drawn at every k-th pixel, for the smallest whole k
# that fits: a 1000 x 1000 map of 16-pixel tiles would otherwise be a 1 GB image.
MAX_SIDE = 4096


def render(layers: list[np.ndarray], built: BuiltTileset, firstgid: int = 1) -> np.ndarray:
    """(H, W, 4) RGBA image of the tile layers (global ids, 0 = empty) over a transparent ground."""
    ts = built.tileset
    atlas = np.zeros((firstgid + ts.tilecount, ts.tile_height, ts.tile_width, 4), dtype=np.uint8)
    tiles = cut_tiles(built.pixels, ts.tile_width, ts.tile_height, ts.margin, ts.spacing)
    atlas[firstgid : firstgid + len(tiles)] = np.stack(tiles)[: ts.tilecount]
    h, w = layers[0].shape
    th, tw = ts.tile_height, ts.tile_width
    step = max(1, -(-max(h * th, w * tw) // MAX_SIDE))
    ys = np.arange(0, h * th, step)
    xs = np.arange(0, w * tw, step)
    out = np.zeros((len(ys), len(xs), 4), dtype=np.uint8)
    for gids in layers:
        top = atlas[gids[ys // th][:, xs // tw], (ys % th)[:, None], (xs % tw)[None, :]]
        out = _over(top, out)
    return out


def _over(top: np.ndarray, under: np.ndarray) -> np.ndarray:
    """Porter-Duff "over" in integers: opaque and empty pixels, all our own art has, come out
    exact; partly see-through ones are rounded."""
    alpha = top[..., 3:4].astype(np.uint32)
    if (alpha == 255).all():
        return top.copy()
    below = under.astype(np.uint32)
    below_alpha = below[..., 3:4]
    out_alpha = alpha + below_alpha * (255 - alpha) // 255
    safe = np.maximum(out_alpha, 1)
    rgb = (top[..., :3].astype(np.uint32) * alpha * 255 + below[..., :3] * below_alpha * (255 - alpha)) // (safe * 255)
    return np.concatenate([rgb, out_alpha], axis=-1).astype(np.uint8)


def png_bytes(image: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image, "RGBA").save(out, format="PNG")
    return out.getvalue()
