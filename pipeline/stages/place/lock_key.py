"""Locked doors and their keys on any map, proven solvable."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field, model_validator

from pipeline.stages.common.count import count_type, draw_count
from pipeline.level.endpoints import endpoint_tile
from pipeline.errors import KeyedError, PipelineError, Rejected
from pipeline.graphs.locks import UnsolvableLevel, solve
from pipeline.grid.bfs import distances, shortest_way, trace_back
from pipeline.grid.chokepoints import chokepoints
from pipeline.level import Level, MapObject, ObjectRef
from pipeline.playability import lock_graph
from pipeline.ranges import most
from pipeline.registry import stage
from pipeline.stages.common.walkable import WalkableStage

LockCount = count_type(26)
# Keys go in the part of their area farthest from the way to the exit: this share of it.
DETOUR_SHARE = 0.25


@stage("place.lock_key", version=1)
class LockKey(WalkableStage):
    """Lock doors on the way from the `spawn` to the `exit` and hide their keys.

    A door goes on a chokepoint: a tile every walk from the spawn to the exit must cross (a
    corridor of a maze, a doorway of a dungeon, a narrow neck of a cave). The doors are spread
    along the way, and the key of each lies past the door before it (the first key before the
    first door), in the part of that stretch farthest from the way to the exit: the player
    takes a detour for it, and the locks nest. Each door is a `door` object (1 x 1, on its tile)
    with `lock` (the lock's name) and `key` (a reference to its key); each key a `key` point
    with `lock` and `door`. Door tiles are drawn with `door_symbol` where the map has that
    symbol. Then it is proven, by a search over (area, keys held) that knows nothing of how the
    keys were placed: the exit can be reached, no key lies behind its own door, and without
    each key the exit is out of reach. A map with too few chokepoints (an open cave), or one
    that fails the proof, is made again from the next seeds, up to `attempts` times, and then
    fails with the reason. The map gets `locks`, `critical_path` (steps from spawn to exit,
    fetching every key on the way) and `backtrack` (steps of that walk onto tiles already
    walked: the detours' way back)."""

    arity: ClassVar[tuple[int, int]] = (1, 1)
    may_reject: ClassVar[bool] = True
    adds_stats: ClassVar[tuple[str, ...] | None] = ("locks", "critical_path", "backtrack")

    locks: LockCount = Field(1, description="How many locked doors, or [min, max]: a number drawn per map from the map's seed.")
    names: tuple[str, ...] = Field(
        (), description='The locks\' names, first door first (their keys\' too), e.g. ["bronze", "silver", "gold"]; empty: lock_1, lock_2, ...'
    )
    door_symbol: str = Field("door", min_length=1, description="Draw door tiles with this symbol, where the map's alphabet has it; elsewhere the tile stays as it is.")
    attempts: int = Field(10, ge=1, le=100_000, description="Most times a map with too few chokepoints (or failing the proof) is made again before it fails.")

    @model_validator(mode="after")
    def _enough_names(self) -> LockKey:
        if self.names and len(self.names) < most(self.locks):
            raise KeyedError("names", f"{len(self.names)} names for up to {most(self.locks)} locks: give one per lock")
        if len(set(self.names)) < len(self.names):
            raise KeyedError("names", "each lock needs its own name")
        return self

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        count = draw_count(self.locks, rng)
        walk = self.walkable(level)
        h, w = walk.shape
        spawn, goal = endpoint_tile(level, "spawn", "spawn"), endpoint_tile(level, "exit", "exit")
        walk = walk.copy()
        walk.ravel()[[spawn, goal]] = True  # an object stands where it is
        taken = {o.ref for o in level.objects if o.ref}
        names = list(self.names[:count]) or [f"lock_{k + 1}" for k in range(count)]
        clash = sorted(f"{kind}:{n}" for n in names for kind in ("door", "key") if f"{kind}:{n}" in taken)
        if clash:
            raise PipelineError([f"names: the map already has the objects {', '.join(clash)}: give the locks other names"])
        path = shortest_way(walk, spawn, goal)
        if path is None:
            raise PipelineError([f"no walkable way from the spawn ({spawn % w}, {spawn // w}) to the exit ({goal % w}, {goal // w}): join the map first (regions.connect)"])
        doors = self._doors(walk, path, count, rng)
        keys = _keys(walk, path, doors, spawn, goal, rng)
        failed = _disproof(walk, spawn, goal, doors, keys, names)
        if failed:
            raise Rejected(f"the locks failed their proof: {failed}", self.attempts)
        walked = _walk(walk, spawn, goal, doors, keys)
        tiles = level.tiles
        if count and self.door_symbol in [s.name for s in level.alphabet]:
            tiles = tiles.copy()
            tiles.ravel()[doors] = level.index_of(self.door_symbol)
        objects = list(level.objects)
        for name, door, key in zip(names, doors.tolist(), keys.tolist()):
            props_door = {"lock": name, "key": ObjectRef(f"key:{name}")}
            objects.append(MapObject(f"door_{name}", "door", door % w, door // w, 1, 1, props_door, ref=f"door:{name}"))
            props_key = {"lock": name, "door": ObjectRef(f"door:{name}")}
            objects.append(MapObject(f"key_{name}", "key", key % w + 0.5, key // w + 0.5, properties=props_key, ref=f"key:{name}"))
        return Level(
            tiles=tiles,
            alphabet=level.alphabet,
            layers=dict(level.layers),
            objects=objects,
            properties={**level.properties, "locks": count, "critical_path": len(walked) - 1, "backtrack": len(walked) - len(np.unique(walked))},
        )

    def _doors(self, walk: np.ndarray, path: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
        """The door tiles, first door first: one chokepoint from each of `count` stretches of
        the way, no two side by side (a key lies between them)."""
        if not count:
            return np.zeros(0, dtype=np.int64)
        steps = chokepoints(walk, path)
        steps = steps[(steps >= 2) & (steps <= len(path) - 3)]  # not on the spawn or exit, nor beside them
        chosen: list[int] = []
        for group in np.array_split(steps, count):
            free = group[group > (chosen[-1] + 1 if chosen else 0)]
            if not len(free):
                break
            chosen.append(int(free[int(rng.integers(len(free)))]))
        if len(chosen) < count:
            raise Rejected(f"{count} locks asked, but the way from spawn to exit has {len(steps)} chokepoints that could hold them (tiles every walk must cross, not beside an end, none side by side): fewer locks, or a map with narrower passages", self.attempts)
        return path[np.array(chosen, dtype=np.int64)]


def _closed(walk: np.ndarray, doors: np.ndarray) -> np.ndarray:
    out = walk.copy()
    out.ravel()[doors] = False
    return out


def _keys(walk: np.ndarray, path: np.ndarray, doors: np.ndarray, spawn: int, goal: int, rng: np.random.Generator) -> np.ndarray:
    """Each door's key: on a tile reachable with the doors before it open and it closed, past
    the door before it, among the share of those tiles farthest from the way (a detour)."""
    off_path = distances(walk, path.tolist())
    before = np.zeros(walk.size, dtype=bool)
    keys: list[int] = []
    for k in range(len(doors)):
        reach = distances(_closed(walk, doors[k:]), [spawn]) >= 0
        area = reach & ~before
        area[doors] = False
        area[[spawn, goal]] = False
        area[keys] = False
        tiles = np.flatnonzero(area)
        if not len(tiles):
            raise PipelineError([f"no tile for the key of door {k + 1}: the doors leave no room between them"])
        # The farthest share of the tiles (at least one), nearer ones in reading order.
        farthest = np.argsort(-off_path[tiles], kind="stable")[: max(1, int(np.ceil(DETOUR_SHARE * len(tiles))))]
        tiles = np.sort(tiles[farthest])
        keys.append(int(tiles[int(rng.integers(len(tiles)))]))
        before |= reach
    return np.array(keys, dtype=np.int64)


def _disproof(walk: np.ndarray, spawn: int, goal: int, doors: np.ndarray, keys: np.ndarray, names: list[str]) -> str | None:
    """Why the locks do not make a level that can be finished, or None. The level is taken as
    areas joined by the doors (`playability.lock_graph`, as `pcg stats` reads a map) and
    searched over (area, keys held) by the level graphs' own proof (pipeline.graphs.locks): the
    exit reachable, every key reachable without its door, and without each key the exit out of
    reach."""
    if not len(doors):
        return None
    masks = []
    for door in doors.tolist():
        mask = np.zeros(walk.shape, dtype=bool)
        mask.ravel()[door] = True
        masks.append(mask)
    graph, areas = lock_graph(walk, list(zip(masks, names)), dict(zip(names, keys.tolist())))
    at = graph.index()
    try:
        # Every key is given: the search places none, so its random stream is never drawn from.
        solution = solve(graph, np.random.default_rng(0), at[f"area_{areas[spawn]}"], at[f"area_{areas[goal]}"])
    except UnsolvableLevel as exc:
        return str(exc)
    loose = [name for name in names if not solution.cuts_goal[name]]
    return f"without the key of {loose[0]!r} the exit can still be reached" if loose else None


def _walk(walk: np.ndarray, spawn: int, goal: int, doors: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The tiles of the shortest walk from the spawn through every key, in order, to the exit:
    each leg a shortest path with the doors whose keys are held open."""
    h, w = walk.shape
    stops = [spawn, *keys.tolist(), goal]
    legs = [np.array([spawn], dtype=np.int64)]
    for k in range(len(stops) - 1):
        dist = distances(_closed(walk, doors[k:]), [stops[k]])
        legs.append(trace_back(dist, stops[k + 1], h, w)[1:])
    return np.concatenate(legs)
