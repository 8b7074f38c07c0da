"""Colour maps: each map as an image of its symbols' colours."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from pydantic import Field, PositiveInt, field_validator

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.paths import check_relative_dir, join
from pipeline.registry import ExportContext, Exporter, stage


# The most pixels a colour map may have: PIL's own bound (Image.MAX_IMAGE_PIXELS), above which
# it warns that an image may be a decompression bomb, and refuses at twice that; the contact
# sheet, and many a user's tools, read these images with it. A 4096 x 4096-cell maze (8193 x 8193
# tiles) fits at scale 1.
MAX_PIXELS = 89_478_485


@stage("export.png", version=4)
class ExportPng(Exporter):
    """Write an image of each map in its symbols' colours: every tile a `scale` x `scale` square.
    Plainer than the preview `export.tmx` draws from the tilesheet: for data sets, quick looks
    and packs without a Tiled export. `objects = true` draws the map's objects over it as
    previews mark them (points as discs, rooms as outlines, paths as lines). An image over 89
    million pixels, where PIL warns of a decompression bomb (and refuses at twice that), fails
    its map with the largest `scale` that fits (a 4096 x 4096-cell maze fits at 1)."""

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
        _check_size(level, self.scale)
        image = colour_map(level, self.scale)
        if self.objects and level.objects:
            image = _with_objects(image, level, self.scale)
        out = io.BytesIO()
        image.save(out, format="PNG")
        return {join(self.dir, f"{ctx.stem}.png"): out.getvalue()}


def _check_size(level: Level, scale: int) -> None:
    w, h = level.width * scale, level.height * scale
    if w * h <= MAX_PIXELS:
        return
    fits = int((MAX_PIXELS / (level.width * level.height)) ** 0.5)
    while fits and level.width * level.height * fits * fits > MAX_PIXELS:
        fits -= 1  # the square root's rounding
    what = f"scale: {scale} makes a {w} x {h}-pixel image of this {level.width} x {level.height}-tile map, over the {MAX_PIXELS:,} pixels image readers accept"
    raise PipelineError([f"{what}; use scale = {fits}" if fits else f"{what}: the map is too big for a colour map"])


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
