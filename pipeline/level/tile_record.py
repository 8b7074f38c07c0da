"""A tile as a map property records it, "x,y": a maze's `entrance` and `exit` (its statistics
write them, place.spawn_exit moves them to its spawn and exit, placements read them where a
maze has no spawn or exit object)."""

from __future__ import annotations

import re


def tile_record(x: int, y: int) -> str:
    """A tile as `entrance` and `exit` record it: "x,y"."""
    return f"{x},{y}"


def read_tile_record(value: object) -> tuple[int, int] | None:
    """The tile an `entrance` or `exit` property records; None for any other value (a hand-made
    map's own `exit`, which is no such record)."""
    if isinstance(value, str) and re.fullmatch(r"\d+,\d+", value):
        x, y = value.split(",")
        return int(x), int(y)
    return None
