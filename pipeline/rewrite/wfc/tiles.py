"""The tiled model: a MarkovJunior tileset (`tilesets/<name>.xml` and one `.vox` per tile) as
tile variants, weights and the neighbour table, for 2D tiles (one voxel layer deep).

Each tile stands in every orientation that differs from the others (quarter turns and mirror
images), in MarkovJunior's order; a neighbour entry `left="z Line" right="Turn"` (a `z` per
quarter turn) allows that pair side by side, and with it the pair's mirror images and, turned,
one above the other. The tiles' values are their palette indices (an empty voxel is one more)
numbered in the order they first appear, tile after tile, reading each tile's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from pipeline.rewrite.wfc.vox import Vox


class TilesetError(ValueError):
    """A tileset that cannot be used: `line` is its line in the tileset file (0: the file)."""

    def __init__(self, line: int, message: str):
        self.line = line
        super().__init__(message)


class XmlElement(Protocol):
    tag: str
    attrs: dict[str, str]
    line: int
    children: Sequence["XmlElement"]


@dataclass(frozen=True, eq=False)
class Tileset:
    tiles: np.ndarray  # (P, S, S) uint8 values of each tile variant, [t, y, x]
    weights: np.ndarray  # (P,) float64
    names: dict[str, np.ndarray]  # tile name -> bool (P,): its variants
    prop_ptr: np.ndarray  # (4, P + 1): the tiles allowed next to t in direction d (see overlap.DX)
    prop_data: np.ndarray
    colours: int

    @property
    def size(self) -> int:
        """The tiles' side in cells."""
        return int(self.tiles.shape[1])


def _turn(p: np.ndarray) -> np.ndarray:
    """A quarter turn about z, MarkovJunior's `zRotate`: new[y][x] = old[S-1-x][y]."""
    return np.ascontiguousarray(np.rot90(p, -1))


def _mirror_x(p: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(p[:, ::-1])


def _mirror_y(p: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(p[::-1, :])


def load_tileset(root: XmlElement, read_tile: Callable[[str], Vox], path: str) -> Tileset:
    """Tiles from the `<tiles>` of a tileset file and neighbours from its `<neighbors>`;
    `read_tile(name)` gives a tile's voxels (the wfc node's `tiles` folder decides where)."""
    if root.attrs.get("fullSymmetry", "false").lower() == "true":
        raise TilesetError(root.line, "fullSymmetry tilesets are 3D (cube symmetries); only 2D tilesets are supported")
    sections = {c.tag: c for c in root.children}
    if "tiles" not in sections or not [t for t in sections["tiles"].children if t.tag == "tile"]:
        raise TilesetError(root.line, f"{path} has no <tiles><tile name=.../></tiles>")
    uniques: dict[int, int] = {}
    variants: list[np.ndarray] = []
    weights: list[float] = []
    firsts: dict[str, np.ndarray] = {}
    owner: list[str] = []
    size = 0
    for el in sections["tiles"].children:
        if el.tag != "tile":
            continue
        name = el.attrs.get("name")
        if not name:
            raise TilesetError(el.line, "<tile> needs a name")
        if name in firsts:
            raise TilesetError(el.line, f"tile {name!r} is listed twice")
        try:
            weight = float(el.attrs.get("weight", "1"))
        except ValueError:
            raise TilesetError(el.line, f"tile {name!r}: weight={el.attrs['weight']!r} is not a number") from None
        if not weight > 0 or weight == float("inf"):
            raise TilesetError(el.line, f"tile {name!r}: weight must be a positive number")
        vox = read_tile(name)
        mx, my, mz = vox.size
        if mx != my:
            raise TilesetError(el.line, f"tile {name!r} is {mx}x{my}: tiles should be square")
        if mz != 1:
            raise TilesetError(el.line, f"tile {name!r} is {mz} voxels deep: only 2D tiles (one layer) are supported")
        if size and mx != size:
            raise TilesetError(el.line, f"tile {name!r} is {mx}x{my} but the first tile is {size}x{size}")
        size = mx
        flat = vox.voxels[0]
        for v in flat.ravel():
            uniques.setdefault(int(v), len(uniques))
        ords = np.vectorize(uniques.__getitem__, otypes=[np.int64])(flat).astype(np.uint8)
        firsts[name] = ords
        for image in _square_images(ords):
            variants.append(image)
            weights.append(weight)
            owner.append(name)
    tiles = np.stack(variants)
    p = len(tiles)
    names = {name: np.array([o == name for o in owner]) for name in firsts}
    allowed = np.zeros((4, p, p), dtype=np.bool_)

    def index(tile: np.ndarray, line: int, text: str) -> int:
        for t in range(p):
            if np.array_equal(tiles[t], tile):
                return t
        raise TilesetError(line, f"{text!r} is not one of the tiles' orientations")

    def parse(text: str, line: int) -> np.ndarray:
        code = text.split(" ")
        name = code[-1]
        if name not in firsts:
            raise TilesetError(line, f"unknown tile {name!r} (tiles: {', '.join(firsts)})")
        tile = firsts[name]
        actions = code[0] if len(code) == 2 else ""
        for sym in reversed(actions):
            if sym != "z":
                raise TilesetError(line, f"{text!r}: only z turns apply to 2D tiles (got {sym!r})")
            tile = _turn(tile)
        return tile

    for el in sections["neighbors"].children if "neighbors" in sections else ():
        if el.tag != "neighbor":
            continue
        if "left" not in el.attrs or "right" not in el.attrs:
            raise TilesetError(el.line, "<neighbor> needs left and right (top and bottom are for 3D tilesets)")
        lt, rt = parse(el.attrs["left"], el.line), parse(el.attrs["right"], el.line)

        def allow(d: int, a: np.ndarray, b: np.ndarray) -> None:
            allowed[d, index(a, el.line, el.attrs["left"]), index(b, el.line, el.attrs["right"])] = True

        allow(0, lt, rt)
        allow(0, _mirror_y(lt), _mirror_y(rt))
        allow(0, _mirror_x(rt), _mirror_x(lt))
        allow(0, _mirror_y(_mirror_x(rt)), _mirror_y(_mirror_x(lt)))
        down, up = _turn(lt), _turn(rt)
        allow(1, down, up)
        allow(1, _mirror_x(down), _mirror_x(up))
        allow(1, _mirror_y(up), _mirror_y(down))
        allow(1, _mirror_x(_mirror_y(up)), _mirror_x(_mirror_y(down)))
    allowed[2] = allowed[0].T
    allowed[3] = allowed[1].T
    offsets = np.concatenate([[0], np.cumsum(allowed.sum(axis=2).ravel())]).astype(np.int64)
    ptr = np.stack([offsets[d * p : d * p + p + 1] for d in range(4)])
    data = np.nonzero(allowed.reshape(4 * p, p))[1].astype(np.int64)
    return Tileset(tiles, np.array(weights), names, ptr, data if len(data) else np.zeros(1, np.int64), len(uniques))


def _square_images(tile: np.ndarray) -> list[np.ndarray]:
    """The distinct orientations of a tile in MarkovJunior's order (e, mirror, turn, ...)."""
    out = [tile, _mirror_x(tile)]
    for _ in range(3):
        turned = _turn(out[-2])
        out += [turned, _mirror_x(turned)]
    found: list[np.ndarray] = []
    for image in out:
        if not any(np.array_equal(image, f) for f in found):
            found.append(image)
    return found
