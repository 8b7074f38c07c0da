"""Ranges for integer parameters: `count = 5` or `count = [5, 10]`, and sizes whose sides each
may be a range, `size = [[60, 90], 50]`, so a pack's maps vary in size.

A range is drawn per map from the stage's own random stream, as the first draws of its `run`
(or where the stage documents): a fixed value draws nothing, so recipes that give fixed values
make exactly what they made before ranges existed. What a range drew is recorded in the map's
properties (`size_w`, `size_h` for a `size`), so `pcg stats` and the manifest show it.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import numpy as np
from pydantic import AfterValidator, Field, ValidationError, ValidatorFunctionWrapHandler, WrapValidator

from pipeline.errors import _readable

IntRange = Union[int, tuple[int, int]]
SizeRange = tuple[IntRange, IntRange]


def _ordered(value: IntRange) -> IntRange:
    if isinstance(value, tuple) and value[0] > value[1]:
        raise ValueError(f"must be [min, max] with min <= max (got {list(value)})")
    return value


def _one_problem(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """One error for a bad value, from the form it was written in, instead of pydantic's one per
    member of the union (`cells.0.constrained-int: ...` and `cells.0.tuple[...]: ...`)."""
    try:
        # A wrap validator sees JSON arrays as lists, which strict validation (recipes are
        # validated strictly) no longer takes for tuples.
        return handler(tuple(value) if isinstance(value, list) else value)
    except ValidationError as exc:
        pair = isinstance(value, (list, tuple))
        errors = exc.errors()
        for err in errors:
            loc = [str(part) for part in err["loc"]]
            if loc and loc[0].startswith("tuple[") != pair:
                continue  # the other form's complaint
            if err["type"] in ("int_type", "int_parsing", "int_from_float", "tuple_type", "too_long", "too_short") and len(loc) <= 1:
                raise ValueError(f"must be a whole number or [min, max] (got {list(value) if pair else value!r})") from None
            where = {"0": "min ", "1": "max "}.get(loc[1], "") if len(loc) > 1 else ""
            raise ValueError(f"{where}{_readable(err, ())}") from None
        raise ValueError(_readable(errors[0], ())) from None


def ranged(one: Any) -> Any:
    """The type of a parameter that is a number of type `one` (with its bounds) or [min, max]
    of two such numbers."""
    return Annotated[Union[one, tuple[one, one]], AfterValidator(_ordered), WrapValidator(_one_problem)]


def int_range(least: int, most: int) -> Any:
    """A number from `least` to `most`, or [min, max] within that."""
    return ranged(Annotated[int, Field(ge=least, le=most)])


def draw(value: IntRange, rng: np.random.Generator, step: int = 1) -> int:
    """The value for this map: fixed, or one draw from [min, max] (from `rng` only then, so a
    fixed value leaves the stream as it always was); with `step`, only min, min + step, ..."""
    if isinstance(value, int):
        return value
    if step == 1:
        return int(rng.integers(value[0], value[1] + 1))
    return value[0] + step * int(rng.integers(0, (value[1] - value[0]) // step + 1))


def draw_size(size: SizeRange, rng: np.random.Generator, step: int = 1) -> tuple[int, int]:
    """[width, height], each side fixed or drawn (width first)."""
    return draw(size[0], rng, step), draw(size[1], rng, step)


def as_written(size: SizeRange) -> list[Any]:
    """A size as the recipe writes it: `[[20, 40], 31]`."""
    return [list(side) if isinstance(side, tuple) else side for side in size]


def least(value: IntRange) -> int:
    return value if isinstance(value, int) else value[0]


def most(value: IntRange) -> int:
    return value if isinstance(value, int) else value[1]


def is_range(value: IntRange) -> bool:
    return not isinstance(value, int)


def size_stats(name: str, size: SizeRange) -> tuple[str, ...]:
    """The properties a size parameter records: `NAME_w`, `NAME_h` when a side is a range."""
    return (f"{name}_w", f"{name}_h") if any(is_range(side) for side in size) else ()


def size_record(name: str, size: SizeRange, drawn: tuple[int, int]) -> dict[str, int]:
    """The drawn size as map properties, or nothing for a fixed size (its maps' properties stay
    what they were)."""
    return dict(zip(size_stats(name, size), drawn))


def size_type(side: Any) -> Any:
    """The type of a [width, height] parameter whose sides are each a `side` or [min, max]."""
    return tuple[ranged(side), ranged(side)]
