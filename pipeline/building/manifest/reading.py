"""Reading a manifest's JSON into its classes: a part that is not of the shape the format gives
it makes the whole document read as None, "no manifest" (the pack is then built anew), never an
exception that escapes.

Shapes are checked with plain conditions, never `assert`, which `python -O` strips. Types are
checked exactly (`type(x) is int`): a JSON document holds no subclasses, a bool (an int
subclass) is no map index, and the exact check is the cheaper one on the ~10 values of each of
a pack's thousands of maps. Object keys are not checked: in JSON they are strings.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

T = TypeVar("T")


class IllFormed(ValueError):
    """A part of a manifest is not of the shape its format gives it."""


# What reading a value of another shape raises: IllFormed from the checks, KeyError for a key
# that is missing, TypeError or AttributeError where a value is of a type the reader did not expect.
NOT_READ = (ValueError, KeyError, TypeError, AttributeError)


def or_none(read: Callable[[Any], T], data: Any) -> T | None:
    """`read(data)`, or None when `data` is not of the shape `read` takes."""
    try:
        return read(data)
    except NOT_READ:
        return None


def text_table(data: Any) -> dict[str, str]:
    """A JSON object whose values are all strings (paths to sha256s, an environment's versions)."""
    if type(data) is not dict:
        raise IllFormed
    for value in data.values():
        if type(value) is not str:
            raise IllFormed
    return data
