"""Tilesets: the TSX description and, when a recipe names no art, a tilesheet drawn from colours."""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from pipeline.level import PropertyValue, Symbol
from pipeline.tiled import FORMAT_VERSION, TILED_VERSION
from pipeline.tiled.xmlout import add_properties, to_bytes


@dataclass(frozen=True)
class Tileset:
    name: str
    tile_width: int
    tile_height: int
    margin: int
    spacing: int
    columns: int
    rows: int
    image: str  # file name of the tilesheet, relative to the .tsx
    tile_properties: dict[int, dict[str, PropertyValue]] = field(default_factory=dict)

    @property
    def tilecount(self) -> int:
        return self.columns * self.rows

    @property
    def image_width(self) -> int:
        return 2 * self.margin + self.columns * self.tile_width + (self.columns - 1) * self.spacing

    @property
    def image_height(self) -> int:
        return 2 * self.margin + self.rows * self.tile_height + (self.rows - 1) * self.spacing

    def tile_id(self, symbol_name: str) -> int:
        """The tile that draws a symbol, found by the tile's `name` property."""
        for tile_id, props in self.tile_properties.items():
            if props.get("name") == symbol_name:
                return tile_id
        raise KeyError(f"tileset {self.name!r} has no tile for symbol {symbol_name!r}")

    def element(self, firstgid: int | None = None, source: str | None = None) -> ET.Element:
        """The <tileset> element: a reference to `source` when given, else the full description."""
        if source is not None:
            return ET.Element("tileset", {"firstgid": str(firstgid), "source": source})
        attrs = {} if firstgid is None else {"firstgid": str(firstgid)}
        if firstgid is None:
            attrs.update({"version": FORMAT_VERSION, "tiledversion": TILED_VERSION})
        attrs.update(
            {
                "name": self.name,
                "tilewidth": str(self.tile_width),
                "tileheight": str(self.tile_height),
            }
        )
        # Tiled omits zero spacing/margin; we always write them so no reader has to know the default.
        attrs.update({"spacing": str(self.spacing), "margin": str(self.margin)})
        attrs.update({"tilecount": str(self.tilecount), "columns": str(self.columns)})
        node = ET.Element("tileset", attrs)
        ET.SubElement(
            node, "image", {"source": self.image, "width": str(self.image_width), "height": str(self.image_height)}
        )
        for tile_id in sorted(self.tile_properties):
            tile = ET.SubElement(node, "tile", {"id": str(tile_id)})
            add_properties(tile, self.tile_properties[tile_id])
        return node

    def tsx(self) -> bytes:
        return to_bytes(self.element())


def colour_tileset(
    alphabet: tuple[Symbol, ...],
    name: str,
    tile_size: int,
    margin: int = 0,
    spacing: int = 0,
    max_columns: int = 16,
) -> tuple[Tileset, bytes]:
    """A tile per symbol, filled with its colour; returns the tileset and its tilesheet PNG."""
    columns = min(len(alphabet), max_columns)
    rows = math.ceil(len(alphabet) / columns)
    tileset = Tileset(
        name=name,
        tile_width=tile_size,
        tile_height=tile_size,
        margin=margin,
        spacing=spacing,
        columns=columns,
        rows=rows,
        image=f"{name}.png",
        tile_properties={i: {"name": s.name, "symbol": s.char} for i, s in enumerate(alphabet)},
    )
    # Unused cells of the sheet (padding to a whole row) and the gutters stay transparent.
    sheet = np.zeros((tileset.image_height, tileset.image_width, 4), dtype=np.uint8)
    step = tile_size + spacing
    for i, symbol in enumerate(alphabet):
        top = margin + (i // columns) * step
        left = margin + (i % columns) * step
        sheet[top : top + tile_size, left : left + tile_size] = (*symbol.rgb(), 255)
    out = io.BytesIO()
    Image.fromarray(sheet, "RGBA").save(out, format="PNG")
    return tileset, out.getvalue()
