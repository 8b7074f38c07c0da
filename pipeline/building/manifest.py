"""`manifest.json`: how every map of a pack was made, and the sha256 of every file it wrote.

Layout (format 1):

- the latest build's environment (`tool_version`, `python`, `numpy`, `bit_generator`, `numba`,
  `pillow`, `zlib`), its recipe (`recipe`: path, sha256, text), `pack` and `stages`;
- `maps`: per map its stem, per stage the cache key and seed tuple, its stats, the sha256 of each
  file, and `recipe` / `environment`: which recipe and environment its files came from;
- `earlier`: the recipes and environments that maps not rebuilt by the latest build (a `--map`
  build, a failed map) still come from, so `pcg verify` rebuilds every map from its own recipe.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import zlib
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from pipeline import __version__
from pipeline.errors import PipelineError
from pipeline.fsio import read_regular, write_if_changed
from pipeline.recipe.model import Recipe
from pipeline.registry import StageParams, stage_config
from pipeline.seeds import BIT_GENERATOR

MANIFEST = "manifest.json"
FORMAT = 1
ENV_KEYS = ("tool_version", "python", "numpy", "bit_generator", "numba", "pillow", "zlib")


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest at `path`; None if there is none or it is damaged (then the pack rebuilds)."""
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except (ValueError, OSError):  # missing, not a file (a FIFO would block a plain read), damaged
        return None
    return data if _well_formed(data) else None


def load_manifest(path: Path) -> dict[str, Any]:
    """Like read_manifest, for a manifest the user named: missing or damaged is an error."""
    data = read_manifest(path)
    if data is None:
        raise PipelineError([f"{path}: not a pcg-pipeline manifest (missing, unreadable, damaged or another format)"])
    return data


def _well_formed(data: Any) -> bool:
    """The structure the planner and builder rely on; anything else is treated as no manifest.
    Checked with plain conditions, never `assert`, which `python -O` strips."""
    try:
        if not (isinstance(data, dict) and data.get("format") == FORMAT):
            return False
        recipe, earlier = data["recipe"], data.get("earlier", {})
        if not (isinstance(recipe, dict) and isinstance(recipe.get("sha256"), str) and isinstance(recipe.get("text"), str)):
            return False
        if not (isinstance(data["stages"], dict) and isinstance(data["pack"], dict) and isinstance(data["maps"], list)):
            return False
        if not (isinstance(earlier, dict) and isinstance(earlier.get("recipes", {}), dict)):
            return False
        distinct = data.get("distinct", {})
        if not (isinstance(distinct, dict) and isinstance(distinct.get("through", 0), int) and isinstance(distinct.get("rule", {}), dict)):
            return False
        if not isinstance(data.get("measures", {}), dict):
            return False
        return all(_well_formed_entry(entry) for entry in data["maps"])
    except (KeyError, TypeError, AttributeError):
        return False


def _well_formed_entry(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    if not (isinstance(entry["index"], int) and not isinstance(entry["index"], bool) and isinstance(entry["recipe"], str)):
        return False
    if not (isinstance(entry["environment"], str) and isinstance(entry["stats"], dict) and isinstance(entry["stages"], dict)):
        return False
    files = entry["files"]
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
        return False
    if not isinstance(entry.get("attempt", 0), int):
        return False
    return all(
        isinstance(stage, dict)
        and isinstance(stage["key"], str)
        and isinstance(stage["seed"], list)
        and all(isinstance(s, int) for s in stage["seed"])
        and isinstance(stage.get("files", []), list)
        for stage in entry["stages"].values()
    )


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
    return hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:16]


def project_path(recipe: Recipe, project_root: Path) -> str:
    """The recipe's path relative to the project (the folder that holds exports/), so that the
    manifest does not depend on how the user spelled it."""
    return Path(os.path.relpath(os.path.abspath(recipe.path), os.path.abspath(project_root))).as_posix()


def recipe_record(recipe: Recipe, project_root: Path) -> dict[str, Any]:
    """The recipe as the manifest keeps it."""
    return {
        "path": project_path(recipe, project_root),
        "sha256": recipe.sha256,
        "text": recipe.text,
        "pack": recipe.pack.model_dump(mode="json"),
        # The stage's identity as its cache key has it (kind, version, params, embedded stages,
        # files read), plus where its inputs come from.
        "stages": {s.name: _stage_record(s.params, s.inputs) for s in recipe.stages},
    }


def config_id(record: dict[str, Any]) -> str:
    """What a map was built from, in one string: the recipe text and every stage's recorded
    configuration, which also holds what the text does not (plugin code, files read). A plugin
    edited under an unchanged recipe changes it, so a map kept from before, when every map failed
    after the edit, is not taken for one built from the edit."""
    return hashlib.sha256(json.dumps([record["sha256"], record["stages"]], sort_keys=True).encode()).hexdigest()[:16]


def _stage_record(params: StageParams, inputs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    config = stage_config(params)
    # Inputs after the version, as manifests have always listed them.
    return {"kind": config.pop("kind"), "version": config.pop("version"), "inputs": list(inputs), **config}


def recipe_config(manifest: dict[str, Any], sha: str) -> dict[str, Any] | None:
    """The recorded recipe (path, text, pack, stages) with this sha256, current or earlier."""
    if manifest["recipe"]["sha256"] == sha:
        return {**manifest["recipe"], "pack": manifest["pack"], "stages": manifest["stages"]}
    earlier = manifest.get("earlier", {}).get("recipes", {}).get(sha)
    return {**earlier, "sha256": sha} if earlier else None


def environment_of(manifest: dict[str, Any], env_id: str) -> dict[str, str] | None:
    current = {k: manifest.get(k) for k in ENV_KEYS}
    if environment_id(current) == env_id:  # type: ignore[arg-type]
        return current  # type: ignore[return-value]
    return manifest.get("earlier", {}).get("environments", {}).get(env_id)


def assemble(
    recipe: dict[str, Any], maps: list[dict[str, Any]], previous: dict[str, Any] | None, env: dict[str, str]
) -> dict[str, Any]:
    """A manifest for the latest build's recipe record, env and map entries; `previous` supplies
    the records of recipes and environments that retained entries still come from."""
    env_id = environment_id(env)
    earlier: dict[str, dict[str, Any]] = {"recipes": {}, "environments": {}}
    for entry in maps:
        if entry["recipe"] != recipe["sha256"] and previous is not None:
            old = recipe_config(previous, entry["recipe"])
            if old is not None:
                earlier["recipes"][entry["recipe"]] = {k: old[k] for k in ("path", "text", "pack", "stages")}
        if entry["environment"] != env_id and previous is not None:
            old_env = environment_of(previous, entry["environment"])
            if old_env is not None:
                earlier["environments"][entry["environment"]] = old_env
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "tool": "pcg-pipeline",
        **env,
        "recipe": {k: recipe[k] for k in ("path", "sha256", "text")},
        "pack": recipe["pack"],
        "stages": recipe["stages"],
        "maps": maps,
    }
    if earlier["recipes"] or earlier["environments"]:
        manifest["earlier"] = {k: dict(sorted(v.items())) for k, v in earlier.items()}
    return manifest


def encode(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write_manifest(path: Path, manifest: dict[str, Any], temp_dir: Path | None = None) -> bool:
    """Write unless the file already holds exactly this; True if it was written."""
    return write_if_changed(path, encode(manifest), temp_dir)
