"""`pcg verify`: rebuild a pack from its manifest alone and compare every file's sha256."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from pipeline.building.builder import PACK_FILES, Builder
from pipeline.building.cache import LevelCache
from pipeline.building.contact_sheet import CONTACT_SHEET
from pipeline.errors import PipelineError
from pipeline.building.executor import make_executor
from pipeline.fsio import is_temp_name, sha256_file
from pipeline.building.manifest import environment, load_manifest
from pipeline.recipe.load import load_recipe


@dataclass
class VerifyResult:
    maps: int = 0
    files: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def verify_pack(manifest_path: Path, workers: int, progress: Callable[[int], None] | None = None) -> VerifyResult:
    """Rebuild every map of the pack in a temporary folder and compare; `progress(n)` is told as
    each n more maps are rebuilt (a pack of thousands takes a while)."""
    manifest = load_manifest(manifest_path)
    pack_dir = manifest_path.parent
    result = VerifyResult(maps=len(manifest.maps))
    if not manifest.maps:
        raise PipelineError([f"{manifest_path}: the manifest lists no maps"])
    here = environment()
    by_recipe: dict[str, dict[int, None]] = defaultdict(dict)  # ordered sets: a map listed twice rebuilds once
    for entry in manifest.maps:
        by_recipe[entry.recipe][entry.index] = None
    listed = Counter(entry.index for entry in manifest.maps)
    for index in sorted(i for i, times in listed.items() if times > 1):
        result.problems.append(f"map {index}: the manifest lists it {listed[index]} times (a build writes each map once)")
    for env_id in sorted({e.environment for e in manifest.maps}):
        built_with = manifest.environment_of(env_id) or {}
        for key, value in here.items():
            if built_with.get(key) != value:
                result.warnings.append(f"{key} differs: maps were built with {built_with.get(key)}, this is {value}; bytes may differ")
    rebuilt: dict[int, Path] = {}
    pack_files: set[str] = set()  # made once per pack from the maps' files (an LDtk project)
    editors: set[str] = set()  # an editor's own files beside ours (Tiled's session of the project)
    with tempfile.TemporaryDirectory(prefix="pcg-verify-") as tmp:
        for n, (sha, of_recipe) in enumerate(sorted(by_recipe.items())):
            indices = list(of_recipe)
            # The recipes travel inside the manifest, so a pack verifies even after its recipe was
            # edited, and maps that a --map build left on an older recipe rebuild from that one.
            record = manifest.recipe_of(sha)
            if record is None:
                result.problems.append(f"maps {indices}: their recipe ({sha[:12]}) is not in the manifest")
                continue
            if hashlib.sha256(record.text.encode("utf-8")).hexdigest() != sha:
                result.problems.append(f"maps {indices}: the recipe text in the manifest does not match its sha256 {sha[:12]}")
                continue
            recipe = load_recipe(_recipe_path(pack_dir, record.path), text=record.text)
            pack_files.update(rel for spec in recipe.exporters for rel in spec.params.pack_outputs())  # type: ignore[attr-defined]
            editors.update(rel for spec in recipe.exporters for rel in spec.params.editor_files())  # type: ignore[attr-defined]
            for spec in recipe.stages:
                # Files a stage reads (rule models, tilesets and their images) live beside the
                # recipe, not in the manifest: one edited since the build cannot rebuild alike.
                recorded = record.stages.get(spec.name, {}).get("files", {})
                now = spec.params.files_read()
                for path, digest in sorted(recorded.items()):
                    if now.get(path) != digest:
                        result.problems.append(
                            f"stage {spec.name}: {path} changed since the build (manifest {digest[:12]}, now {str(now.get(path))[:12]})"
                        )
            root = Path(tmp) / str(n)
            # Each map at the attempt it records: pack.distinct chose it against the whole pack.
            attempts = {e.index: e.attempt for e in manifest.maps if e.index in of_recipe}
            builder = Builder(exports_root=root / "exports", cache=LevelCache(root / "cache"), only=indices, attempts=attempts)
            executor = make_executor(min(workers, len(indices)))
            try:
                report = builder.build(builder.plan(recipe), executor, progress=progress)
            finally:
                executor.close()
            for f in report.failures:
                result.problems.append(f"map {f.map}: stage {f.stage}: {f.message}")
            rebuilt.update({i: root / "exports" / recipe.pack.name for i in indices})
        checked: set[tuple[str, str]] = set()  # shared files (tilesets) are listed by every map
        for entry in manifest.maps:
            for rel, digest in entry.files.items():
                if (rel, digest) in checked:
                    continue
                checked.add((rel, digest))
                again = sha256_file(rebuilt[entry.index] / rel) if entry.index in rebuilt else None
                if again != digest:
                    what = "was not rebuilt" if again is None else f"rebuilds differently (manifest {digest[:12]}, rebuilt {again[:12]})"
                    result.problems.append(f"map {entry.index}: {rel} {what}")
                on_disk = sha256_file(pack_dir / rel)
                if on_disk != digest:
                    what = "is missing" if on_disk is None else "was modified"
                    result.problems.append(f"map {entry.index}: {pack_dir / rel} {what} on disk since the build")
        if len(by_recipe) == 1 and rebuilt:  # one rebuild made every map: it made the pack's files too
            for rel in sorted(pack_files):
                if sha256_file(next(iter(rebuilt.values())) / rel) != sha256_file(pack_dir / rel):
                    result.problems.append(f"{pack_dir / rel} rebuilds differently (or is missing)")
        recorded_sheet = manifest.contact_sheet
        if recorded_sheet is not None:
            on_disk = sha256_file(pack_dir / CONTACT_SHEET)
            if on_disk != recorded_sheet:
                result.problems.append(f"{pack_dir / CONTACT_SHEET} {'is missing' if on_disk is None else 'was modified'} on disk since the build")
            if len(by_recipe) == 1 and rebuilt and sha256_file(next(iter(rebuilt.values())) / CONTACT_SHEET) != recorded_sheet:
                result.problems.append(f"{pack_dir / CONTACT_SHEET} rebuilds differently (or not at all)")
        result.files = len(checked)
    claimed = {rel for rel, _ in checked} | PACK_FILES | pack_files | editors
    for path in sorted(p for p in pack_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(pack_dir).as_posix()
        # Hidden files other than a build's temporary ones are the desktop's (.DS_Store), not ours.
        if rel not in claimed and (not path.name.startswith(".") or is_temp_name(path.name)):
            result.problems.append(
                f"{path}: no map of the manifest claims this file (added by hand, which pcg build keeps:"
                " move it out of the pack; or left by a stopped build, which the next pcg build removes)"
            )
    return result


def _recipe_path(pack_dir: Path, recorded: str) -> Path:
    """Where the recipe a pack was built from is now: the manifest keeps its path relative to the
    project (the folder holding exports/), whatever folder verify runs in; its tilesets and rule
    files are read from beside it. A pack moved away from its project falls back to the path as
    seen from here."""
    path = Path(os.path.normpath(pack_dir.absolute().parent.parent / recorded))
    if not path.is_file() and Path(recorded).is_file():
        return Path(recorded)
    with contextlib.suppress(ValueError):
        return path.relative_to(Path.cwd())  # shorter in messages, as the user would write it
    return path
