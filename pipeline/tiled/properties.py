"""Typed custom properties, as Tiled writes them in XML and in JSON."""

from __future__ import annotations

from typing import Any, Mapping

from pipeline.level import Color, FilePath, ObjectId, ObjectRef, PropertyValue

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
    if isinstance(value, ObjectRef):  # resolved by `level.with_object_ids` before anything is written
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


def enum_of(name: str, value: PropertyValue, enums: Mapping[str, str] | None) -> str | None:
    """The Tiled enum whose word the property `name` holds (its `propertytype`), given `enums`
    (the properties of its object that hold one, by the enum's name): only a plain string is a
    word; None for any other property or value."""
    if enums and name in enums and isinstance(value, str) and property_type(value) is None:
        return enums[name]
    return None


def json_properties(properties: Mapping[str, PropertyValue], enums: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Tiled JSON's property list, sorted by name as Tiled sorts it. `enums`: the properties that
    hold a word of a Tiled enum, by the enum's name (its `propertytype`)."""
    out = []
    for name in sorted(properties):
        value = properties[name]
        kind = property_type(value) or "string"
        enum = enum_of(name, value, enums)
        if isinstance(value, Color):
            shown: Any = value.argb()
        elif kind in ("string", "file"):
            shown = str(value)
        else:
            shown = int(value) if isinstance(value, ObjectId) else value
        out.append({"name": name, **({"propertytype": enum} if enum else {}), "type": kind, "value": shown})
    return out

