"""Put a chest in every dead end."""
from __future__ import annotations
from typing import ClassVar
import numpy as np
from pydantic import Field
from pipeline.level import Level, MapObject
from pipeline.registry import stage
from pipeline.stages.regions.walkable import WalkableStage


@stage("mygame.dead_end_chests", version=1)
class DeadEndChests(WalkableStage):
    """Place a chest object on every walkable tile with exactly one walkable neighbour."""
    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...]] = ("dead_end_chests",)
    gold: int = Field(10, ge=0, description="Gold in each chest.")
    chance: float = Field(1.0, ge=0, le=1, description="Chance that a dead end gets a chest.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        w = self.walkable(level)
        p = np.pad(w, 1)
        n = p[:-2, 1:-1].astype(int) + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
        ys, xs = np.nonzero(w & (n == 1))
        keep = rng.random(len(xs)) < self.chance
        objs = [MapObject(f"dead_chest_{k+1}", "chest", float(x) + 0.5, float(y) + 0.5, properties={"gold": self.gold})
                for k, (y, x) in enumerate(zip(ys[keep].tolist(), xs[keep].tolist()))]
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers),
                     objects=list(level.objects) + objs,
                     properties={**level.properties, "dead_end_chests": len(objs)})
