"""Placement by walking distance: how far (walking) every tile is from a map's first object of
a type, and the base of stages that keep what they place to a band of it."""

from __future__ import annotations

import numpy as np
from pydantic import Field, model_validator

from pipeline.errors import KeyedError
from pipeline.grid.bfs import distances
from pipeline.level import Level
from pipeline.level.endpoints import endpoint_tile
from pipeline.stages.common.walkable import WalkableStage

def walking_fraction(level: Level, walk: np.ndarray, kind: str, key: str) -> np.ndarray:
    """Each tile's walking distance from the map's first object of type `kind`, over the
    farthest reachable tile's (0 to 1); -1 where it cannot be reached."""
    start = endpoint_tile(level, kind, key)
    walk = walk.copy()
    walk.ravel()[start] = True  # an object stands where it is
    dist = distances(walk, [start]).reshape(walk.shape)
    far = max(int(dist.max()), 1)
    return np.where(dist >= 0, dist / far, -1.0)


def in_band(fraction: np.ndarray, band: tuple[float, float], everywhere: bool = False) -> np.ndarray:
    """Where `fraction` (walking_fraction) lies in [low, high]; with `everywhere`, a tile no
    walk reaches (a wall) takes the value of the nearest tile that one does."""
    if everywhere and (fraction < 0).any() and (fraction >= 0).any():
        from scipy import ndimage

        nearest = ndimage.distance_transform_edt(fraction < 0, return_distances=False, return_indices=True)
        fraction = fraction[tuple(nearest)]
    return (fraction >= band[0]) & (fraction <= band[1])


class BandStage(WalkableStage):
    """Base of placement stages that may keep what they place to a band of the walking distance
    from an object: items by difficulty, a boss room far from the spawn."""

    # Left out of the params when unset, so stages built before they existed keep their keys.
    distance_from: str = Field(
        "", exclude_if=lambda kind: not kind,
        description='Measure walking distance from the first object of this type (e.g. "spawn"; a maze\'s recorded entrance and exit stand in for spawn and exit), for `band`.',
    )
    band: tuple[float, float] = Field(
        (0.0, 1.0), exclude_if=lambda band: band == (0.0, 1.0),
        description="With distance_from: place only between these fractions of the farthest reachable tile's walking distance, e.g. [0.6, 1.0] for the far part of the map.",
    )

    @model_validator(mode="after")
    def _band_from_an_object(self) -> BandStage:
        if "band" in self.model_fields_set and not self.distance_from:
            raise KeyedError("band", 'only with distance_from (the object distances are measured from, e.g. "spawn")')
        lo, hi = self.band
        if not 0 <= lo <= hi <= 1:
            raise KeyedError("band", f"must be [low, high] fractions with 0 <= low <= high <= 1 (got {[lo, hi]})")
        return self
