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

from dataclasses import dataclass
from typing import Callable

import numpy as np

from pipeline.rewrite.pixels import ImageError, decode, number_colours
from pipeline.rewrite.rule import Alphabet

__all__ = ["ImageError", "LegendImage", "input_waves", "output_values", "read_image"]


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
    rgba = decode(data)
    h, w = rgba.shape[:2]
    index, first = number_colours(rgba)
    if len(first) > len(legend):
        raise ImageError(f"has {len(first)} colours but legend {legend!r} names {len(legend)}")
    flat = rgba.reshape(h * w, 4)
    colours = tuple("#" + bytes(flat[at]).hex() for at in first)
    first_at = tuple((int(at) % w, int(at) // w) for at in first)
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
