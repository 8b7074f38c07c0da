"""Compiled hot loops without paying for numba at import time."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def compiled(fn: F) -> F:
    """`numba.njit(cache=True)`, applied on the first call.

    Importing numba costs about 0.3 s; stage modules are imported by every command (to validate
    recipes, to list stages), but only a build that runs the stage needs the compiled loop.
    """
    jitted: Callable[..., Any] | None = None

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        nonlocal jitted
        if jitted is None:
            from numba import njit

            jitted = njit(cache=True)(fn)
        return jitted(*args)

    return call  # type: ignore[return-value]
