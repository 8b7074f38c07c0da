"""Compiled hot loops without paying for numba at import time."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def _cache_dir() -> Path:
    """Where numba keeps compiled kernels: a folder per version of our source.

    numba checks only the source file of the function it compiles, not the helpers it calls from
    other files nor the global arrays it bakes in, so its own cache can serve stale code after an
    edit. Naming the folder after a hash of every module of the package rules that out.
    """
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return cache_home() / f"numba-{digest.hexdigest()[:16]}"


def kernels_cached() -> bool:
    """Whether this version's kernels were compiled on this machine before: numba's cache folder
    for it holds some. A first build compiles every kernel it uses, most of a minute on 2 cores."""
    folder = _cache_dir()
    return folder.is_dir() and any(folder.iterdir())


def cache_home() -> Path:
    """This user's cache folder of pcg-pipeline (compiled kernels, plugin sources)."""
    return Path(
        os.environ.get("NUMBA_CACHE_DIR")
        or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "pcg-pipeline")
    )


class _Lazy:
    """A function that becomes `numba.njit(cache=True, nogil=True)(fn)` on its first call."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.dispatcher: Any = None
        functools.update_wrapper(self, fn)

    def materialize(self) -> Any:
        if self.dispatcher is None:
            import numba
            from numba import njit

            numba.config.CACHE_DIR = str(_cache_dir())

            # Compiled code can only call compiled code: swap every lazy helper this function
            # names (imported or local) for its real dispatcher before numba reads the globals.
            namespace = self.fn.__globals__
            for name in self.fn.__code__.co_names:
                dep = namespace.get(name)
                if isinstance(dep, (_Lazy, _Deferred)):
                    namespace[name] = dep.materialize()
            self.dispatcher = njit(cache=True, nogil=True)(self.fn)
        return self.dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.materialize()(*args)


class _Deferred:
    """A function from numba's own modules (which import numba), imported when a compiled
    function that calls it is compiled."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.name = name

    def materialize(self) -> Any:
        import importlib

        return getattr(importlib.import_module(self.module), self.name)


def numba_function(module: str, name: str) -> Any:
    """`from module import name` for compiled functions, deferred like `compiled` (numba's jitable
    helpers, such as its bounded random integers, are only importable with numba)."""
    return _Deferred(module, name)


def compiled(fn: F) -> F:
    """`numba.njit(cache=True, nogil=True)`, applied on the first call.

    Importing numba costs about 0.3 s; stage modules are imported by every command (to validate
    recipes, to list stages), but only a build that runs the stage needs the compiled loop.
    Compiled functions may call each other, and release the GIL, so threads can run them at
    once (`pipeline.threads`).
    """
    return _Lazy(fn)  # type: ignore[return-value]
