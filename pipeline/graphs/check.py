"""What a laid-out level must be, checked on the map itself (its tiles, `room` layer and
objects), as a game reading the exported file sees it: the tests and the bench use it on
every layout, and it knows nothing of how the layout was found."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from pipeline.level import Level

_FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


def layout_problems(level: Level, edges: set[frozenset[str]] | None = None) -> list[str]:
    """Every way `level` breaks the rules of a layout: a room per node, drawn whole (no other
    room over its floor), a door per connection on walkable tiles touching both rooms' floors,
    one walkable region. `edges`: the connections the graph has (corridor rooms included)."""
    out = []
    names = [s.name for s in level.alphabet]
    rooms_layer = level.layers.get("room")
    if rooms_layer is None:
        return ["no room layer"]
    rooms = {o.properties["node"]: o for o in level.objects if o.type == "room"}
    for node, obj in rooms.items():
        number = obj.properties["room"]
        area = int(np.count_nonzero(rooms_layer == number))
        if area != obj.properties.get("area"):
            out.append(f"room {node}: {area} floor tiles in the layer, {obj.properties.get('area')} in the template (overlapped)")
    walkable = rooms_layer > 0
    door = names.index("door") if "door" in names else -1
    walkable |= level.tiles == door
    seen: set[frozenset[str]] = set()
    for obj in (o for o in level.objects if o.type == "door"):
        a, b = str(obj.properties["from"]), str(obj.properties["to"])
        seen.add(frozenset((a, b)))
        x0, y0, w, h = int(obj.x), int(obj.y), int(obj.w), int(obj.h)
        cells = level.tiles[y0 : y0 + h, x0 : x0 + w]
        if cells.size == 0 or not (cells == door).all():
            out.append(f"door {a}-{b}: not door tiles")
            continue
        touch = ndimage.binary_dilation(np.pad(np.ones((h, w), bool), 1), _FOUR)
        ys, xs = np.nonzero(touch)
        ys, xs = ys + y0 - 1, xs + x0 - 1
        ok = (ys >= 0) & (xs >= 0) & (ys < level.height) & (xs < level.width)
        around = set(rooms_layer[ys[ok], xs[ok]].tolist())
        for end in (a, b):
            if end not in rooms or rooms[end].properties["room"] not in around:
                out.append(f"door {a}-{b}: does not touch the floor of room {end}")
    if edges is not None and seen != edges:
        missing = sorted("-".join(sorted(e)) for e in edges - seen)
        extra = sorted("-".join(sorted(e)) for e in seen - edges)
        out.append(f"doors differ from the graph's connections: missing {missing[:5]}, extra {extra[:5]}")
    _, regions = ndimage.label(walkable, structure=_FOUR)
    if regions != 1:
        out.append(f"{regions} walkable regions, not one")
    return out
