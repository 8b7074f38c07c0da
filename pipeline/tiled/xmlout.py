"""XML output shared by the TMX and TSX writers: Tiled's layout and its <properties> element."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Mapping, Sequence

from pipeline.errors import PipelineError
from pipeline.level import NOT_XML, PropertyValue
from pipeline.tiled.properties import enum_of, property_text, property_type


def add_properties(parent: ET.Element, properties: Mapping[str, PropertyValue], enums: Mapping[str, str] | None = None) -> None:
    """Append a <properties> element (sorted by name, as Tiled sorts them) unless empty. `enums`:
    the properties that hold a word of a Tiled enum, by the enum's name (its `propertytype`)."""
    if not properties:
        return
    node = ET.SubElement(parent, "properties")
    for name in sorted(properties):
        value = properties[name]
        attrs = {"name": name}
        kind = property_type(value)
        if kind:
            attrs["type"] = kind
        elif enum := enum_of(name, value, enums):
            attrs["propertytype"] = enum
        text = property_text(value)
        if "\n" in text:
            ET.SubElement(node, "property", attrs).text = text  # Tiled writes multi-line strings as text
        else:
            attrs["value"] = text
            ET.SubElement(node, "property", attrs)


def to_bytes(root: ET.Element, data: Sequence[str] = ()) -> bytes:
    """The document as Tiled lays it out. `data`: the texts of the tree's <data> elements, which
    are left empty in it and spliced in after, as ElementTree would have written them: layer data
    (digits, commas, base64) needs no escaping nor the check for control characters, and is most
    of a map's bytes (checking it took a map a third of a millisecond)."""
    ET.indent(root, space=" ")
    # Tiled closes empty elements as `<x/>`; ElementTree writes `<x />` (attribute values escape `>`).
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True).replace(" />", "/>")
    # Recipes are checked as they load; this is for what a stage of your own names or sets.
    if found := NOT_XML.search(body):
        start = body.rfind("<", 0, found.start())
        raise PipelineError([f"a name or text holds the control character {found.group()!r}, which a TMX file (XML) cannot: {body[start : found.start()]!r}..."])
    if data:
        # Every `<data` in the text is an element: in names and values ElementTree escapes `<`.
        parts = _EMPTY_DATA.split(body)
        if len(parts) != 2 * len(data) + 1:
            raise ValueError(f"{len(data)} data texts for {len(parts) // 2} empty <data> elements")
        body = "".join(
            piece if k % 2 == 0 else f"{piece}>{data[k // 2]}</data>" for k, piece in enumerate(parts)
        )
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")


_EMPTY_DATA = re.compile(r"(<data\b[^>]*)/>")
