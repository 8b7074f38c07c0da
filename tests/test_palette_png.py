"""Previews written straight from packed tile rows: Pillow reads back exactly the image `render`
draws, for every pixel depth PNG has for a palette."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from PIL import Image

from pipeline.tiled import palette_png
from pipeline.tiled.render import preview_png, render
from pipeline.tiled.tilesheet import Atlas, _indexed


def sheet(colours: int, tile: int, seed: int) -> Any:
    """A stand-in for a built tileset of 7 tiles drawn with `colours` opaque colours (and clear)."""
    rng = np.random.default_rng(seed)
    palette = rng.integers(0, 256, size=(colours, 3), dtype=np.uint8)
    pick = rng.integers(-1, colours, size=(8, tile, tile))
    rgba = np.zeros((8, tile, tile, 4), dtype=np.uint8)
    rgba[..., :3] = palette[np.maximum(pick, 0)]
    rgba[..., 3] = np.where(pick >= 0, 255, 0)
    rgba[0] = 0
    index, pal = _indexed(rgba)
    return SimpleNamespace(atlas=Atlas(rgba, index, pal), tileset=SimpleNamespace(tile_width=tile, tile_height=tile))


@pytest.mark.parametrize(("colours", "bits"), [(1, 1), (3, 2), (9, 4), (200, 8)])
@pytest.mark.parametrize("shape", [(1, 1), (5, 9), (40, 3)])
def test_pillow_reads_back_the_image_render_draws(colours: int, bits: int, shape: tuple[int, int]) -> None:
    built = sheet(colours, 16, colours + shape[0])
    assert built.atlas.packed is not None and built.atlas.packed[0] == bits  # the palette adds clear
    gids = np.random.default_rng(shape[1]).integers(0, 8, size=shape).astype(np.uint32)
    with Image.open(io.BytesIO(preview_png([gids], built))) as image:
        image.load()
        drawn = render([gids], built)
        assert image.size == drawn.size and image.mode == "P"
        assert np.array_equal(np.asarray(image.convert("RGBA")), np.asarray(drawn.convert("RGBA")))


def test_pack_puts_the_leftmost_pixel_in_the_high_bits() -> None:
    assert palette_png.pack(np.array([[1, 0, 1, 1, 0, 0, 0, 1]]), 1).tolist() == [[0b10110001]]
    assert palette_png.pack(np.array([[3, 0, 2, 1]]), 2).tolist() == [[0b11001001]]
    assert [palette_png.bits_for(n) for n in (1, 2, 3, 4, 5, 16, 17, 256)] == [1, 1, 2, 2, 4, 4, 8, 8]


def test_tiles_whose_rows_fill_no_whole_byte_go_through_pillow() -> None:
    built = sheet(9, 3, 1)  # 3 pixels of 4 bits: a row of a tile is a byte and a half
    assert built.atlas.packed is None
    gids = np.arange(6, dtype=np.uint32).reshape(2, 3)
    with Image.open(io.BytesIO(preview_png([gids], built))) as image:
        assert np.array_equal(np.asarray(image.convert("RGBA")), np.asarray(render([gids], built).convert("RGBA")))
