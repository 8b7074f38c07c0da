"""An example plugin: a stage of your own, in a file of your project.

A recipe loads it with `plugins = ["stages/torches.py"]` in its [pack] table. It uses the same
`@stage` decorator and base classes as the built-in stages; `pcg stages -r recipes` lists it.
Editing this file makes what it built stale: its content is part of its cache key.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.level import Level, MapObject
from pipeline.registry import stage
from pipeline.stages.regions.walkable import WalkableStage


@stage("demo.torches", version=1)
class Torches(WalkableStage):
    """Hang torches on walls that face a floor tile to their south. They go about `spacing`
    tiles apart along each wall, as point objects of type `torch` (exported to the map's object
    layer)."""

    arity: ClassVar[tuple[int, int]] = (1, 1)  # one input Level
    # The map properties it adds: lets `[pack] order_by = "torches"` be checked as the recipe loads.
    adds_stats: ClassVar[tuple[str, ...]] = ("torches",)

    spacing: int = Field(4, ge=1, le=100, description="Tiles between torches along a wall.")
    chance: float = Field(0.8, ge=0, le=1, description="Chance that a possible spot gets its torch.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        walk = self.walkable(level)
        # A wall tile with floor below it: where a torch is seen from the room.
        spots = np.zeros_like(walk)
        spots[:-1] = ~walk[:-1] & walk[1:]
        ys, xs = np.nonzero(spots)
        keep = (xs % self.spacing == 0) & (rng.random(len(xs)) < self.chance)
        torches = [
            MapObject(f"torch_{k + 1}", "torch", float(x) + 0.5, float(y) + 0.5)
            for k, (y, x) in enumerate(zip(ys[keep].tolist(), xs[keep].tolist()))
        ]
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers),
                     objects=list(level.objects) + torches, properties={**level.properties, "torches": len(torches)})
