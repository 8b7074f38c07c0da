"""The words some object properties hold, as Tiled enums: a room's role, a door's side, a stairs'
direction. A map writes such a property with its enum's name (`propertytype`), and the pack's
Tiled project (`pipeline.tiled.project`) declares the enum, so Tiled offers the words as a list
and engines that read the project (YATI) know them as one type."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnumType:
    """A Tiled enum stored as strings: the words every pack knows (`values`), to which a pack adds
    those its maps hold, and the (object class, property) pairs that hold it. Its first word in
    the project is always "": Tiled shows an enum member's first word for an object that leaves
    the property out, and a room without a role is not a start room, nor a door without a side
    a north door."""

    name: str
    values: tuple[str, ...]
    holders: tuple[tuple[str, str], ...]


# The words are level graphs' (pipeline.graphs: its roles, a door's sides), written out here since
# graphs reads Tiled files and so comes above this package; a test holds the two alike.
ENUMS = (
    # Recipes name roles of their own: a pack's enum has them too.
    EnumType("RoomRole", ("start", "boss", "exit", "treasure", "secret"), (("room", "role"),)),
    EnumType("DoorSide", ("north", "east", "south", "west"), (("door", "direction"),)),
    EnumType("StairsDirection", ("up", "down"), (("stairs", "direction"),)),
)

_HELD = {holder: enum.name for enum in ENUMS for holder in enum.holders}


def enum_members(object_class: str) -> dict[str, str]:
    """The properties of an object of this class that hold an enum, with the enum's name."""
    return {prop: name for (cls, prop), name in _HELD.items() if cls == object_class}
