"""Wall pieces of a Wang set: every piece fills its whole tile with wall, so what a player sees
is what it collides with (the tileset gives wall tiles a full-tile collision box).

A piece tells its neighbours apart by its rim, drawn on the wall where it meets something else:
along each side whose neighbour is not wall, and around each inner corner (both sides wall, the
diagonal not). Rims are drawn from one distance field per piece (how far a pixel is from the
nearest open side, and which way that side faces), and a field agrees with the neighbour's
along every shared side, so pieces join without seams in every configuration of the set: thin
and diagonal runs stay one wall.

Pieces follow `autotile`'s neighbour bits and mask order: piece k of `wall_pieces(kind, ...)` is
the one `autotile.choose` picks as index k.
"""

from __future__ import annotations

import numpy as np

from pipeline.tiled.art import STYLES, Style, blend, lighter, noise_jitter, symbol_tile
from pipeline.tiled.autotile import CORNERS, E, N, S, W, WangKind, set_masks

# Which way a rim pixel faces: light comes from the top left.
UP, RIGHT, DOWN, LEFT = range(4)
_FACING = {N: UP, E: RIGHT, S: DOWN, W: LEFT}
_FAR = 1 << 20  # distance of a pixel with no open side near it


def _edges(mask: int, kind: WangKind) -> int:
    """The mask with its edge bits as the set knows them. A corner set knows an edge neighbour is
    wall when a corner beside it is set (all three tiles around a set corner are wall); an edge
    with no set corner beside it may be open, and is drawn open."""
    if kind == "blob":
        return mask
    out = mask
    for corner, a, b in CORNERS:
        if mask & corner:
            out |= a | b
    return out


def rim_field(mask: int, kind: WangKind, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """(distance, facing) per pixel: the distance to the nearest open side (or inner corner) and
    which way it faces. Sides are straight bands; an inner corner is the Chebyshev distance from
    its corner pixel, an L that carries on the two neighbours' rims which end there."""
    mask = _edges(mask, kind)
    y, x = np.indices((height, width))
    side = {N: y, S: height - 1 - y, W: x, E: width - 1 - x}
    dist = np.full((height, width), _FAR, dtype=np.int32)
    facing = np.zeros((height, width), dtype=np.int8)
    # Lit sides first: a pixel as near to a lit side as a shaded one takes the light.
    for bit in (N, W, S, E):
        if not mask & bit:
            nearer = side[bit] < dist
            dist[nearer] = side[bit][nearer]
            facing[nearer] = _FACING[bit]
    for corner, a, b in CORNERS:
        if mask & a and mask & b and not mask & corner:
            # The neighbour across side b has side a open (its rim faces like a) and reaches this
            # tile along side b; across side a, the other way round.
            notch = np.maximum(side[a], side[b])
            face = np.where(side[a] > side[b], _FACING[a], _FACING[b]).astype(np.int8)
            nearer = notch < dist
            dist[nearer] = notch[nearer]
            facing[nearer] = face[nearer]
    return dist, facing


def wall_material(rgb: tuple[int, int, int], width: int, height: int, style: Style, key: str, grain: bool = False) -> np.ndarray:
    """The wall's surface before rims: `bevel` lays it in courses of stone blocks (half a tile
    high, offset by half a block each course, so it runs on across tiles); `noise` (or `grain`)
    gives it grain."""
    tile = symbol_tile(rgb, width, height, "noise" if style == "noise" or grain else "flat", key)
    if style == "bevel" and min(width, height) >= 6:
        y, x = np.indices((height, width))
        course = height // 2
        row = y // course
        joint = np.where(row % 2 == 0, x == 0, x == width // 2)
        mortar = (y % course == 0) | joint
        colour = tile[..., :3]
        colour[mortar] = blend(colour[mortar], 0, 1, 5)
    return tile


def _lip(key: str, length: int, limit: int) -> np.ndarray:
    """A rough rim thickness (1..limit) along a side, the same at both ends so rims meet."""
    jitter = noise_jitter(key + "/lip", length, 1)[0]
    lip = 1 + (jitter + 20) * limit // 41
    lip[[0, -1]] = max(1, (limit + 1) // 2)
    return np.minimum(lip, limit)


def style_rims(tile: np.ndarray, dist: np.ndarray, facing: np.ndarray, style: Style, key: str) -> np.ndarray:
    """`tile` (the wall's material) with its rim drawn in `style`. Every band stays below the
    tile's shortest side minus one, so a rim never shows at a side where the wall runs on."""
    out = tile.copy()
    rgb = out[..., :3]
    height, width = dist.shape
    reach = max(0, min(width, height) - 2)  # deepest band allowed
    lit = (facing == UP) | (facing == LEFT)
    edge = dist == 0
    if style == "flat":
        rgb[edge] = blend(rgb[edge], 0, 1, 4)
    elif style == "outline":
        band = (dist == 1) & (reach >= 1)
        rgb[band & lit] = lighter(rgb[band & lit])
        rgb[band & ~lit] = blend(rgb[band & ~lit], 0, 1, 6)
        rgb[edge] = blend(rgb[edge], 0, 1, 2)
    elif style == "bevel":
        depth = min(reach, max(1, min(width, height) // 8))
        band = (dist >= 1) & (dist <= depth)
        rgb[band & lit] = lighter(rgb[band & lit])
        rgb[band & ~lit] = blend(rgb[band & ~lit], 0, 3, 8)
        rgb[edge] = blend(rgb[edge], 0, 1, 2)
    elif style == "noise":
        limit = min(reach, 3, max(1, (min(width, height) - 1) // 2 - 1))  # a rough lip, clear of the middle
        y, x = np.indices((height, width))
        along = np.where((facing == UP) | (facing == DOWN), x, y)
        lip_x, lip_y = _lip(key, width, max(limit, 1)), _lip(key, height, max(limit, 1))
        thick = np.where((facing == UP) | (facing == DOWN), lip_x[np.minimum(along, width - 1)], lip_y[np.minimum(along, height - 1)])
        band = (dist >= 1) & (dist <= thick) & (limit >= 1)
        rgb[band & lit] = blend(rgb[band & lit], 255, 1, 4)
        rgb[band & ~lit] = blend(rgb[band & ~lit], 0, 1, 4)
        rgb[edge] = blend(rgb[edge], 0, 1, 2)
    return out


def wall_pieces(kind: WangKind, material: np.ndarray, style: Style, key: str) -> list[np.ndarray]:
    """The pieces of a Wang set in `autotile.set_masks(kind)` order: `material` everywhere, with
    a rim in `style` where the piece meets something else."""
    if material.ndim != 3 or material.shape[2] != 4:
        raise ValueError(f"material must be (h, w, 4); got {material.shape}")
    if style not in STYLES:
        raise ValueError(f"unknown tile style {style!r}; expected one of {', '.join(STYLES)}")
    height, width = material.shape[:2]
    if min(width, height) < 3:
        raise ValueError(f"wall pieces need at least 3x3 pixels to show their rims, got {width}x{height}")
    pieces = []
    for mask in set_masks(kind):
        dist, facing = rim_field(mask, kind, width, height)
        pieces.append(style_rims(material, dist, facing, style, key))
    return pieces


def lone_wall(material: np.ndarray, style: Style, key: str) -> np.ndarray:
    """The wall's own tile: the piece with no wall around it (rims on every side)."""
    height, width = material.shape[:2]
    dist, facing = rim_field(0, "blob", width, height)
    return style_rims(material, dist, facing, style, key)

