"""XML output shared by the TMX and TSX writers: Tiled's layout and its <properties> element."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Mapping

from pipeline.errors import PipelineError
from pipeline.level import NOT_XML, PropertyValue
from pipeline.tiled.properties import property_text, property_type


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
    # Recipes are checked as they load; this is for what a stage of your own names or sets.
    if found := NOT_XML.search(body):
        start = body.rfind("<", 0, found.start())
        raise PipelineError([f"a name or text holds the control character {found.group()!r}, which a TMX file (XML) cannot: {body[start : found.start()]!r}..."])
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n").encode("utf-8")
