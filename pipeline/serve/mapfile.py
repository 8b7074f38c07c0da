"""What the gallery draws of one exported map, read back from its Tiled file (TMX or TMJ).

The map page needs the map without the markers a preview PNG has baked in (objects are an
overlay the designer switches on and off), and the data layers' exact numbers (region labels,
distances) for the other overlays. Both are read from the files the pack ships, not from the
cache: what the page shows is what the game will load.

Only a pack's own files are read (every path is checked to stay inside the pack folder), and
the picture is drawn at the preview's scale (`step_of`), never as one huge image.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from pipeline.fsio import read_regular
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.files import read_tiled_map
from pipeline.tiled.read.layer_data import GID_MASK
from pipeline.tiled.read.model import TiledMap
from pipeline.tiled.render import png_bytes, step_of
from pipeline.tiled.values import decode_values


def inside(pack: Path, relative: str) -> Path:
    """`relative` under the pack folder, refused when it (or a link on the way) leads out."""
    root = pack.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        raise MapFileError(f"{relative}: leads out of the pack")
    return path


def read_map(pack: Path, relative: str) -> TiledMap:
    """The map `relative` of the pack, its tilesets read from the pack too."""

    def read(path: str, what: str) -> bytes:
        try:
            return read_regular(inside(pack, path))
        except OSError as exc:
            raise MapFileError(f"cannot read {what} {path} ({exc.strerror or exc})") from None

    try:
        return read_tiled_map(read, relative)
    except MapFileError as exc:
        raise MapFileError(f"{relative}: {exc}") from None


def data_layers(m: TiledMap) -> dict[str, np.ndarray]:
    """The exact numbers of the map's data layers (region labels, distances), by layer name."""
    return {layer.name: decode_values(layer.values, m.width, m.height, layer.compression) for layer in m.data_layers}


def picture(pack: Path, m: TiledMap) -> bytes:
    """The map's visible tile layers drawn from their tilesheets, every step-th pixel as in the
    preview (so overlays line up with the preview's coordinates too)."""
    tw, th = m.tile_width, m.tile_height
    step = step_of(m.height * th, m.width * tw)
    atlas, lookup = _atlas(pack, m)
    ys = np.arange(0, m.height * th, step)
    xs = np.arange(0, m.width * tw, step)
    out = np.zeros((len(ys), len(xs), 4), dtype=np.uint8)
    for drawn in (layer.drawn for layer in m.layers if layer.visible):
        gids = drawn & np.uint32(GID_MASK)
        idx = lookup[np.minimum(gids, len(lookup) - 1)]
        cell = idx[(ys // th)[:, None], (xs // tw)[None, :]]
        py = np.broadcast_to((ys % th)[:, None], cell.shape)
        px = np.broadcast_to((xs % tw)[None, :], cell.shape)
        flips = (drawn >> 29)[(ys // th)[:, None], (xs // tw)[None, :]]
        if flips.any():
            # A tile drawn flipped (a hand-drawn map's art): each pixel read from where Tiled's
            # flips (diagonal, then left-right, then upside down) bring it from.
            py = np.where(flips & 2, th - 1 - py, py)
            px = np.where(flips & 4, tw - 1 - px, px)
            py, px = np.where(flips & 1, px, py), np.where(flips & 1, py, px)
        top = atlas[cell, py, px]
        alpha = top[..., 3:4].astype(np.uint16)
        out = ((top.astype(np.uint16) * alpha + out.astype(np.uint16) * (255 - alpha)) // 255).astype(np.uint8)
        out[..., 3] = np.maximum(out[..., 3], top[..., 3])
    return png_bytes(Image.fromarray(out, "RGBA"))


def _atlas(pack: Path, m: TiledMap) -> tuple[np.ndarray, np.ndarray]:
    """Every tile of the map's tile size as one (n, th, w, 4) array (index 0 see-through), and
    gid -> index into it."""
    tw, th = m.tile_width, m.tile_height
    tiles = [np.zeros((1, th, tw, 4), dtype=np.uint8)]
    top = max((t.firstgid + (t.tilecount or 0) for t in m.tilesets), default=1)
    lookup = np.zeros(top + 1, dtype=np.int64)
    n = 1
    for ts in m.tilesets:
        count = ts.tilecount or 0
        if ts.tile_size != (tw, th) or not count:
            continue
        columns = max(1, ts.columns)
        try:
            with Image.open(inside(pack, ts.image)) as im:
                sheet = np.asarray(im.convert("RGBA"))
        except (OSError, ValueError) as exc:
            raise MapFileError(f"{ts.image}: cannot read the tilesheet ({exc})") from None
        ids = np.arange(count)
        x0 = ts.margin + (ids % columns) * (tw + ts.spacing)
        y0 = ts.margin + (ids // columns) * (th + ts.spacing)
        ok = (x0 + tw <= sheet.shape[1]) & (y0 + th <= sheet.shape[0])
        ids, x0, y0 = ids[ok], x0[ok], y0[ok]
        rows = y0[:, None, None] + np.arange(th)[None, :, None]
        cols = x0[:, None, None] + np.arange(tw)[None, None, :]
        tiles.append(sheet[rows, cols])
        lookup[ts.firstgid + ids] = n + np.arange(len(ids))
        n += len(ids)
    return np.concatenate(tiles), lookup
