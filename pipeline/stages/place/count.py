"""`count = 5` or `count = [min, max]`: how many things a placement stage places in a map."""

from __future__ import annotations

from typing import Annotated, Any, Union

import numpy as np
from pydantic import AfterValidator, Field

CountValue = Union[int, tuple[int, int]]


def _ordered(value: CountValue) -> CountValue:
    if isinstance(value, tuple) and value[0] > value[1]:
        raise ValueError(f"must be [min, max] with min <= max (got {list(value)})")
    return value


def count_type(most: int) -> Any:
    """The type of a `count` parameter: a number from 0 to `most`, or [min, max] within that."""
    one = Annotated[int, Field(ge=0, le=most)]
    return Annotated[Union[one, tuple[one, one]], AfterValidator(_ordered)]


def draw_count(count: CountValue, rng: np.random.Generator) -> int:
    """The count for this map: fixed, or drawn from [min, max] (one draw from `rng` only then, so
    a fixed count leaves the stream as it always was)."""
    return count if isinstance(count, int) else int(rng.integers(count[0], count[1] + 1))


def most_of(count: CountValue) -> int:
    return count if isinstance(count, int) else count[1]
