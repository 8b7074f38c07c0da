"""Whether a map can be finished: the exit reached from the spawn, locked doors opening only to a
player who holds their key. Read from what the map carries, as a game would: `door` objects with
a `lock` over their tiles, `key` objects with the same `lock`, a `spawn` and an `exit`.

The map is taken as areas (the walkable tiles between locked doors) joined by the doors, and
searched over (area, keys held) by the level graphs' own search (pipeline.graphs.locks): a few
labelling passes over the grid, then a search over a handful of areas.
"""

from __future__ import annotations

import numpy as np

from pipeline.level.endpoints import endpoint_tile
from pipeline.errors import PipelineError
from pipeline.graphs.locks import reaches
from pipeline.grid.bfs import shortest_way
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.level import Level


def solvable(level: Level, walls: tuple[str, ...] = ("wall",), small: bool = False) -> bool | None:
    """Whether the map's exit can be reached from its spawn, keys and locks respected; None for
    a map without a spawn or an exit (a maze's recorded entrance and exit stand in). `small`:
    a map without locks is searched without numba (`grid.bfs.distances`)."""
    try:
        spawn, goal = endpoint_tile(level, "spawn", "spawn"), endpoint_tile(level, "exit", "exit")
    except PipelineError:
        return None
    h, w = level.tiles.shape
    walk = ~np.array([s.name in walls for s in level.alphabet])[level.tiles]
    walk.ravel()[[spawn, goal]] = True
    doors = []
    for door in level.objects:
        lock = door.properties.get("lock")
        if door.type == "door" and isinstance(lock, str) and lock:
            x0, y0 = max(0, int(door.x)), max(0, int(door.y))
            x1, y1 = min(w, int(np.ceil(door.x + max(door.w, 1)))), min(h, int(np.ceil(door.y + max(door.h, 1))))
            cover = np.zeros((h, w), dtype=bool)
            cover[y0:y1, x0:x1] = True
            doors.append((cover & walk, lock))
    keys: dict[str, int] = {}
    for key in level.objects:
        lock = key.properties.get("lock")
        if key.type == "key" and isinstance(lock, str) and 0 <= key.x < w and 0 <= key.y < h:
            keys.setdefault(lock, int(key.y) * w + int(key.x))
    if not doors:  # no lock: the exit is reached or not (and labelling areas would cost a module a build does not load)
        return shortest_way(walk, spawn, goal, small) is not None
    graph, areas = lock_graph(walk, doors, keys)
    if not areas[spawn] or not areas[goal]:
        return False  # on a locked door: the map's own mistake
    at = graph.index()
    return reaches(graph, at[f"area_{areas[spawn]}"], at[f"area_{areas[goal]}"])


def lock_graph(walk: np.ndarray, doors: list[tuple[np.ndarray, str]], keys: dict[str, int]) -> tuple[LevelGraph, np.ndarray]:
    """The map as areas joined by its locked doors: a node `area_N` per area (the walkable tiles
    between doors, labelled), a node `door_K` per door (`doors`: each door's tiles as a mask, and
    its lock), an edge needing the door's lock from each door to every area its tiles touch (and
    one each way between doors side by side, needing the lock of the door entered), each lock's
    key given in the area of its tile (`keys`: lock -> flat tile; a key on no area is lost).
    Returns the graph and each tile's area number, flat (0 on walls and doors)."""
    from scipy import ndimage

    four = ndimage.generate_binary_structure(2, 1)
    shut = np.zeros(walk.shape, dtype=bool)
    for cover, _ in doors:
        shut |= cover
    labels, _ = ndimage.label(walk & ~shut)
    areas = labels.ravel()
    key_area = {lock: f"area_{areas[tile]}" for lock, tile in keys.items() if areas[tile]}
    nodes = [Node(f"area_{a}") for a in np.unique(areas[areas > 0]).tolist()]
    edges: list[Edge] = []
    grown = [ndimage.binary_dilation(cover, structure=four) for cover, _ in doors]
    for k, (cover, lock) in enumerate(doors):
        nodes.append(Node(f"door_{k}"))
        beside = np.unique(labels[grown[k] & ~shut]).tolist()
        edges += [Edge(f"area_{a}", f"door_{k}", lock=lock, key=key_area.get(lock, "")) for a in beside if a]
        # Into a door from the door beside it takes the key of the door entered.
        for j in range(k + 1, len(doors)):
            if (grown[k] & doors[j][0]).any():
                edges += [Edge(f"door_{k}", f"door_{j}", lock=doors[j][1], one_way=True), Edge(f"door_{j}", f"door_{k}", lock=lock, one_way=True)]
    return LevelGraph(sorted(nodes, key=lambda n: n.name), edges), areas
