"""`manifest.json`: how every map of a pack was made, and the sha256 of every file it wrote."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import __version__
from pipeline.errors import PipelineError
from pipeline.fsio import atomic_write
from pipeline.recipe import Recipe
from pipeline.seeds import BIT_GENERATOR

MANIFEST = "manifest.json"
FORMAT = 1


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest at `path`; None if there is none (or it is unreadable: then the pack rebuilds)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def load_manifest(path: Path) -> dict[str, Any]:
    """Like read_manifest, for a manifest the user named: missing or damaged is an error."""
    data = read_manifest(path)
    if data is None:
        raise PipelineError([f"{path}: not a pcg-pipeline manifest (missing, unreadable or another format)"])
    return data


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def environment() -> dict[str, str]:
    """Versions that decide the bytes of a pack (NumPy guarantees streams only per build, NEP 19)."""
    return {
        "tool_version": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "bit_generator": BIT_GENERATOR,
        "numba": _version("numba"),
        "pillow": _version("pillow"),
    }


def pack_header(recipe: Recipe) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "tool": "pcg-pipeline",
        **environment(),
        "recipe": {"path": recipe.path, "sha256": recipe.sha256, "text": recipe.text},
        "pack": recipe.pack.model_dump(mode="json"),
        "stages": {
            s.name: {"kind": s.kind, "version": s.params.version, "inputs": list(s.inputs), "params": s.params.model_dump(mode="json")}
            for s in recipe.stages
        },
    }


def encode(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write_manifest(path: Path, manifest: dict[str, Any]) -> bool:
    """Write unless the file already holds exactly this; True if it was written."""
    data = encode(manifest)
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    atomic_write(path, data)
    return True
