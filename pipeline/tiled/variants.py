"""Which of a name's tiles draws each cell, when the tileset gives the name variants (`[variants.floor]`).

The choice is a function of the map alone, not of a random stream: every exporter of a map, its
preview and its contact-sheet thumbnail draw the same tiles without handing anything between
them, and two maps differ because their cells do. Each cell draws a uniform number from a hash of
its position and the map, so a cell's tile does not depend on how many cells before it are the
same name."""

from __future__ import annotations

import hashlib

import numpy as np

# splitmix64's finaliser: every input bit reaches every output bit.
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def map_key(tiles: np.ndarray) -> int:
    """64 bits that differ between maps: of the map's cells and shape."""
    digest = hashlib.blake2b(tiles.tobytes(), digest_size=8, person=b"pcg-variants")
    digest.update(np.asarray(tiles.shape, dtype="<u8").tobytes())
    return int.from_bytes(digest.digest(), "little")


def _name_key(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8, person=b"pcg-variant-nm").digest(), "little")


def _mix(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _MIX1  # arrays wrap on overflow, as the mix wants
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def _uniform(key: int, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """A number in [0, 1) per cell, from the cell's position and `key`."""
    # Mixed before the key joins: keys a bit apart then give unrelated numbers, not shifted ones.
    position = _mix((ys.astype(np.uint64) << np.uint64(32)) | xs.astype(np.uint64))
    return (_mix(position ^ np.uint64(key)) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def pick(where: np.ndarray, own: int, weighted: tuple[tuple[int, float], ...], name: str, key: int) -> np.ndarray:
    """Tile ids for the cells of `where` (in row-major order): the name's own tile (weight 1) or
    one of its variants, by weight."""
    ys, xs = np.nonzero(where)
    ids = np.asarray([own, *(tile for tile, _ in weighted)], dtype=np.int64)
    bounds = np.cumsum([1.0, *(weight for _, weight in weighted)])
    chosen = np.searchsorted(bounds / bounds[-1], _uniform(key ^ _name_key(name), ys, xs), side="right")
    return ids[np.minimum(chosen, len(ids) - 1)]
