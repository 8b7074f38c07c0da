"""The symbols dungeon generators write, and the size parameter they share. layout.graph
draws its levels with the same symbols."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from pipeline.level import Symbol

WALL, FLOOR, DOOR = 0, 1, 2
DUNGEON_ALPHABET = (
    Symbol("B", "wall", "#000000"),
    Symbol("W", "floor", "#fff1e8"),
    Symbol("D", "door", "#ab5236"),
)

# 16384 x 16384 tiles is 268 M tiles, a world bigger than Terraria's largest (8400 x 2400), about
# 10 GB while a cave is made and labelled; beyond that, a typo.
Side = Annotated[int, Field(ge=5, le=16384)]
