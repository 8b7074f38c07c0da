"""The shortest walkable path between two objects, as a polyline map object."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import ConfigDict, Field

from pipeline.level.endpoints import endpoint_tile
from pipeline.errors import PipelineError
from pipeline.grid.bfs import shortest_way
from pipeline.level import Level, MapObject
from pipeline.registry import stage
from pipeline.stages.common.walkable import WalkableStage


@stage("place.path", version=1)
class PlacePath(WalkableStage):
    """Add the shortest walkable path between two objects as a polyline object.

    The path starts at the first object (in the map's object order) whose type is `from` and
    ends at the first whose type is `to`: at the tile under a point object, the centre tile of
    a rectangle. A maze has no objects: there, `spawn` and `exit` fall back to the `entrance`
    and `exit` tiles its statistics record. The path is a breadth-first shortest path over
    walkable tiles (4-neighbour steps; the endpoints count as walkable where they stand),
    ties broken the same way every time, written as a polyline object `name` (type `name`)
    through the centres of its corner tiles, with `length` (steps), `from` and `to` as
    properties; the map gets `NAME_length`. When no path joins them the stage fails (it does
    not turn the map down) with both endpoints named: `place.spawn_exit` and `regions.connect`
    already keep what they place in one region, so a missing path means the recipe's walls or
    endpoints are wrong, which remaking the map from new seeds would only hide.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    arity: ClassVar[tuple[int, int]] = (1, 1)

    from_: str = Field("spawn", alias="from", min_length=1, description="Type of the object the path starts at.")
    to: str = Field("exit", min_length=1, description="Type of the object the path ends at.")
    name: str = Field("path", min_length=1, description="Name and type of the polyline object; the map property is NAME_length.")

    def added_stats(self) -> tuple[str, ...]:
        return (f"{self.name}_length",)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        walk = self.walkable(level)
        w = walk.shape[1]
        start = endpoint_tile(level, self.from_, "from")
        goal = endpoint_tile(level, self.to, "to")
        steps = shortest_way(walk, start, goal)
        if steps is None:
            raise PipelineError(
                [f"no walkable path from {self.from_} ({_where(start, w)}) to {self.to} ({_where(goal, w)}): join the map first (regions.connect)"]
            )
        length = len(steps) - 1
        corners = corner_points(steps, w)
        x0, y0 = corners[0]
        obj = MapObject(
            self.name,
            self.name,
            x0 + 0.5,
            y0 + 0.5,
            properties={"length": length, "from": self.from_, "to": self.to},
            points=tuple((float(x - x0), float(y - y0)) for x, y in corners),
        )
        kept = [o for o in level.objects if not (o.name == self.name and o.points)]
        return Level(
            tiles=level.tiles,
            alphabet=level.alphabet,
            layers=dict(level.layers),
            objects=kept + [obj],
            properties={**level.properties, f"{self.name}_length": length},
        )


def _where(flat: int, w: int) -> str:
    return f"tile {flat % w}, {flat // w}"


def corner_points(steps: np.ndarray, w: int) -> list[tuple[int, int]]:
    """(x, y) tiles of the path's two ends and every tile where it turns: the straight runs
    between them are the steps left out."""
    xs, ys = steps % w, steps // w
    if len(steps) <= 2:
        return list(zip(xs.tolist(), ys.tolist()))
    moves = np.stack([np.diff(xs), np.diff(ys)], axis=1)
    turns = np.any(moves[1:] != moves[:-1], axis=1)
    keep = np.concatenate([[True], turns, [True]])
    return list(zip(xs[keep].tolist(), ys[keep].tolist()))
