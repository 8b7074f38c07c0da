"""Rule patterns drawn as images, read as MarkovJunior reads them (`file`, `fin`, `fout`, `legend`).

An image names no symbols, only colours: `legend` gives them characters in the order the colours
first appear, reading rows top to bottom and each row left to right. The first colour met is
`legend[0]`, the next new one `legend[1]`, and so on; a legend may be longer than the image needs.
A `file` image holds a whole rule: the input is its left half, the output its right half, and the
colours are numbered over the whole image, so a colour is the same character on both sides.
`fin` and `fout` images hold one side each and are numbered on their own.

The characters are then those of a written pattern: in an input, values, `*` and union symbols;
in an output, values and `*` (leave the cell).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
from PIL import Image

from pipeline.rewrite.rule import Alphabet


class ImageError(ValueError):
    """An image that cannot be a rule pattern (unreadable, too many colours, a bad legend)."""


@dataclass(frozen=True, eq=False)
class LegendImage:
    """An image as legend positions: `index[y, x]` is the legend position of that pixel's colour."""

    index: np.ndarray  # int64 (h, w)
    colours: tuple[str, ...]  # "#rrggbbaa" by legend position, for messages
    first_at: tuple[tuple[int, int], ...]  # (x, y) where each colour first appears

    @property
    def width(self) -> int:
        return int(self.index.shape[1])

    def columns(self, start: int, stop: int) -> LegendImage:
        """The image cut to columns [start, stop), numbered as in the whole image."""
        return LegendImage(self.index[:, start:stop], self.colours, self.first_at)


def read_image(data: bytes, legend: str) -> LegendImage:
    """Decode an image (PNG, or any format Pillow reads) and number its colours for `legend`."""
    try:
        with warnings.catch_warnings():
            # A huge image is refused below as an error, not printed as a warning.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                rgba = np.asarray(image.convert("RGBA"), dtype=np.uint8)
    except (OSError, ValueError, Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise ImageError(f"is not an image Pillow can read ({exc})") from None
    h, w = rgba.shape[:2]
    if h == 0 or w == 0:
        raise ImageError("is an empty image")
    # One number per exact colour, alpha included: MarkovJunior tells colours apart by their
    # whole 32-bit pixel, so two pixels differing only in transparency are two colours.
    packed = np.ascontiguousarray(rgba).view(np.uint32).reshape(h * w)
    distinct, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    if len(distinct) > len(legend):
        raise ImageError(f"has {len(distinct)} colours but legend {legend!r} names {len(legend)}")
    order = np.argsort(first, kind="stable")  # distinct colours by first appearance
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    index = position[inverse.reshape(-1)].reshape(h, w)
    flat = rgba.reshape(h * w, 4)
    colours = tuple("#" + bytes(flat[first[k]]).hex() for k in order)
    first_at = tuple((int(first[k]) % w, int(first[k]) // w) for k in order)
    return LegendImage(index, colours, first_at)


def input_waves(image: LegendImage, legend: str, alphabet: Alphabet) -> np.ndarray:
    """Bit sets of accepted values, (h, w) int64, for an image read as a rule's input."""
    return _translate(image, legend, alphabet.wave, np.int64)


def output_values(image: LegendImage, legend: str, alphabet: Alphabet) -> np.ndarray:
    """Value indices (KEEP for `*`), (h, w) uint8, for an image read as a rule's output."""
    return _translate(image, legend, alphabet.value, np.uint8)


def _translate(image: LegendImage, legend: str, meaning: Callable[[str], int], dtype: type) -> np.ndarray:
    # Only the characters this part of the image uses must make sense here: MarkovJunior checks
    # a union symbol, say, only where it is read (an input), never in the half it is absent from.
    table = np.zeros(len(legend), dtype=dtype)
    for k in np.unique(image.index):
        ch = legend[int(k)]
        try:
            table[k] = meaning(ch)
        except ValueError as exc:
            x, y = image.first_at[int(k)]
            raise ImageError(f"colour {image.colours[int(k)]} (first at x={x}, y={y}) is legend {ch!r}: {exc}") from None
    return table[image.index]
