"""Distance fields: how many steps every tile is from a symbol or an object."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field, model_validator

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.registry import stage
from pipeline.grid.bfs import bfs
from pipeline.stages.common.walkable import WalkableStage


@stage("regions.distance", version=1)
class Distance(WalkableStage):
    """Breadth-first distance over walkable tiles, from a symbol or from named objects, into a
    layer. Distances are 4-neighbour steps from every tile of a symbol (`from_symbol`) or from
    the map objects with a name (`from_object`, e.g. "spawn"), in an int32 layer (-1 where
    unreachable). Sets `distance_max`."""

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("distance_max",)

    from_symbol: str | None = Field(None, description="Measure from every tile of this symbol.")
    from_object: str | None = Field(None, description="Measure from the map objects with this name.")
    layer: str = Field("distance", min_length=1, description="Name of the distance layer.")

    @model_validator(mode="after")
    def _one_source(self) -> Distance:
        if (self.from_symbol is None) == (self.from_object is None):
            raise ValueError("give exactly one of from_symbol and from_object")
        return self

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        walk = self.walkable(level)
        h, w = walk.shape
        if self.from_symbol is not None:
            sources = np.flatnonzero(level.tiles == self.indices(level, (self.from_symbol,), "from_symbol")[0])
        else:
            points = [(int(o.y), int(o.x)) for o in level.objects if o.name == self.from_object]
            if not points:
                names = ", ".join(sorted({o.name for o in level.objects})) or "none"
                raise PipelineError([f"from_object: the map has no object named {self.from_object!r} (it has: {names})"])
            sources = np.array([y * w + x for y, x in points if 0 <= y < h and 0 <= x < w], dtype=np.int64)
        dist = np.full(h * w, -1, dtype=np.int64)
        if len(sources):
            walk = walk.copy()
            walk.ravel()[sources] = True  # a source stands where it is, walkable or not
            bfs(walk, sources.astype(np.int64), dist, np.empty(h * w, dtype=np.int64))
        field = dist.reshape(h, w).astype(np.int32)
        return Level(
            tiles=level.tiles,
            alphabet=level.alphabet,
            layers={**level.layers, self.layer: field},
            objects=list(level.objects),
            properties={**level.properties, "distance_max": int(field.max(initial=-1))},
        )
