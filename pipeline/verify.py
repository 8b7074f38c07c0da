"""`pcg verify`: rebuild a pack from its manifest alone and compare every file's sha256."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.build import Builder
from pipeline.cache import LevelCache
from pipeline.errors import PipelineError
from pipeline.executor import make_executor
from pipeline.fsio import sha256_file
from pipeline.manifest import environment, load_manifest
from pipeline.recipe import load_recipe


@dataclass
class VerifyResult:
    maps: int = 0
    files: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def verify_pack(manifest_path: Path, workers: int) -> VerifyResult:
    manifest = load_manifest(manifest_path)
    pack_dir = manifest_path.parent
    result = VerifyResult()
    here = environment()
    for key in ("numpy", "bit_generator", "numba", "pillow", "tool_version"):
        if manifest.get(key) != here[key]:
            result.warnings.append(f"{key} differs: the pack was built with {manifest.get(key)}, this is {here[key]}; bytes may differ")
    recipe_info = manifest.get("recipe", {})
    # The recipe travels inside the manifest, so a pack verifies even after its recipe was edited.
    recipe = load_recipe(recipe_info.get("path", str(manifest_path)), text=recipe_info.get("text", ""))
    indices = [m["index"] for m in manifest.get("maps", [])]
    if not indices:
        raise PipelineError([f"{manifest_path}: the manifest lists no maps"])
    with tempfile.TemporaryDirectory(prefix="pcg-verify-") as tmp:
        root = Path(tmp)
        builder = Builder(exports_root=root / "exports", cache=LevelCache(root / "cache"), only=indices)
        executor = make_executor(min(workers, len(indices)))
        try:
            report = builder.build(builder.plan(recipe), executor)
        finally:
            executor.close()
        for f in report.failures:
            result.problems.append(f"map {f.map}: stage {f.stage}: {f.message}")
        rebuilt_dir = root / "exports" / recipe.pack.name
        checked: set[tuple[str, str]] = set()  # shared files (tilesets) are listed by every map
        for entry in manifest["maps"]:
            result.maps += 1
            for rel, digest in entry.get("files", {}).items():
                if (rel, digest) in checked:
                    continue
                checked.add((rel, digest))
                rebuilt = sha256_file(rebuilt_dir / rel)
                if rebuilt != digest:
                    what = "was not rebuilt" if rebuilt is None else "rebuilds differently"
                    result.problems.append(f"map {entry['index']}: {rel} {what} (manifest {digest[:12]}, rebuilt {str(rebuilt)[:12]})")
                on_disk = sha256_file(pack_dir / rel)
                if on_disk != digest:
                    what = "is missing" if on_disk is None else "was modified"
                    result.problems.append(f"map {entry['index']}: {pack_dir / rel} {what} on disk since the build")
        result.files = len(checked)
    return result
