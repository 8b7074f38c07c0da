"""Animated GIFs of how a map was made, from the frames a recording stage kept."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from pydantic import Field, field_validator

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.paths import check_plain_name, check_relative_dir, join
from pipeline.registry import ExportContext, Exporter, stage


@stage("export.gif", version=1)
class ExportGif(Exporter):
    """Write an animated GIF of how each map was made, from the frames its input stage recorded.

    The input is a rewrite stage with `record = true`, which adds this exporter by itself; the
    GIF holds the final frame for a second.
    Each pixel of the map is drawn `scale` x `scale`; 0 picks a scale that keeps the GIF
    about 512 pixels across."""

    dir: str = Field(".", description="Folder inside the pack for the GIFs.")
    suffix: str = Field("", description="Added to the map's file name before .gif.")
    scale: int = Field(0, ge=0, le=32, description="Pixels per tile; 0 = automatic.")
    frame_ms: int = Field(40, ge=20, le=5000, description="Milliseconds per frame.")

    _dir = field_validator("dir")(classmethod(lambda cls, v: check_relative_dir(v)))

    @field_validator("suffix")
    @classmethod
    def _suffix(cls, value: str) -> str:
        if value:
            check_plain_name("map" + value)
        return value

    def outputs(self, stem: str) -> list[str]:
        return [join(self.dir, f"{stem}{self.suffix}.gif")]

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        if FRAMES not in level.attachments:
            raise PipelineError(["export.gif: its input recorded no frames (set record = true on the rewrite stage)"])
        return {join(self.dir, f"{ctx.stem}{self.suffix}.gif"): render_gif(level, self.scale, self.frame_ms)}


# The attachment a recording stage leaves for its GIF: snapshots of the tiles while it ran,
# (frames, height, width), oldest first.
FRAMES = "frames"
# Optional: the colours (n, 3) of the values the frames index, when earlier frames show a grid
# with values the final one lacks (a rule program's `map` node); without it, the level's own.
FRAME_COLORS = "frame_colors"


def render_gif(level: Level, scale: int, frame_ms: int) -> bytes:
    frames = level.attachments.get(FRAMES)
    if frames is None or frames.ndim != 3 or frames.shape[1:] != level.tiles.shape:
        raise ValueError(f"render_gif: the Level has no {FRAMES!r} attachment of (frames, height, width)")
    if scale == 0:
        scale = max(1, min(16, 512 // max(level.width, level.height)))
    colors = np.zeros((256, 3), dtype=np.uint8)
    for i, symbol in enumerate(level.alphabet):
        colors[i] = symbol.rgb()
    own = level.attachments.get(FRAME_COLORS)
    if own is not None:
        colors[: len(own)] = own
    flat_palette = colors.reshape(-1).tolist()
    images = []
    for frame in frames:
        image = Image.fromarray(np.ascontiguousarray(frame), "P")
        image.putpalette(flat_palette)
        if scale > 1:
            image = image.resize((level.width * scale, level.height * scale), Image.Resampling.NEAREST)
        images.append(image)
    durations = [frame_ms] * (len(images) - 1) + [1000]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=False, disposal=1)
    return out.getvalue()
