"""`count = 5` or `count = [min, max]`: how many things a placement stage places in a map (a
range of pipeline.ranges)."""

from __future__ import annotations

from typing import Any

from pipeline.ranges import IntRange, draw, int_range, most

CountValue = IntRange


def count_type(most: int) -> Any:
    """The type of a `count` parameter: a number from 0 to `most`, or [min, max] within that."""
    return int_range(0, most)


def draw_count(count: CountValue, rng: Any) -> int:
    """The count for this map: fixed, or drawn from [min, max] (one draw from `rng` only then, so
    a fixed count leaves the stream as it always was)."""
    return draw(count, rng)


def most_of(count: CountValue) -> int:
    return most(count)
