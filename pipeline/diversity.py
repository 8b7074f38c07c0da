"""How varied a pack is: each map's distance to the nearest other map of the pack.

Two distances between maps, both from 0 (alike) to 1 (nothing alike):

- tiles: the share of tiles whose symbols differ (by name, so maps with different alphabets
  compare fairly), over the larger map's area: maps of different sizes are laid top-left on
  top-left, and a tile only one of them covers counts as different;
- path: how differently the shortest way from the spawn to the exit runs, as the Jaccard
  distance of the two ways' tiles (1 - shared / either); a structural measure, blind to
  decoration that leaves the way alone. Only for maps that all have a spawn and an exit (or,
  mazes, a recorded entrance and exit).

A pack's diversity is the spread of the maps' nearest-neighbour distances, and the share of maps
at least `threshold` from every other map: a pack of near copies scores near 0, one in which
every map stands apart 1. All pairs are compared at once as matrix products of one-hot tiles,
so a pack of a few hundred maps takes a moment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.errors import PipelineError
from pipeline.grid.bfs import shortest_way
from pipeline.level import Level
from pipeline.stages.place.endpoints import endpoint_tile

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


def diversity(levels: list[Level], threshold: float = THRESHOLD, walls: tuple[str, ...] = ("wall",)) -> list[Spread]:
    """The spreads of a pack's maps (two or more): tiles always, path where every map has one
    (`walls`: the symbols the way cannot cross)."""
    if len(levels) < 2:
        return []
    out = [Spread("tiles", tuple(nearest(tile_distances(levels)).tolist()), threshold)]
    path = path_distances(levels, walls)
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
    for s in range(len(names)):
        one = (grids == s).astype(np.float32)
        same += one @ one.T
    return 1.0 - same / (h * w)


def path_distances(levels: list[Level], walls: tuple[str, ...] = ("wall",)) -> np.ndarray | None:
    """The Jaccard distance between every two maps' shortest ways from spawn to exit; None when
    a map has no spawn, no exit, or no way between them."""
    h = max(lv.height for lv in levels)
    w = max(lv.width for lv in levels)
    ways = np.zeros((len(levels), h * w), dtype=np.float32)
    for k, lv in enumerate(levels):
        way = _way(lv, walls)
        if way is None:
            return None
        ys, xs = way // lv.width, way % lv.width
        ways[k, ys * w + xs] = 1.0
    shared = ways @ ways.T
    size = ways.sum(axis=1)
    either = size[:, None] + size[None, :] - shared
    return 1.0 - shared / np.maximum(either, 1.0)


def _way(level: Level, walls: tuple[str, ...]) -> np.ndarray | None:
    """Flat tiles of the map's shortest way from its first spawn to its first exit (a maze's
    recorded entrance and exit stand in for them), None without one."""
    try:
        spawn, goal = endpoint_tile(level, "spawn", "spawn"), endpoint_tile(level, "exit", "exit")
    except PipelineError:
        return None
    return shortest_way(~np.array([s.name in walls for s in level.alphabet])[level.tiles], spawn, goal)
