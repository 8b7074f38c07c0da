"""Compiled hot loops without paying for numba at import time."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _Lazy:
    """A function that becomes `numba.njit(cache=True)(fn)` on its first call."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.dispatcher: Any = None
        functools.update_wrapper(self, fn)

    def materialize(self) -> Any:
        if self.dispatcher is None:
            from numba import njit

            # Compiled code can only call compiled code: swap every lazy helper this function
            # names (imported or local) for its real dispatcher before numba reads the globals.
            namespace = self.fn.__globals__
            for name in self.fn.__code__.co_names:
                dep = namespace.get(name)
                if isinstance(dep, _Lazy):
                    namespace[name] = dep.materialize()
            self.dispatcher = njit(cache=True)(self.fn)
        return self.dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.materialize()(*args)


def compiled(fn: F) -> F:
    """`numba.njit(cache=True)`, applied on the first call.

    Importing numba costs about 0.3 s; stage modules are imported by every command (to validate
    recipes, to list stages), but only a build that runs the stage needs the compiled loop.
    Compiled functions may call each other.
    """
    return _Lazy(fn)  # type: ignore[return-value]
