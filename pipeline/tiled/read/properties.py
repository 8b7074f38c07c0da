"""Custom properties read back with their Tiled types, as a Level holds them."""

from __future__ import annotations

from typing import Any

from pipeline.level import Color, FilePath, ObjectRef, PropertyValue
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.numbers import integer, number

Properties = dict[str, PropertyValue]


def typed(name: str, kind: str, value: Any, where: str, dropped: list[str] | None = None) -> PropertyValue | None:
    """A Tiled property's value with its type; None for types a Level cannot hold (class),
    which `dropped` then records."""
    what = f"{where}property {name!r}"
    if kind in ("string", ""):
        return "" if value is None else str(value)
    if kind == "file":
        return FilePath("" if value is None else str(value))
    if kind == "object":  # 0: no object
        target = integer(0 if value in (None, "") else value, what)
        return ObjectRef(str(target) if target else "")
    if kind == "int":
        return integer(value, what)
    if kind == "float":
        return number(value, what)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if str(value) in ("true", "false"):
            return str(value) == "true"
        raise MapFileError(f"{what} must be true or false (got {value!r})")
    if kind == "color":
        if not value:
            return None  # Tiled's "no colour"
        try:
            return Color(str(value))
        except ValueError as exc:
            raise MapFileError(f"{what}: {exc}") from None
    if dropped is not None:
        dropped.append(f"{what} (of type {kind!r})")
    return None
