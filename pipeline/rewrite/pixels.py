"""Images as MarkovJunior reads them (rule images, WFC and ConvChain samples): decoded to RGBA
pixels, and their exact colours (alpha included: MarkovJunior compares whole 32-bit pixels)
numbered in the order they first appear, rows top to bottom and each left to right."""

from __future__ import annotations

import io
import warnings

import numpy as np

from pipeline.errors import image_error_text


class ImageError(ValueError):
    """An image that cannot be read, or cannot be what it is read for."""


def decode(data: bytes) -> np.ndarray:
    """(h, w, 4) uint8 pixels of a PNG, or any image Pillow reads."""
    from PIL import Image  # Pillow costs an import only to the programs that read an image

    try:
        with warnings.catch_warnings():
            # A huge image is refused as an error, not printed as a warning.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                rgba = np.asarray(image.convert("RGBA"), dtype=np.uint8)
    except (OSError, ValueError, Image.DecompressionBombWarning, Image.DecompressionBombError) as exc:
        raise ImageError(f"is not an image Pillow can read ({image_error_text(exc)})") from None
    if rgba.shape[0] == 0 or rgba.shape[1] == 0:
        raise ImageError("is an empty image")
    return rgba


def number_colours(rgba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index, first): each pixel's colour number, (h, w) int64, and for each number the flat
    position of the pixel where that colour first appears."""
    h, w = rgba.shape[:2]
    packed = np.ascontiguousarray(rgba).view(np.uint32).reshape(h * w)
    _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # distinct colours by first appearance
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)].reshape(h, w), first[order]
