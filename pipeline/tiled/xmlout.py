"""XML output shared by the TMX and TSX writers: Tiled's layout and typed custom properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Mapping

from pipeline.level import PropertyValue

_INT32 = range(-(2**31), 2**31)


def property_type(value: PropertyValue) -> str | None:
    """Tiled's type attribute for a value; None for strings (Tiled's default)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        # Tiled stores int properties in 32 bits; larger values (64-bit seeds) travel as strings.
        return "int" if value in _INT32 else None
    if isinstance(value, float):
        return "float"
    return None


def property_text(value: PropertyValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def add_properties(parent: ET.Element, properties: Mapping[str, PropertyValue]) -> None:
    """Append a <properties> element (sorted by name, as Tiled sorts them) unless empty."""
    if not properties:
        return
    node = ET.SubElement(parent, "properties")
    for name in sorted(properties):
        value = properties[name]
        attrs = {"name": name}
        kind = property_type(value)
        if kind:
            attrs["type"] = kind
        text = property_text(value)
        if "\n" in text:
            ET.SubElement(node, "property", attrs).text = text  # Tiled writes multi-line strings as text
        else:
            attrs["value"] = text
            ET.SubElement(node, "property", attrs)


def to_bytes(root: ET.Element) -> bytes:
    ET.indent(root, space=" ")
    # Tiled closes empty elements as `<x/>`; ElementTree writes `<x />` (attribute values escape `>`).
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True).replace(" />", "/>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")
