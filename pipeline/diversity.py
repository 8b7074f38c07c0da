"""How varied a pack is: each map's distance to the nearest other map of the pack.

Two distances between maps, both from 0 (alike) to 1 (nothing alike):

- tiles: the share of tiles whose symbols differ (by name, so maps with different alphabets
  compare fairly), over the area of the two maps laid top-left on top-left: a tile only one of
  them covers counts as different;
- path: how differently the shortest way from the spawn to the exit runs, as the Jaccard
  distance of the two ways' tiles (1 - shared / either); a structural measure, blind to
  decoration that leaves the way alone. Only for maps that all have a spawn and an exit (or,
  mazes, a recorded entrance and exit).

A pack's diversity is the spread of the maps' nearest-neighbour distances, and the share of maps
at least `threshold` from every other map: a pack of near copies scores near 0, one in which
every map stands apart 1. All pairs are compared at once as matrix products of one-hot tiles,
so a pack of a few hundred maps takes a moment. `Print` is what one map contributes to either
distance, small enough to send between processes (`pack.distinct` compares maps as they are made).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.level.endpoints import endpoint_tile
from pipeline.errors import PipelineError
from pipeline.grid.bfs import shortest_way
from pipeline.level import Level

# A map is "distinct" when at least this far (tile distance) from every other map of its pack.
THRESHOLD = 0.1


@dataclass(frozen=True)
class Spread:
    """One distance's nearest-neighbour spread over a pack's maps."""

    measure: str  # "tiles" or "path"
    nearest: tuple[float, ...]  # per map, in map order
    threshold: float

    @property
    def distinct(self) -> float:
        """The share of maps at least `threshold` from every other map."""
        return float(np.mean(np.array(self.nearest) >= self.threshold)) if self.nearest else 0.0

    def summary(self) -> dict[str, float]:
        near = np.array(self.nearest)
        return {"min": float(near.min()), "median": float(np.median(near)), "max": float(near.max()), "distinct": self.distinct}


def diversity(levels: list[Level], threshold: float = THRESHOLD, walls: tuple[str, ...] = ("wall",), small: bool = False) -> list[Spread]:
    """The spreads of a pack's maps (two or more): tiles always, path where every map has one
    (`walls`: the symbols the way cannot cross; `small`: ways searched without numba)."""
    if len(levels) < 2:
        return []
    out = [Spread("tiles", tuple(nearest(tile_distances(levels)).tolist()), threshold)]
    path = path_distances(levels, walls, small)
    if path is not None:
        out.append(Spread("path", tuple(nearest(path).tolist()), threshold))
    return out


def nearest(d: np.ndarray) -> np.ndarray:
    """Per map, its distance to the nearest other map."""
    d = d.astype(np.float64, copy=True)
    np.fill_diagonal(d, np.inf)
    return d.min(axis=1)


def tile_distances(levels: list[Level]) -> np.ndarray:
    """The share of differing tiles between every two maps (see the module's docstring)."""
    h = max(lv.height for lv in levels)
    w = max(lv.width for lv in levels)
    names = sorted({s.name for lv in levels for s in lv.alphabet})
    # Each map as symbol ids on the shared grid, -1 where it has no tile.
    grids = np.full((len(levels), h * w), -1, dtype=np.int16)
    for k, lv in enumerate(levels):
        ids = np.array([names.index(s.name) for s in lv.alphabet], dtype=np.int16)
        grid = np.full((h, w), -1, dtype=np.int16)
        grid[: lv.height, : lv.width] = ids[lv.tiles]
        grids[k] = grid.ravel()
    same = np.zeros((len(levels), len(levels)))
    for s in [-1, *range(len(names))]:  # -1: a tile neither map covers is outside both
        one = (grids == s).astype(np.float32)
        same += one @ one.T
    heights = np.array([lv.height for lv in levels])
    widths = np.array([lv.width for lv in levels])
    area = np.maximum.outer(heights, heights) * np.maximum.outer(widths, widths)
    return (h * w - same) / area


@dataclass(frozen=True)
class Print:
    """What a map brings to one distance: for "tiles" its grid of symbol names (`names[grid]`),
    for "path" its way's tiles as sorted codes y * CODE_WIDTH + x."""

    measure: str
    shape: tuple[int, int]
    grid: np.ndarray
    names: tuple[str, ...] = ()


CODE_WIDTH = 1 << 20  # wider than any map


def fingerprint(level: Level, measure: str, walls: tuple[str, ...] = ("wall",)) -> Print | None:
    """The map's Print for `measure`; None for "path" on a map without a way from spawn to exit."""
    shape = (level.height, level.width)
    if measure == "tiles":
        return Print(measure, shape, np.ascontiguousarray(level.tiles, dtype=np.int16), tuple(s.name for s in level.alphabet))
    way = _way(level, walls)
    if way is None:
        return None
    return Print(measure, shape, np.sort((way // level.width) * CODE_WIDTH + way % level.width).astype(np.int64))


class Kept:
    """The Prints of the maps kept so far, each new one measured against all of them at once."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}  # symbol name -> an id shared by every map kept
        self.by_shape: dict[tuple[int, int], _Grids] = {}  # tiles: the maps of each size
        self.ways: list[tuple[int, np.ndarray]] = []  # path: map, way codes

    def add(self, index: int, p: Print) -> None:
        if p.measure == "path":
            self.ways.append((index, p.grid))
        else:
            self.by_shape.setdefault(p.shape, _Grids(p.shape)).add(index, self._shared(p))

    def nearest(self, p: Print) -> tuple[float, int | None]:
        """The distance from `p` to the nearest map kept, and which (1.0 and None: none kept)."""
        best: tuple[float, int | None] = (1.0, None)
        if p.measure == "path":
            for index, way in self.ways:
                shared = len(np.intersect1d(way, p.grid, assume_unique=True))
                d = 1.0 - shared / max(len(way) + len(p.grid) - shared, 1)
                if d < best[0]:
                    best = (d, index)
            return best
        grid = self._shared(p)
        for shape, kept in self.by_shape.items():
            grids = kept.grids[: len(kept.indices)]
            if shape == p.shape:
                differ = (grids != grid).sum(axis=(1, 2)) / (shape[0] * shape[1])
            else:  # maps of another size: laid top-left on top-left, one at a time
                differ = np.array([_apart(g, grid) for g in grids])
            k = int(np.argmin(differ))
            if differ[k] < best[0]:
                best = (float(differ[k]), kept.indices[k])
        return best

    def _shared(self, p: Print) -> np.ndarray:
        ids = np.array([self.names.setdefault(name, len(self.names)) for name in p.names], dtype=np.int16)
        return ids[p.grid]


class _Grids:
    """The kept maps of one size in one array, grown by doubling: measuring a map against them
    is one comparison, and keeping one copies nothing."""

    def __init__(self, shape: tuple[int, int]):
        self.indices: list[int] = []
        self.grids = np.empty((4, *shape), dtype=np.int16)

    def add(self, index: int, grid: np.ndarray) -> None:
        n = len(self.indices)
        if n == len(self.grids):
            self.grids = np.concatenate([self.grids, np.empty_like(self.grids)])
        self.grids[n] = grid
        self.indices.append(index)


def _apart(a: np.ndarray, b: np.ndarray) -> float:
    """The tile distance of two grids of shared ids of different sizes."""
    h, w = max(a.shape[0], b.shape[0]), max(a.shape[1], b.shape[1])
    pa = np.full((h, w), -1, dtype=np.int16)
    pb = np.full((h, w), -1, dtype=np.int16)
    pa[: a.shape[0], : a.shape[1]] = a
    pb[: b.shape[0], : b.shape[1]] = b
    return float((pa != pb).sum() / (h * w))


def path_distances(levels: list[Level], walls: tuple[str, ...] = ("wall",), small: bool = False) -> np.ndarray | None:
    """The Jaccard distance between every two maps' shortest ways from spawn to exit; None when
    a map has no spawn, no exit, or no way between them."""
    h = max(lv.height for lv in levels)
    w = max(lv.width for lv in levels)
    ways = np.zeros((len(levels), h * w), dtype=np.float64)  # as Kept measures them: a map kept at `min` reads `min` here
    for k, lv in enumerate(levels):
        way = _way(lv, walls, small)
        if way is None:
            return None
        ys, xs = way // lv.width, way % lv.width
        ways[k, ys * w + xs] = 1.0
    shared = ways @ ways.T
    size = ways.sum(axis=1)
    either = size[:, None] + size[None, :] - shared
    return 1.0 - shared / np.maximum(either, 1.0)


def _way(level: Level, walls: tuple[str, ...], small: bool = False) -> np.ndarray | None:
    """Flat tiles of the map's shortest way from its first spawn to its first exit (a maze's
    recorded entrance and exit stand in for them), None without one."""
    try:
        spawn, goal = endpoint_tile(level, "spawn", "spawn"), endpoint_tile(level, "exit", "exit")
    except PipelineError:
        return None
    return shortest_way(~np.array([s.name in walls for s in level.alphabet])[level.tiles], spawn, goal, small)
