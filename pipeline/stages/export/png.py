"""Colour maps: each map as an image of its symbols' colours."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from pydantic import Field, PositiveInt, field_validator

from pipeline.level import Level
from pipeline.paths import check_relative_dir, join
from pipeline.registry import ExportContext, Exporter, stage


@stage("export.png", version=1)
class ExportPng(Exporter):
    """Write an image of each map in its symbols' colours: every tile a `scale` x `scale` square.
    Plainer than the preview `export.tmx` draws from the tilesheet: for data sets, quick looks
    and packs without a Tiled export. `objects = true` draws the map's objects over it as
    previews mark them (points as discs, rooms as outlines, paths as lines)."""

    dir: str = Field("colour_maps", description="Folder inside the pack for the images.")
    scale: PositiveInt = Field(4, le=64, description="Pixels per tile.")
    objects: bool = Field(
        False,
        description="Draw the map's objects over the colours, as previews mark them; off by default, so a data set's image holds symbol colours alone.",
    )

    _dir = field_validator("dir")(classmethod(lambda cls, v: check_relative_dir(v)))

    def outputs(self, stem: str) -> list[str]:
        return [join(self.dir, f"{stem}.png")]

    def preview_file(self, stem: str) -> str | None:
        return join(self.dir, f"{stem}.png")

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        image = colour_map(level, self.scale)
        if self.objects and level.objects:
            image = _with_objects(image, level, self.scale)
        out = io.BytesIO()
        image.save(out, format="PNG")
        return {join(self.dir, f"{ctx.stem}.png"): out.getvalue()}


def colour_map(level: Level, scale: int) -> Image.Image:
    """The map as a palette image, a `scale` x `scale` square of its symbol's colour per tile."""
    palette = np.zeros((256, 3), dtype=np.uint8)
    for i, symbol in enumerate(level.alphabet):
        palette[i] = symbol.rgb()
    image = Image.fromarray(level.tiles, "P")
    image.putpalette(palette.reshape(-1).tolist())
    if scale > 1:
        image = image.resize((level.width * scale, level.height * scale), Image.Resampling.NEAREST)
    return image


def _with_objects(image: Image.Image, level: Level, scale: int) -> Image.Image:
    """The colour map with the level's objects drawn on it. With no tileset, a tile object (a
    chest) is marked at its cell as a point is: there is no tile to draw it with."""
    from pipeline.tiled.markers import draw, markers_of, with_inks

    markers = markers_of(level.objects, (), scale, scale)
    # Only the alphabet's entries are used: the markers' colours then fit in the palette.
    image = image.copy()
    image.putpalette((image.getpalette() or [])[: 3 * len(level.alphabet)])
    image = with_inks(image, markers)
    image.info.pop("transparency", None)  # with_inks keeps clear entries; a colour map has none
    draw(image, markers, 1, scale)
    return image
