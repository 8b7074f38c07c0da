"""Stages from plugin files that a recipe names (`[pack] plugins`); installed packages' stages
(entry points) are the registry's, like the built-in ones.

A plugin uses the same `@stage` decorator and base classes as the built-in stages. A plugin
file belongs to the recipes that name it: its kinds are visible to them only, so a recipe never
depends on which other recipe happened to load first.

A plugin file is run once per process and per content (its module is named after its sha256),
so saving an edited plugin while `pcg watch` runs loads the new code beside the old. Workers
that never loaded it (a process pool forked earlier, Dask workers) load it from the source that
travels with its stages' params, so a plugin needs nothing on the worker's disk.

The code runs from a copy named after its digest in the user's cache folder, not from the
recipe's file: numba caches the kernels a plugin compiles by their source file, and a file that
is edited while a build runs (or absent, on a worker) would have it cache one code under
another's name.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
import traceback
import types
from pathlib import Path

from pipeline import registry
from pipeline.fsio import atomic_write, read_regular
from pipeline.jit import cache_home
from pipeline.registry import Origin, StageParams

# sha256 of a plugin file's source -> the kinds it defines, for every plugin this process ran.
_LOADED: dict[str, dict[str, type[StageParams]]] = {}
# The file each loaded plugin runs from (a copy named after its digest) -> the path its recipe gives.
_NAMES: dict[str, str] = {}
# Running a plugin swaps the registry's collecting table: one at a time (threaded Dask workers
# unpickle params concurrently).
_LOCK = threading.RLock()


class PluginError(Exception):
    """A plugin that cannot be used: the message names the plugin file and, where known, its line."""


def load_file(path: Path, name: str) -> dict[str, type[StageParams]]:
    """The stage kinds that the plugin file at `path` defines; `name` is how the recipe names it,
    for messages (the cache key has the code's digest alone, so moving a project keeps its cache)."""
    try:
        source = read_regular(path)
    except FileNotFoundError:
        raise PluginError(f"{name}: no such plugin file") from None
    except OSError as exc:
        raise PluginError(f"{name}: cannot read plugin file ({exc.strerror or exc})") from None
    return load_source(name, str(path.resolve()), source)


def load_source(name: str, path: str, source: bytes) -> dict[str, type[StageParams]]:
    with _LOCK:
        return _load_source(name, path, source)


def _load_source(name: str, path: str, source: bytes) -> dict[str, type[StageParams]]:
    digest = hashlib.sha256(source).hexdigest()
    if digest in _LOADED:
        return _LOADED[digest]
    module_name = f"pcg_plugin_{digest[:16]}"
    module = types.ModuleType(module_name)
    folder = Path(path).parent
    path = _source_copy(digest, path, source)
    _NAMES[path] = name
    module.__file__ = path  # for tracebacks, and numba's cache of the kernels the plugin compiles
    origin = Origin(name=name, sha256=digest, source=source, path=path)
    # In sys.modules while it runs and after: dataclasses, pickling and typing look the module up.
    sys.modules[module_name] = module
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        with registry.collecting(origin) as found:
            exec(code, module.__dict__)
    except SyntaxError as exc:
        del sys.modules[module_name]
        where = f"line {exc.lineno}: " if exc.lineno else ""  # a NUL byte has no line
        raise PluginError(f"{name}: {where}syntax error: {exc.msg}") from None
    except (Exception, SystemExit) as exc:  # sys.exit() at import must not end the whole build
        del sys.modules[module_name]
        # The deepest line of the plugin itself: where its author has something to fix.
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
        where = f"line {lines[-1]}: " if lines else ""
        raise PluginError(f"{name}: {where}{_why(exc, folder)}") from None
    if not found:
        del sys.modules[module_name]
        raise PluginError(f"{name}: defines no stage (decorate a StageParams subclass with @stage(\"mygame.kind\", version=1))")
    for kind, cls in sorted(found.items()):
        undefined = _undefined_type(cls, module)
        if undefined is not None:
            del sys.modules[module_name]
            raise PluginError(f"{name}: stage {kind!r}: a parameter's type, {undefined!r}, is not defined in the file (import it)")
    _LOADED[digest] = dict(sorted(found.items()))
    return _LOADED[digest]


def _undefined_type(cls: type[StageParams], module: types.ModuleType) -> str | None:
    """The name a parameter's type gives that the whole plugin file does not define (once it
    has run: a type defined below the class is fine), else None. Found now, not as the first
    recipe's params are validated, which pydantic would refuse with a traceback."""
    from pydantic.errors import PydanticUndefinedAnnotation

    if cls.__pydantic_complete__:
        return None
    try:
        cls.model_rebuild(_types_namespace=dict(vars(module)))
    except PydanticUndefinedAnnotation as exc:
        return exc.name
    return None


def _why(exc: BaseException, folder: Path) -> str:
    """One line on what stopped a plugin loading from `folder`. pydantic's refusal of a
    parameter type runs to several lines of advice on its own internals; a plugin author needs
    the type."""
    from pydantic.errors import PydanticSchemaGenerationError

    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}) as it loaded"
    if isinstance(exc, PydanticSchemaGenerationError):
        found = re.search(r"schema for (.+?)\. ", str(exc))
        shown = found.group(1) if found else "a type"
        return (
            f"a parameter has type {shown}, which a recipe cannot give: use int, float, bool, str,"
            " Literal, or lists, tuples and tables of them"
        )
    beside = isinstance(exc, ModuleNotFoundError) and (folder / f"{(exc.name or '').split('.')[0]}.py").is_file()
    if beside or (isinstance(exc, ImportError) and "relative import" in str(exc)):
        return f"{type(exc).__name__}: {exc} (a plugin is loaded as one file: it cannot import the files beside it; see docs/python.md)"
    return f"{type(exc).__name__}: {exc}"


def file_name(filename: str) -> str:
    """How a failure report names a source file: a plugin by the path its recipe gives, not by
    the copy it runs from; any other file by its name."""
    return _NAMES.get(filename) or filename.rsplit("/", 1)[-1]


def is_plugin_file(filename: str) -> bool:
    """Whether `filename` is the source of a plugin this process loaded."""
    return filename in _NAMES


def raised_where(exc: BaseException) -> str:
    """Where a stage's bug is, as " (at FILE:LINE)": the deepest line of a plugin's file if the
    failure passed through one (its author can fix that, not the library line it called), else
    the innermost line."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    frame = next((f for f in reversed(frames) if is_plugin_file(f.filename)), frames[-1])
    return f" (at {file_name(frame.filename)}:{frame.lineno})"


def _source_copy(digest: str, path: str, source: bytes) -> str:
    """A file holding exactly `source`, named after its digest (and the plugin's file name, which
    tracebacks show); the plugin's own path where the cache folder cannot be written."""
    copy = cache_home() / "plugins" / f"{digest[:16]}-{Path(path).name}"
    try:
        if not copy.is_file() or copy.read_bytes() != source:
            atomic_write(copy, source)
    except OSError:
        return path
    return str(copy)


def params_from_plugin(name: str, path: str, source: bytes, kind: str) -> StageParams:
    """Unpickling a plugin stage's params in a worker: load the plugin (once per process), then
    make an empty instance of its class that pickle fills in with the params' state."""
    cls = load_source(name, path, source)[kind]
    return cls.__new__(cls)


# The registry pickles a plugin stage's params through the function above; it knows of plugin
# files only through this hook, set as soon as this module (which alone makes such stages) loads.
registry.remake_plugin_params = params_from_plugin


