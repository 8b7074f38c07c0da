"""Stage kinds: the params-model base class, the `@stage` decorator and the lookup table.

A stage is a pydantic model of its parameters with a pure `run`. The executor only sees this
interface: it never knows what a stage does inside.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from pipeline.level import Level, PropertyValue

# Keys of a [stage.NAME] table that belong to the recipe, not to the stage's params.
RESERVED_KEYS = ("use", "input", "inputs")

# Every module that defines stage kinds. Registering a new kind is one line here; modules are
# imported on first use so that `pcg --help` never pays for numba.
STAGE_MODULES: tuple[str, ...] = (
    "pipeline.stages.maze.backtracker",
    "pipeline.stages.export.tmx",
    "pipeline.stages.export.png",
)


class StageParams(BaseModel):
    """Base of every stage: the fields are the stage's recipe parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ClassVar[str] = ""
    version: ClassVar[int] = 0
    # How many input Levels the stage accepts (min, max).
    arity: ClassVar[tuple[int, int]] = (0, 0)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        raise NotImplementedError


@dataclass(frozen=True)
class ExportContext:
    """What an exporter knows about the map it writes, besides the Level itself."""

    stem: str  # file name of this map without extension, e.g. "map_007"
    provenance: dict[str, PropertyValue] = field(default_factory=dict)


class Exporter(StageParams):
    """Base of export stages: they turn a Level into files instead of another Level.

    File paths are relative to the pack folder and use `/`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        raise NotImplementedError


S = TypeVar("S", bound=type[StageParams])
_KINDS: dict[str, type[StageParams]] = {}
_loaded = False


def stage(kind: str, version: int) -> Callable[[S], S]:
    """Register a StageParams subclass under a dotted kind name such as `maze.backtracker`."""

    def register(cls: S) -> S:
        if kind in _KINDS and _KINDS[kind] is not cls:
            raise RuntimeError(f"stage kind {kind!r} registered twice")
        if not cls.__doc__:
            raise RuntimeError(f"stage {kind!r} needs a docstring: `pcg stages` shows it to users")
        cls.kind = kind
        cls.version = version
        _KINDS[kind] = cls
        return cls

    return register


def kinds() -> dict[str, type[StageParams]]:
    """Every registered stage kind, sorted by name."""
    global _loaded
    if not _loaded:
        for module in STAGE_MODULES:
            importlib.import_module(module)
        _loaded = True
    return dict(sorted(_KINDS.items()))


def get(kind: str) -> type[StageParams]:
    return kinds()[kind]


def is_exporter(cls: type[StageParams]) -> bool:
    return issubclass(cls, Exporter)


def param_rows(cls: type[StageParams]) -> list[dict[str, Any]]:
    """Name, type, default and description of each parameter, for `pcg stages`."""
    rows = []
    schema = cls.model_json_schema()["properties"]
    for name, info in cls.model_fields.items():
        prop = schema.get(name, {})
        constraints = {k: prop[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "pattern") if k in prop}
        rows.append(
            {
                "name": name,
                "type": _type_name(info.annotation),
                "default": "(required)" if info.is_required() else repr(info.default),
                "constraints": ", ".join(f"{k}={v}" for k, v in constraints.items()),
                "doc": info.description or "",
            }
        )
    return rows


def _type_name(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if not getattr(annotation, "__args__", None) else None
    text = text or repr(annotation)
    return text.replace("typing.", "").replace("typing_extensions.", "")
