"""Pictures for tiles that are things rather than ground: a door, a chest, a key, drawn in the
name's colour at any tile size (proportions, not pixel art for one size).

A door stands in a doorway, so it is drawn over the ground with a frame in the wall's colour on
every side: whichever two sides its walls are on, the frame meets them. Chests and keys are
usually tile objects, drawn over whatever is there, so they are drawn on a clear background
unless `under` gives them ground.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipeline.tiled.art import blend, darker, lighter

Icon = Literal["door", "chest", "key"]
ICONS: tuple[Icon, ...] = ("door", "chest", "key")


def _box(tile: np.ndarray, top: int, left: int, bottom: int, right: int, rgb: np.ndarray) -> None:
    """Fill rows top..bottom-1, columns left..right-1 (clipped), opaque."""
    h, w = tile.shape[:2]
    top, bottom, left, right = max(top, 0), min(bottom, h), max(left, 0), min(right, w)
    if top < bottom and left < right:
        tile[top:bottom, left:right, :3] = rgb
        tile[top:bottom, left:right, 3] = 255


def _door(tile: np.ndarray, rgb: np.ndarray, frame: np.ndarray) -> None:
    h, w = tile.shape[:2]
    f = max(1, min(w, h) // 8)
    _box(tile, 0, 0, h, w, darker(frame))  # the frame's inner shadow shows between frame and leaf
    _box(tile, 0, 0, f, w, frame)
    _box(tile, h - f, 0, h, w, frame)
    _box(tile, 0, 0, h, f, frame)
    _box(tile, 0, w - f, h, w, frame)
    _box(tile, f + 1, f + 1, h - f, w - f - 1, rgb)
    leaf = tile[f + 1 : h - f, f + 1 : w - f - 1, :3]
    lh, lw = leaf.shape[:2]
    if lw >= 4:
        grain = darker(rgb)
        for x in range(lw // 3, lw, max(2, lw // 3)):  # plank joints
            leaf[:, x] = grain
        band = blend(rgb, 0, 5, 8)
        for y in (lh // 4, lh - 1 - lh // 4):  # iron bands
            leaf[y, :] = band
        handle = lighter(lighter(rgb))
        leaf[lh // 2, lw - 2] = handle
        leaf[:1, :] = lighter(rgb)


def _chest(tile: np.ndarray, rgb: np.ndarray) -> None:
    h, w = tile.shape[:2]
    top, left, bottom, right = h // 4, w // 8, h - max(1, h // 8), w - w // 8
    outline = blend(rgb, 0, 5, 8)
    _box(tile, top, left, bottom, right, outline)
    _box(tile, top + 1, left + 1, bottom - 1, right - 1, rgb)
    lid = top + 1 + (bottom - top) // 3
    _box(tile, top + 1, left + 1, lid, right - 1, lighter(rgb))
    _box(tile, lid, left + 1, lid + 1, right - 1, outline)
    mid = (left + right) // 2
    lock = np.array([255, 236, 39], dtype=np.uint8)
    _box(tile, lid - 1, mid - 1, lid + 2, mid + 1, lock)


def _key(tile: np.ndarray, rgb: np.ndarray) -> None:
    h, w = tile.shape[:2]
    mid = h // 2
    ring = max(2, w // 4)
    left = max(1, w // 8)
    _box(tile, mid - ring // 2 - 1, left, mid + ring // 2 + 2, left + ring + 1, darker(rgb))
    _box(tile, mid - ring // 2, left + 1, mid + ring // 2 + 1, left + ring, rgb)
    _box(tile, mid, left + ring // 2, mid + 1, left + ring // 2 + 1, darker(rgb))  # the ring's hole
    shaft = left + ring + 1
    end = w - max(1, w // 8)
    _box(tile, mid, shaft - 1, mid + 1, end, rgb)
    tooth = max(1, h // 8)
    for x in (end - 1, end - 1 - 2 * tooth):
        _box(tile, mid + 1, x - tooth + 1, mid + 1 + tooth + 1, x + 1, rgb)


def icon_tile(
    icon: Icon, rgb: tuple[int, int, int], width: int, height: int, under: np.ndarray | None, frame: tuple[int, int, int]
) -> np.ndarray:
    """The picture `icon` in colour `rgb` over `under` (a ground tile), or over clear pixels.
    `frame` colours a door's frame: the walls' colour, so the door sits in the wall."""
    if icon not in ICONS:
        raise ValueError(f"unknown icon {icon!r}; expected one of {', '.join(ICONS)}")
    if min(width, height) < 6:
        raise ValueError(f"icons need at least 6x6 pixels, got {width}x{height}")
    tile = np.zeros((height, width, 4), dtype=np.uint8) if under is None else under.copy()
    colour = np.array(rgb, dtype=np.uint8)
    if icon == "door":
        _door(tile, colour, np.array(frame, dtype=np.uint8))
    elif icon == "chest":
        _chest(tile, colour)
    else:
        _key(tile, colour)
    return tile
