"""pcg-pipeline: TOML recipes in, Tiled level packs out.

The Python API (`pipeline.build`, `pipeline.generate`, `pipeline.Level`, ...) is loaded on first
use: `pcg --help` imports this package, and must not pay for numpy, numba or pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from pipeline.api import BuildResult, MapFailure, PackResult, build, export, generate
    from pipeline.errors import PipelineError
    from pipeline.level import Level

# Public name -> the module that defines it.
_LAZY = {
    "build": "pipeline.api",
    "generate": "pipeline.api",
    "export": "pipeline.api",
    "BuildResult": "pipeline.api",
    "PackResult": "pipeline.api",
    "MapFailure": "pipeline.api",
    "Level": "pipeline.level",
    "PipelineError": "pipeline.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
