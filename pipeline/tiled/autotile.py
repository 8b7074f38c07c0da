"""Autotiling: which tile of a Wang set draws each tile of a symbol, from its neighbours.

Neighbours are bits clockwise from north, the order of Tiled's wangid (top, top-right, right,
bottom-right, bottom, bottom-left, left, top-left):

    N = 1, NE = 2, E = 4, SE = 8, S = 16, SW = 32, W = 64, NW = 128

Two sets are supported, as Tiled names them:

- **blob** (`mixed` Wang set, 47 tiles): edges and corners. A corner counts only when both edges
  beside it do, which leaves 47 of the 256 masks. Thin walls (mazes) connect along their edges.
- **corner** (`corner` Wang set, 16 tiles): the four corners alone. A corner is set when all four
  tiles that meet there are the symbol, so blocks join into smooth masses; one-tile-thick walls
  all get the same tile, so prefer blob for mazes.

Colour 1 of each set is the symbol; colour 2 is everything else. Edge and corner colours then
agree between neighbours by construction: an edge is 1 when the tiles on both sides are the
symbol, a corner when all four tiles around it are.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

N, NE, E, SE, S, SW, W, NW = (1 << i for i in range(8))
EDGES = N | E | S | W
# (corner bit, the two edge bits beside it)
CORNERS = ((NE, N, E), (SE, S, E), (SW, S, W), (NW, N, W))
# (dy, dx) of each bit, in bit order.
OFFSETS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))

WangKind = Literal["blob", "corner"]


def blob_reduce(mask: int) -> int:
    """Drop the corners whose two edges are not both set."""
    for corner, a, b in CORNERS:
        if mask & corner and not (mask & a and mask & b):
            mask &= ~corner
    return mask


# The 47 blob masks in increasing order; a blob tileset's tile k draws BLOB_MASKS[k].
BLOB_MASKS: tuple[int, ...] = tuple(sorted({blob_reduce(m) for m in range(256)}))
# The 16 corner masks (NE, SE, SW, NW bits) in increasing order of their 4-bit number.
CORNER_MASKS: tuple[int, ...] = tuple(
    sum(bit for i, bit in enumerate((NE, SE, SW, NW)) if k >> i & 1) for k in range(16)
)
SET_SIZE = {"blob": len(BLOB_MASKS), "corner": len(CORNER_MASKS)}
TILED_TYPE = {"blob": "mixed", "corner": "corner"}


def _index_table(kind: WangKind) -> np.ndarray:
    """For each of the 256 raw neighbour masks, the index of its tile in the set."""
    table = np.empty(256, dtype=np.int16)
    masks = BLOB_MASKS if kind == "blob" else CORNER_MASKS
    where = {m: i for i, m in enumerate(masks)}
    for raw in range(256):
        if kind == "blob":
            table[raw] = where[blob_reduce(raw)]
        else:
            table[raw] = where[raw & (NE | SE | SW | NW) & _corner_closure(raw)]
    return table


def _corner_closure(raw: int) -> int:
    """Corner bits whose three neighbours (both edges and the diagonal) are all set."""
    out = 0
    for corner, a, b in CORNERS:
        if raw & corner and raw & a and raw & b:
            out |= corner
    return out


_TABLES = {kind: _index_table(kind) for kind in ("blob", "corner")}


def neighbour_masks(inside: np.ndarray, edge_inside: bool = True) -> np.ndarray:
    """uint8 mask of which of the 8 neighbours of every tile are inside too. Beyond the map's
    edge counts as inside when `edge_inside` (walls run on past a border wall)."""
    h, w = inside.shape
    padded = np.pad(inside, 1, constant_values=edge_inside)
    masks = np.zeros((h, w), dtype=np.uint8)
    for bit, (dy, dx) in enumerate(OFFSETS):
        masks |= padded[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w].astype(np.uint8) << bit
    return masks


def choose(inside: np.ndarray, kind: WangKind, edge_inside: bool = True) -> np.ndarray:
    """int16 index into the set's tiles for every tile inside (-1 elsewhere)."""
    index = _TABLES[kind][neighbour_masks(inside, edge_inside)]
    return np.where(inside, index, -1).astype(np.int16)


def wang_id(mask: int, kind: WangKind) -> tuple[int, ...]:
    """Tiled's wangid (8 colours, top first, clockwise) of the tile drawing `mask`: 1 where the
    symbol continues, 2 where it does not; a corner set leaves the edges 0 (unused)."""
    ids = []
    for bit in range(8):
        is_edge = bit % 2 == 0
        if kind == "corner" and is_edge:
            ids.append(0)
        else:
            ids.append(1 if mask >> bit & 1 else 2)
    return tuple(ids)


def set_masks(kind: WangKind) -> tuple[int, ...]:
    return BLOB_MASKS if kind == "blob" else CORNER_MASKS
