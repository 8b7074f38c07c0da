"""The floor the big-world bench holds a build against: the same work as its recipe in plain
numpy and scipy, written as a user in a hurry would, run as a process of its own.

`python -m bench.big_world_floor SIDE OUT SEED`: wall noise (45% walls), five passes of the 4-5
cave rule with the edge counted as wall, scipy's 4-connected labels of the floor, every cave but
the largest filled, the floor labelled again, and both layers (the tiles and the labels,
little-endian 32-bit as a map stores them) zlib-compressed at zlib's default level into one file.
"""

from __future__ import annotations

import sys
import zlib

import numpy as np
from scipy import ndimage


def main(side: int, out: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    wall = rng.random((side, side)) < 0.45
    for _ in range(5):
        padded = np.pad(wall, 1, constant_values=True).astype(np.int8)
        around = sum(padded[1 + dy : side + 1 + dy, 1 + dx : side + 1 + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
        wall = np.where(wall, around >= 4, around >= 5)
    wall[0, :] = wall[-1, :] = wall[:, 0] = wall[:, -1] = True
    labels, count = ndimage.label(~wall)
    if count > 1:
        sizes = np.bincount(labels.ravel())
        sizes[0] = 0
        wall |= labels != int(sizes.argmax())
    labels, _ = ndimage.label(~wall)
    tiles = np.where(wall, 1, 2).astype("<u4")
    with open(out, "wb") as f:
        f.write(zlib.compress(tiles.tobytes()))
        f.write(zlib.compress(labels.astype("<u4").tobytes()))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
