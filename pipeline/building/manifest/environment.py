"""The environment a pack's files were made in: the versions that decide their bytes."""

from __future__ import annotations

import hashlib
import json
import platform
import zlib
from importlib import metadata

import numpy as np

from pipeline import __version__
from pipeline.seeds import BIT_GENERATOR

# In the order a manifest lists them, at its top level.
ENV_KEYS = ("tool_version", "python", "numpy", "bit_generator", "numba", "pillow", "zlib")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def environment() -> dict[str, str]:
    """Versions that decide the bytes of a pack (NumPy guarantees streams only per build, NEP 19;
    zlib decides compressed layer data)."""
    return {
        "tool_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "bit_generator": BIT_GENERATOR,
        "numba": _version("numba"),
        "pillow": _version("pillow"),
        "zlib": zlib.ZLIB_RUNTIME_VERSION,
    }


def environment_id(env: dict[str, str]) -> str:
    """The short id a map entry names its environment by."""
    return hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:16]
