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
    and packs without a Tiled export."""

    dir: str = Field("colour_maps", description="Folder inside the pack for the images.")
    scale: PositiveInt = Field(4, le=64, description="Pixels per tile.")

    _dir = field_validator("dir")(classmethod(lambda cls, v: check_relative_dir(v)))

    def outputs(self, stem: str) -> list[str]:
        return [join(self.dir, f"{stem}.png")]

    def preview_file(self, stem: str) -> str | None:
        return join(self.dir, f"{stem}.png")

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        return {join(self.dir, f"{ctx.stem}.png"): render_preview(level, self.scale)}


def render_preview(level: Level, scale: int) -> bytes:
    palette = np.zeros((256, 3), dtype=np.uint8)
    for i, symbol in enumerate(level.alphabet):
        palette[i] = symbol.rgb()
    image = Image.fromarray(level.tiles, "P")
    image.putpalette(palette.reshape(-1).tolist())
    if scale > 1:
        image = image.resize((level.width * scale, level.height * scale), Image.Resampling.NEAREST)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
