"""`manifest.json` on disk: read into a Manifest, written from one."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.building.manifest.document import Manifest
from pipeline.errors import PipelineError
from pipeline.fsio import read_regular, write_if_changed

MANIFEST = "manifest.json"


def read_manifest(path: Path) -> Manifest | None:
    """The manifest at `path`; None if there is none or it is damaged (then the pack rebuilds)."""
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except (ValueError, OSError):  # missing, not a file (a FIFO would block a plain read), damaged
        return None
    return Manifest.from_json(data)


def load_manifest(path: Path) -> Manifest:
    """Like read_manifest, for a manifest the user named: missing or damaged is an error."""
    manifest = read_manifest(path)
    if manifest is None:
        raise PipelineError([f"{path}: not a pcg-pipeline manifest (missing, unreadable, damaged or another format)"])
    return manifest


def encode(manifest: Manifest) -> bytes:
    return (json.dumps(manifest.to_json(), indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write_manifest(path: Path, manifest: Manifest, temp_dir: Path | None = None) -> bool:
    """Write unless the file already holds exactly this; True if it was written."""
    return write_if_changed(path, encode(manifest), temp_dir)
