"""Typed custom properties, as Tiled writes them in XML and in JSON."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from pipeline.level import Color, FilePath, MapObject, ObjectId, ObjectRef, PropertyValue

# Tiled and LDtk keep int properties in 32 bits; larger values (64-bit seeds) travel as strings.
INT32 = range(-(2**31), 2**31)


def property_type(value: PropertyValue) -> str | None:
    """Tiled's type for a value; None for strings (Tiled's default, left out of XML)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Color):
        return "color"
    if isinstance(value, FilePath):
        return "file"
    if isinstance(value, ObjectId):
        return "object"
    if isinstance(value, ObjectRef):  # resolved by `with_object_ids` before anything is written
        raise TypeError(f"an object reference ({value.target!r}) reached a writer unresolved")
    if isinstance(value, int):
        return "int" if value in INT32 else None
    if isinstance(value, float):
        return "float"
    return None


def property_text(value: PropertyValue) -> str:
    if isinstance(value, Color):
        return value.argb()
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def json_properties(properties: Mapping[str, PropertyValue]) -> list[dict[str, Any]]:
    """Tiled JSON's property list, sorted by name as Tiled sorts it."""
    out = []
    for name in sorted(properties):
        value = properties[name]
        kind = property_type(value) or "string"
        if isinstance(value, Color):
            shown: Any = value.argb()
        elif kind in ("string", "file"):
            shown = str(value)
        else:
            shown = int(value) if isinstance(value, ObjectId) else value
        out.append({"name": name, "type": kind, "value": shown})
    return out


def with_object_ids(objects: list[MapObject]) -> list[MapObject]:
    """`objects` with every object reference (ObjectRef) as the id a Tiled map gives its object:
    objects are numbered 1, 2, ... in order; a reference to no object of the map is 0, none."""
    ids = object_positions(objects)
    return [
        replace(o, properties={k: ObjectId(ids[v.target] + 1 if v.target in ids else 0) if isinstance(v, ObjectRef) else v for k, v in o.properties.items()})
        if any(isinstance(v, ObjectRef) for v in o.properties.values())
        else o
        for o in objects
    ]


def object_positions(objects: list[MapObject]) -> dict[str, int]:
    """Where each `ref` is in `objects` (the first, should two objects share one)."""
    positions: dict[str, int] = {}
    for k, o in enumerate(objects):
        if o.ref:
            positions.setdefault(o.ref, k)
    return positions
