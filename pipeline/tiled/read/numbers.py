"""Numbers read from a Tiled file, refused with the name of what they should be."""

from __future__ import annotations

import math
from typing import Any

from pipeline.tiled.read.error import MapFileError


def integer(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MapFileError(f"{what} must be an integer (got {value!r})") from None
    return number


def number(value: Any, what: str) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise MapFileError(f"{what} must be a number (got {value!r})") from None
    if not math.isfinite(result):
        raise MapFileError(f"{what} must be a finite number (got {value!r})")
    return result


def image_size(width: object, height: object, what: str) -> tuple[int, int]:
    """A tilesheet's size as its tileset gives it (0 where it gives none)."""
    return (integer(0 if width is None else width, f"{what} image size"), integer(0 if height is None else height, f"{what} image size"))
