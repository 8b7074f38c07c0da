"""Configuration spaces: every place one room template can stand beside another, joined by a door.

For templates A (at the origin) and B, the offsets of B at which a door spot of A and a door
spot of B facing it coincide, and the two rooms overlap on nothing but wall. The layout searches
only these offsets, so every pair of joined rooms it makes is joined by a real door.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.graphs.templates import RoomTemplate
from pipeline.jit import compiled


@dataclass(frozen=True)
class ConfigSpace:
    """Offsets (dx, dy) of B against A, each once (`offsets`, sorted), and for each its door
    pairs: rows `starts[k]:starts[k + 1]` of `doors` (index of A's spot, index of B's spot)."""

    offsets: np.ndarray  # (k, 2) int32
    starts: np.ndarray  # (k + 1,) int32
    doors: np.ndarray  # (m, 2) int32

    def keys(self) -> np.ndarray:
        return offset_keys(self.offsets[:, 0], self.offsets[:, 1])

    def door_pairs(self, dx: int, dy: int) -> np.ndarray:
        k = int(np.searchsorted(self.keys(), offset_keys(np.array([dx]), np.array([dy]))[0]))
        return self.doors[self.starts[k] : self.starts[k + 1]]


# Offsets fit in 20 bits a side (a million tiles), so one int64 orders and finds them.
_SHIFT = 1 << 21
_HALF = 1 << 20


def offset_keys(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    return (np.asarray(dy, dtype=np.int64) + _HALF) * _SHIFT + (np.asarray(dx, dtype=np.int64) + _HALF)


def key_offsets(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (dx, dy) that `offset_keys` made `keys` from."""
    return keys % _SHIFT - _HALF, keys // _SHIFT - _HALF


def config_space(a: RoomTemplate, b: RoomTemplate, socket: str = "") -> ConfigSpace:
    """B's offsets beside A through door spots of `socket` ("": the spots without one)."""
    sa, sb = _spots(a, socket), _spots(b, socket)
    # Every spot of A against every spot of B facing it, of its length: B moved to put them together.
    match = (sb[None, :, 3] == (sa[:, None, 3] + 2) % 4) & (sb[None, :, 2] == sa[:, None, 2])
    i, j = np.nonzero(match)
    if len(i) == 0:
        return ConfigSpace(np.zeros((0, 2), np.int32), np.zeros(1, np.int32), np.zeros((0, 2), np.int32))
    table = np.stack([sa[i, 0] - sb[j, 0], sa[i, 1] - sb[j, 1], sa[i, 4], sb[j, 4]], axis=1).astype(np.int32)
    ok = _fits_all(a.kinds, b.kinds, table[:, 0].copy(), table[:, 1].copy())
    table = table[ok]
    if len(table) == 0:
        return ConfigSpace(np.zeros((0, 2), np.int32), np.zeros(1, np.int32), np.zeros((0, 2), np.int32))
    keys = offset_keys(table[:, 0], table[:, 1])
    order = np.lexsort((table[:, 3], table[:, 2], keys))
    table, keys = table[order], keys[order]
    first = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    starts = np.concatenate([first, [len(table)]]).astype(np.int32)
    return ConfigSpace(table[first, :2].copy(), starts, table[:, 2:].copy())


def _spots(t: RoomTemplate, socket: str) -> np.ndarray:
    """The template's door spots of `socket`, a row each: x, y, length, side, index among its spots."""
    rows = [(d.x, d.y, d.length, d.side, k) for k, d in enumerate(t.doors) if d.socket == socket]
    return np.array(rows, dtype=np.int64).reshape(-1, 5)


@compiled
def _fits_all(ka: np.ndarray, kb: np.ndarray, dxs: np.ndarray, dys: np.ndarray) -> np.ndarray:
    """For each offset, whether B there overlaps A only where both are wall (kind 1)."""
    ha, wa = ka.shape
    hb, wb = kb.shape
    out = np.empty(dxs.shape[0], dtype=np.bool_)
    for k in range(dxs.shape[0]):
        dx = dxs[k]
        dy = dys[k]
        ok = True
        for y in range(max(0, dy), min(ha, dy + hb)):
            for x in range(max(0, dx), min(wa, dx + wb)):
                p = ka[y, x]
                q = kb[y - dy, x - dx]
                if p != 0 and q != 0 and (p != 1 or q != 1):
                    ok = False
                    break
            if not ok:
                break
        out[k] = ok
    return out
