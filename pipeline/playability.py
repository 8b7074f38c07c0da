"""Whether a map can be finished: the exit reached from the spawn, locked doors opening only to a
player who holds their key. Read from what the map carries, as a game would: `door` objects with
a `lock` over their tiles, `key` objects with the same `lock`, a `spawn` and an `exit`.

The map is taken as areas (the walkable tiles between locked doors) joined by the doors, and
searched over (area, keys held) by the level graphs' own search (pipeline.graphs.locks): a few
labelling passes over the grid, then a search over a handful of areas.
"""

from __future__ import annotations

import numpy as np

from pipeline.errors import PipelineError
from pipeline.graphs.locks import reaches
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.level import Level
from pipeline.stages.place.endpoints import endpoint_tile


def solvable(level: Level, walls: tuple[str, ...] = ("wall",)) -> bool | None:
    """Whether the map's exit can be reached from its spawn, keys and locks respected; None for
    a map without a spawn or an exit (a maze's recorded entrance and exit stand in)."""
    from scipy import ndimage

    try:
        spawn, goal = endpoint_tile(level, "spawn", "spawn"), endpoint_tile(level, "exit", "exit")
    except PipelineError:
        return None
    h, w = level.tiles.shape
    walk = ~np.array([s.name in walls for s in level.alphabet])[level.tiles]
    walk.ravel()[[spawn, goal]] = True
    doors = [o for o in level.objects if o.type == "door" and isinstance(o.properties.get("lock"), str) and o.properties["lock"]]
    shut = np.zeros((h, w), dtype=bool)
    cells = []
    for door in doors:
        x0, y0 = max(0, int(door.x)), max(0, int(door.y))
        x1, y1 = min(w, int(np.ceil(door.x + max(door.w, 1)))), min(h, int(np.ceil(door.y + max(door.h, 1))))
        cover = np.zeros((h, w), dtype=bool)
        cover[y0:y1, x0:x1] = True
        cells.append(cover & walk)
        shut |= cells[-1]
    labels, _ = ndimage.label(walk & ~shut)
    flat = labels.ravel()
    nodes = {f"area_{a}": Node(f"area_{a}") for a in np.unique(flat[flat > 0]).tolist()}
    edges: list[Edge] = []
    for k, (door, cover) in enumerate(zip(doors, cells)):
        # A door joins the areas its tiles touch (and a door beside another door, through it).
        grown = ndimage.binary_dilation(cover, structure=ndimage.generate_binary_structure(2, 1))
        beside = np.unique(labels[grown & ~shut]).tolist()
        nodes[f"door_{k}"] = Node(f"door_{k}")
        edges += [Edge(f"area_{a}", f"door_{k}", lock=str(door.properties["lock"])) for a in beside if a]
    for a, b in _doors_side_by_side(cells):
        # Into a door from the door beside it takes the key of the door entered.
        lock_a, lock_b = (str(doors[k].properties["lock"]) for k in (a, b))
        edges += [Edge(f"door_{a}", f"door_{b}", lock=lock_b, one_way=True), Edge(f"door_{b}", f"door_{a}", lock=lock_a, one_way=True)]
    keys = {}
    for key in level.objects:
        lock = key.properties.get("lock")
        tile = int(key.y) * w + int(key.x)
        if key.type == "key" and isinstance(lock, str) and 0 <= key.x < w and 0 <= key.y < h and flat[tile]:
            keys.setdefault(lock, f"area_{flat[tile]}")
    if not flat[spawn] or not flat[goal]:
        return False  # on a locked door: the map's own mistake
    graph = LevelGraph(sorted(nodes.values(), key=lambda n: n.name), edges)
    at = graph.index()
    return reaches(graph, at[f"area_{flat[spawn]}"], at[f"area_{flat[goal]}"], {lock: at[room] for lock, room in keys.items()})


def _doors_side_by_side(cells: list[np.ndarray]) -> list[tuple[int, int]]:
    """Pairs of doors whose tiles touch (a double door of two locks)."""
    from scipy import ndimage

    out = []
    four = ndimage.generate_binary_structure(2, 1)
    for a in range(len(cells)):
        grown = ndimage.binary_dilation(cells[a], structure=four)
        out += [(a, b) for b in range(a + 1, len(cells)) if (grown & cells[b]).any()]
    return out
